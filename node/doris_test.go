package node_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/node"
)

// dorisNode is an embedded node with a one-partition kfake topic "events",
// driven by Doris statements through exec.Exec (package doris/exec).
type dorisNode struct {
	t       *testing.T
	ctx     context.Context
	dir     string
	kc      *kfake.Cluster
	n       *node.Node
	c       *client.Client
	produce *kgo.Client
}

func startDorisNode(t *testing.T) *dorisNode {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	t.Cleanup(cancel)
	pc, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pc.Close)
	d := &dorisNode{t: t, ctx: ctx, dir: t.TempDir(), kc: kc, produce: pc}
	d.start()
	return d
}

// start starts the node on d.dir (again, after stop).
func (d *dorisNode) start() {
	d.t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = d.dir, "127.0.0.1:0"
	n, err := node.Start(d.ctx, node.Config{Node: cfg})
	if err != nil {
		d.t.Fatal(err)
	}
	c, err := client.Dial(d.ctx, n.Addr(), client.WithTimeout(30*time.Second))
	if err != nil {
		n.Close()
		d.t.Fatal(err)
	}
	d.n, d.c = n, c
	d.t.Cleanup(d.stop)
}

func (d *dorisNode) stop() {
	if d.c != nil {
		d.c.Close()
		d.c = nil
	}
	if d.n != nil {
		d.n.Close()
		d.n = nil
	}
}

func (d *dorisNode) exec(q string) *api.ExecResponse {
	d.t.Helper()
	res, err := exec.Exec(d.ctx, d.c, q)
	if err != nil {
		d.t.Fatalf("%s: %v", q, err)
	}
	return res
}

// send produces each value as one record of "events".
func (d *dorisNode) send(values ...string) {
	d.t.Helper()
	for _, v := range values {
		if err := d.produce.ProduceSync(d.ctx, &kgo.Record{Topic: "events", Value: []byte(v)}).FirstErr(); err != nil {
			d.t.Fatal(err)
		}
	}
}

// waitJob polls job name until ok holds, or fails after the context's
// deadline naming what it last saw.
func (d *dorisNode) waitJob(name, what string, ok func(*api.JobInfo) bool) *api.JobInfo {
	d.t.Helper()
	var last *api.JobInfo
	for {
		info, err := d.c.ShowJob(d.ctx, name)
		if err == nil && ok(info) {
			return info
		}
		if err == nil {
			last = info
		}
		select {
		case <-d.ctx.Done():
			d.t.Fatalf("job %s: %s not reached; last %v (%v)", name, what, last.GetSummary(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// rows reads table name as text rows, sorted.
func (d *dorisNode) rows(name string) []string {
	d.t.Helper()
	_, rows, err := d.c.Scan(d.ctx, name, 1000)
	if err != nil {
		d.t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		var cells []string
		for _, v := range r.GetValues() {
			switch x := v.GetKind().(type) {
			case *api.Value_Int64:
				cells = append(cells, fmt.Sprint(x.Int64))
			case *api.Value_String_:
				cells = append(cells, x.String_)
			case *api.Value_Null:
				cells = append(cells, `\N`)
			default:
				cells = append(cells, fmt.Sprint(v))
			}
		}
		out = append(out, strings.Join(cells, ","))
	}
	slices.Sort(out)
	return out
}

func state(s api.JobState) func(*api.JobInfo) bool {
	return func(i *api.JobInfo) bool { return i.GetSummary().GetState() == s }
}

// TestDorisAlterLoadProperties: ALTER ROUTINE LOAD's load_property clauses
// (Doris suite test_routine_load_alter: COLUMNS(...) and COLUMNS
// TERMINATED BY on a PAUSED job; its checkpoint suite adds WHERE) change
// how the records read after RESUME become rows; a job that is not PAUSED
// refuses them as Doris does; a mapping that does not compile against the
// table is refused by the ALTER, naming it; the alter is journaled, so it
// outlives a restart; and an ALTER with only FROM KAFKA offsets (no
// PROPERTIES) resets them.
func TestDorisAlterLoadProperties(t *testing.T) {
	d := startDorisNode(t)
	d.exec("CREATE TABLE t (id BIGINT, v STRING, w STRING) DUPLICATE KEY(id)")
	d.send("1|a")
	d.exec(fmt.Sprintf(`CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY "|", COLUMNS(id, v)
		PROPERTIES ("max_batch_interval" = "1") FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(d.kc.ListenAddrs(), ",")))
	d.waitJob("j", "1 row loaded", func(i *api.JobInfo) bool { return i.GetStats().GetLoadedRows() == 1 })

	// RUNNING: refused, naming the state, as Doris refuses ("Only
	// supports modification of PAUSED jobs").
	_, err := exec.Exec(d.ctx, d.c, "ALTER ROUTINE LOAD FOR j COLUMNS(id, v, w)")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != api.ErrorCode_FAILED_PRECONDITION || !strings.Contains(ce.Message, "pause it") || !strings.Contains(ce.Message, "columns_mapping") {
		t.Fatalf("ALTER COLUMNS of a running job = %v; want FAILED_PRECONDITION naming columns_mapping", err)
	}

	d.exec("PAUSE ROUTINE LOAD FOR j")
	d.waitJob("j", "PAUSED", state(api.JobState_PAUSED))
	for q, field := range map[string]string{
		"ALTER ROUTINE LOAD FOR j COLUMNS(id, v, w = nosuchfn(v))": "columns_mapping",
		"ALTER ROUTINE LOAD FOR j WHERE nosuchcol > 1":             "where",
		"ALTER ROUTINE LOAD FOR j DELETE ON id = 1":                "delete_on", // a DUPLICATE table, no MERGE
		"ALTER ROUTINE LOAD FOR j ORDER BY v":                      "sequence_column",
	} {
		_, err := exec.Exec(d.ctx, d.c, q)
		if !errors.As(err, &ce) || ce.Code != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(ce.Error(), field) {
			t.Errorf("%s = %v; want INVALID_ARGUMENT naming %s", q, err, field)
		}
	}
	// The suite's two statements, then a WHERE.
	d.exec("ALTER ROUTINE LOAD FOR j COLUMNS(id, v, w)")
	d.exec("ALTER ROUTINE LOAD FOR j COLUMNS TERMINATED BY ','")
	d.exec("ALTER ROUTINE LOAD FOR j WHERE id > 2")
	info, err := d.c.ShowJob(d.ctx, "j")
	if err != nil {
		t.Fatal(err)
	}
	if s := info.GetSpec(); !slices.Equal(s.GetColumnsMapping(), []string{"id", "v", "w"}) || s.GetColumnSeparator() != "," || s.GetWhere() != "id > 2" {
		t.Fatalf("spec after the alters: columns %q, separator %q, where %q", s.GetColumnsMapping(), s.GetColumnSeparator(), s.GetWhere())
	}

	// Journaled: a restarted node has the altered job.
	d.stop()
	d.start()
	res := d.exec("SHOW CREATE ROUTINE LOAD FOR j")
	stmt := fmt.Sprint(res.GetResult())
	for _, want := range []string{"COLUMNS (`id`, `v`, `w`)", "WHERE id > 2"} {
		if !strings.Contains(stmt, want) {
			t.Errorf("SHOW CREATE ROUTINE LOAD after a restart: no %q in %s", want, stmt)
		}
	}

	d.send("2,b,x", "3,c,y")
	d.exec("RESUME ROUTINE LOAD FOR j")
	d.waitJob("j", "2 rows loaded, 1 unselected", func(i *api.JobInfo) bool {
		return i.GetStats().GetLoadedRows() == 2 && i.GetStats().GetUnselectedRows() == 1
	})
	if got, want := d.rows("t"), []string{`1,a,\N`, "3,c,y"}; !slices.Equal(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}

	// Only a reset of offsets, no PROPERTIES (was refused: "table:
	// required"): the job is PAUSED for it, as Doris needs.
	d.exec("PAUSE ROUTINE LOAD FOR j")
	d.waitJob("j", "PAUSED", state(api.JobState_PAUSED))
	d.exec(`ALTER ROUTINE LOAD FOR j FROM KAFKA ("kafka_partitions" = "0", "kafka_offsets" = "1")`)
	info = d.waitJob("j", "offset reset to 1", func(i *api.JobInfo) bool {
		p := i.GetPartitions()
		return len(p) == 1 && p[0].GetCommittedOffset() == 1
	})
	if s := info.GetSpec(); !slices.Equal(s.GetColumnsMapping(), []string{"id", "v", "w"}) || s.GetWhere() != "id > 2" {
		t.Errorf("a reset changed the spec: %v", s)
	}
}

// TestDorisMultiTableBesideUnique: a multi-table CREATE ROUTINE LOAD (no
// ON) in a database that also holds a UNIQUE table loads the DUPLICATE
// tables, names the table it leaves out, and a record naming that table is
// an error row whose reason names it; a database with no DUPLICATE table
// refuses the CREATE, naming the tables.
func TestDorisMultiTableBesideUnique(t *testing.T) {
	d := startDorisNode(t)
	d.exec("CREATE TABLE u (id BIGINT, v STRING) UNIQUE KEY(id)")
	_, err := exec.Exec(d.ctx, d.c, fmt.Sprintf(`CREATE ROUTINE LOAD mt PROPERTIES ("format" = "csv")
		FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events")`, strings.Join(d.kc.ListenAddrs(), ",")))
	if err == nil || !strings.Contains(err.Error(), "no DUPLICATE table") || !strings.Contains(err.Error(), "UNIQUE table u") {
		t.Errorf("multi-table CREATE with only a UNIQUE table = %v; want a refusal naming it", err)
	}

	d.exec("CREATE TABLE a (id BIGINT, v STRING) DUPLICATE KEY(id)")
	d.send("a|1,x", "u|2,y")
	res := d.exec(fmt.Sprintf(`CREATE ROUTINE LOAD mt COLUMNS TERMINATED BY ","
		PROPERTIES ("max_batch_interval" = "1") FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(d.kc.ListenAddrs(), ",")))
	if !strings.Contains(res.GetMessage(), "not loaded: UNIQUE table u") {
		t.Errorf("CREATE answered %q; want it to name the UNIQUE table left out", res.GetMessage())
	}
	if tables := res.GetJob().GetSpec().GetTables(); len(tables) != 1 || tables[0].GetName() != "a" {
		t.Fatalf("the job's tables = %v, want [a]", tables)
	}
	info := d.waitJob("mt", "1 loaded row and 1 error row", func(i *api.JobInfo) bool {
		return i.GetStats().GetLoadedRows() == 1 && i.GetStats().GetErrorRows() == 1
	})
	if rows := info.GetErrorRows(); len(rows) != 1 || !strings.Contains(rows[0].GetReason(), `"u"`) {
		t.Errorf("error rows = %v; want one naming table u", rows)
	}
	if got := d.rows("a"); !slices.Equal(got, []string{"1,x"}) {
		t.Errorf("rows of a = %q", got)
	}
}

// TestDorisLoadToSingleTablet: "load_to_single_tablet" = "true" is taken
// into a table DISTRIBUTED BY RANDOM and refused into one DISTRIBUTED BY
// HASH, with Doris's message.
func TestDorisLoadToSingleTablet(t *testing.T) {
	d := startDorisNode(t)
	d.exec("CREATE TABLE r (id BIGINT, v STRING) DISTRIBUTED BY RANDOM BUCKETS 10")
	d.exec("CREATE TABLE h (id BIGINT, v STRING) DISTRIBUTED BY HASH(id) BUCKETS 10")
	create := func(job, table string) error {
		_, err := exec.Exec(d.ctx, d.c, fmt.Sprintf(`CREATE ROUTINE LOAD %s ON %s PROPERTIES ("load_to_single_tablet" = "true")
			FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events")`, job, table, strings.Join(d.kc.ListenAddrs(), ",")))
		return err
	}
	if err := create("jr", "r"); err != nil {
		t.Errorf("into a RANDOM table: %v", err)
	}
	if err := create("jh", "h"); err == nil || !strings.Contains(err.Error(), "must be with random distribution") {
		t.Errorf("into a HASH table: %v; want Doris's refusal", err)
	}
}

// selectRows runs a SELECT and returns its rows, cells joined by ",".
func (d *dorisNode) selectRows(q string) []string {
	d.t.Helper()
	var out []string
	for _, r := range d.exec(q).GetResult().GetRows() {
		out = append(out, strings.Join(r.GetValues(), ","))
	}
	return out
}

// TestDorisTemporaryPartitions: Doris's temporary partitions of a RANGE
// partitioned table and of one without PARTITION BY (the corpus case
// test_stream_load__temporary_partitions): ADD TEMPORARY PARTITION, a
// routine load's TEMPORARY PARTITION (tp) loading only it (a row outside
// its range is an error row, as in Doris), a plain SELECT of the table
// that does not see its rows, SELECT ... TEMPORARY PARTITION (tp) that
// sees only them, Doris's rules (no partition's name, no overlap), SHOW
// TABLES without them, DROP TEMPORARY PARTITION, and DROP TABLE taking
// them along.
func TestDorisTemporaryPartitions(t *testing.T) {
	d := startDorisNode(t)
	d.exec(`CREATE TABLE r (id INT, v STRING) DUPLICATE KEY(id) PARTITION BY RANGE(id) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"))`)
	d.exec(`INSERT INTO r VALUES (1, 'formal')`)
	d.exec(`ALTER TABLE r ADD TEMPORARY PARTITION tp1 VALUES LESS THAN ("15") ("replication_num" = "1")`)
	for q, want := range map[string]string{
		`ALTER TABLE r ADD TEMPORARY PARTITION p1 VALUES LESS THAN ("30")`:                                                            "Duplicate partition name p1",
		`ALTER TABLE r ADD TEMPORARY PARTITION tp2 VALUES [("12"), ("30"))`:                                                           "overlaps",
		`ALTER TABLE r ADD TEMPORARY PARTITION tp2`:                                                                                   "needs VALUES LESS THAN",
		`ALTER TABLE r ADD TEMPORARY PARTITION tp2 VALUES IN ("1")`:                                                                   "VALUES LESS THAN",
		`ALTER TABLE nosuch ADD TEMPORARY PARTITION tp2`:                                                                              "nosuch",
		`CREATE ROUTINE LOAD jx ON r TEMPORARY PARTITION (nosuch) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "events")`: "temporary partition nosuch of table r does not exist",
		`SELECT * FROM r TEMPORARY PARTITION (nosuch)`:                                                                                "table r has no temporary partition nosuch",
		`ALTER TABLE r REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1)`:                                                         "not supported by loadnode",
	} {
		if _, err := exec.Exec(d.ctx, d.c, q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %v; want an error with %q", q, err, want)
		}
	}
	d.send("3,tmp", "14,tmp", "15,out")
	d.exec(fmt.Sprintf(`CREATE ROUTINE LOAD j ON r COLUMNS TERMINATED BY ",", TEMPORARY PARTITION (tp1)
		PROPERTIES ("max_batch_interval" = "1", "max_error_number" = "5") FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(d.kc.ListenAddrs(), ",")))
	info := d.waitJob("j", "2 rows loaded, 1 error row", func(i *api.JobInfo) bool {
		return i.GetStats().GetLoadedRows() == 2 && i.GetStats().GetErrorRows() == 1
	})
	if rows := info.GetErrorRows(); len(rows) != 1 || !strings.Contains(rows[0].GetReason(), "no partition for this tuple") {
		t.Errorf("error rows = %v; want 15 refused: no partition for this tuple", rows)
	}
	if got := d.selectRows("SELECT * FROM r ORDER BY id"); !slices.Equal(got, []string{"1,formal"}) {
		t.Errorf("plain SELECT = %q; want the formal partitions' row only", got)
	}
	if got := d.selectRows("SELECT * FROM r TEMPORARY PARTITION(tp1) ORDER BY id"); !slices.Equal(got, []string{"3,tmp", "14,tmp"}) {
		t.Errorf("SELECT ... TEMPORARY PARTITION(tp1) = %q", got)
	}
	res := d.exec("SHOW CREATE ROUTINE LOAD FOR j")
	if stmt := fmt.Sprint(res.GetResult()); !strings.Contains(stmt, "TEMPORARY PARTITION (`tp1`)") {
		t.Errorf("SHOW CREATE ROUTINE LOAD: %s", stmt)
	}
	// A LESS THAN temporary partition above tp1 starts at tp1's upper
	// bound (Doris); INSERT INTO ... TEMPORARY PARTITION writes it.
	d.exec(`ALTER TABLE r ADD TEMPORARY PARTITION tp2 VALUES LESS THAN ("30")`)
	if _, err := exec.Exec(d.ctx, d.c, `INSERT INTO r TEMPORARY PARTITION (tp2) VALUES (14, 'below')`); err == nil || !strings.Contains(err.Error(), "no partition for this tuple") {
		t.Errorf("INSERT below tp2's range = %v; want no partition for this tuple", err)
	}
	d.exec(`INSERT INTO r TEMPORARY PARTITION (tp2) VALUES (15, 'tp2')`)
	if got := d.selectRows("SELECT * FROM r TEMPORARY PARTITION tp2"); !slices.Equal(got, []string{"15,tp2"}) {
		t.Errorf("SELECT ... TEMPORARY PARTITION tp2 = %q", got)
	}
	var names []string
	for _, ti := range d.exec("SHOW TABLES").GetTables() {
		names = append(names, ti.GetSpec().GetName())
	}
	if !slices.Equal(names, []string{"r"}) {
		t.Errorf("SHOW TABLES = %q; want [r]", names)
	}
	// A job loads tp1: neither it nor the table can be dropped.
	if _, err := exec.Exec(d.ctx, d.c, "DROP TABLE r"); err == nil || !strings.Contains(err.Error(), "temporary partition tp1 of table r is loaded by job") {
		t.Errorf("DROP TABLE while a job loads a temporary partition = %v", err)
	}
	d.exec("STOP ROUTINE LOAD FOR j")
	d.waitJob("j", "STOPPED", state(api.JobState_STOPPED))
	d.exec("ALTER TABLE r DROP TEMPORARY PARTITION tp1")
	if _, err := exec.Exec(d.ctx, d.c, "SELECT * FROM r TEMPORARY PARTITION (tp1)"); err == nil {
		t.Error("SELECT of a dropped temporary partition: no error")
	}
	d.exec("ALTER TABLE r DROP TEMPORARY PARTITION IF EXISTS tp1")
	d.exec("DROP TABLE r")
	d.exec(`CREATE TABLE r (id INT, v STRING) DUPLICATE KEY(id) PARTITION BY RANGE(id) (PARTITION p1 VALUES LESS THAN ("10"))`)
	if _, err := exec.Exec(d.ctx, d.c, "SELECT * FROM r TEMPORARY PARTITION (tp2)"); err == nil {
		t.Error("DROP TABLE left temporary partition tp2 behind")
	}

	// A table without PARTITION BY (the corpus case): a temporary
	// partition with no values takes every row.
	d.exec("CREATE TABLE u (k1 INT, k2 FLOAT) DUPLICATE KEY(k1) DISTRIBUTED BY HASH(k1) BUCKETS 3")
	d.exec("ALTER TABLE u ADD TEMPORARY PARTITION test")
	if _, err := exec.Exec(d.ctx, d.c, "ALTER TABLE u ADD TEMPORARY PARTITION u"); err == nil || !strings.Contains(err.Error(), "Duplicate partition name u") {
		t.Errorf("a temporary partition named as the table = %v", err)
	}
	if _, err := exec.Exec(d.ctx, d.c, `ALTER TABLE u ADD TEMPORARY PARTITION t2 VALUES LESS THAN ("1")`); err == nil || !strings.Contains(err.Error(), "no PARTITION BY") {
		t.Errorf("VALUES on a table without PARTITION BY = %v", err)
	}
	d.exec("INSERT INTO u VALUES (7, 1.5)")
	d.exec("TRUNCATE TABLE u") // Doris: TRUNCATE deletes the temporary partitions
	if _, err := exec.Exec(d.ctx, d.c, "SELECT * FROM u TEMPORARY PARTITION (test)"); err == nil {
		t.Error("TRUNCATE TABLE left temporary partition test behind")
	}
}

// TestDorisAlterNumAsString: ALTER ROUTINE LOAD ... PROPERTIES
// ("num_as_string" = "true"), as Doris's suite test_routine_load_command
// runs it, changes how the records read after it become rows: a JSON
// number read into a DATE is NULL without it (not a date) and the date its
// digits spell with it; SHOW ROUTINE LOAD's JobProperties shows it.
func TestDorisAlterNumAsString(t *testing.T) {
	d := startDorisNode(t)
	d.exec("CREATE TABLE t (id BIGINT, d DATE) DUPLICATE KEY(id)")
	d.send(`{"id": 1, "d": 20240102}`)
	d.exec(fmt.Sprintf(`CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(d.kc.ListenAddrs(), ",")))
	d.waitJob("j", "1 row loaded", func(i *api.JobInfo) bool { return i.GetStats().GetLoadedRows() == 1 })
	d.exec("PAUSE ROUTINE LOAD FOR j")
	d.waitJob("j", "PAUSED", state(api.JobState_PAUSED))
	d.exec(`ALTER ROUTINE LOAD FOR j PROPERTIES ("num_as_string" = "true")`)
	if props := fmt.Sprint(d.exec("SHOW ROUTINE LOAD FOR j").GetResult()); !strings.Contains(props, `\"num_as_string\":\"true\"`) {
		t.Errorf("SHOW ROUTINE LOAD after the alter: no num_as_string in %s", props)
	}
	d.send(`{"id": 2, "d": 20240102}`)
	d.exec("RESUME ROUTINE LOAD FOR j")
	d.waitJob("j", "2 rows loaded", func(i *api.JobInfo) bool { return i.GetStats().GetLoadedRows() == 2 })
	if got := d.rows("t"); len(got) != 2 || got[0] != `1,\N` || !strings.HasPrefix(got[1], "2,") || strings.HasSuffix(got[1], `\N`) {
		t.Errorf("rows = %q, want 1 with a NULL date and 2 with 2024-01-02", got)
	}
}

// TestDorisAlterTable: ALTER ROUTINE LOAD ... ON, as Doris's suite
// test_routine_load_alter runs it: a PAUSED job moves to another table;
// SHOW ROUTINE LOAD names the new table with the same progress; the
// records after the move load into it exactly once, the old table keeps
// what it had; the move is journaled (it outlives a restart). A running
// job, a missing table and a table of another database are refused; the
// new table cannot be dropped under the job, the old one can.
func TestDorisAlterTable(t *testing.T) {
	d := startDorisNode(t)
	d.exec("CREATE TABLE src (k1 INT, k2 STRING) DUPLICATE KEY(k1)")
	d.exec("CREATE TABLE dst (k1 INT, k2 STRING) DUPLICATE KEY(k1)")
	d.send("1,a", "2,b", "3,c")
	d.exec(fmt.Sprintf(`CREATE ROUTINE LOAD j ON src COLUMNS TERMINATED BY "," PROPERTIES ("max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(d.kc.ListenAddrs(), ",")))
	d.waitJob("j", "3 rows loaded", func(i *api.JobInfo) bool { return i.GetStats().GetLoadedRows() == 3 })

	var ce *client.Error
	if _, err := exec.Exec(d.ctx, d.c, "ALTER ROUTINE LOAD FOR j ON dst"); !errors.As(err, &ce) || ce.Code != api.ErrorCode_FAILED_PRECONDITION || !strings.Contains(ce.Message, "table") {
		t.Fatalf("ALTER ... ON of a running job = %v; want FAILED_PRECONDITION naming table", err)
	}
	d.exec("PAUSE ROUTINE LOAD FOR j")
	d.waitJob("j", "PAUSED", state(api.JobState_PAUSED))
	show := func() (tbl, progress string) {
		t.Helper()
		row := d.exec("SHOW ROUTINE LOAD FOR j").GetResult().GetRows()[0].GetValues()
		return row[6], row[15] // TableName, Progress
	}
	tbl, before := show()
	if tbl != "src" {
		t.Fatalf("TableName before = %s", tbl)
	}
	for q, code := range map[string]api.ErrorCode{
		"ALTER ROUTINE LOAD FOR j ON nosuch":        api.ErrorCode_NOT_FOUND,
		"ALTER ROUTINE LOAD FOR j ON analytics.dst": api.ErrorCode_INVALID_ARGUMENT,
		"ALTER ROUTINE LOAD FOR analytics.j ON dst": api.ErrorCode_INVALID_ARGUMENT,
	} {
		if _, err := exec.Exec(d.ctx, d.c, q); !errors.As(err, &ce) || ce.Code != code {
			t.Errorf("%s = %v; want %s", q, err, code)
		}
	}
	d.exec("ALTER ROUTINE LOAD FOR j ON dst")
	if tbl, after := show(); tbl != "dst" || after != before {
		t.Fatalf("after ON dst: TableName %s, Progress %s; want dst, %s", tbl, after, before)
	}
	// The node's registry follows at once: the job loads dst, not src.
	if _, err := exec.Exec(d.ctx, d.c, "DROP TABLE dst"); err == nil || !strings.Contains(err.Error(), "j") {
		t.Errorf("DROP TABLE dst under the job: %v; want refused naming j", err)
	}
	for tbl, jobs := range map[string]int{"dst": 1, "src": 0} {
		if ti := d.exec("DESC " + tbl).GetTables(); len(ti) != 1 || len(ti[0].GetJobs()) != jobs {
			t.Errorf("DESC %s: jobs %v, want %d", tbl, ti, jobs)
		}
	}
	// Journaled: a restarted node has the moved job.
	d.stop()
	d.start()
	if tbl, _ := show(); tbl != "dst" {
		t.Fatalf("after a restart: TableName %s, want dst", tbl)
	}
	d.send("4,d", "5,e", "6,f")
	d.exec("RESUME ROUTINE LOAD FOR j")
	d.waitJob("j", "6 rows loaded", func(i *api.JobInfo) bool { return i.GetStats().GetLoadedRows() == 6 })
	if got, want := d.rows("src"), []string{"1,a", "2,b", "3,c"}; !slices.Equal(got, want) {
		t.Errorf("src rows = %q, want %q", got, want)
	}
	if got, want := d.rows("dst"), []string{"4,d", "5,e", "6,f"}; !slices.Equal(got, want) {
		t.Errorf("dst rows = %q, want %q", got, want)
	}
	if _, err := exec.Exec(d.ctx, d.c, "DROP TABLE dst"); err == nil || !strings.Contains(err.Error(), "j") {
		t.Errorf("DROP TABLE dst under the job: %v; want refused naming j", err)
	}
	d.exec("DROP TABLE src")
}
