package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestAlterTopicExactlyOnce moves a paused job to another topic, through
// the binary (`job alter -f` with a changed kafka.topic on the embedded
// store; Doris's ALTER ROUTINE LOAD ... FROM KAFKA on PostgreSQL), resumes
// it, SIGKILLs the node while it loads the new topic and restarts it: the
// new topic's records are in the table exactly once (ids, count, the
// loaded-rows statistic), the old topic's rows are untouched (the new
// topic's offsets start again at 0 on the same partition numbers, which
// must not overwrite them), and records produced to the old topic after
// the pause are never loaded. job show and the history show the move.
func TestAlterTopicExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("embedded", func(t *testing.T) { testAlterTopic(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testAlterTopic(t, pg.CreateDatabase(t))
	})
}

func testAlterTopic(t *testing.T, dsn string) {
	const (
		before, after, name, tbl = "orders_v1", "orders_v2", "orders_load", "orders"
		nOld, nNew               = 3000, 20000
		newBase, lateBase        = 1_000_000, 500_000
	)
	b := testnode.StartBroker(t, 2, before, after)
	var args []string
	if dsn != "" {
		args = pgNode(t, dsn)
	}
	produce(t, ledger.New(), b, before, 0, nOld)
	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	spec := jsonSpec(name, tbl, before, b.Addrs())
	spec.MaxBatchRows = 500
	if dsn != "" {
		spec.Table.Database = "analytics"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, before, 120*time.Second)

	// Running: a topic change is refused, naming the state.
	if dsn == "" {
		if code, out := cli(t, p, "sql", `ALTER ROUTINE LOAD FOR `+name+` FROM KAFKA ("kafka_topic" = "`+after+`")`); code == 0 || !strings.Contains(out, "RUNNING") {
			t.Fatalf("alter of a RUNNING job's topic: exit %d, %s; want a refusal naming RUNNING", code, out)
		}
	}
	if _, err := c.PauseJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	// Records of the old topic after the pause are never loaded.
	produce(t, ledger.New(), b, before, lateBase, 100)
	produce(t, ledger.New(), b, after, newBase, nNew/2)
	if dsn == "" {
		code, out := cli(t, p, "job", "show", name, "-o", "yaml")
		if code != 0 {
			t.Fatalf("job show: %s", out)
		}
		changed := strings.Replace(out, "topic: "+before, "topic: "+after, 1)
		if changed == out {
			t.Fatalf("no topic %s in the YAML:\n%s", before, out)
		}
		file := filepath.Join(t.TempDir(), "job.yaml")
		if err := os.WriteFile(file, []byte(changed), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out := cli(t, p, "job", "alter", name, "-f", file); code != 0 {
			t.Fatalf("job alter -f: exit %d: %s", code, out)
		}
	} else {
		stmt := `ALTER ROUTINE LOAD FOR ` + name + ` FROM KAFKA ("kafka_topic" = "` + after + `", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Fatalf("%s: exit %d: %s", stmt, code, out)
		}
	}
	info := showJob(t, c, name)
	if got := info.GetSpec().GetKafka().GetTopic(); got != after {
		t.Fatalf("job show: topic %q after the alter, want %q", got, after)
	}
	for _, part := range info.GetPartitions() {
		if part.GetCommittedOffset() != 0 {
			t.Errorf("job show after the alter: partition %d at %d, want 0 (the new topic from its beginning)", part.GetPartition(), part.GetCommittedOffset())
		}
	}
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "part of the new topic loaded", func() (bool, string) {
		s := showJob(t, c, name).GetStats()
		return s.GetLoadedRows() >= nOld+nNew/8, fmt.Sprintf("loaded %d", s.GetLoadedRows())
	})
	p.MustKill(t)
	c.Close()
	produce(t, ledger.New(), b, after, newBase+nNew/2, nNew/2)
	p.MustRestart(t)
	c = p.Client(t)
	waitDrained(t, c, b, name, after, 180*time.Second)

	info = showJob(t, c, name)
	if got := info.GetStats().GetLoadedRows(); got != nOld+nNew {
		t.Errorf("loaded-rows statistic = %d, want %d", got, nOld+nNew)
	}
	seen := map[int64]int{}
	rows := scanAll(t, c, tbl)
	for _, r := range rows {
		id := r.GetValues()[0].GetInt64()
		seen[id]++
	}
	bad := 0
	for i := range int64(nOld) {
		if seen[i] != 1 {
			bad++
		}
	}
	for i := range int64(nNew) {
		if seen[newBase+i] != 1 {
			bad++
		}
	}
	for i := range int64(100) {
		if seen[lateBase+i] != 0 {
			t.Errorf("record %d of the old topic, produced after the pause, was loaded", lateBase+i)
		}
	}
	t.Logf("%d rows: old topic %d records, new topic %d (SIGKILL once while loading it); %d ids not exactly once", len(rows), nOld, nNew, bad)
	if len(rows) != nOld+nNew || bad != 0 {
		t.Fatalf("not exactly once: %d rows, want %d; %d ids not once", len(rows), nOld+nNew, bad)
	}
	if dsn != "" {
		var count, keys int64
		pgQuery(t, dsn, `SELECT count(*), count(DISTINCT _loadnode_key) FROM public.`+tbl, &count, &keys)
		if count != nOld+nNew || keys != count {
			t.Fatalf("PostgreSQL: %d rows, %d distinct keys; want %d", count, keys, nOld+nNew)
		}
	}
	code, out := cli(t, p, "job", "show", name)
	if code != 0 || !strings.Contains(out, "kafka.topic "+before+"->"+after) {
		t.Errorf("job show: the history does not show the move (kafka.topic %s->%s):\n%s", before, after, out)
	}
}
