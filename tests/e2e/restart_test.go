package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
)

// produce writes n records with ids from..from+n-1 to topic, spread over
// its partitions by key, and records in l the id the broker acknowledged
// at each position: writer 0, seq = id (one producer goroutine, so within
// a partition the ids increase with the offset).
func produce(t *testing.T, l *ledger.Ledger, b *testnode.Broker, topic string, from, n int) {
	t.Helper()
	if err := tryProduce(l, b, topic, from, n); err != nil {
		t.Fatal(err)
	}
}

// tryProduce is produce for goroutines other than the test's.
func tryProduce(l *ledger.Ledger, b *testnode.Broker, topic string, from, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for i := from; i < from+n; i++ {
		wg.Add(1)
		id := int64(i)
		rec := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: fmt.Appendf(nil, `{"id":%d,"note":"record %d"}`, i, i)}
		b.Client().Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				select {
				case errs <- err:
				default:
				}
				return
			}
			l.Add(ledger.Position{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}, ledger.Payload{W: 0, Seq: id})
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return fmt.Errorf("produce: %w", err)
	default:
		return nil
	}
}

func showJob(t *testing.T, c *client.Client, name string) *api.JobInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.ShowJob(ctx, name)
	if err != nil {
		t.Fatalf("show %s: %v", name, err)
	}
	return info
}

// waitDrained waits until the job's progress equals the broker's end
// offsets on every partition.
func waitDrained(t *testing.T, c *client.Client, b *testnode.Broker, name, topic string, d time.Duration) {
	t.Helper()
	ends := endOffsets(t, b, topic)
	waitFor(t, d, "progress = end offsets", func() (bool, string) {
		info := showJob(t, c, name)
		got := map[int32]int64{}
		for _, p := range info.Partitions {
			got[p.Partition] = p.CommittedOffset
		}
		for p, end := range ends {
			if got[p] != end {
				return false, fmt.Sprintf("state %s (%s: %s), progress %v, ends %v", info.Summary.State, info.Summary.Reason, info.Summary.ReasonMessage, got, ends)
			}
		}
		return true, ""
	})
}

// checkExactlyOnce reads the whole table and checks with ledger.Check that
// every produced record is there exactly once, at its position, with its
// id, below the job's progress; and that the job's loaded-rows statistic
// (committed with the rows) equals the record count, which a batch
// committed twice would inflate even though its rows overwrite themselves.
func checkExactlyOnce(t *testing.T, c *client.Client, l *ledger.Ledger, jobName, tableName string) {
	t.Helper()
	info := showJob(t, c, jobName)
	expected := l.Topic(info.GetSpec().GetKafka().GetTopic())
	scanned := scanAll(t, c, tableName)
	rows := make([]ledger.Row, len(scanned))
	for i, r := range scanned {
		// The id is the payload; the note column is not checked.
		rows[i] = ledger.Row{Job: r.GetJobId(), Partition: r.GetPartition(), Offset: r.GetOffset(), Payload: ledger.Payload{W: 0, Seq: r.Values[0].GetInt64()}}
		if _, ok := r.Values[0].GetKind().(*api.Value_Int64); !ok {
			rows[i].Bad = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	count, err := c.Count(ctx, tableName)
	if err != nil {
		t.Fatal(err)
	}
	cnt := ledger.Check(expected, rows, ledger.JobViewFromInfo(info), ledger.CheckOptions{Final: true})
	t.Logf("records=%d rows=%d count=%d loaded_rows=%d %s batches=%d",
		len(expected), len(scanned), count, info.Stats.LoadedRows, cnt, info.Stats.CommittedBatches)
	for _, d := range cnt.Details {
		t.Logf("  %s", d)
	}
	if cnt.Lost != 0 || cnt.Duplicated != 0 || cnt.Inconsistent != 0 || cnt.Torn != 0 || cnt.Order != 0 ||
		int(count) != len(expected) || len(scanned) != len(expected) {
		t.Fatalf("not exactly once: records=%d rows=%d count=%d %s", len(expected), len(scanned), count, cnt)
	}
	if cnt.StatsDelta != 0 || info.Stats.LoadedRows != int64(len(expected)) {
		t.Fatalf("loaded_rows statistic = %d, want %d: some batch was committed twice", info.Stats.LoadedRows, len(expected))
	}
}

func records(t *testing.T) int {
	if s := os.Getenv("LOADNODE_E2E_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("LOADNODE_E2E_RECORDS: %v", err)
		}
		return n
	}
	return 200_000
}

// TestRestartMidLoad kills a loading node with SIGKILL several times while
// a producer keeps writing, and restarts it on the same data directory; the
// table must end with every record exactly once and progress equal to the
// end offsets.
func TestRestartMidLoad(t *testing.T) {
	const topic, name, tbl = "orders", "orders_load", "orders"
	const kills = 3
	total := records(t)
	b := testnode.StartBroker(t, 4, topic)
	l := ledger.New()
	dir := t.TempDir()

	// A quarter up front, the rest while the node loads and dies.
	first := total / 4
	produce(t, l, b, topic, 0, first)
	p := startNode(t, dir)
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.MaxBatchRows = 2000 // many commits, so kills land between and inside them
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatalf("create: %v", err) // testnode dumps the node's output
	}
	cancel()
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		const chunk = 2000
		for at := first; at < total; at += chunk {
			if err := tryProduce(l, b, topic, at, min(chunk, total-at)); err != nil {
				t.Error(err)
				return
			}
			// Pace the producer so that loading and producing overlap.
			select {
			case <-time.After(5 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
	}()
	step := int64(total / (kills + 2))
	var loaded int64
	for kill := 1; kill <= kills; kill++ {
		target := loaded + step/2
		var lag int64
		waitFor(t, 90*time.Second, "loading before kill", func() (bool, string) {
			info := showJob(t, c, name)
			loaded, lag = info.Stats.LoadedRows, info.TotalLag
			return loaded >= target, fmt.Sprintf("loaded %d of %d, state %s %s", loaded, target, info.Summary.State, info.Summary.ReasonMessage)
		})
		c.Close()
		p.MustKill(t)
		t.Logf("kill %d: SIGKILL at %d rows loaded (lag %d when last shown)", kill, loaded, lag)
		p.MustRestart(t)
		c = p.Client(t)
		info := showJob(t, c, name)
		if info.Summary.State == api.JobState_PAUSED || info.Summary.State == api.JobState_STOPPED {
			t.Fatalf("after restart the job is %s (%s)", info.Summary.State, info.Summary.ReasonMessage)
		}
		if info.Stats.LoadedRows < loaded {
			t.Fatalf("loaded rows went back from %d to %d across a restart", loaded, info.Stats.LoadedRows)
		}
	}
	<-producing
	waitDrained(t, c, b, name, topic, 120*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
}
