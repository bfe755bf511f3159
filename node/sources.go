package node

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kafka"
)

// kafkaSources shares one kafka.Cluster (admin connections, metadata) per
// (brokers, properties) between the jobs that use it, so that many jobs on
// one cluster do not each hold their own connections.
type kafkaSources struct {
	logger *slog.Logger
	mu     struct {
		sync.Mutex
		clusters map[string]*sharedCluster
	}
}

type sharedCluster struct {
	c    *kafka.Cluster
	refs int
}

func newKafkaSources(logger *slog.Logger) *kafkaSources {
	k := &kafkaSources{logger: logger}
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
		sc = &sharedCluster{c: c}
		k.mu.clusters[key] = sc
	}
	sc.refs++
	return &kafkaSource{owner: k, key: key, c: sc.c, topic: ks.GetTopic()}, nil
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
	return s.c.Watermarks(ctx, s.topic)
}

func (s *kafkaSource) NewReader(start map[int32]int64) (sources.Reader, error) {
	return s.c.NewReader(s.topic, start)
}

func (s *kafkaSource) Close() {
	s.closed.Do(func() { s.owner.release(s.key) })
}
