package testnode

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestBrokerRestart: a broker with a data directory comes back on the
// same address with its log.
func TestBrokerRestart(t *testing.T) {
	b := StartBrokerOpts(t, BrokerOptions{DataDir: t.TempDir(), Seed: []kfake.Opt{kfake.SeedTopics(2, "t")}})
	addrs := b.Addrs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 10 {
		if err := b.Client().ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	before, err := b.EndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	b.Stop()
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.Addrs(); got[0] != addrs[0] || b.Cluster().ListenAddrs()[0] != addrs[0] {
		t.Fatalf("addresses %v and %v after restart, were %v", got, b.Cluster().ListenAddrs(), addrs)
	}
	after, err := b.EndOffsets(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	if after[0]+after[1] != 10 || after[0] != before[0] || after[1] != before[1] {
		t.Fatalf("end offsets %v after restart, were %v", after, before)
	}
}
