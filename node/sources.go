package node

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kafka"
)

// kafkaSources shares one kafka.Cluster (admin connections, metadata) per
// (brokers, properties) between the jobs that use it, so that many jobs on
// one cluster do not each hold their own connections.
type kafkaSources struct {
	logger     *slog.Logger
	marksFresh time.Duration
	mu         struct {
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
}

func newKafkaSources(logger *slog.Logger, marksFresh time.Duration) *kafkaSources {
	k := &kafkaSources{logger: logger, marksFresh: marksFresh}
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
func (k *kafkaSources) open(spec *api.JobSpec) (actors.Source, error) {
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
		sc = &sharedCluster{c: c, marks: newWatermarkCache(k.marksFresh)}
		k.mu.clusters[key] = sc
	}
	sc.refs++
	return &kafkaSource{owner: k, key: key, c: sc.c, marks: sc.marks, topic: ks.GetTopic()}, nil
}

func (k *kafkaSources) release(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	sc := k.mu.clusters[key]
	if sc == nil {
		return
	}
	sc.refs--
	if sc.refs <= 0 {
		sc.c.Close()
		delete(k.mu.clusters, key)
	}
}

func (k *kafkaSources) closeAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, sc := range k.mu.clusters {
		sc.c.Close()
		delete(k.mu.clusters, key)
	}
}

// kafkaSource is one job's handle on a shared cluster.
type kafkaSource struct {
	owner  *kafkaSources
	key    string
	c      *kafka.Cluster
	marks  *watermarkCache
	topic  string
	closed sync.Once
}

var _ actors.Source = (*kafkaSource)(nil)

func (s *kafkaSource) Partitions(ctx context.Context) ([]int32, error) {
	return s.c.Partitions(ctx, s.topic)
}

func (s *kafkaSource) ResolveOffsets(ctx context.Context, want map[int32]string) (map[int32]int64, error) {
	return s.c.ResolveOffsets(ctx, s.topic, want)
}

func (s *kafkaSource) Watermarks(ctx context.Context) (map[int32]int64, error) {
	return s.marks.get(ctx, s.topic, func(ctx context.Context) (map[int32]int64, error) {
		return s.c.Watermarks(ctx, s.topic)
	})
}

// watermarkCache keeps the latest high watermarks per topic for a freshness
// window; concurrent callers for one topic share one look-up.
type watermarkCache struct {
	fresh time.Duration
	mu    struct {
		sync.Mutex
		topics map[string]*topicMarks
	}
}

type topicMarks struct {
	at    time.Time
	marks map[int32]int64
	err   error
	wait  chan struct{} // closed when the look-up in flight ends; nil if none
}

func newWatermarkCache(fresh time.Duration) *watermarkCache {
	c := &watermarkCache{fresh: fresh}
	c.mu.topics = map[string]*topicMarks{}
	return c
}

// get returns cached marks younger than the freshness window, or looks them
// up once for all callers. The map returned is shared: callers must not
// modify it.
func (c *watermarkCache) get(ctx context.Context, topic string, look func(context.Context) (map[int32]int64, error)) (map[int32]int64, error) {
	for {
		c.mu.Lock()
		tm := c.mu.topics[topic]
		if tm == nil {
			tm = &topicMarks{}
			c.mu.topics[topic] = tm
		}
		if tm.marks != nil && time.Since(tm.at) < c.fresh {
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
				return nil, ctx.Err()
			}
		}
		w := make(chan struct{})
		tm.wait = w
		c.mu.Unlock()

		marks, err := look(ctx)
		c.mu.Lock()
		tm.wait = nil
		if err == nil {
			tm.marks, tm.at = marks, time.Now()
		}
		c.mu.Unlock()
		close(w)
		return marks, err
	}
}

func (s *kafkaSource) NewReader(start map[int32]int64) (sources.Reader, error) {
	return s.c.NewReader(s.topic, start)
}

func (s *kafkaSource) Close() {
	s.closed.Do(func() { s.owner.release(s.key) })
}
