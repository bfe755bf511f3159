package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kfakeCmd is `loadnode kfake`: a franz-go kfake cluster (one broker) on
// 127.0.0.1 in its own process, for the benchmark and the chaos suite, so
// that the broker does not share the measured process's CPU.
//
// Once the broker listens and its seed records are written, it prints exactly
// one line to stdout, "kfake: listening on 127.0.0.1:PORT", and then nothing
// else on stdout; it runs until SIGINT or SIGTERM.
type kfakeCmd struct {
	port        int
	partitions  int
	topics      []string
	dataDir     string
	seedRecords int
	recordBytes int
}

// kfakeReadyPrefix starts the one line kfake prints once it is ready.
const kfakeReadyPrefix = "kfake: listening on "

// stringsFlag is a repeatable string flag; each value may also be a
// comma-separated list.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }

func (s *stringsFlag) Set(v string) error {
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t != "" {
			*s = append(*s, t)
		}
	}
	return nil
}

// kfakeCommands is the row of `kfake` in the command table.
var kfakeCommands = []subcommand{{name: "kfake", about: "run a one-broker Kafka-protocol cluster",
	usage: "[--port N] [--partitions N] [--topic NAME ...] [--data-dir DIR] [--seed-records N --record-bytes B]",
	more: "Runs a one-broker Kafka-protocol cluster (franz-go kfake) on 127.0.0.1 until\n" +
		"SIGINT or SIGTERM. Prints \"" + kfakeReadyPrefix + "127.0.0.1:PORT\" once ready.\n" +
		"A topic is created on its first produce too, with --partitions partitions.",
	bind: bind(func(c *kfakeCmd, fs *flagSet) *connFlags {
		fs.IntVar(&c.port, "port", 0, "broker `port` (0 picks a free one)")
		fs.IntVar(&c.partitions, "partitions", 1, "partitions of each --topic and of each topic created on first produce")
		fs.Var((*stringsFlag)(&c.topics), "topic", "topic `NAME` to create (repeatable, or comma-separated)")
		fs.StringVar(&c.dataDir, "data-dir", "", "persist the cluster's state in `DIR` (default: memory only)")
		fs.IntVar(&c.seedRecords, "seed-records", 0, "records to write to each topic before reporting ready")
		fs.IntVar(&c.recordBytes, "record-bytes", 200, "size in `bytes` of each seed record's value")
		return nil
	}, func(_ *Main, c *kfakeCmd, _ []string) error {
		switch {
		case c.port < 0 || c.port > 65535:
			return usagef("kfake: --port must be in 0..65535")
		case c.partitions < 1:
			return usagef("kfake: --partitions must be >= 1")
		case c.seedRecords < 0:
			return usagef("kfake: --seed-records must be >= 0")
		case c.recordBytes < 1:
			return usagef("kfake: --record-bytes must be >= 1")
		case c.seedRecords > 0 && len(c.topics) == 0:
			return usagef("kfake: --seed-records needs at least one --topic")
		}
		return nil
	}),
}}

func (c kfakeCmd) run(ctx context.Context, m *Main) error {
	// A topic a producer (or a consumer's metadata request) names first is
	// created then, with --partitions partitions, as a broker with
	// auto.create.topics.enable does.
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.Ports(c.port), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(c.partitions)}
	if len(c.topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(c.partitions), c.topics...))
	}
	if c.dataDir != "" {
		opts = append(opts, kfake.DataDir(c.dataDir))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("kfake: start: %w", err)
	}
	defer cluster.Close()
	addrs := cluster.ListenAddrs()
	if len(addrs) == 0 {
		return fmt.Errorf("kfake: start: no listen address")
	}
	if c.seedRecords > 0 {
		if err := seedKfake(ctx, addrs, c.topics, c.seedRecords, c.recordBytes); err != nil {
			return err
		}
	}
	fmt.Fprintf(m.Stdout, "%s%s\n", kfakeReadyPrefix, addrs[0])
	<-ctx.Done()
	return nil
}

// seedKfake writes n records of size bytes to each topic, spread over its
// partitions by the default partitioner (no key: sticky batches).
func seedKfake(ctx context.Context, brokers, topics []string, n, size int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerLinger(time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<16))
	if err != nil {
		return fmt.Errorf("kfake: seed: %w", err)
	}
	defer cl.Close()
	value := []byte(strings.Repeat("x", size))
	errc := make(chan error, 1)
	for _, t := range topics {
		for range n {
			cl.Produce(ctx, &kgo.Record{Topic: t, Value: value}, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("kfake: seed: %w", err)
	}
	select {
	case err := <-errc:
		return fmt.Errorf("kfake: seed: %w", err)
	default:
		return nil
	}
}
