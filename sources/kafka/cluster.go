package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Cluster is a shared handle on one Kafka cluster as seen with one set of
// properties: an admin client for metadata, offsets and watermarks, and the
// factory of Readers. Jobs whose specs have the same brokers and
// properties can share one. Safe for concurrent use.
type Cluster struct {
	cfg     *clientConfig
	brokers []string
	logger  *slog.Logger
	cl      *kgo.Client
	adm     *kadm.Client
	// fetch holds the consuming clients the cluster's readers share.
	fetch *fetcher
	// lists coalesces concurrent offset listings of one topic.
	lists offsetLists
}

// NewCluster validates spec's brokers and properties and opens an admin
// client. It does not dial: an unreachable cluster shows on the first call.
// A bad spec is a *sources.ConfigError naming the field. logger may be nil.
func NewCluster(spec *api.KafkaSpec, logger *slog.Logger) (*Cluster, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if spec == nil || len(spec.GetBrokers()) == 0 {
		return nil, &sources.ConfigError{Field: "kafka.brokers", Err: errors.New("kafka: no brokers")}
	}
	for _, b := range spec.GetBrokers() {
		if strings.TrimSpace(b) == "" {
			return nil, &sources.ConfigError{Field: "kafka.brokers", Err: errors.New("kafka: empty broker address")}
		}
	}
	cfg, err := parseProperties(spec.GetProperties())
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, brokers: slices.Clone(spec.GetBrokers()), logger: logger}
	opts := append(cfg.opts(c.brokers), kgo.WithLogger(kgoLogger{logger.With("client", "admin")}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, &sources.ConfigError{Field: "kafka.brokers", Err: fmt.Errorf("kafka: new client: %w", err)}
	}
	c.cl = cl
	c.adm = kadm.NewClient(cl)
	c.fetch = newFetcher(c)
	return c, nil
}

// Close closes the admin client. Readers opened from c share consuming
// clients that close with their last reader, so they are closed
// separately.
func (c *Cluster) Close() { c.cl.Close() }

// Partitions returns topic's partition ids, sorted, from fresh metadata (not
// the client's cache, so that partitions added a moment ago show). An
// unknown topic is a *sources.ConfigError.
func (c *Cluster) Partitions(ctx context.Context, topic string) ([]int32, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return nil, classify(ctx, "metadata "+topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, classify(ctx, "metadata "+topic, err)
		}
		ps := make([]int32, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			ps = append(ps, p.Partition)
		}
		slices.Sort(ps)
		return ps, nil
	}
	return nil, classify(ctx, "metadata "+topic, kerr.UnknownTopicOrPartition)
}

// ResolveOffsets turns spec offsets (a number, OFFSET_BEGINNING,
// OFFSET_END or TIME:<epoch ms>) into concrete next offsets for the
// partitions in want. TIME: is the first offset with a record timestamp at
// or after that time (the end offset when there is none).
// OFFSET_BEGINNING is the log start; OFFSET_END is the last stable offset
// (the end a read-committed consumer sees, as Kafka's Java consumer resolves
// "latest"), which equals the high watermark unless a transaction is open. A
// number below the log start or above the high watermark is a
// *sources.OutOfRangeError; a bad string or a partition the topic does not
// have is a *sources.ConfigError.
func (c *Cluster) ResolveOffsets(ctx context.Context, topic string, want map[int32]string) (map[int32]int64, error) {
	type ask struct {
		kind offsetKind
		n    int64
	}
	asks := make(map[int32]ask, len(want))
	var needStart, needEnd, needStable bool
	for _, p := range slices.Sorted(maps.Keys(want)) {
		kind, n, err := parseOffset(want[p])
		if err != nil {
			return nil, &sources.ConfigError{Field: fmt.Sprintf("kafka.offsets[%d]", p), Err: err}
		}
		asks[p] = ask{kind, n}
		switch kind {
		case offsetBeginning:
			needStart = true
		case offsetEnd:
			needStable = true
		case offsetExact:
			needStart, needEnd = true, true
		}
	}
	byTime := map[int64]map[int32]int64{} // epoch ms -> offsets listed for it
	for _, a := range asks {
		if a.kind == offsetTime && byTime[a.n] == nil {
			ms := a.n
			listed, err := c.list(ctx, topic, fmt.Sprintf("time %d", ms), func(ctx context.Context, topics ...string) (kadm.ListedOffsets, error) {
				return c.adm.ListOffsetsAfterMilli(ctx, ms, topics...)
			})
			if err != nil {
				return nil, err
			}
			byTime[ms] = listed
		}
	}
	var start, end, stable map[int32]int64
	var err error
	if needStart {
		if start, err = c.list(ctx, topic, "start", c.adm.ListStartOffsets); err != nil {
			return nil, err
		}
	}
	if needEnd {
		if end, err = c.list(ctx, topic, "end", c.adm.ListEndOffsets); err != nil {
			return nil, err
		}
	}
	if needStable {
		if stable, err = c.list(ctx, topic, "stable", c.adm.ListCommittedOffsets); err != nil {
			return nil, err
		}
	}
	lookup := func(m map[int32]int64, p int32) (int64, error) {
		o, ok := m[p]
		if !ok {
			return 0, &sources.ConfigError{Field: "kafka.partitions", Err: fmt.Errorf("kafka: topic %s has no partition %d", topic, p)}
		}
		return o, nil
	}
	out := make(map[int32]int64, len(asks))
	for _, p := range slices.Sorted(maps.Keys(asks)) {
		a := asks[p]
		switch a.kind {
		case offsetBeginning:
			if out[p], err = lookup(start, p); err != nil {
				return nil, err
			}
		case offsetEnd:
			if out[p], err = lookup(stable, p); err != nil {
				return nil, err
			}
		case offsetTime:
			if out[p], err = lookup(byTime[a.n], p); err != nil {
				return nil, err
			}
		case offsetExact:
			lo, err := lookup(start, p)
			if err != nil {
				return nil, err
			}
			hi, err := lookup(end, p)
			if err != nil {
				return nil, err
			}
			if a.n < lo || a.n > hi {
				return nil, &sources.OutOfRangeError{Partition: p, Offset: a.n, LogStart: lo, LogEnd: hi}
			}
			out[p] = a.n
		}
	}
	return out, nil
}

// Watermarks returns the high watermark (end offset) of each partition of
// topic. Partitions whose offsets could not be listed (leader moving) are
// absent; an unknown topic is a *sources.ConfigError. The map may be shared
// with concurrent callers (Cluster.list): do not modify it.
func (c *Cluster) Watermarks(ctx context.Context, topic string) (map[int32]int64, error) {
	return c.list(ctx, topic, "end", c.adm.ListEndOffsets)
}

// Bounds returns the log start and the high watermark of each partition of
// topic, as Watermarks does (the maps may be shared: do not modify them).
func (c *Cluster) Bounds(ctx context.Context, topic string) (start, end map[int32]int64, err error) {
	if start, err = c.list(ctx, topic, "start", c.adm.ListStartOffsets); err != nil {
		return nil, nil, err
	}
	if end, err = c.list(ctx, topic, "end", c.adm.ListEndOffsets); err != nil {
		return nil, nil, err
	}
	return start, end, nil
}

// list runs one kadm listing for topic and keeps the partitions without
// error. Concurrent listings of one topic and kind share one request
// sent after each of them began (offsetLists); the map returned is shared:
// callers must not modify it.
func (c *Cluster) list(ctx context.Context, topic, what string,
	fn func(context.Context, ...string) (kadm.ListedOffsets, error),
) (map[int32]int64, error) {
	return c.lists.do(ctx, listKey{topic, what}, func(ctx context.Context) (map[int32]int64, error) {
		return c.listOnce(ctx, topic, what, fn)
	})
}

// listOnce is list's one request.
func (c *Cluster) listOnce(ctx context.Context, topic, what string,
	fn func(context.Context, ...string) (kadm.ListedOffsets, error),
) (map[int32]int64, error) {
	op := fmt.Sprintf("list %s offsets of %s", what, topic)
	listed, err := fn(ctx, topic)
	if err != nil {
		var se *kadm.ShardErrors
		if !errors.As(err, &se) || len(listed) == 0 {
			return nil, classify(ctx, op, err)
		}
		// Some brokers answered: keep what they said.
		c.logger.Debug("kafka: partial offset listing", "topic", topic, "err", err)
	}
	out := make(map[int32]int64)
	for p, lo := range listed[topic] {
		if lo.Err != nil {
			if p < 0 || isAuthErr(lo.Err) { // kadm's marker of a topic-level error, or auth
				return nil, classify(ctx, op, lo.Err)
			}
			c.logger.Debug("kafka: partition offset not listed", "topic", topic, "partition", p, "err", lo.Err)
			continue
		}
		out[p] = lo.Offset
	}
	if _, ok := listed[topic]; !ok {
		return nil, classify(ctx, op, kerr.UnknownTopicOrPartition)
	}
	return out, nil
}
