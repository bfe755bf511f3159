package e2e

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestTablesEmbedded and TestTablesPostgres: table list / describe / drop
// / export through the binary, SHOW TABLES / DESC / DROP TABLE through
// loadnode sql, and the client's scan iterator, on each sink.
func TestTablesEmbedded(t *testing.T) {
	p := startNode(t, t.TempDir())
	tableOps(t, p, "", "", "embedded")
}

func TestTablesPostgres(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: pgNode(t, dsn)})
	tableOps(t, p, "analytics", dsn, "postgres analytics public.tb_t")
}

func tableOps(t *testing.T, p *testnode.Proc, db, dsn, wantSink string) {
	const topic, tbl, job = "tb", "tb_t", "tb_load"
	b := testnode.StartBroker(t, 1, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	values := []string{
		`{"id":1,"amount":"12.50","day":"2026-12-01","note":"a"}`,
		`{"id":2,"amount":null,"day":null,"note":null}`,
		`{"id":3,"amount":"-0.07","day":"1970-01-01","note":"c, with a comma"}`,
		`{"id":4,"amount":"0","day":"2000-02-29","note":""}`,
		`{"id":5,"amount":"99999999.99","day":"2026-01-31","note":"e"}`,
	}
	for _, v := range values {
		if err := b.Client().ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	c := p.Client(t)
	qual := tbl
	if db != "" {
		qual = db + "." + tbl
	}
	// The PostgreSQL sink has no DECIMAL or DATE yet: there amount is a
	// DOUBLE and the table has no day.
	dec := dsn == ""
	ddl, amountType, header := "amount DECIMAL(10,2), day DATE", `DECIMAL\(10,\s?2\)`, "id,amount,day,note"
	if !dec {
		ddl, amountType, header = "amount DOUBLE", "DOUBLE", "id,amount,note"
	}
	if _, err := exec.Exec(ctx, c, "CREATE TABLE "+qual+" (id BIGINT NOT NULL, "+ddl+", note VARCHAR(64))"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Exec(ctx, c, `CREATE ROUTINE LOAD `+job+` ON `+tbl+` PROPERTIES ("format" = "json", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "`+b.Addrs()[0]+`", "kafka_topic" = "`+topic+`", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, job, topic, time.Minute)

	code, out := cli(t, p, "sql", "SHOW TABLES")
	if code != 0 || !regexpMatch(`(?m)^tb_t\s+\S+\s+.*`+job+`$`, out) || !strings.Contains(out, wantSink) {
		t.Fatalf("SHOW TABLES: exit %d\n%q", code, out)
	}
	if code, out := cli(t, p, "table", "list"); code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, job) {
		t.Fatalf("table list: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"table", "describe", tbl}, {"sql", "DESC " + tbl}, {"sql", "DESCRIBE " + qual}} {
		code, out := cli(t, p, args...)
		if code != 0 || !regexpMatch(`(?m)^Rows:\s+5$`, out) || !regexpMatch(`(?m)^Jobs:\s+`+job+`$`, out) ||
			!regexpMatch(`(?m)^amount\s+`+amountType+`\s+YES\s+NULL$`, out) || !regexpMatch(`(?m)^id\s+BIGINT\s+NO`, out) || !strings.Contains(out, wantSink) {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
	}
	// Refused while the job loads into it, naming the job.
	for _, args := range [][]string{{"table", "drop", tbl}, {"sql", "DROP TABLE " + qual}} {
		if code, out := cli(t, p, args...); code != 1 || !strings.Contains(out, `loaded by job "`+job+`"`) {
			t.Fatalf("%v while loading: exit %d\n%s", args, code, out)
		}
	}

	// The scan iterator: pages of 2, typed accessors, NULL is not zero.
	it := c.ScanTable(ctx, tbl, client.WithPageSize(2))
	seen := map[int64]bool{}
	var cursors []string
	for it.Next() {
		r := it.Row()
		id, ok := r.Int64("id")
		if !ok {
			t.Fatalf("row without id: %v", r.Raw())
		}
		seen[id] = true
		amount, okAmount := r.Decimal("amount")
		if !dec {
			f, ok := r.Float64("amount")
			amount, okAmount = fmt.Sprint(f), ok
		}
		note, okNote := r.String("note")
		day, okDay := r.Time("day")
		if !dec && id == 1 {
			day, okDay = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), true
		}
		switch id {
		case 1:
			if !okAmount || (amount != "12.50" && amount != "12.5") || !okNote || note != "a" || !okDay || day.Format(time.DateOnly) != "2026-12-01" {
				t.Fatalf("row 1: %q %v %q %v %v %v", amount, okAmount, note, okNote, day, okDay)
			}
		case 2:
			if okAmount || okNote || okDay || !r.IsNull("amount") || !r.IsNull("note") {
				t.Fatalf("row 2: NULLs read as values: %q %v %q %v", amount, okAmount, note, okNote)
			}
		case 4:
			if !okAmount || (amount != "0.00" && amount != "0") || !okNote || note != "" || r.IsNull("note") {
				t.Fatalf("row 4: zero values read as NULL: %q %v %q %v", amount, okAmount, note, okNote)
			}
		}
		if _, ok := r.Int64("nope"); ok || r.Has("nope") {
			t.Fatal("a column that does not exist has a value")
		}
		cursors = append(cursors, string(it.Cursor()))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 || cursors[0] == cursors[4] {
		t.Fatalf("scan: %d rows, cursors %q", len(seen), cursors)
	}
	// Resuming from the third row's cursor reads its page and the rest.
	it2 := c.ScanTable(ctx, tbl, client.WithPageSize(2), client.WithCursor([]byte(cursors[2])))
	n := 0
	for it2.Next() {
		n++
	}
	if it2.Err() != nil || n != 3 {
		t.Fatalf("scan from a cursor: %d rows, %v", n, it2.Err())
	}

	// Export, each format, read back.
	dir := t.TempDir()
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		file := filepath.Join(dir, "tb."+f)
		if code, out := cli(t, p, "table", "export", tbl, "--format", f, "-o", file); code != 0 || !strings.Contains(out, "exported 5 rows") {
			t.Fatalf("export %s: exit %d\n%s", f, code, out)
		}
	}
	recs, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(dir, "tb.csv")))).ReadAll()
	if err != nil || len(recs) != 6 || strings.Join(recs[0], ",") != header {
		t.Fatalf("csv: %v %q", err, recs)
	}
	nulls := 0
	for _, r := range recs[1:] {
		note := r[len(r)-1]
		if r[0] == "2" && r[1] == `\N` && note == `\N` {
			nulls++
		}
		if r[0] == "3" && (note != "c, with a comma" || r[1] != "-0.07") {
			t.Fatalf("csv row 3: %q", r)
		}
	}
	if nulls != 1 {
		t.Fatalf("csv: NULLs not \\N: %q", recs)
	}
	jl := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "tb.jsonl"))), "\n")
	wantNull := `{"id":2,"amount":null,"day":null,"note":null}`
	if !dec {
		wantNull = `{"id":2,"amount":null,"note":null}`
	}
	if len(jl) != 5 || !strings.Contains(strings.Join(jl, "\n"), wantNull) {
		t.Fatalf("jsonl:\n%s", strings.Join(jl, "\n"))
	}
	type pqRow struct {
		ID     int64   `parquet:"id,optional"`
		Amount *int64  `parquet:"amount,optional"`
		Day    *int32  `parquet:"day,optional"`
		Note   *string `parquet:"note,optional"`
	}
	if !dec {
		type pqDouble struct {
			ID     int64    `parquet:"id,optional"`
			Amount *float64 `parquet:"amount,optional"`
			Note   *string  `parquet:"note,optional"`
		}
		pr, err := parquet.ReadFile[pqDouble](filepath.Join(dir, "tb.parquet"))
		if err != nil || len(pr) != 5 {
			t.Fatalf("parquet: %d rows, %v", len(pr), err)
		}
		for _, r := range pr {
			if r.ID == 1 && (r.Amount == nil || *r.Amount != 12.5) || r.ID == 2 && (r.Amount != nil || r.Note != nil) {
				t.Fatalf("parquet row %d: amount %v note %v", r.ID, deref(r.Amount), deref(r.Note))
			}
		}
	}
	pr, err := parquet.ReadFile[pqRow](filepath.Join(dir, "tb.parquet"))
	if !dec {
		pr, err = nil, nil
	}
	if err != nil || (dec && len(pr) != 5) {
		t.Fatalf("parquet: %d rows, %v", len(pr), err)
	}
	for _, r := range pr {
		switch r.ID {
		case 1:
			if r.Amount == nil || *r.Amount != 1250 || r.Note == nil || *r.Note != "a" || r.Day == nil || *r.Day != 20788 {
				t.Fatalf("parquet row 1: amount %v day %v note %v", deref(r.Amount), deref(r.Day), deref(r.Note))
			}
		case 2:
			if r.Amount != nil || r.Note != nil || r.Day != nil {
				t.Fatalf("parquet row 2: NULLs have values: %+v", r)
			}
		}
	}

	// Stopped, the job no longer loads: the drop goes through.
	if _, err := c.StopJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	if code, out := cli(t, p, "sql", "DROP TABLE "+qual); code != 0 || !strings.Contains(out, "table tb_t dropped") {
		t.Fatalf("DROP TABLE: exit %d\n%s", code, out)
	}
	var ce *client.Error
	if _, err := c.Count(ctx, tbl); !errors.As(err, &ce) || ce.Code != api.ErrorCode_NOT_FOUND {
		t.Fatalf("count after the drop: %v", err)
	}
	if code, out := cli(t, p, "sql", "SHOW TABLES"); code != 0 || strings.Contains(out, tbl) {
		t.Fatalf("SHOW TABLES after the drop: exit %d\n%s", code, out)
	}
	if code, out := cli(t, p, "table", "drop", tbl, "--if-exists"); code != 0 || !strings.Contains(out, "does not exist") {
		t.Fatalf("drop --if-exists: exit %d\n%s", code, out)
	}
	if code, out := cli(t, p, "table", "drop", tbl); code != 1 || !strings.Contains(out, "NOT_FOUND") {
		t.Fatalf("drop of a dropped table: exit %d\n%s", code, out)
	}
	if dsn != "" {
		var n int64
		pgQuery(t, dsn, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'tb_t'`, &n)
		if n != 0 {
			t.Fatal("the PostgreSQL table is still there after DROP TABLE")
		}
	}
	// The name can be used again, with another schema.
	if _, err := exec.Exec(ctx, c, "CREATE TABLE "+qual+" (k BIGINT)"); err != nil {
		t.Fatalf("CREATE TABLE after the drop: %v", err)
	}
	if n, err := c.Count(ctx, tbl); err != nil || n != 0 {
		t.Fatalf("recreated table: %d rows, %v", n, err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func regexpMatch(re, s string) bool { return mustCompile(re).MatchString(s) }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func mustCompile(re string) *regexp.Regexp { return regexp.MustCompile(re) }
