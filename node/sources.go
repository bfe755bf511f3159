package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kafka"
	"github.com/loadnode/loadnode/sources/kinesis"
)

// sourceSet opens the node's job sources. Kafka jobs share one
// kafka.Cluster (admin connections, metadata) per (brokers, properties), so
// that many jobs on one cluster do not each hold their own connections; a
// Kinesis job gets its own source.
type sourceSet struct {
	logger     *slog.Logger
	marksFresh time.Duration
	// kinesisFaults injects errors into every Kinesis job's SDK calls
	// (tests and chaos only; see KinesisFaultsEnv).
	kinesisFaults *kinesis.Faults
	stopFaultLog  chan struct{}
	mu            struct {
		sync.Mutex
		clusters map[string]*sharedCluster
	}
}

type sharedCluster struct {
	c    *kafka.Cluster
	refs int
	// marks caches high watermarks per topic, so that many jobs on one
	// topic (and many refreshes) cost one broker request per freshness
	// window.
	marks *watermarkCache
	// parts caches the partition list per topic for a second, so that
	// thousands of jobs on one topic starting together (a restart) ask the
	// broker once.
	parts *topicCache[[]int32]
	// watches are the topics idle jobs watch (actors.Watcher), each polled
	// by one goroutine while it has watchers.
	wmu     sync.Mutex
	watches map[string]*topicWatch
	nextSub uint64
}

// topicWatch is one watched topic: its watchers and the watermarks they
// were last told.
type topicWatch struct {
	subs map[uint64]func(map[int32]int64, error)
	last map[int32]int64
	stop chan struct{}
}

// watch adds fn to topic's watchers, starting the topic's poller (one
// look-up every `every`) if it is the first. fn gets the last known
// watermarks at once, if any, and then every change.
func (sc *sharedCluster) watch(topic string, every time.Duration, fn func(map[int32]int64, error),
	look func(context.Context) (map[int32]int64, error)) (stop func()) {
	sc.wmu.Lock()
	if sc.watches == nil {
		sc.watches = map[string]*topicWatch{}
	}
	w := sc.watches[topic]
	if w == nil {
		w = &topicWatch{subs: map[uint64]func(map[int32]int64, error){}, stop: make(chan struct{})}
		sc.watches[topic] = w
		go sc.poll(w, every, look)
	}
	sc.nextSub++
	id := sc.nextSub
	w.subs[id] = fn
	last := w.last
	sc.wmu.Unlock()
	if last != nil {
		fn(last, nil)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			sc.wmu.Lock()
			defer sc.wmu.Unlock()
			delete(w.subs, id)
			if len(w.subs) == 0 && sc.watches[topic] == w {
				close(w.stop)
				delete(sc.watches, topic)
			}
		})
	}
}

// poll looks up w's watermarks every `every` until w stops, and tells
// every watcher when they changed. A look-up failing with a configuration
// error (authentication, authorization) tells every watcher; other
// failures tell nobody.
func (sc *sharedCluster) poll(w *topicWatch, every time.Duration, look func(context.Context) (map[int32]int64, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		marks, err := look(ctx)
		cancel()
		var cfg *sources.ConfigError
		switch {
		case err == nil:
			var fns []func(map[int32]int64, error)
			sc.wmu.Lock()
			if w.last == nil || !maps.Equal(marks, w.last) {
				w.last = marks
				fns = slices.Collect(maps.Values(w.subs))
			}
			sc.wmu.Unlock()
			for _, fn := range fns {
				fn(marks, nil)
			}
		case errors.As(err, &cfg):
			sc.wmu.Lock()
			w.last = nil
			fns := slices.Collect(maps.Values(w.subs))
			sc.wmu.Unlock()
			for _, fn := range fns {
				fn(nil, err)
			}
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// stopWatches ends every poller of sc (its cluster is closing).
func (sc *sharedCluster) stopWatches() {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	for topic, w := range sc.watches {
		close(w.stop)
		delete(sc.watches, topic)
	}
}

// KinesisFaultsEnv arms Kinesis fault injection in a node, for tests and
// chaos runs: "throttle=0.2,expire=0.01,fail=0.01,seed=7,trim=SHARD:SEQ"
// (see kinesis.ParseFaults). Never set it in production.
const KinesisFaultsEnv = "LOADNODE_KINESIS_FAULTS"

func newSourceSet(logger *slog.Logger, marksFresh time.Duration) *sourceSet {
	k := &sourceSet{logger: logger, marksFresh: marksFresh}
	if v := os.Getenv(KinesisFaultsEnv); v != "" {
		f, err := kinesis.ParseFaults(v)
		if err != nil {
			logger.Error("node: ignoring "+KinesisFaultsEnv, "err", err)
		} else {
			logger.Warn("node: Kinesis fault injection armed", "faults", v)
			k.kinesisFaults = f
			k.stopFaultLog = make(chan struct{})
			go k.logFaults(f, k.stopFaultLog)
		}
	}
	k.mu.clusters = map[string]*sharedCluster{}
	return k
}

func clusterKey(spec *api.KafkaSpec) string {
	var b strings.Builder
	brokers := slices.Clone(spec.GetBrokers())
	slices.Sort(brokers)
	b.WriteString(strings.Join(brokers, ","))
	keys := make([]string, 0, len(spec.GetProperties()))
	for k := range spec.GetProperties() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, spec.GetProperties()[k])
	}
	return b.String()
}

// open implements actors.SourceFactory.
func (k *sourceSet) open(spec *api.JobSpec) (actors.Source, error) {
	if kin := spec.GetKinesis(); kin != nil {
		// A Kinesis source is the job's own: its client is cheap and its
		// shard listing is per stream and job.
		src, err := kinesis.NewSource(kin, kinesis.Options{Logger: k.logger, Faults: k.kinesisFaults})
		if err != nil {
			return nil, err
		}
		pub, err := newPublisher(spec, nil, "kinesis://"+kin.GetStream(), k)
		if err != nil {
			src.Close()
			return nil, err
		}
		return &kinesisSource{Source: src, publisher: pub}, nil
	}
	ks := spec.GetKafka()
	if ks == nil {
		return nil, &sources.ConfigError{Err: fmt.Errorf("node: job %s has no source", spec.GetName())}
	}
	key := clusterKey(ks)
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := k.mu.clusters[key]
	if sc == nil {
		c, err := kafka.NewCluster(ks, k.logger)
		if err != nil {
			return nil, err
		}
		sc = &sharedCluster{c: c, marks: newWatermarkCache(k.marksFresh), parts: newTopicCache[[]int32](time.Second)}
		k.mu.clusters[key] = sc
	}
	pub, err := newPublisher(spec, sc.c, "kafka://"+ks.GetTopic(), k)
	if err != nil {
		if sc.refs == 0 {
			sc.stopWatches()
			sc.c.Close()
			delete(k.mu.clusters, key)
		}
		return nil, err
	}
	sc.refs++
	return &kafkaSource{owner: k, key: key, sc: sc, c: sc.c, marks: sc.marks, parts: sc.parts, topic: ks.GetTopic(), spec: ks, publisher: pub}, nil
}

func (k *sourceSet) release(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := k.mu.clusters[key]
	if sc == nil {
		return
	}
	sc.refs--
	if sc.refs <= 0 {
		sc.stopWatches()
		sc.c.Close()
		delete(k.mu.clusters, key)
	}
}

// logFaults reports the injected faults every second while they change, so
// that a test driving a real process can see that they fired.
func (k *sourceSet) logFaults(f *kinesis.Faults, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last kinesis.FaultStats
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if st := f.Stats(); st != last {
			last = st
			k.logger.Warn("node: Kinesis faults injected", "calls", st.Calls, "throttled", st.Throttled,
				"expired", st.Expired, "failed", st.Failed, "trimmed", st.Trimmed)
		}
	}
}

func (k *sourceSet) closeAll() {
	if k.stopFaultLog != nil {
		close(k.stopFaultLog)
		k.stopFaultLog = nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, sc := range k.mu.clusters {
		sc.stopWatches()
		sc.c.Close()
		delete(k.mu.clusters, key)
	}
}

// kafkaSource is one job's handle on a shared cluster.
type kafkaSource struct {
	owner  *sourceSet
	key    string
	sc     *sharedCluster
	c      *kafka.Cluster
	marks  *watermarkCache
	parts  *topicCache[[]int32]
	topic  string
	spec   *api.KafkaSpec
	closed sync.Once
	*publisher
}

var (
	_ actors.Source  = (*kafkaSource)(nil)
	_ actors.Watcher = (*kafkaSource)(nil)
	_ actors.Source  = (*kinesisSource)(nil)
	_ actors.Lineage = (*kinesisSource)(nil)

	_ actors.Publisher = (*kafkaSource)(nil)
	_ actors.Publisher = (*kinesisSource)(nil)
)

// Watch implements actors.Watcher: one poller per topic (every
// watermark_interval) serves all of the topic's idle jobs. It asks the
// broker itself, not the cache, so that new data is seen within one
// interval instead of an interval plus the cache's age.
func (s *kafkaSource) Watch(fn func(map[int32]int64, error)) (stop func()) {
	return s.sc.watch(s.topic, 2*s.owner.marksFresh, fn, func(ctx context.Context) (map[int32]int64, error) {
		return s.c.Watermarks(ctx, s.topic)
	})
}

func (s *kafkaSource) Partitions(ctx context.Context) ([]int32, error) {
	return s.parts.get(ctx, s.topic, func(ctx context.Context) ([]int32, error) {
		return s.c.Partitions(ctx, s.topic)
	})
}

// Discover chooses the job's partitions (kafka.partitions, else all of the
// topic's, including ones added later) and resolves the starts of new ones
// (kafka.offsets, else kafka.default_offset).
func (s *kafkaSource) Discover(ctx context.Context, known map[int32]bool) ([]int32, map[int32]sources.Start, error) {
	all, err := s.Partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	parts, want, err := kafka.Choose(s.spec, all, known)
	if err != nil || len(want) == 0 {
		return parts, nil, err
	}
	starts, err := s.resolve(ctx, want)
	return parts, starts, err
}

// ResolveReset resolves reset offsets of partitions the job reads.
func (s *kafkaSource) ResolveReset(ctx context.Context, reset sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error) {
	if len(reset.Positions) > 0 {
		return nil, &sources.ConfigError{Field: "reset_positions", Err: errors.New("only a Kinesis job has shard positions; use reset_offsets")}
	}
	for _, p := range slices.Sorted(maps.Keys(reset.Offsets)) {
		field := fmt.Sprintf("reset_offsets.%d", p)
		if _, ok := cur[p]; !ok {
			return nil, &sources.ConfigError{Field: field, Err: fmt.Errorf("the job does not read partition %d", p)}
		}
		if err := kafka.ParseOffset(reset.Offsets[p]); err != nil {
			return nil, &sources.ConfigError{Field: field, Err: err}
		}
	}
	return s.resolve(ctx, reset.Offsets)
}

// Render names a Kafka position: "partition 3 offset", "120".
func (s *kafkaSource) Render(p int32, st sources.Start) (string, string) {
	return fmt.Sprintf("partition %d offset", p), strconv.FormatInt(st.Offset, 10)
}

func (s *kafkaSource) resolve(ctx context.Context, want map[int32]string) (map[int32]sources.Start, error) {
	offs, err := s.c.ResolveOffsets(ctx, s.topic, want)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]sources.Start, len(offs))
	for p, o := range offs {
		out[p] = sources.Start{Offset: o}
	}
	return out, nil
}

func (s *kafkaSource) Watermarks(ctx context.Context) (map[int32]int64, error) {
	return s.marks.get(ctx, s.topic, func(ctx context.Context) (map[int32]int64, error) {
		return s.c.Watermarks(ctx, s.topic)
	})
}

// topicCache keeps the latest answer of a per-topic look-up (high
// watermarks, the partition list) for a freshness window; concurrent
// callers for one topic share one look-up.
type topicCache[T any] struct {
	fresh time.Duration
	mu    struct {
		sync.Mutex
		topics map[string]*topicEntry[T]
	}
}

type topicEntry[T any] struct {
	at    time.Time
	marks T
	ok    bool
	wait  chan struct{} // closed when the look-up in flight ends; nil if none
}

// watermarkCache caches high watermarks per topic.
type watermarkCache = topicCache[map[int32]int64]

func newWatermarkCache(fresh time.Duration) *watermarkCache {
	return newTopicCache[map[int32]int64](fresh)
}

func newTopicCache[T any](fresh time.Duration) *topicCache[T] {
	c := &topicCache[T]{fresh: fresh}
	c.mu.topics = map[string]*topicEntry[T]{}
	return c
}

// get returns a cached answer younger than the freshness window, or looks
// it up once for all callers. The value returned is shared: callers must
// not modify it. Errors are not cached.
func (c *topicCache[T]) get(ctx context.Context, topic string, look func(context.Context) (T, error)) (T, error) {
	for {
		c.mu.Lock()
		tm := c.mu.topics[topic]
		if tm == nil {
			tm = &topicEntry[T]{}
			c.mu.topics[topic] = tm
		}
		if tm.ok && time.Since(tm.at) < c.fresh {
			m := tm.marks
			c.mu.Unlock()
			return m, nil
		}
		if w := tm.wait; w != nil {
			c.mu.Unlock()
			select {
			case <-w:
				continue
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
		w := make(chan struct{})
		tm.wait = w
		c.mu.Unlock()

		marks, err := look(ctx)
		c.mu.Lock()
		tm.wait = nil
		if err == nil {
			tm.marks, tm.at, tm.ok = marks, time.Now(), true
		}
		c.mu.Unlock()
		close(w)
		return marks, err
	}
}

func (s *kafkaSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	offs := make(map[int32]int64, len(start))
	for p, st := range start {
		offs[p] = st.Offset
	}
	return s.c.NewReader(s.topic, offs)
}

func (s *kafkaSource) Close() {
	s.closed.Do(func() {
		s.publisher.shutdown()
		s.owner.release(s.key)
	})
}

// kinesisSource is one job's Kinesis stream: the kinesis package's source,
// whose spec section chooses the shards and their positions.
type kinesisSource struct {
	*kinesis.Source
	*publisher
}

// Close closes the job's publishing, then the stream's source.
func (s *kinesisSource) Close() {
	s.publisher.shutdown()
	s.Source.Close()
}

// Discover lists the chosen shards (and their descendants) and resolves
// the starts of those the job does not read yet: at the job's first look
// from the spec's positions, later (children of splits and merges) from
// their beginning.
func (s *kinesisSource) Discover(ctx context.Context, known map[int32]bool) ([]int32, map[int32]sources.Start, error) {
	parts, err := s.Partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	want := map[int32]string{}
	for _, p := range parts {
		if !known[p] {
			want[p] = ""
		}
	}
	if len(want) == 0 {
		return parts, nil, nil
	}
	starts, err := s.ResolveStarts(ctx, want, len(known) == 0)
	return parts, starts, err
}

// ResolveReset resolves new positions of shards the job reads, by shard
// id. A shard's ordinal (its progress) does not move back: records read
// again after a reset get new ordinals, so no row is overwritten by
// another.
func (s *kinesisSource) ResolveReset(ctx context.Context, reset sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error) {
	if len(reset.Offsets) > 0 {
		return nil, &sources.ConfigError{Field: "reset_offsets", Err: errors.New("a Kinesis job's positions are reset by shard id (reset_positions)")}
	}
	byID := map[string]int32{}
	for p, st := range cur {
		byID[s.Describe(p, st.Checkpoint).ID] = p
	}
	want := map[int32]string{}
	for _, id := range slices.Sorted(maps.Keys(reset.Positions)) {
		pos := reset.Positions[id]
		p, ok := byID[id]
		if !ok {
			return nil, &sources.ConfigError{Field: "reset_positions." + id, Err: fmt.Errorf("the job does not read shard %s", id)}
		}
		canon, ok := config.CanonicalPosition(pos)
		if !ok {
			return nil, &sources.ConfigError{Field: "reset_positions." + id,
				Err: fmt.Errorf("%q must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number", pos)}
		}
		want[p] = canon
	}
	out, err := s.ResolveStarts(ctx, want, true)
	if err != nil {
		return nil, err
	}
	for p, st := range out {
		st.Offset = cur[p].Offset
		out[p] = st
	}
	return out, nil
}

// Render names a Kinesis position: "shard shardId-000000000001 position",
// the sequence number (or start position).
func (s *kinesisSource) Render(p int32, st sources.Start) (string, string) {
	d := s.Describe(p, st.Checkpoint)
	return "shard " + d.ID + " position", d.Seq
}
