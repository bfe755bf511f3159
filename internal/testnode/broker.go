package testnode

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker is an in-process kfake cluster of one broker on a port of its own
// choosing, kept across Stop and Restart (with BrokerOptions.DataDir its
// log survives them too). It outlives the loadnode processes a test kills.
type Broker struct {
	opts  BrokerOptions
	port  int
	c     *kfake.Cluster
	cl    *kgo.Client
	admin *kadm.Client
}

// BrokerOptions says how to start a Broker.
type BrokerOptions struct {
	// DataDir persists the log (kfake.DataDir); "" keeps it in memory, lost
	// on Stop.
	DataDir string
	// Seed are options of the first start only (kfake.SeedTopics, ...).
	Seed []kfake.Opt
}

// NewBroker starts a broker; Close stops it.
func NewBroker(o BrokerOptions) (*Broker, error) {
	b := &Broker{opts: o}
	if err := b.listen(0, o.Seed); err != nil {
		return nil, err
	}
	_, port, err := net.SplitHostPort(b.c.ListenAddrs()[0])
	if err != nil {
		b.c.Close()
		return nil, fmt.Errorf("testnode: broker address: %w", err)
	}
	b.port, _ = strconv.Atoi(port)
	b.cl, err = kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		b.c.Close()
		return nil, fmt.Errorf("testnode: broker client: %w", err)
	}
	b.admin = kadm.NewClient(b.cl)
	return b, nil
}

func (b *Broker) listen(port int, extra []kfake.Opt) error {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(port)}
	if b.opts.DataDir != "" {
		opts = append(opts, kfake.DataDir(b.opts.DataDir))
	}
	c, err := kfake.NewCluster(append(opts, extra...)...)
	if err != nil {
		return fmt.Errorf("testnode: start broker on port %d: %w", port, err)
	}
	b.c = c
	return nil
}

// StartBroker starts a broker with topics of partitions partitions for a
// test and closes it when t ends.
func StartBroker(t TB, partitions int32, topics ...string) *Broker {
	t.Helper()
	return StartBrokerOpts(t, BrokerOptions{Seed: []kfake.Opt{kfake.SeedTopics(partitions, topics...)}})
}

// StartBrokerOpts is StartBroker with options.
func StartBrokerOpts(t TB, o BrokerOptions) *Broker {
	t.Helper()
	b, err := NewBroker(o)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// Addrs are the broker's seed addresses; they stay the same across
// restarts.
func (b *Broker) Addrs() []string { return []string{"127.0.0.1:" + strconv.Itoa(b.port)} }

// Cluster is the running kfake cluster (DeleteRecords, fault control);
// Restart replaces it.
func (b *Broker) Cluster() *kfake.Cluster { return b.c }

// Client is a client of the broker (producer linger 5 ms), closed by Close.
func (b *Broker) Client() *kgo.Client { return b.cl }

// Admin is an admin client over Client.
func (b *Broker) Admin() *kadm.Client { return b.admin }

// Stop stops the broker, keeping its port and data directory for Restart.
func (b *Broker) Stop() {
	if b.c != nil {
		b.c.Close()
		b.c = nil
	}
}

// Restart starts the broker again on its port (retrying while the old
// listener's port is still closing, up to 20 s).
func (b *Broker) Restart(ctx context.Context) error {
	b.Stop()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := b.listen(b.port, nil)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%v)", err, ctx.Err())
		case <-tick.C:
		}
	}
}

// Close stops the broker and closes its client.
func (b *Broker) Close() {
	if b.cl != nil {
		b.cl.Close()
		b.cl = nil
	}
	b.Stop()
}

// EndOffsets returns the high watermark of every partition of topic.
func (b *Broker) EndOffsets(ctx context.Context, topic string) (map[int32]int64, error) {
	ends, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("testnode: end offsets of %s: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("testnode: end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}
