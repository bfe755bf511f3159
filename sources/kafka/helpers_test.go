package kafka

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// testEnv is an in-process kfake cluster with one topic, our Cluster on it,
// a producer and an admin client for the test's own changes.
type testEnv struct {
	fake    *kfake.Cluster
	cluster *Cluster
	prod    *kgo.Client
	adm     *kadm.Client
	topic   string
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("KAFKA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func newEnv(t testing.TB, partitions int32) *testEnv {
	t.Helper()
	return newEnvWith(t, partitions, nil)
}

// newEnvWith is newEnv with client properties props for the Cluster, the
// producer and the admin client, and fake cluster options.
func newEnvWith(t testing.TB, partitions int32, props map[string]string, fakeOpts ...kfake.Opt) *testEnv {
	t.Helper()
	const topic = "events"
	opts := append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic)}, fakeOpts...)
	fake, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	e := &testEnv{fake: fake, topic: topic}
	e.cluster = e.newCluster(t, props)
	return e
}

// newCluster opens a Cluster on the fake with props, and the producer and
// admin clients with the same props on first use.
func (e *testEnv) newCluster(t testing.TB, props map[string]string) *Cluster {
	t.Helper()
	c, err := NewCluster(&api.KafkaSpec{Brokers: e.fake.ListenAddrs(), Topic: e.topic, Properties: props}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if e.prod == nil {
		opts := append(c.cfg.opts(c.brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(e.topic))
		prod, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(prod.Close)
		e.prod = prod
		e.adm = kadm.NewClient(prod)
	}
	return c
}

// produce writes values to partition p in one synchronous batch.
func (e *testEnv) produce(t testing.TB, p int32, values ...string) {
	t.Helper()
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = &kgo.Record{Partition: p, Key: []byte(v), Value: []byte(v)}
	}
	if err := e.prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readUntil reads with lim until every partition's Next reaches want or the
// test deadline passes, checking position continuity on every batch: each
// record of p is at or after the previous Next[p] (exactly at it when
// contiguous), and Next covers every partition of the reader.
func readUntil(t testing.TB, r sources.Reader, lim sources.Limits, pos, want map[int32]int64, contiguous bool, each func(*sources.Batch)) []sources.Record {
	t.Helper()
	ctx := testCtx(t)
	var all []sources.Record
	for {
		done := true
		for p, w := range want {
			if pos[p] < w {
				done = false
			}
		}
		if done {
			return all
		}
		if ctx.Err() != nil {
			t.Fatalf("positions %v did not reach %v", pos, want)
		}
		b, err := r.Read(ctx, lim)
		if err != nil {
			t.Fatalf("read at %v: %v", pos, err)
		}
		checkBatch(t, b, pos, lim, contiguous)
		if each != nil {
			each(b)
		}
		all = append(all, b.Records...)
		for p, n := range b.Next {
			pos[p] = n
		}
	}
}

// checkBatch checks b against the positions before it.
func checkBatch(t testing.TB, b *sources.Batch, pos map[int32]int64, lim sources.Limits, contiguous bool) {
	t.Helper()
	if len(b.Next) != len(pos) {
		t.Fatalf("Next has %d partitions, want %d: %v", len(b.Next), len(pos), b.Next)
	}
	if lim.MaxRows > 0 && len(b.Records) > lim.MaxRows {
		t.Fatalf("%d records, MaxRows %d", len(b.Records), lim.MaxRows)
	}
	if lim.MaxBytes > 0 && len(b.Records) > 1 && b.Bytes > lim.MaxBytes {
		t.Fatalf("%d bytes in %d records, MaxBytes %d", b.Bytes, len(b.Records), lim.MaxBytes)
	}
	at := make(map[int32]int64, len(pos))
	for p, n := range pos {
		at[p] = n
	}
	var bytes int64
	for _, rec := range b.Records {
		want, ok := at[rec.Partition]
		if !ok {
			t.Fatalf("record of unread partition %d", rec.Partition)
		}
		if rec.Offset < want || contiguous && rec.Offset != want {
			t.Fatalf("partition %d: record at %d, position was %d", rec.Partition, rec.Offset, want)
		}
		at[rec.Partition] = rec.Offset + 1
		bytes += rec.Size()
	}
	for p, n := range b.Next {
		if n < at[p] || contiguous && n != at[p] {
			t.Fatalf("partition %d: Next %d, last record ends at %d", p, n, at[p])
		}
	}
	if bytes != b.Bytes {
		t.Fatalf("Bytes %d, records sum to %d", b.Bytes, bytes)
	}
}

func newTxProducer(t testing.TB, e *testEnv) *kgo.Client {
	t.Helper()
	tx, err := kgo.NewClient(kgo.SeedBrokers(e.fake.ListenAddrs()...), kgo.TransactionalID("loadnode-test"),
		kgo.DefaultProduceTopic(e.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tx.Close)
	return tx
}

func produceTx(t testing.TB, tx *kgo.Client, p int32, values ...string) {
	t.Helper()
	for _, v := range values {
		if err := tx.ProduceSync(testCtx(t), &kgo.Record{Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}
