package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Clusters opens the Kafka jobs of a node. Jobs share one Cluster (admin
// connections, metadata), one watermark cache, one partition-list cache and
// one poller per watched topic per cluster key, so that many jobs on one
// cluster do not each hold their own connections. A Cluster lives while a
// job holds it. Safe for concurrent use.
type Clusters struct {
	logger *slog.Logger
	// marksFresh is how long high watermarks are shared between the jobs
	// of one topic; a watched topic is polled every 2*marksFresh.
	marksFresh time.Duration
	mu         struct {
		sync.Mutex
		shared map[clusterKey]*shared
	}
}

// clusterKey names the Cluster a spec needs: its brokers in any order and
// its properties. Specs with equal keys share one Cluster; it is the only
// key under which a Cluster is looked up.
type clusterKey string

func keyOf(spec *api.KafkaSpec) clusterKey {
	var b strings.Builder
	brokers := slices.Clone(spec.GetBrokers())
	slices.Sort(brokers)
	b.WriteString(strings.Join(brokers, ","))
	for _, k := range slices.Sorted(maps.Keys(spec.GetProperties())) {
		fmt.Fprintf(&b, "\x00%s=%s", k, spec.GetProperties()[k])
	}
	return clusterKey(b.String())
}

// shared is one Cluster with what its jobs share.
type shared struct {
	key  clusterKey
	c    *Cluster
	refs int // REQUIRES: Clusters.mu is held
	// marks caches high watermarks per topic, so that many jobs on one
	// topic (and many refreshes) cost one broker request per freshness
	// window.
	marks *watermarkCache
	// parts caches the partition list per topic for a second, so that
	// thousands of jobs on one topic starting together (a restart) ask the
	// broker once.
	parts *topicCache[[]int32]
	// watches are the topics idle jobs watch (Watch), each polled by one
	// goroutine while it has watchers.
	watches topicWatches
}

// NewClusters returns an empty set. Watermarks fresher than marksFresh are
// shared between the jobs of one topic.
func NewClusters(logger *slog.Logger, marksFresh time.Duration) *Clusters {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cs := &Clusters{logger: logger, marksFresh: marksFresh}
	cs.mu.shared = map[clusterKey]*shared{}
	return cs
}

// Open returns a job's handle on the Cluster of spec's brokers and
// properties, opening the Cluster if no job holds it. A bad spec is a
// *sources.ConfigError naming its field.
func (cs *Clusters) Open(spec *api.KafkaSpec) (*JobSource, error) {
	key := keyOf(spec)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	sc := cs.mu.shared[key]
	if sc == nil {
		c, err := NewCluster(spec, cs.logger)
		if err != nil {
			return nil, err
		}
		sc = &shared{key: key, c: c, marks: newWatermarkCache(cs.marksFresh), parts: newTopicCache[[]int32](time.Second)}
		cs.mu.shared[key] = sc
	}
	sc.refs++
	return &JobSource{owner: cs, sc: sc, topic: spec.GetTopic(), spec: spec}, nil
}

// release drops a job's hold on sc, closing its Cluster after the last.
func (cs *Clusters) release(sc *shared) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.mu.shared[sc.key] != sc {
		return // closed by Close
	}
	sc.refs--
	if sc.refs <= 0 {
		sc.watches.stopAll()
		sc.c.Close()
		delete(cs.mu.shared, sc.key)
	}
}

// Close closes every Cluster (the node stops); handles still open close
// nothing more.
func (cs *Clusters) Close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for key, sc := range cs.mu.shared {
		sc.watches.stopAll()
		sc.c.Close()
		delete(cs.mu.shared, key)
	}
}

// JobSource is one job's handle on a shared Cluster: its topic, which of
// its partitions it reads and where they start (the spec's
// kafka.partitions, offsets and default_offset). It implements the actors'
// Source and Watcher. Safe for concurrent use.
type JobSource struct {
	owner  *Clusters
	sc     *shared
	topic  string
	spec   *api.KafkaSpec
	closed sync.Once
}

// Cluster is the shared Cluster the job reads (for what it publishes to
// the same cluster: kafka.commit_group).
func (s *JobSource) Cluster() *Cluster { return s.sc.c }

// Watch calls fn with the topic's watermarks soon and whenever they
// change, until stop is called: one poller per topic (every
// 2*marksFresh, the node's watermark_interval) serves all of the topic's
// idle jobs. It asks the broker itself, not the cache, so that new data is
// seen within one interval instead of an interval plus the cache's age. A
// look-up failing with a *sources.ConfigError reaches fn; other failures
// do not.
func (s *JobSource) Watch(fn func(map[int32]int64, error)) (stop func()) {
	return s.sc.watches.watch(s.topic, 2*s.owner.marksFresh, fn, func(ctx context.Context) (map[int32]int64, error) {
		return s.sc.c.Watermarks(ctx, s.topic)
	})
}

// Partitions lists the topic's partitions (cached for a second).
func (s *JobSource) Partitions(ctx context.Context) ([]int32, error) {
	return s.sc.parts.get(ctx, s.topic, func(ctx context.Context) ([]int32, error) {
		return s.sc.c.Partitions(ctx, s.topic)
	})
}

// Discover chooses the job's partitions (kafka.partitions, else all of the
// topic's, including ones added later) and resolves the starts of new ones
// (kafka.offsets, else kafka.default_offset).
func (s *JobSource) Discover(ctx context.Context, known map[int32]bool) ([]int32, map[int32]sources.Start, error) {
	all, err := s.Partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	parts, want, err := Choose(s.spec, all, known)
	if err != nil || len(want) == 0 {
		return parts, nil, err
	}
	starts, err := s.resolve(ctx, want)
	return parts, starts, err
}

// ResolveReset resolves reset offsets of partitions the job reads.
func (s *JobSource) ResolveReset(ctx context.Context, reset sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error) {
	if len(reset.Positions) > 0 {
		return nil, &sources.ConfigError{Field: "reset_positions", Err: errors.New("only a Kinesis job has shard positions; use reset_offsets")}
	}
	for _, p := range slices.Sorted(maps.Keys(reset.Offsets)) {
		field := fmt.Sprintf("reset_offsets.%d", p)
		if _, ok := cur[p]; !ok {
			return nil, &sources.ConfigError{Field: field, Err: fmt.Errorf("the job does not read partition %d", p)}
		}
		if err := ParseOffset(reset.Offsets[p]); err != nil {
			return nil, &sources.ConfigError{Field: field, Err: err}
		}
	}
	return s.resolve(ctx, reset.Offsets)
}

// Render names a Kafka position: "partition 3 offset", "120".
func (s *JobSource) Render(p int32, st sources.Start) (string, string) {
	return fmt.Sprintf("partition %d offset", p), strconv.FormatInt(st.Offset, 10)
}

func (s *JobSource) resolve(ctx context.Context, want map[int32]string) (map[int32]sources.Start, error) {
	offs, err := s.sc.c.ResolveOffsets(ctx, s.topic, want)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]sources.Start, len(offs))
	for p, o := range offs {
		out[p] = sources.Start{Offset: o}
	}
	return out, nil
}

// Watermarks returns the topic's high watermarks, shared with the topic's
// other jobs for the freshness window. The map is shared: do not modify it.
func (s *JobSource) Watermarks(ctx context.Context) (map[int32]int64, error) {
	return s.sc.marks.get(ctx, s.topic, func(ctx context.Context) (map[int32]int64, error) {
		return s.sc.c.Watermarks(ctx, s.topic)
	})
}

// NewReader reads the given partitions of the topic from their offsets.
func (s *JobSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	offs := make(map[int32]int64, len(start))
	for p, st := range start {
		offs[p] = st.Offset
	}
	return s.sc.c.NewReader(s.topic, offs)
}

// Close releases the job's hold on the Cluster. It is idempotent.
func (s *JobSource) Close() {
	s.closed.Do(func() { s.owner.release(s.sc) })
}
