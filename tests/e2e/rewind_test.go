package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestRewindKeepsDuplicateRows rewinds a paused job to the beginning of
// its topic, through the binary (`job alter --offset` on the embedded
// store; Doris's ALTER ROUTINE LOAD ... FROM KAFKA ("kafka_offsets") on
// PostgreSQL), resumes it, SIGKILLs the node while it loads the records
// again and restarts it. A DUPLICATE table keeps every row the user asked
// to load (Doris keeps both): each id is there twice, and the table's
// count, the job's loaded-rows statistic and twice the records produced
// agree; the replay after the kill (the same key space, the same offsets)
// adds nothing.
func TestRewindKeepsDuplicateRows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("embedded", func(t *testing.T) { testRewind(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testRewind(t, pg.CreateDatabase(t))
	})
}

func testRewind(t *testing.T, dsn string) {
	const (
		topic, name, tbl = "rewound", "rewind_load", "rewound_rows"
		n                = 6000
	)
	b := testnode.StartBroker(t, 2, topic)
	var args []string
	if dsn != "" {
		args = pgNode(t, dsn)
	}
	produce(t, ledger.New(), b, topic, 0, n)
	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.MaxBatchRows = 500
	if dsn != "" {
		spec.Table.Database = "analytics"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 120*time.Second)
	if _, err := c.PauseJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	if dsn == "" {
		if code, out := cli(t, p, "job", "alter", name, "--offset", "0=OFFSET_BEGINNING", "--offset", "1=OFFSET_BEGINNING"); code != 0 {
			t.Fatalf("job alter --offset: exit %d: %s", code, out)
		}
	} else {
		stmt := `ALTER ROUTINE LOAD FOR ` + name + ` FROM KAFKA ("kafka_partitions" = "0,1", "kafka_offsets" = "OFFSET_BEGINNING,OFFSET_BEGINNING")`
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Fatalf("%s: exit %d: %s", stmt, code, out)
		}
	}
	for _, part := range showJob(t, c, name).GetPartitions() {
		if part.GetCommittedOffset() != 0 {
			t.Fatalf("after the reset: partition %d at %d, want 0", part.GetPartition(), part.GetCommittedOffset())
		}
	}
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "part of the topic loaded again", func() (bool, string) {
		s := showJob(t, c, name).GetStats()
		return s.GetLoadedRows() >= n+n/8, fmt.Sprintf("loaded %d", s.GetLoadedRows())
	})
	p.MustKill(t)
	c.Close()
	p.MustRestart(t)
	c = p.Client(t)
	waitDrained(t, c, b, name, topic, 180*time.Second)

	stat := showJob(t, c, name).GetStats().GetLoadedRows()
	rows := scanAll(t, c, tbl)
	seen := map[int64]int{}
	for _, r := range rows {
		seen[r.GetValues()[0].GetInt64()]++
	}
	bad := 0
	for i := range int64(n) {
		if seen[i] != 2 {
			bad++
		}
	}
	t.Logf("%d rows, loaded_rows %d, %d records loaded, rewound and loaded again (SIGKILL once); %d ids not twice", len(rows), stat, n, bad)
	if len(rows) != 2*n || stat != 2*n || bad != 0 {
		t.Fatalf("count(*) = %d, loaded_rows = %d, want both %d (each id twice); %d ids not twice", len(rows), stat, 2*n, bad)
	}
	if dsn != "" {
		var count, keys int64
		pgQuery(t, dsn, `SELECT count(*), count(DISTINCT _loadnode_key) FROM public.`+tbl, &count, &keys)
		if count != 2*n || keys != count {
			t.Fatalf("PostgreSQL: %d rows, %d distinct keys; want %d", count, keys, 2*n)
		}
	}
	code, out := cli(t, p, "job", "show", name)
	if code != 0 || !strings.Contains(out, "->") {
		t.Errorf("job show: the history does not show the reset:\n%s", out)
	}
}
