package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestAlterTableExactlyOnce moves a paused job to another table of its
// database with Doris's ALTER ROUTINE LOAD ... ON, through the binary's
// sql, resumes it, SIGKILLs the node while it loads into the new table and
// restarts it: the records after the move are in the new table exactly
// once, the old table has exactly the records before it (checked with the
// SELECT a Doris user runs: count(*) against count(DISTINCT id)); on the
// embedded store and on PostgreSQL.
func TestAlterTableExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("embedded", func(t *testing.T) { testAlterTable(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testAlterTable(t, pg.CreateDatabase(t))
	})
}

func testAlterTable(t *testing.T, dsn string) {
	const (
		topic, name, src, dst = "moves", "move_load", "move_src", "move_dst"
		nOld, nNew            = 1000, 8000
	)
	b := testnode.StartBroker(t, 2, topic)
	var args []string
	db := ""
	if dsn != "" {
		args, db = pgNode(t, dsn), "analytics."
	}
	produce(t, ledger.New(), b, topic, 0, nOld)
	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	sqlOut(t, p, "CREATE TABLE "+db+src+" (id BIGINT, note STRING) DUPLICATE KEY(id)")
	sqlOut(t, p, "CREATE TABLE "+db+dst+" (id BIGINT, note STRING) DUPLICATE KEY(id)")
	sqlOut(t, p, `CREATE ROUTINE LOAD `+db+name+` ON `+src+` PROPERTIES ("format" = "json", "max_batch_interval" = "200ms", "max_batch_rows" = "500")
		FROM KAFKA ("kafka_broker_list" = "`+b.Addrs()[0]+`", "kafka_topic" = "`+topic+`", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`)
	waitDrained(t, c, b, name, topic, 120*time.Second)

	sqlOut(t, p, "PAUSE ROUTINE LOAD FOR "+db+name)
	waitFor(t, 30*time.Second, "PAUSED", func() (bool, string) {
		s := showJob(t, c, name).GetSummary().GetState()
		return s == api.JobState_PAUSED, s.String()
	})
	sqlOut(t, p, "ALTER ROUTINE LOAD FOR "+db+name+" ON "+dst)
	produce(t, ledger.New(), b, topic, nOld, nNew/2)
	sqlOut(t, p, "RESUME ROUTINE LOAD FOR "+db+name)
	waitFor(t, 120*time.Second, "part of the records after the move loaded", func() (bool, string) {
		s := showJob(t, c, name).GetStats()
		return s.GetLoadedRows() >= nOld+nNew/8, fmt.Sprintf("loaded %d", s.GetLoadedRows())
	})
	p.MustKill(t)
	c.Close()
	produce(t, ledger.New(), b, topic, nOld+nNew/2, nNew/2)
	p.MustRestart(t)
	c = p.Client(t)
	waitDrained(t, c, b, name, topic, 180*time.Second)

	if got := showJob(t, c, name).GetStats().GetLoadedRows(); got != nOld+nNew {
		t.Errorf("loaded-rows statistic = %d, want %d", got, nOld+nNew)
	}
	cols := []string{"count(*)", "count(DISTINCT id)", "min(id)", "max(id)"}
	for tbl, want := range map[string][]string{
		src: {fmt.Sprint(nOld), fmt.Sprint(nOld), "0", fmt.Sprint(nOld - 1)},
		dst: {fmt.Sprint(nNew), fmt.Sprint(nNew), fmt.Sprint(nOld), fmt.Sprint(nOld + nNew - 1)},
	} {
		if got, w := sqlOut(t, p, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM "+db+tbl), tableText(cols, want); got != w {
			t.Errorf("%s (SIGKILL once while loading after the move):\n%s\nwant\n%s", tbl, got, w)
		}
	}
	if dsn != "" {
		var count, keys int64
		pgQuery(t, dsn, `SELECT count(*), count(DISTINCT _loadnode_key) FROM public.`+dst, &count, &keys)
		if count != nNew || keys != count {
			t.Fatalf("PostgreSQL: %d rows in %s, %d distinct keys; want %d", count, dst, keys, nNew)
		}
	}
	if code, out := cli(t, p, "job", "show", name); code != 0 || !strings.Contains(out, "table "+src+"->"+dst) {
		t.Errorf("job show: the history does not show the move (table %s->%s):\n%s", src, dst, out)
	}
}
