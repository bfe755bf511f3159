package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/doris"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"
)

// mysqlToken is the node's token in the MySQL tests: the password.
const mysqlToken = "mysql-e2e-token-0123456789"

// startMySQLNode runs a node with a token and the MySQL endpoint, a broker
// with topic holding records JSON records {"id","v"}, and returns both and
// a client of the node.
func startMySQLNode(t *testing.T, topic string, records int) (*testnode.Proc, *testnode.Broker, *client.Client) {
	t.Helper()
	b := testnode.StartBroker(t, 2, topic)
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), MySQL: true, Env: []string{config.TokenEnv + "=" + mysqlToken}})
	if p.MySQLAddr() == "" {
		t.Fatal("the node reports no MySQL address")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range records {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: fmt.Appendf(nil, `{"id":%d,"v":"r%d"}`, i, i)})
	}
	if err := b.Client().ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return p, b, p.Client(t, client.WithToken(mysqlToken))
}

// dorisSession is a Doris user's session: the table, the load, a look at
// it, a pause and a resume.
func dorisSession(tbl, job, broker, topic string) []string {
	return []string{
		"CREATE TABLE " + tbl + " (id BIGINT, v STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES (\"replication_num\" = \"1\")",
		"CREATE ROUTINE LOAD " + job + " ON " + tbl + ` PROPERTIES ("format" = "json", "max_batch_interval" = "1", "desired_concurrent_number" = "2")
 FROM KAFKA ("kafka_broker_list" = "` + broker + `", "kafka_topic" = "` + topic + `", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		"PAUSE ROUTINE LOAD FOR " + job,
		"RESUME ROUTINE LOAD FOR " + job,
	}
}

// TestMySQLClientSession: Debian's mysql client (mariadb-client) runs a
// whole Doris session from a file against a node's MySQL endpoint: CREATE
// TABLE, CREATE ROUTINE LOAD, SHOW ROUTINE LOAD\G, PAUSE, RESUME, and, once
// the records are loaded, SELECT count(*).
func TestMySQLClientSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := exec.LookPath("mysql")
	if err != nil {
		err = fmt.Errorf("the mysql client is not installed (%v): run `make deps` (apt-get install -y mariadb-client)", err)
	}
	testdeps.Require(t, testdeps.MySQL, err)
	const topic, tbl, job, records = "mysql_cli_topic", "mysql_cli_t", "mysql_cli_load", 300
	p, b, c := startMySQLNode(t, topic, records)
	host, port, _ := strings.Cut(p.MySQLAddr(), ":")
	run := func(script string) string {
		t.Helper()
		file := filepath.Join(t.TempDir(), "session.sql")
		if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "-h", host, "-P", port, "-uroot", "-p"+mysqlToken, "--protocol=TCP", "--batch", "-e", "source "+file)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("mysql: %v\n%s\nscript:\n%s", err, out, script)
		}
		return string(out)
	}

	// A wrong password is refused with MySQL's error.
	out, err := exec.Command(bin, "-h", host, "-P", port, "-uroot", "-pwrong", "--protocol=TCP", "-e", "SELECT 1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ERROR 1045") {
		t.Fatalf("a wrong password: %v\n%s", err, out)
	}

	st := dorisSession(tbl, job, b.Addrs()[0], topic)
	script := "SELECT @@version_comment LIMIT 1;\nSHOW DATABASES;\nUSE loadnode;\nSELECT DATABASE();\n" +
		st[0] + ";\n" + st[1] + ";\nsync;\nSHOW TABLES;\nDESC " + tbl + ";\nSHOW CREATE TABLE " + tbl + "\\G\nSHOW FULL COLUMNS FROM " + tbl + ";\nSHOW ROUTINE LOAD FOR " + job + "\\G\n" +
		st[2] + ";\nSHOW ROUTINE LOAD FOR " + job + "\\G\n" + st[3] + ";\n"
	out1 := run(script)
	for _, want := range []string{"loadnode (Doris-compatible routine loads)", "Tables_in_loadnode\n" + tbl,
		"Name: " + job, "State: PAUSED", "DataSourceType: KAFKA", "Field\tType\tNull\tKey\tDefault\tExtra\nid\tBIGINT",
		"Create Table: CREATE TABLE `" + tbl + "` (\n  `id` BIGINT NULL,\n  `v` STRING NULL\n) ENGINE=OLAP;",
		") ENGINE=OLAP;\nField\tType\tNull\tKey\tDefault\tExtra\nid\tBIGINT\tYES\tfalse\tNULL\t\nv\tSTRING"} { // SHOW FULL COLUMNS
		if !strings.Contains(out1, want) {
			t.Errorf("the session's output lacks %q:\n%s", want, out1)
		}
	}
	// Each of SHOW ROUTINE LOAD's 22 columns, by Doris's name.
	for _, col := range doris.RoutineLoadColumns {
		if !strings.Contains(out1, col+": ") {
			t.Errorf("SHOW ROUTINE LOAD\\G lacks column %s", col)
		}
	}
	// An unknown statement is an error naming it; the client goes on.
	if out, err := exec.Command(bin, "-h", host, "-P", port, "-uroot", "-p"+mysqlToken, "--protocol=TCP", "-e", "FROBNICATE ROUTINE LOAD").CombinedOutput(); err == nil || !strings.Contains(string(out), "FROBNICATE") {
		t.Errorf("an unknown statement: %v\n%s", err, out)
	}

	waitDrained(t, c, b, job, topic, 2*time.Minute)
	out2 := run("SHOW ROUTINE LOAD FOR " + job + "\\G\nSELECT count(*) FROM " + tbl + ";\n")
	// A GROUP BY, as a Doris user checks a load: 300 ids in 3 groups.
	if g := run("SELECT id % 3 AS g, count(*) AS n FROM " + tbl + " GROUP BY 1 ORDER BY 1;\n"); strings.TrimSpace(g) != "g\tn\n0\t100\n1\t100\n2\t100" {
		t.Errorf("GROUP BY answered:\n%s", g)
	}
	if !strings.Contains(out2, "State: RUNNING") {
		t.Errorf("after RESUME, not RUNNING:\n%s", out2)
	}
	// The last step: SELECT answers through client.Exec once the SELECT
	// engine (package query) is in the tree.
	lines := strings.Split(strings.TrimSpace(out2), "\n")
	if lines[len(lines)-1] != strconv.Itoa(records) {
		t.Errorf("SELECT count(*) did not answer %d:\n%s", records, out2)
	}
}

// TestMySQLDatabaseSQL: Go's database/sql with go-sql-driver/mysql runs the
// same Doris session, reads SHOW ROUTINE LOAD's 22 columns by Doris's
// names, and gets MySQL errors with codes.
func TestMySQLDatabaseSQL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	const topic, tbl, job, records = "mysql_go_topic", "mysql_go_t", "mysql_go_load", 250
	p, b, c := startMySQLNode(t, topic, records)
	db, err := sql.Open("mysql", "root:"+mysqlToken+"@tcp("+p.MySQLAddr()+")/loadnode?timeout=10s")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, st := range dorisSession(tbl, job, b.Addrs()[0], topic)[:2] {
		if _, err := db.ExecContext(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	showLoad := func() map[string]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, "SHOW ROUTINE LOAD FOR "+job)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		if !slices.Equal(cols, doris.RoutineLoadColumns) {
			t.Fatalf("SHOW ROUTINE LOAD's columns: %v, want %v", cols, doris.RoutineLoadColumns)
		}
		if !rows.Next() {
			t.Fatal("SHOW ROUTINE LOAD: no row")
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		return m
	}
	if row := showLoad(); row["Name"] != job || row["TableName"] != tbl {
		t.Fatalf("SHOW ROUTINE LOAD: %v", row)
	}
	for _, st := range dorisSession(tbl, job, b.Addrs()[0], topic)[2:] {
		if _, err := db.ExecContext(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
		if strings.HasPrefix(st, "PAUSE") {
			if row := showLoad(); row["State"] != "PAUSED" {
				t.Fatalf("after PAUSE: State %s", row["State"])
			}
		}
	}
	// Errors carry MySQL codes: an unknown table, a job that is not there.
	var me *mysql.MySQLError
	if _, err := db.ExecContext(ctx, "DESC no_such_table"); !errorsAs(err, &me) || me.Number != 1146 {
		t.Errorf("DESC of an unknown table: %v, want error 1146", err)
	}
	if _, err := db.ExecContext(ctx, "PAUSE ROUTINE LOAD FOR no_such_job"); !errorsAs(err, &me) || me.Number != 1105 || !strings.Contains(me.Message, "no_such_job") {
		t.Errorf("PAUSE of an unknown job: %v, want error 1105 naming it", err)
	}

	waitDrained(t, c, b, job, topic, 2*time.Minute)
	// The last step: SELECT answers through client.Exec once the SELECT
	// engine (package query) is in the tree.
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+tbl).Scan(&n); err != nil || n != records {
		t.Errorf("SELECT count(*): %d, %v; want %d", n, err, records)
	}
	// A GROUP BY through database/sql: the sum of each group's ids.
	rows, err := db.QueryContext(ctx, "SELECT id % 2 AS g, count(*), sum(id) FROM "+tbl+" GROUP BY 1 ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var g, cnt, sum int64
		if err := rows.Scan(&g, &cnt, &sum); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d:%d", g, cnt, sum))
	}
	// ids 0..records-1: even ids sum to (records/2)*(records/2-1), odd ones
	// to that plus records/2.
	h := int64(records / 2)
	if want := []string{fmt.Sprintf("0:%d:%d", h, h*(h-1)), fmt.Sprintf("1:%d:%d", h, h*(h-1)+h)}; !slices.Equal(got, want) {
		t.Errorf("GROUP BY: %v, want %v", got, want)
	}
}

// errorsAs is errors.As for a *mysql.MySQLError.
func errorsAs(err error, target **mysql.MySQLError) bool {
	e, ok := err.(*mysql.MySQLError)
	if ok {
		*target = e
	}
	return ok
}
