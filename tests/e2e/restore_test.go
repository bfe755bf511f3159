package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// The jobs of issue 25 (D1), as the probe made them, into PostgreSQL: an
// AGGREGATE SUM table loaded from the beginning of topic agg1 (a record
// loaded twice shows in the sum) and a DUPLICATE table loaded from the end
// of topic end1 as it was at the job's creation (a record skipped shows in
// the count).
const (
	aggTopic, endTopic = "agg1", "end1"
	aggJob, endJob     = "aggjob", "endjob"
)

// createRestoreJobs creates both jobs through Doris statements and waits
// until the OFFSET_END job has its starts.
func createRestoreJobs(t *testing.T, c *client.Client, b *testnode.Broker) {
	t.Helper()
	broker := b.Addrs()[0]
	for _, stmt := range []string{
		`CREATE TABLE analytics.aggt (k BIGINT, v BIGINT SUM) AGGREGATE KEY(k)`,
		`CREATE TABLE analytics.endt (id BIGINT, s STRING) DUPLICATE KEY(id)`,
		`CREATE ROUTINE LOAD analytics.` + aggJob + ` ON aggt COLUMNS(k, v) PROPERTIES ("format"="json","max_batch_interval"="1")
			FROM KAFKA ("kafka_broker_list"="` + broker + `","kafka_topic"="` + aggTopic + `","property.kafka_default_offsets"="OFFSET_BEGINNING")`,
		`CREATE ROUTINE LOAD analytics.` + endJob + ` ON endt COLUMNS(id, s) PROPERTIES ("format"="json","max_batch_interval"="1")
			FROM KAFKA ("kafka_broker_list"="` + broker + `","kafka_topic"="` + endTopic + `","property.kafka_default_offsets"="OFFSET_END")`,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := dorisexec.Exec(ctx, c, stmt)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	waitFor(t, 60*time.Second, endJob+" has its starts", func() (bool, string) {
		n := len(showJob(t, c, endJob).GetPartitions())
		return n == 4, fmt.Sprintf("%d partitions", n)
	})
}

// produceRestore produces records from..to-1 to both topics: {"k": i%10,
// "v": 1} and {"id": i, "s": "v"}.
func produceRestore(t *testing.T, b *testnode.Broker, from, to int) {
	t.Helper()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs,
			&kgo.Record{Topic: aggTopic, Value: fmt.Appendf(nil, `{"k":%d,"v":1}`, i%10)},
			&kgo.Record{Topic: endTopic, Value: fmt.Appendf(nil, `{"id":%d,"s":"v"}`, i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.Client().ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// waitRestoreDrained waits until both jobs of c's node have committed the
// broker's end offsets.
func waitRestoreDrained(t *testing.T, c *client.Client, b *testnode.Broker) {
	t.Helper()
	waitDrained(t, c, b, aggJob, aggTopic, 2*time.Minute)
	waitDrained(t, c, b, endJob, endTopic, 2*time.Minute)
}

// checkRestoreTotals checks that PostgreSQL holds records 1..n exactly
// once: sum(v) of the AGGREGATE table is n, the DUPLICATE table has ids 1
// to n, each once; and that each job's loaded-rows statistic (c's node)
// is n.
func checkRestoreTotals(t *testing.T, dsn string, c *client.Client, n int64) {
	t.Helper()
	var sum, count, distinct, lo, hi int64
	pgQuery(t, dsn, `SELECT coalesce(sum(v), 0)::bigint FROM public.aggt`, &sum)
	pgQuery(t, dsn, `SELECT count(*), count(DISTINCT id), coalesce(min(id), 0), coalesce(max(id), 0) FROM public.endt`, &count, &distinct, &lo, &hi)
	aggRows := showJob(t, c, aggJob).GetStats().GetLoadedRows()
	endRows := showJob(t, c, endJob).GetStats().GetLoadedRows()
	t.Logf("records 1..%d: aggt sum(v)=%d; endt count=%d distinct=%d ids %d..%d; loaded rows %s=%d %s=%d",
		n, sum, count, distinct, lo, hi, aggJob, aggRows, endJob, endRows)
	if sum != n {
		t.Errorf("aggt: sum(v) = %d for %d records (a record loaded twice, or skipped)", sum, n)
	}
	if count != n || distinct != n || lo != 1 || hi != n {
		t.Errorf("endt: %d rows, %d distinct ids from %d to %d; want ids 1..%d once each (records skipped)", count, distinct, lo, hi, n)
	}
	if aggRows != n || endRows != n {
		t.Errorf("loaded-rows statistics %s=%d %s=%d, want %d each", aggJob, aggRows, endJob, endRows, n)
	}
}

// backupAndStop takes a backup of p through the CLI, stops p and returns
// the backup's directory.
func backupAndStop(t *testing.T, p *testnode.Proc) string {
	t.Helper()
	backup := filepath.Join(t.TempDir(), "backup")
	if code, out := cli(t, p, "backup", "--to", backup); code != 0 {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return backup
}

// TestRestorePostgresContinues (issue 25, D1): a node whose jobs load into
// PostgreSQL is backed up (`loadnode backup`) and stopped; records are
// produced while it is down; a node started on the backup as docs/backups.md
// says (`serve --data BACKUP`) goes on from PostgreSQL's progress: the
// AGGREGATE SUM counts every record once (not the first ones again), and
// the OFFSET_END job loads the records produced while the node was down
// (it does not start over at the topic's end). The backup holds the
// node's id.
func TestRestorePostgresContinues(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 4, aggTopic, endTopic)
	args := pgNode(t, dsn)
	dir := t.TempDir()
	p := startNodeArgs(t, dir, args)
	c := p.Client(t)
	createRestoreJobs(t, c, b)
	produceRestore(t, b, 1, 1001)
	waitRestoreDrained(t, c, b)
	checkRestoreTotals(t, dsn, c, 1000)
	backup := backupAndStop(t, p)

	produceRestore(t, b, 1001, 1501) // while the node is down
	p2 := startNodeArgs(t, backup, args)
	c2 := p2.Client(t)
	waitRestoreDrained(t, c2, b)
	checkRestoreTotals(t, dsn, c2, 1500)

	ids := [2]string{}
	for i, d := range []string{dir, backup} {
		id, err := os.ReadFile(filepath.Join(d, "node-id"))
		if err != nil {
			t.Fatalf("node id of %s: %v", d, err)
		}
		ids[i] = strings.TrimSpace(string(id))
	}
	if ids[0] != ids[1] {
		t.Errorf("the restored node's id %s is not the original's %s", ids[1], ids[0])
	}
}

// TestRestoreTwiceFenced (issue 25): two nodes started from one backup
// have one node id, so one owner of the jobs' state in PostgreSQL. Node A
// starts on the backup and loads; node B starts on a copy of the same
// backup, later: B claims the jobs' state, and A's next commit is refused,
// pausing A's jobs with SUPERSEDED; B loads the rest. A started again
// claims back: its jobs resume, B's pause. Every record is in PostgreSQL
// exactly once (sum and count), never loaded by both.
func TestRestoreTwiceFenced(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 4, aggTopic, endTopic)
	args := pgNode(t, dsn)
	p := startNodeArgs(t, t.TempDir(), args)
	createRestoreJobs(t, p.Client(t), b)
	produceRestore(t, b, 1, 1001)
	waitRestoreDrained(t, p.Client(t), b)
	backup := backupAndStop(t, p)
	copied := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", backup, copied).CombinedOutput(); err != nil {
		t.Fatalf("cp -a: %v: %s", err, out)
	}

	pa := startNodeArgs(t, backup, args)
	ca := pa.Client(t)
	produceRestore(t, b, 1001, 1501)
	waitRestoreDrained(t, ca, b)
	checkRestoreTotals(t, dsn, ca, 1500)

	pb := startNodeArgs(t, copied, args)
	cb := pb.Client(t)
	for _, name := range []string{aggJob, endJob} {
		waitFor(t, 60*time.Second, "B's "+name+" running", func() (bool, string) {
			s := showJob(t, cb, name).GetSummary()
			return s.GetState() == api.JobState_RUNNING, fmt.Sprintf("%s (%s: %s)", s.GetState(), s.GetReason(), s.GetReasonMessage())
		})
	}
	produceRestore(t, b, 1501, 2001) // both nodes read these
	waitRestoreDrained(t, cb, b)
	checkRestoreTotals(t, dsn, cb, 2000)
	waitSuperseded(t, "A", ca, pb)
	t.Logf("A: %s", showJob(t, ca, aggJob).GetSummary().GetReasonMessage())
	checkRestoreTotals(t, dsn, cb, 2000)

	// A started again claims the jobs back.
	ca.Close()
	if err := pa.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	ca = pa.Client(t)
	for _, name := range []string{aggJob, endJob} {
		waitFor(t, 60*time.Second, "A's "+name+" running again", func() (bool, string) {
			s := showJob(t, ca, name).GetSummary()
			return s.GetState() == api.JobState_RUNNING, fmt.Sprintf("%s (%s: %s)", s.GetState(), s.GetReason(), s.GetReasonMessage())
		})
	}
	produceRestore(t, b, 2001, 2501)
	waitRestoreDrained(t, ca, b)
	waitSuperseded(t, "B", cb, pa)
	checkRestoreTotals(t, dsn, ca, 2500)
}

// waitSuperseded waits until both jobs of the node of c are paused as
// superseded by the process of by.
func waitSuperseded(t *testing.T, node string, c *client.Client, by *testnode.Proc) {
	t.Helper()
	for _, name := range []string{aggJob, endJob} {
		waitFor(t, 60*time.Second, node+"'s "+name+" paused as superseded", func() (bool, string) {
			s := showJob(t, c, name).GetSummary()
			// By name: the test also runs against binaries without the reason.
			return s.GetState() == api.JobState_PAUSED && s.GetReason().String() == "SUPERSEDED" &&
					strings.Contains(s.GetReasonMessage(), fmt.Sprintf("pid %d ", by.PID())),
				fmt.Sprintf("%s (%s: %s)", s.GetState(), s.GetReason(), s.GetReasonMessage())
		})
	}
}
