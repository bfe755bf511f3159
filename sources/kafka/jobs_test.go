package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// TestClustersShare: specs with the same brokers (in any order) and
// properties share one Cluster, which closes with its last job; other
// properties get their own.
func TestClustersShare(t *testing.T) {
	e := newEnv(t, 2)
	addr := e.fake.ListenAddrs()[0]
	cs := NewClusters(testLogger(t), time.Second)
	t.Cleanup(cs.Close)
	open := func(brokers []string, props map[string]string) *JobSource {
		t.Helper()
		s, err := cs.Open(&api.KafkaSpec{Brokers: brokers, Topic: e.topic, Properties: props})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := open([]string{addr, "127.0.0.1:1"}, map[string]string{"client.id": "x", "fetch.min.bytes": "1"})
	b := open([]string{"127.0.0.1:1", addr}, map[string]string{"fetch.min.bytes": "1", "client.id": "x"})
	c := open([]string{addr, "127.0.0.1:1"}, map[string]string{"client.id": "y"})
	if a.Cluster() != b.Cluster() || a.Cluster() == c.Cluster() {
		t.Fatal("same brokers and properties must share one Cluster, other properties must not")
	}
	held := func() int {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		return len(cs.mu.shared)
	}
	a.Close()
	a.Close() // idempotent: b keeps its hold
	if n := held(); n != 2 {
		t.Fatalf("%d clusters held after one of two jobs closed, want 2", n)
	}
	if parts, err := b.Partitions(context.Background()); err != nil || len(parts) != 2 {
		t.Fatalf("b.Partitions = %v, %v", parts, err)
	}
	b.Close()
	c.Close()
	if n := held(); n != 0 {
		t.Fatalf("%d clusters held after every job closed", n)
	}
	if _, err := cs.Open(&api.KafkaSpec{Topic: e.topic}); err == nil {
		t.Fatal("a spec without brokers opened")
	}
}

// TestJobSourceReset: a Kafka reset names offsets of partitions the job
// reads; anything else is a ConfigError naming the field.
func TestJobSourceReset(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(t, 0, "a", "b", "c")
	cs := NewClusters(testLogger(t), time.Second)
	t.Cleanup(cs.Close)
	s, err := cs.Open(&api.KafkaSpec{Brokers: e.fake.ListenAddrs(), Topic: e.topic})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cur := map[int32]sources.Start{0: {Offset: 0}, 1: {Offset: 0}}
	for _, tc := range []struct {
		reset sources.Reset
		field string
	}{
		{sources.Reset{Positions: map[string]string{"shardId-000000000000": "LATEST"}}, "reset_positions"},
		{sources.Reset{Offsets: map[int32]string{5: "1"}}, "reset_offsets.5"},
		{sources.Reset{Offsets: map[int32]string{1: "-3"}}, "reset_offsets.1"},
	} {
		var ce *sources.ConfigError
		if _, err := s.ResolveReset(ctx, tc.reset, cur); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("ResolveReset(%+v) = %v, want a ConfigError on %s", tc.reset, err, tc.field)
		}
	}
	got, err := s.ResolveReset(ctx, sources.Reset{Offsets: map[int32]string{0: OffsetEnd}}, cur)
	if err != nil || len(got) != 1 || got[0].Offset != 3 {
		t.Fatalf("reset to the end = %v, %v; want partition 0 at 3", got, err)
	}
	if p, pos := s.Render(3, sources.Start{Offset: 120}); p != "partition 3 offset" || pos != "120" {
		t.Fatalf("Render = %q, %q", p, pos)
	}
}
