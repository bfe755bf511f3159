package kinesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's and its readers' logs; nil discards.
	Logger *slog.Logger
	// Faults, when non-nil, injects errors into SDK calls (tests and chaos).
	Faults *Faults
	// CanonicalPosition spells a position of a user's reset
	// (ResolveReset) the way the job spec does and reports whether it is
	// valid; the node passes config.CanonicalPosition. Nil takes positions
	// as written.
	CanonicalPosition func(string) (string, bool)

	// pollInterval overrides defaultPollInterval (tests).
	pollInterval time.Duration
}

// SDK retry settings: one retry of a failed attempt at most, a short
// back-off, and no client-side retry quota, so that throttling is governed
// by the reader's own back-off and never turns into "retry quota exceeded".
const (
	sdkMaxAttempts = 2
	sdkMaxBackoff  = time.Second
)

// defaultEndpointRegion is the signing region when an endpoint is given
// without a region (kinesalite and other compatible services accept any).
const defaultEndpointRegion = "us-east-1"

var streamNameRe = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)

// Source is one job's view of a Kinesis stream: it lists shards (the job's
// partitions), resolves their start checkpoints, gates children behind
// their parents and opens Readers. Its network methods are safe for
// concurrent use; Readable and Describe do no I/O.
type Source struct {
	stream    string
	chosen    []string          // spec.shards, validated
	positions map[string]string // spec.positions, validated
	defPos    string
	client    *kinesis.Client
	transport atomic.Pointer[http.Transport]
	logger    *slog.Logger
	faults    *Faults
	canonical func(string) (string, bool) // Options.CanonicalPosition
	poll      time.Duration               // least time between GetRecords calls of a shard

	mu     sync.Mutex
	shards map[int32]shardMeta // last listing
}

// shardMeta is what a listing says of a shard.
type shardMeta struct {
	id      string
	parents []string // ParentShardId, AdjacentParentShardId when set
	closed  bool     // SequenceNumberRange.EndingSequenceNumber is set
}

// NewSource checks spec and builds the SDK client. It does not touch the
// network (credentials of the default chain are resolved on first use). A
// bad spec is a *sources.ConfigError naming its field.
func NewSource(spec *api.KinesisSpec, opts Options) (*Source, error) {
	if spec == nil {
		return nil, &sources.ConfigError{Field: "kinesis", Err: errors.New("kinesis: no kinesis spec")}
	}
	spec = proto.Clone(spec).(*api.KinesisSpec)
	cfgErr := func(field, format string, args ...any) error {
		return &sources.ConfigError{Field: field, Err: fmt.Errorf("kinesis: "+format, args...)}
	}
	switch {
	case spec.Stream == "":
		return nil, cfgErr("kinesis.stream", "empty stream name")
	case !streamNameRe.MatchString(spec.Stream):
		return nil, cfgErr("kinesis.stream", "stream name %q: want 1 to 128 of [a-zA-Z0-9_.-]", spec.Stream)
	case spec.Region == "" && spec.Endpoint == "":
		return nil, cfgErr("kinesis.region", "empty region (required unless an endpoint is given)")
	case spec.AccessKeyId != "" && spec.SecretAccessKey == "":
		return nil, cfgErr("kinesis.secret_access_key", "access_key_id is set but secret_access_key is empty")
	case spec.AccessKeyId == "" && spec.SecretAccessKey != "":
		return nil, cfgErr("kinesis.access_key_id", "secret_access_key is set but access_key_id is empty")
	case spec.AccessKeyId == "" && spec.SessionToken != "":
		return nil, cfgErr("kinesis.session_token", "session_token without access_key_id and secret_access_key")
	case spec.AccessKeyId != "" && spec.Profile != "":
		return nil, cfgErr("kinesis.profile", "both static keys and a profile are set; use one")
	}
	if spec.Endpoint != "" {
		u, err := url.Parse(spec.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, cfgErr("kinesis.endpoint", "endpoint %q: want http(s)://host[:port]", spec.Endpoint)
		}
	}
	s := &Source{
		stream:    spec.Stream,
		positions: map[string]string{},
		defPos:    TrimHorizon,
		logger:    opts.Logger,
		faults:    opts.Faults,
		canonical: opts.CanonicalPosition,
		poll:      defaultPollInterval,
	}
	if opts.pollInterval > 0 {
		s.poll = opts.pollInterval
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("stream", spec.Stream)
	for _, id := range spec.Shards {
		if _, err := ShardIndex(id); err != nil {
			return nil, cfgErr("kinesis.shards", "%v", err)
		}
		if !slices.Contains(s.chosen, id) {
			s.chosen = append(s.chosen, id)
		}
	}
	for id, pos := range spec.Positions {
		field := "kinesis.positions." + id
		if _, err := ShardIndex(id); err != nil {
			return nil, cfgErr(field, "%v", err)
		}
		if _, err := parsePosition(pos); err != nil {
			return nil, cfgErr(field, "%v", err)
		}
		s.positions[id] = pos
	}
	if spec.DefaultPosition != "" {
		p, err := parsePosition(spec.DefaultPosition)
		if err != nil {
			return nil, cfgErr("kinesis.default_position", "%v", err)
		}
		if p.kind == posSeq {
			return nil, cfgErr("kinesis.default_position",
				"a sequence number belongs to one shard: give it in positions, not as the default")
		}
		s.defPos = spec.DefaultPosition
	}
	client, err := s.newClient(spec)
	if err != nil {
		return nil, err
	}
	s.client = client
	return s, nil
}

func (s *Source) newClient(spec *api.KinesisSpec) (*kinesis.Client, error) {
	region := spec.Region
	if region == "" {
		region = defaultEndpointRegion
	}
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = 64
		s.transport.Store(t)
	})
	loads := []func(*config.LoadOptions) error{
		config.WithRegion(region),
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = sdkMaxAttempts
				o.MaxBackoff = sdkMaxBackoff
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	field := "kinesis credentials"
	switch {
	case spec.AccessKeyId != "":
		loads = append(loads, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(spec.AccessKeyId, spec.SecretAccessKey, spec.SessionToken)))
	case spec.Profile != "":
		loads = append(loads, config.WithSharedConfigProfile(spec.Profile))
		field = "kinesis.profile"
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), loads...)
	if err != nil {
		return nil, &sources.ConfigError{Field: field, Err: fmt.Errorf("kinesis: load AWS config: %w", err)}
	}
	return kinesis.NewFromConfig(cfg, func(o *kinesis.Options) {
		if spec.Endpoint != "" {
			o.BaseEndpoint = aws.String(spec.Endpoint)
		}
		if s.faults != nil {
			o.APIOptions = append(o.APIOptions, s.faults.apiOption)
		}
	}), nil
}

// listShards lists every shard of the stream (ListShards, paginated) and
// caches the listing.
func (s *Source) listShards(ctx context.Context) (map[int32]shardMeta, error) {
	list := map[int32]shardMeta{}
	in := &kinesis.ListShardsInput{StreamName: aws.String(s.stream)}
	for {
		out, err := s.client.ListShards(ctx, in)
		if err != nil {
			return nil, classify("list shards of "+s.stream, err)
		}
		for _, sh := range out.Shards {
			if err := addShard(list, sh); err != nil {
				return nil, &sources.ConfigError{Field: "kinesis.stream", Err: fmt.Errorf("kinesis: list shards of %s: %w", s.stream, err)}
			}
		}
		if out.NextToken == nil || *out.NextToken == "" {
			break
		}
		// A NextToken names the stream itself; the two are exclusive.
		in = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
	s.mu.Lock()
	s.shards = list
	s.mu.Unlock()
	return list, nil
}

func addShard(list map[int32]shardMeta, sh types.Shard) error {
	id := aws.ToString(sh.ShardId)
	p, err := ShardIndex(id)
	if err != nil {
		return err
	}
	m := shardMeta{id: id}
	for _, parent := range []*string{sh.ParentShardId, sh.AdjacentParentShardId} {
		if v := aws.ToString(parent); v != "" {
			if _, err := ShardIndex(v); err != nil {
				return fmt.Errorf("shard %s: parent: %w", id, err)
			}
			m.parents = append(m.parents, v)
		}
	}
	if sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil {
		m.closed = true
	}
	if prev, ok := list[p]; ok && prev.id != id {
		return fmt.Errorf("shards %s and %s have the same index %d", prev.id, id, p)
	}
	list[p] = m
	return nil
}

// Partitions lists the stream's shards and returns the sorted partition
// indices of all of them, or, when the spec chooses shards, of the chosen
// shards and all their descendants (children of splits and merges).
func (s *Source) Partitions(ctx context.Context) ([]int32, error) {
	list, err := s.listShards(ctx)
	if err != nil {
		return nil, err
	}
	if len(s.chosen) == 0 {
		return slices.Sorted(maps.Keys(list)), nil
	}
	byID := map[string]int32{}
	children := map[string][]int32{}
	for p, m := range list {
		byID[m.id] = p
		for _, parent := range m.parents {
			children[parent] = append(children[parent], p)
		}
	}
	seen := map[int32]bool{}
	var queue []int32
	for _, id := range s.chosen {
		p, ok := byID[id]
		if !ok {
			return nil, &sources.ConfigError{Field: "kinesis.shards",
				Err: fmt.Errorf("kinesis: shard %s is not in stream %s", id, s.stream)}
		}
		if !seen[p] {
			seen[p] = true
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[list[p].id] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// ResolveStarts returns the start (ordinal 0 and an encoded Checkpoint) of
// each wanted partition. A non-empty spec string in want is an explicit
// position for that shard (an alter); "" means the spec decides. When
// initial (the job's first topology) a shard starts at its position in the
// spec (positions, else default_position, else TRIM_HORIZON); a shard
// found later (a child of a split or merge) starts at TRIM_HORIZON so that
// none of its records is missed. A shard that is already closed when a job
// starts it at LATEST has nothing to read: its checkpoint is ended.
func (s *Source) ResolveStarts(ctx context.Context, want map[int32]string, initial bool) (map[int32]sources.Start, error) {
	s.mu.Lock()
	list := s.shards
	s.mu.Unlock()
	missing := list == nil
	for p := range want {
		if _, ok := list[p]; !ok {
			missing = true
		}
	}
	if missing || initial && len(s.positions) > 0 {
		var err error
		if list, err = s.listShards(ctx); err != nil {
			return nil, err
		}
	}
	if initial {
		byID := map[string]bool{}
		for _, m := range list {
			byID[m.id] = true
		}
		for _, id := range slices.Sorted(maps.Keys(s.positions)) {
			if !byID[id] {
				return nil, &sources.ConfigError{Field: "kinesis.positions." + id,
					Err: fmt.Errorf("kinesis: shard %s is not in stream %s", id, s.stream)}
			}
		}
	}
	out := make(map[int32]sources.Start, len(want))
	for _, p := range slices.Sorted(maps.Keys(want)) {
		m, ok := list[p]
		if !ok {
			return nil, &sources.ConfigError{Field: "kinesis.shards",
				Err: fmt.Errorf("kinesis: shard %s (partition %d) is not in stream %s", ShardID(p), p, s.stream)}
		}
		cp := Checkpoint{Shard: m.id, Start: TrimHorizon}
		for _, parent := range m.parents {
			pp, _ := ShardIndex(parent) // checked by addShard
			cp.Parents = append(cp.Parents, parent)
			cp.ParentParts = append(cp.ParentParts, pp)
		}
		if initial {
			cp.Start = s.defPos
			if pos, ok := s.positions[m.id]; ok {
				cp.Start = pos
			}
		}
		if w := want[p]; w != "" {
			// An explicit position (job alter --position) wins.
			if _, err := parsePosition(w); err != nil {
				return nil, &sources.ConfigError{Field: "reset_positions." + m.id, Err: err}
			}
			cp.Start = w
		}
		if (initial || want[p] != "") && cp.Start == Latest {
			if m.closed {
				cp.Ended = true
			} else {
				// Pin LATEST to now, so that a reader reopened before its
				// first record is committed (a restart, an expired iterator)
				// does not skip what arrived in between. The margin covers
				// clock skew with the service: a few older records rather
				// than a lost one.
				cp.Start = atTimestamp + time.Now().Add(-latestSkew).UTC().Format(time.RFC3339Nano)
			}
		}
		out[p] = sources.Start{Offset: 0, Checkpoint: EncodeCheckpoint(cp)}
	}
	return out, nil
}

// latestSkew is how far before now a LATEST start is pinned.
const latestSkew = 5 * time.Second

// Watermarks returns an empty map: Kinesis has no record-count watermark
// (a reader reports MillisBehindLatest in Batch.BehindMs instead).
func (s *Source) Watermarks(context.Context) (map[int32]int64, error) {
	return map[int32]int64{}, nil
}

// Readable returns, of parts, the partitions that may be read now: those
// not ended whose every parent (by the checkpoint's recorded parent
// indices) is either not tracked by the job (absent from checkpoints) or
// ended. A partition without a valid checkpoint is not readable. It is a
// pure function of checkpoints.
func (s *Source) Readable(parts []int32, checkpoints map[int32][]byte) []int32 {
	var out []int32
	for _, p := range parts {
		b, ok := checkpoints[p]
		if !ok {
			continue
		}
		cp, err := DecodeCheckpoint(b)
		if err != nil || cp.Ended {
			continue
		}
		ready := true
		for _, pp := range cp.ParentParts {
			pb, tracked := checkpoints[pp]
			if !tracked {
				continue
			}
			pcp, err := DecodeCheckpoint(pb)
			if err != nil || !pcp.Ended {
				ready = false
				break
			}
		}
		if ready {
			out = append(out, p)
		}
	}
	return out
}

// Describe describes partition p for `job show`: its shard id, its state
// ("finished" when its checkpoint is ended, else "closed" when the last
// listing says the shard is closed, else "open"), its parents and its last
// committed sequence number or, before any, its start position.
func (s *Source) Describe(p int32, checkpoint []byte) sources.PartitionState {
	st := sources.PartitionState{ID: ShardID(p), State: "open"}
	s.mu.Lock()
	m, listed := s.shards[p]
	s.mu.Unlock()
	if listed {
		st.ID = m.id
		if m.closed {
			st.State = "closed"
		}
	}
	cp, err := DecodeCheckpoint(checkpoint)
	if err != nil {
		if len(checkpoint) > 0 {
			st.Seq = "?"
		}
		return st
	}
	st.ID = cp.Shard
	st.Parents = slices.Clone(cp.ParentParts)
	st.Seq = cp.Start
	if cp.Last != "" {
		st.Seq = cp.Last
	}
	if cp.Sub > 0 {
		// Inside a KPL aggregate: its first Sub user records are committed.
		st.Seq = fmt.Sprintf("%s/%d", cp.Last, cp.Sub)
	}
	if cp.Ended {
		st.State = "finished"
	}
	return st
}

// Close releases the source's idle connections. Readers opened from it keep
// working until they are closed.
func (s *Source) Close() {
	if t := s.transport.Load(); t != nil {
		t.CloseIdleConnections()
	}
}
