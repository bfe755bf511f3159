package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// pgNode writes a node config naming the database analytics at dsn and
// returns the serve arguments that use it. Paused jobs resume after 1 s,
// so a job that lost its database comes back quickly.
func pgNode(t *testing.T, dsn string) []string {
	t.Helper()
	return pgNodeOwner(t, dsn, "")
}

// pgNodeOwner is pgNode with databases.analytics.owner ("": the node's id).
func pgNodeOwner(t *testing.T, dsn, owner string) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "node.yaml")
	cfg := fmt.Sprintf("auto_resume_base: 1s\nauto_resume_max: 4s\ndatabases:\n  analytics:\n    type: postgres\n    dsn: %q\n", dsn)
	if owner != "" {
		cfg += fmt.Sprintf("    owner: %q\n", owner)
	}
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", file}
}

// pgQuery runs one query that returns one row.
func pgQuery(t *testing.T, dsn, sql string, dest ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if err := c.QueryRow(ctx, sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pgExec runs statements.
func pgExec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestPostgresExactlyOnce loads 200,000 records into PostgreSQL through a
// real `loadnode serve`, killed with SIGKILL three times while loading, and
// PostgreSQL crash-restarted once (pg_ctl stop -m immediate) under the
// running job: every record is in the table once (count = distinct
// positions = records), the loaded-rows statistic in loadnode.jobs and
// in job show equals the record count, and a scan through loadnode gives
// every record at its position.
func TestPostgresExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		topic, name, tbl = "pgload", "pg_load", "pg_rows"
		parts            = 4
		phase            = 50000
		phases           = 4
	)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, parts, topic)
	l := ledger.New()
	dir := t.TempDir()
	args := pgNode(t, dsn)

	produce(t, l, b, topic, 0, phase)
	p := startNodeArgs(t, dir, args)
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.Table.Database = "analytics"
	spec.DesiredConcurrentNumber = parts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	cancel()
	if s := showJob(t, c, name).GetSink(); s != "postgres analytics public."+tbl {
		t.Errorf("job show names the sink %q, want %q", s, "postgres analytics public."+tbl)
	}

	// loaded waits until the job has loaded at least n rows.
	loaded := func(n int64) {
		t.Helper()
		waitFor(t, 120*time.Second, fmt.Sprintf("%d loaded rows", n), func() (bool, string) {
			info := showJob(t, c, name)
			return info.GetStats().GetLoadedRows() >= n, fmt.Sprintf("loaded %d, state %s (%s: %s)",
				info.GetStats().GetLoadedRows(), info.GetSummary().GetState(), info.GetSummary().GetReason(), info.GetSummary().GetReasonMessage())
		})
	}
	kills := 0
	for ph := 1; ph <= phases; ph++ {
		// Part of this phase's records are loaded: interrupt the load.
		loaded(int64(ph-1)*phase + phase/5)
		switch ph {
		case 3:
			// PostgreSQL crashes under the running job; the node stays.
			if err := pg.Crash(); err != nil {
				t.Fatal(err)
			}
			t.Logf("phase %d: PostgreSQL crash-restarted at %d loaded rows", ph, showJob(t, c, name).GetStats().GetLoadedRows())
		default:
			p.MustKill(t)
			c.Close()
			kills++
			t.Logf("phase %d: SIGKILL %d", ph, kills)
		}
		if ph < phases {
			produce(t, l, b, topic, ph*phase, phase)
		}
		if ph != 3 {
			p.MustRestart(t)
			c = p.Client(t)
		}
	}
	waitDrained(t, c, b, name, topic, 180*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)

	records := int64(phases * phase)
	var count, distinct, statRows, keys int64
	pgQuery(t, dsn, `SELECT count(*), count(DISTINCT (_loadnode_partition, _loadnode_offset)), count(DISTINCT _loadnode_key) FROM public.`+tbl,
		&count, &distinct, &keys)
	pgQuery(t, dsn, `SELECT loaded_rows FROM loadnode.jobs`, &statRows)
	t.Logf("PostgreSQL: records=%d count=%d distinct positions=%d distinct keys=%d loadnode.jobs.loaded_rows=%d (kills=%d, PostgreSQL crashes=1)",
		records, count, distinct, keys, statRows, kills)
	if count != records || distinct != records || keys != records || statRows != records {
		t.Fatalf("not exactly once in PostgreSQL: records=%d count=%d distinct=%d keys=%d loaded_rows=%d", records, count, distinct, keys, statRows)
	}
	if kills != 3 {
		t.Fatalf("%d kills, want 3", kills)
	}
}

// TestPostgresTwoIncarnations runs the same job (the same id, spec and
// topic) on two nodes with their own stores and one PostgreSQL database,
// configured with one owner (as a copied data directory would be): two
// incarnations of one job. Only the incarnation that claimed the owner last
// may write (issue 25, D1): the other's next commit is refused and its job
// pauses SUPERSEDED; started again, it claims back, and the other is
// refused in turn. Every record is in the table once and the loaded-rows
// statistic equals the record count.
//
// The race is proved with what each node records, not left to timing and
// not with a server statistic PostgreSQL publishes late: each node's own
// job shows the refusal (PAUSED, SUPERSEDED, naming the database), and no
// commit of a refused incarnation lands (the data checks). Records arrive
// only after the claim they test, so each refusal is certain.
func TestPostgresTwoIncarnations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const (
		topic, name, tbl = "pgtwins", "twin_load", "twin_rows"
		first, together  = 20000, 40000 // node 0 alone, then after node 1's claim
		held             = 20000        // loaded after node 0 claims back
		records          = first + together + held
	)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	args := pgNodeOwner(t, dsn, "twins")
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.Table.Database = "analytics"
	spec.MaxBatchRows = 500

	type node struct {
		p *testnode.Proc
		c *client.Client
	}
	var nodes []*node
	start := func() {
		t.Helper()
		p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: args, HTTP: true})
		n := &node{p: p, c: p.Client(t)}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		info, err := n.c.CreateJob(ctx, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if id := info.GetSummary().GetId(); id != 1 {
			t.Fatalf("node %d gave the job id %d; the test needs both to use 1", len(nodes), id)
		}
		nodes = append(nodes, n)
	}
	// stored waits until the database's progress of the job covers n
	// records.
	stored := func(n int64) {
		t.Helper()
		waitFor(t, 180*time.Second, fmt.Sprintf("PostgreSQL progress at %d", n), func() (bool, string) {
			var sum int64
			pgQuery(t, dsn, `SELECT coalesce(sum(position), 0) FROM loadnode.progress WHERE job = 1`, &sum)
			return sum == n, fmt.Sprintf("progress sum %d of %d", sum, n)
		})
	}
	// caughtUp waits until node i's incarnation runs with progress at n
	// records (what its actor holds: job show), so that it has nothing
	// to commit; it returns the job's show.
	caughtUp := func(i int, n int64) *api.JobInfo {
		t.Helper()
		var info *api.JobInfo
		waitFor(t, 180*time.Second, fmt.Sprintf("node %d at %d records", i, n), func() (bool, string) {
			info = showJob(t, nodes[i].c, name)
			var sum int64
			for _, p := range info.GetPartitions() {
				sum += p.GetCommittedOffset()
			}
			s := info.GetSummary()
			return s.GetState() == api.JobState_RUNNING && sum == n, fmt.Sprintf("%s (%s: %s), progress %d, refused %d",
				s.GetState(), s.GetReason(), s.GetReasonMessage(), sum, info.GetRefusedCommits())
		})
		return info
	}
	// superseded waits until node i's job is paused SUPERSEDED, which it
	// records when the database refuses its commit for a later claim.
	superseded := func(i int) *api.JobInfo {
		t.Helper()
		var info *api.JobInfo
		waitFor(t, 180*time.Second, fmt.Sprintf("node %d's job paused SUPERSEDED", i), func() (bool, string) {
			info = showJob(t, nodes[i].c, name)
			s := info.GetSummary()
			return s.GetState() == api.JobState_PAUSED && s.GetReason() == api.Reason_SUPERSEDED,
				fmt.Sprintf("%s (%s: %s)", s.GetState(), s.GetReason(), s.GetReasonMessage())
		})
		t.Logf("node %d superseded after %d refused commits: %s", i, info.GetRefusedCommits(), info.GetSummary().GetReasonMessage())
		if info.GetRefusedCommits() < 1 || !strings.Contains(info.GetLastRefusal(), "postgres: commit job 1") {
			t.Errorf("node %d paused SUPERSEDED but counts %d refused commits (last %q); want the database's refusal counted",
				i, info.GetRefusedCommits(), info.GetLastRefusal())
		}
		return info
	}

	// Node 0 loads alone.
	produce(t, l, b, topic, 0, first)
	start()
	stored(first)
	caughtUp(0, first)
	// Node 1's incarnation claims the owner when it creates the job and
	// reads node 0's progress; then the records come: node 1 loads them,
	// node 0's commit of them is refused.
	start()
	caughtUp(1, first)
	produce(t, l, b, topic, first, together)
	stored(first + together)
	caughtUp(1, first+together)
	superseded(0)
	// Node 0 started again claims back; node 1's next commit is refused.
	if err := nodes[0].p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	nodes[0].c = nodes[0].p.Client(t)
	caughtUp(0, first+together)
	produce(t, l, b, topic, first+together, held)
	stored(first + together + held)
	caughtUp(0, first+together+held)
	superseded(1)

	var count, distinct, keys, statRows, batches, fence int64
	pgQuery(t, dsn, `SELECT count(*), count(DISTINCT (_loadnode_partition, _loadnode_offset)), count(DISTINCT _loadnode_key) FROM public.`+tbl,
		&count, &distinct, &keys)
	pgQuery(t, dsn, `SELECT loaded_rows, committed_batches, fence FROM loadnode.jobs WHERE job = 1`, &statRows, &batches, &fence)
	t.Logf("records=%d count=%d distinct=%d keys=%d loaded_rows=%d committed_batches=%d fence=%d",
		records, count, distinct, keys, statRows, batches, fence)
	for i, n := range nodes {
		info := showJob(t, n.c, name)
		t.Logf("node %d: %s (%s), loaded_rows %d, aborted_batches %d (stored, shared), refused_commits %d", i,
			info.GetSummary().GetState(), info.GetSummary().GetReason(), info.GetStats().GetLoadedRows(), info.GetStats().GetAbortedBatches(), info.GetRefusedCommits())
		// What /metrics says is what job show says.
		want := fmt.Sprintf("loadnode_job_refused_commits_total{job=%q} %d\n", name, info.GetRefusedCommits())
		if m := scrape(t, n.p); !strings.Contains(m, want) {
			t.Errorf("node %d: /metrics lacks %q", i, strings.TrimSpace(want))
		}
	}
	if s := showJob(t, nodes[0].c, name).GetSummary(); s.GetState() != api.JobState_RUNNING {
		t.Errorf("node 0, which claimed last, is %s (%s), want RUNNING", s.GetState(), s.GetReason())
	}
	if count != records || distinct != records || keys != records || statRows != records {
		t.Fatalf("two incarnations of one job: count=%d distinct=%d keys=%d loaded_rows=%d, want %d each", count, distinct, keys, statRows, records)
	}
}

// TestPostgresStatements: Doris statements name the database; the table
// is made in PostgreSQL at CREATE TABLE; an existing incompatible table
// and a database the node does not have are refused by field, and nothing
// is persisted.
func TestPostgresStatements(t *testing.T) {
	const topic = "pgsql"
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 3000)
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: pgNode(t, dsn), HTTP: true})
	c := p.Client(t)
	exec := func(stmt string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := dorisexec.Exec(ctx, c, stmt)
		return err
	}
	code := func(err error) api.ErrorCode {
		var ce *client.Error
		if errors.As(err, &ce) {
			return ce.Code
		}
		return api.ErrorCode_OK
	}
	field := func(err error) string {
		var ce *client.Error
		if errors.As(err, &ce) {
			return ce.Field
		}
		return ""
	}

	if err := exec("CREATE TABLE nowhere.orders (id BIGINT, note VARCHAR(64))"); code(err) != api.ErrorCode_INVALID_ARGUMENT || field(err) != "table.database" {
		t.Fatalf("CREATE TABLE in a database the node does not have: %v (field %q), want INVALID_ARGUMENT on table.database", err, field(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Count(ctx, "orders"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("a refused CREATE TABLE left a table: %v", err)
	}

	if err := exec("CREATE TABLE analytics.orders (id BIGINT, note VARCHAR(64)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4"); err != nil {
		t.Fatal(err)
	}
	var n int64
	pgQuery(t, dsn, `SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'orders'`, &n)
	if n != 6 { // the key, job, partition, offset, and the two columns
		t.Fatalf("public.orders has %d columns after CREATE TABLE, want 6", n)
	}
	// A table PostgreSQL has already, with another type.
	pgExec(t, dsn, `CREATE TABLE public.legacy (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, id integer, note text)`)
	err := exec("CREATE TABLE analytics.legacy (id BIGINT, note VARCHAR(64))")
	if code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "column id") ||
		!strings.Contains(err.Error(), "integer") || !strings.Contains(err.Error(), "bigint") {
		t.Fatalf("CREATE TABLE over an incompatible PostgreSQL table: %v, want INVALID_ARGUMENT naming column id, integer and bigint", err)
	}
	if _, err := c.Count(ctx, "legacy"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("a refused CREATE TABLE left a table: %v", err)
	}

	if err := exec(`CREATE ROUTINE LOAD nowhere.orders_load ON orders PROPERTIES ("format" = "json")
		FROM KAFKA ("kafka_broker_list" = "` + b.Addrs()[0] + `", "kafka_topic" = "` + topic + `")`); code(err) != api.ErrorCode_INVALID_ARGUMENT || field(err) != "table.database" {
		t.Fatalf("CREATE ROUTINE LOAD naming another database than the table's: %v (field %q)", err, field(err))
	}
	if err := exec(`CREATE ROUTINE LOAD analytics.orders_load ON orders PROPERTIES ("format" = "json", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "` + b.Addrs()[0] + `", "kafka_topic" = "` + topic + `",
		"property.kafka_default_offsets" = "OFFSET_BEGINNING")`); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "orders_load", topic, 60*time.Second)
	checkExactlyOnce(t, c, l, "orders_load", "orders")
	if s := showJob(t, c, "orders_load").GetSink(); s != "postgres analytics public.orders" {
		t.Errorf("sink = %q", s)
	}
	// The table dropped under the running job: the next commit pauses it,
	// naming the table, and it is not auto-resumed.
	pgExec(t, dsn, `DROP TABLE public.orders`)
	dropped := time.Now()
	produce(t, l, b, topic, 3000, 100)
	waitFor(t, 60*time.Second, "a pause for the dropped table", func() (bool, string) {
		s := showJob(t, c, "orders_load").GetSummary()
		return s.GetState() == api.JobState_PAUSED && s.GetReason() == api.Reason_SINK_TABLE_CHANGED &&
			strings.Contains(s.GetReasonMessage(), "orders"), fmt.Sprintf("%s %s: %s", s.GetState(), s.GetReason(), s.GetReasonMessage())
	})
	t.Logf("paused %s after the drop: %s", time.Since(dropped).Round(time.Millisecond), showJob(t, c, "orders_load").GetSummary().GetReasonMessage())
	resp, err := http.Get("http://" + p.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `loadnode_sink_commit_seconds_count{sink="postgres:analytics"}`) {
		t.Errorf("/metrics has no commit latency of sink postgres:analytics")
	}
}

// TestPostgresSharedDatabase (issue 13): two independent nodes load into
// one PostgreSQL database with jobs of the same id (1, each node's first),
// into tables of their own. The job state is namespaced by each node's id
// (node-id in its data directory, 0600), so both jobs load exactly once;
// without the namespace the second node's job would read and fence on the
// first one's progress.
func TestPostgresSharedDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	args := pgNode(t, dsn)
	type run struct {
		topic, name, tbl string
		b                *testnode.Broker
		l                *ledger.Ledger
		c                *client.Client
		dir              string
	}
	runs := []*run{{topic: "shared_a", name: "a_load", tbl: "a_rows"}, {topic: "shared_b", name: "b_load", tbl: "b_rows"}}
	for i, r := range runs {
		r.b = testnode.StartBroker(t, 2, r.topic)
		r.l = ledger.New()
		produce(t, r.l, r.b, r.topic, 0, 20000+i*5000)
		r.dir = t.TempDir()
		p := startNodeArgs(t, r.dir, args)
		r.c = p.Client(t)
		spec := jsonSpec(r.name, r.tbl, r.topic, r.b.Addrs())
		spec.Table.Database = "analytics"
		spec.MaxBatchRows = 2000
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		info, err := r.c.CreateJob(ctx, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if id := info.GetSummary().GetId(); id != 1 {
			t.Fatalf("node %d gave the job id %d; the test needs both to use 1", i, id)
		}
	}
	var ids []string
	for _, r := range runs {
		waitDrained(t, r.c, r.b, r.name, r.topic, 120*time.Second)
		checkExactlyOnce(t, r.c, r.l, r.name, r.tbl)
		path := filepath.Join(r.dir, "node-id")
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want 0600", path, st.Mode().Perm())
		}
		b, _ := os.ReadFile(path)
		ids = append(ids, strings.TrimSpace(string(b)))
	}
	var owners, jobs, loaded int64
	pgQuery(t, dsn, `SELECT count(DISTINCT owner), count(*), sum(loaded_rows) FROM loadnode.jobs WHERE job = 1`, &owners, &jobs, &loaded)
	t.Logf("node ids %v; loadnode.jobs: %d rows of job 1, %d owners, %d loaded rows", ids, jobs, owners, loaded)
	if ids[0] == ids[1] || owners != 2 || jobs != 2 || loaded != 45000 {
		t.Fatalf("node ids %v, loadnode.jobs job 1: %d rows, %d owners, %d loaded; want 2 distinct owners, 45000 rows", ids, jobs, owners, loaded)
	}
}

// TestPostgresRestoreBackup (issue 13): docs/postgresql.md's way back from a
// database backup. A dump (pg_dump, one snapshot) is taken while the job
// loads; the load finishes; the job is paused, the dump restored over the
// database (pg_restore --clean), the job resumed: it goes on from the
// restored progress and statistics, and every record is in the table
// exactly once relative to the restored database (count = distinct keys =
// records, loaded_rows = records).
func TestPostgresRestoreBackup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const topic, name, tbl, records = "pgbackup", "backup_load", "backup_rows", 30000
	bin := pgtest.Bin(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, records)
	p := startNodeArgs(t, t.TempDir(), pgNode(t, dsn))
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.Table.Database = "analytics"
	spec.MaxBatchRows = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "a third loaded", func() (bool, string) {
		n := showJob(t, c, name).GetStats().GetLoadedRows()
		return n >= records/3, fmt.Sprintf("loaded %d", n)
	})
	dump := filepath.Join(t.TempDir(), "analytics.dump")
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "pg_dump"), "-Fc", "-f", dump, "-d", dsn).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v: %s", err, out)
	}
	waitDrained(t, c, b, name, topic, 120*time.Second)
	if _, err := c.PauseJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the job paused", func() (bool, string) {
		s := showJob(t, c, name).GetSummary()
		return s.GetState() == api.JobState_PAUSED, s.GetState().String()
	})
	if out, err := exec.CommandContext(ctx, filepath.Join(bin, "pg_restore"), "--clean", "--if-exists", "--single-transaction",
		"-d", dsn, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v: %s", err, out)
	}
	var restored, restoredStat, progress int64
	pgQuery(t, dsn, `SELECT count(*) FROM public.`+tbl, &restored)
	pgQuery(t, dsn, `SELECT loaded_rows FROM loadnode.jobs`, &restoredStat)
	pgQuery(t, dsn, `SELECT sum(position) FROM loadnode.progress`, &progress)
	t.Logf("restored: %d rows, loaded_rows %d, progress sum %d of %d records", restored, restoredStat, progress, records)
	if restored == records || restored != restoredStat || restored != progress || restored < records/3 {
		t.Fatalf("the dump is not a mid-load snapshot: %d rows, loaded_rows %d, progress %d", restored, restoredStat, progress)
	}
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "PostgreSQL progress at the end offsets again", func() (bool, string) {
		var sum int64
		pgQuery(t, dsn, `SELECT coalesce(sum(position), 0) FROM loadnode.progress`, &sum)
		return sum == records, fmt.Sprintf("progress sum %d of %d", sum, records)
	})
	waitDrained(t, c, b, name, topic, 120*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
	var count, keys, stat int64
	pgQuery(t, dsn, `SELECT count(*), count(DISTINCT _loadnode_key) FROM public.`+tbl, &count, &keys)
	pgQuery(t, dsn, `SELECT loaded_rows FROM loadnode.jobs`, &stat)
	if count != records || keys != records || stat != records {
		t.Fatalf("after the restore: count %d, distinct keys %d, loaded_rows %d; want %d each", count, keys, stat, records)
	}
}

// TestPostgresTypeChangedPauses (issue 25, D15): a column type changed in
// PostgreSQL under a running job (note: text made varchar(30), which the
// job's short notes still fit) pauses the job at its next commit with
// SINK_TABLE_CHANGED, naming the column, the type PostgreSQL has and the
// one the spec needs; a resume pauses it the same way (never with a source
// reason) until the type is restored; then it loads every record once.
func TestPostgresTypeChangedPauses(t *testing.T) {
	const topic, name, tbl = "pgtyped", "pg_typed", "typed_rows"
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 1000)
	p := startNodeArgs(t, t.TempDir(), pgNode(t, dsn))
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.Table.Database = "analytics"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)

	pgExec(t, dsn, `ALTER TABLE public.`+tbl+` ALTER COLUMN note TYPE varchar(30)`)
	produce(t, l, b, topic, 1000, 100)
	// pauses counts the job's pauses for a changed table, and fails on a
	// pause for a source reason.
	pauses := func() (int, string) {
		info := showJob(t, c, name)
		n := 0
		for _, tr := range info.GetHistory() {
			if tr.GetTo() != api.JobState_PAUSED {
				continue
			}
			switch tr.GetReason() {
			case api.Reason_SINK_TABLE_CHANGED:
				n++
			case api.Reason_SOURCE_CONFIG_ERROR, api.Reason_SOURCE_UNREACHABLE:
				t.Fatalf("the changed column paused the job with a source reason: %s: %s", tr.GetReason(), tr.GetMessage())
			}
		}
		s := info.GetSummary()
		return n, fmt.Sprintf("%s %s: %s (%d pauses for a changed table)", s.GetState(), s.GetReason(), s.GetReasonMessage(), n)
	}
	paused := func(want int) {
		t.Helper()
		waitFor(t, 60*time.Second, fmt.Sprintf("pause %d for the changed column", want), func() (bool, string) {
			n, what := pauses()
			s := showJob(t, c, name).GetSummary()
			return n >= want && s.GetState() == api.JobState_PAUSED, what
		})
		msg := showJob(t, c, name).GetSummary().GetReasonMessage()
		for _, w := range []string{`"public"."` + tbl + `"`, "column note", "character varying(30)", "text"} {
			if !strings.Contains(msg, w) {
				t.Fatalf("pause message %q does not say %q", msg, w)
			}
		}
	}
	paused(1)
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	paused(2) // its table prepared again: still changed

	pgExec(t, dsn, `ALTER TABLE public.`+tbl+` ALTER COLUMN note TYPE text`)
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
}
