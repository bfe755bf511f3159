// Package conformance runs the Doris Routine Load cases of
// testdata/doris-routine-load (taken from Apache Doris's regression suites,
// see its README.md and SOURCES.md) through the real binary: a kfake
// broker, the case's DDL and statements through doris/exec.Exec (the same
// translation `loadnode sql` uses), its records, its steps, and the table's
// rows rendered as Doris's regression framework renders them, compared with
// expected.out.
//
// Every case must pass: a statement loadnode refuses or a row that differs
// fails the test, naming the statement and the error or the lines. A case
// that cannot pass yet is listed in knownFailing with the reason; a listed
// case that passes fails the test too, so the table stays true. Each case
// runs under a caseT, which keeps its failures for that verdict.
// TestConformance's summary line says which cases pass.
//
// The same package runs the Doris corpus kept beside the repository
// (corpus_test.go): TestDorisFunctions and TestDorisLoad.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/testnode"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if l := summaryLine(); l != "" {
		fmt.Println(l)
	}
	testnode.RemoveBinary()
	os.Exit(code)
}

const casesDir = "testdata/doris-routine-load"

// env is one case's world: a node, a broker with the case's topics, and a
// producer that writes records to chosen partitions.
type env struct {
	t    *caseT
	dir  string // the case's directory
	node *testnode.Proc
	c    *client.Client
	b    *testnode.Broker
	prod *kgo.Client
	vars map[string]string // {{KAFKA_BROKER}}, {{TOPIC}}, ...
	ctx  context.Context
	// passed lists the expected.out sections that matched, for the
	// message of a case that stops short.
	passed []string
}

// newEnv starts a node and a broker whose topics have partitions
// partitions; topics maps placeholder names (TOPIC, TOPIC_BEFORE, ...) to
// topic names.
func newEnv(t *caseT, dir string, partitions int32, topics map[string]string) *env {
	t.Helper()
	var names []string
	for _, tp := range topics {
		names = append(names, tp)
	}
	b := testnode.StartBroker(t, partitions, names...)
	node := testnode.Start(t, testnode.Options{DataDir: t.TempDir()})
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, dir: filepath.Join(casesDir, dir), node: node, c: node.Client(t), b: b, prod: prod, ctx: ctx,
		vars: map[string]string{"KAFKA_BROKER": b.Addrs()[0]}}
	for k, v := range topics {
		e.vars[k] = v
	}
	return e
}

// read returns a case file.
func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// statements splits a .sql file into statements (splitStatements), its
// placeholders filled.
func (e *env) statements(name string) []string {
	src := e.read(name)
	for k, v := range e.vars {
		src = strings.ReplaceAll(src, "{{"+k+"}}", v)
	}
	return splitStatements(src)
}

// splitStatements splits SQL text into statements: "--" comment lines are
// dropped, ";" outside quotes ends a statement.
func splitStatements(text string) []string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	src := strings.Join(lines, "\n")
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == ';':
			out = append(out, strings.TrimSpace(src[start:i]))
			start = i + 1
		}
	}
	if s := strings.TrimSpace(src[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// exec runs one statement and returns its error.
func (e *env) exec(stmt string) error {
	_, err := exec.Exec(e.ctx, e.c, stmt)
	return err
}

// mustExec runs a statement; a refusal fails the case with the statement
// and the error.
func (e *env) mustExec(stmt string) {
	e.t.Helper()
	if err := e.exec(stmt); err != nil {
		done := ""
		if len(e.passed) > 0 {
			done = "\nsections that passed before: " + strings.Join(e.passed, ", ")
		}
		e.t.Fatalf("statement refused: %v\n\t%s%s", err, strings.ReplaceAll(stmt, "\n", "\n\t"), done)
	}
}

// produce writes one record per value to topic's partition.
func (e *env) produce(topic string, partition int32, values []string) {
	e.t.Helper()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)})
	}
	if err := e.prod.ProduceSync(e.ctx, recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

// lines returns a data file's non-empty lines.
func (e *env) lines(name string) []string {
	var out []string
	for _, l := range strings.Split(e.read(name), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

// waitCount polls until table holds at least n rows; at the deadline it
// fails with the job's state and error rows.
func (e *env) waitCount(table, job string, n int64) {
	e.t.Helper()
	e.poll(func() (bool, func() string) {
		got, err := e.c.Count(e.ctx, table)
		return err == nil && got >= n, func() string {
			info, _ := e.c.ShowJob(e.ctx, job)
			return fmt.Sprintf("table %s: %d rows (err %v), want %d; job %s: %v %v, error rows %v", table, got, err, n,
				job, info.GetSummary().GetState(), info.GetSummary().GetReason(), info.GetErrorRows())
		}
	})
}

// poll calls cond every 50ms until it holds; after 60s it fails the test
// with cond's description of what it last saw.
func (e *env) poll(cond func() (bool, func() string)) {
	e.t.Helper()
	poll(e.t, cond)
}

// SHOW ROUTINE LOAD cells the Doris suites read by position.
const (
	colState     = 8  // State
	colStatistic = 14 // Statistic (JSON)
	colReason    = 17 // ReasonOfStateChanged
)

// showRow is the job's SHOW ROUTINE LOAD row, read as the Doris suites
// read it: by position (nil with the error when it cannot be read).
func (e *env) showRow(job string) ([]string, error) {
	res, err := exec.Exec(e.ctx, e.c, "SHOW ROUTINE LOAD FOR "+job)
	if err != nil {
		return nil, err
	}
	if rows := res.GetResult().GetRows(); len(rows) == 1 && len(rows[0].GetValues()) > colReason {
		return rows[0].GetValues(), nil
	}
	return nil, fmt.Errorf("SHOW ROUTINE LOAD FOR %s: result %v", job, res.GetResult())
}

// loadedRows is Statistic.loadedRows of the job's SHOW ROUTINE LOAD row.
func (e *env) loadedRows(job string) (int64, error) {
	row, err := e.showRow(job)
	if err != nil {
		return 0, err
	}
	var st struct {
		LoadedRows int64 `json:"loadedRows"`
	}
	if err := json.Unmarshal([]byte(row[colStatistic]), &st); err != nil {
		return 0, fmt.Errorf("Statistic %q: %w", row[colStatistic], err)
	}
	return st.LoadedRows, nil
}

// waitStarted polls until the job has a durable start for every partition
// (OFFSET_END is resolved then: records produced later are read) and SHOW
// ROUTINE LOAD's State ([8]) is RUNNING.
func (e *env) waitStarted(job string, partitions int) {
	e.t.Helper()
	e.poll(func() (bool, func() string) {
		info, err := e.c.ShowJob(e.ctx, job)
		row, rerr := e.showRow(job)
		return err == nil && rerr == nil && len(info.GetPartitions()) >= partitions && row[colState] == "RUNNING",
			func() string {
				return fmt.Sprintf("job %s did not start: %v %v; SHOW ROUTINE LOAD %q %v", job, info, err, row, rerr)
			}
	})
}

// query is SELECT * FROM table ORDER BY keys (column positions from 0), or
// with sorted the rendered lines sorted as strings (order_qt_).
func (e *env) query(table string, keys []int, sorted bool) []string {
	e.t.Helper()
	spec, rows, err := e.c.Scan(e.ctx, table, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var out [][]string
	for _, r := range rows {
		var cells []string
		for i, v := range r.GetValues() {
			cells = append(cells, renderValue(spec.GetColumns()[i], v))
		}
		out = append(out, cells)
	}
	sort.SliceStable(out, func(i, j int) bool {
		for _, k := range keys {
			if c := compareCells(out[i][k], out[j][k]); c != 0 {
				return c < 0
			}
		}
		return false
	})
	lines := make([]string, len(out))
	for i, cells := range out {
		lines[i] = strings.Join(cells, "\t")
	}
	if sorted {
		sort.Strings(lines)
	}
	return lines
}

// compareCells orders two rendered cells numerically when both are
// numbers, else as text; \N (NULL) first, as in Doris.
func compareCells(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == `\N`:
		return -1
	case b == `\N`:
		return 1
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 == nil && err2 == nil && x != y {
		if x < y {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// expected parses expected.out into its sections ("-- !name --").
func (e *env) expected() map[string][]string {
	sections := map[string][]string{}
	name := ""
	for _, l := range strings.Split(e.read("expected.out"), "\n") {
		switch {
		case strings.HasPrefix(l, "-- !") && strings.HasSuffix(l, " --"):
			name = strings.TrimSuffix(strings.TrimPrefix(l, "-- !"), " --")
			sections[name] = []string{}
		case strings.HasPrefix(l, "--"), name == "", l == "":
		default:
			sections[name] = append(sections[name], l)
		}
	}
	return sections
}

// check compares a query's lines with a section of expected.out.
func (e *env) check(section string, got []string) {
	e.t.Helper()
	want, ok := e.expected()[section]
	if !ok {
		e.t.Fatalf("expected.out has no section %s", section)
	}
	diff := diffLines(got, want)
	if diff == "" {
		e.passed = append(e.passed, section)
		return
	}
	e.t.Fatalf("section %s differs:\n%s", section, diff)
}

// TestConformance runs every case, holds each against knownFailing, and
// logs which pass.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against kfake; not in -short")
	}
	cases := []struct {
		name string
		run  func(t *caseT)
	}{
		{"01_topic_change", case01},
		{"02_offset_by_timestamp", case02},
		{"03_empty_field_as_null", case03},
		{"04_basic_types_csv", case04},
		{"05_enclose_escape", case05},
		{"06_partial_update_mow", case06},
		{"07_json_jsonpath_dollar", case07},
		{"08_json_fill_missing_columns", case08},
		{"09_two_partitions_order_qt", case09},
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	if bad := knownFailing.unknown(names); len(bad) > 0 {
		t.Errorf("knownFailing lists %q, which are no cases", bad)
	}
	outcomes := map[string]outcome{} // the subtests run one at a time
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ct := newCaseT(t)
			ct.run(c.run)
			o, msg := knownFailing.judge(c.name, ct.failures())
			outcomes[c.name] = o
			switch o {
			case outcomeKnown:
				t.Log(msg)
			case outcomeFail, outcomeStale:
				t.Error(msg)
			}
		})
	}
	var pass, known, fail, stale []string
	run := 0
	for _, c := range cases {
		o, ok := outcomes[c.name]
		if ok {
			run++
		}
		switch {
		case !ok:
		case o == outcomePass:
			pass = append(pass, c.name[:2])
		case o == outcomeKnown:
			known = append(known, c.name[:2])
		case o == outcomeStale:
			pass = append(pass, c.name[:2])
			stale = append(stale, c.name[:2])
		default:
			fail = append(fail, c.name[:2])
		}
	}
	summary := fmt.Sprintf("conformance: %d of %d Doris cases run pass (%s); known failing: %s; failing: %s",
		len(pass), run, strings.Join(pass, " "), strings.Join(known, " "), strings.Join(fail, " "))
	if len(stale) > 0 {
		summary += "; listed in knownFailing but pass: " + strings.Join(stale, " ")
	}
	t.Log(summary)
	fmt.Println(summary)
}
