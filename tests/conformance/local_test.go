package conformance

// loadnode's own load cases (tests/conformance/testdata/corpus/load), in the
// corpus's format (testdata/corpus/README.md), for Doris behaviour the corpus
// does not walk: steps after a load (ALTER, a rewind), a refusal Doris makes,
// a multi-table load. Each names what it checks. They run against their own
// node and broker and are counted apart from the corpus: never in its
// figures.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/testnode"
)

// localDir holds loadnode's own cases.
const localDir = "testdata/corpus/load"

// localCase is a loadCase with the fields only loadnode's own cases have.
type localCase struct {
	loadCase `yaml:",inline"`
	// Checks says what the case checks (required).
	Checks string `yaml:"checks"`
	// MultiTable: the routine load has no ON (Doris's multi-table load);
	// each record is "table|record", its table renamed as the DDL's.
	MultiTable bool `yaml:"multi_table"`
	// Refused: the CREATE ROUTINE LOAD must be refused with an error that
	// holds this text; then expected.out's rows are the table's.
	Refused string `yaml:"refused"`
	// Steps run in order once the job has read every record produced so
	// far: their statements (<job> is the job's name), then the records of
	// their file, which the job must read too.
	Steps []localStep `yaml:"steps"`
	// LoadedRowsMatch: the job's loaded_rows statistic must equal the
	// table's count(*) at the end (a job's statistics agree with what its
	// table gained).
	LoadedRowsMatch bool `yaml:"loaded_rows_match"`
}

type localStep struct {
	SQL     []string `yaml:"sql"`
	Produce string   `yaml:"produce"`
}

func readLocalCases(t *testing.T) []*localCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(localDir, "*", "case.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s/*/case.yaml (%v)", localDir, err)
	}
	var cases []*localCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &localCase{}
		if err := yaml.Unmarshal(b, c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.dir, c.name = filepath.Dir(f), filepath.Base(filepath.Dir(f))
		switch {
		case c.Checks == "":
			t.Fatalf("%s: no checks: say what the case checks", f)
		case c.Kind != "routine_load" && c.Kind != "stream_load":
			t.Fatalf("%s: kind %q", f, c.Kind)
		case c.Table == "" || c.Query == "":
			t.Fatalf("%s: no table or query", f)
		}
		for _, s := range c.Steps {
			if s.Produce != "" && !strings.HasPrefix(s.Produce, "step.") {
				t.Fatalf("%s: step produces %q, want a step.* file of the case (data.* files are the first load's)", f, s.Produce)
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// TestLocalLoad runs loadnode's own cases through the binary. Unlike the
// corpus's, none may fail: there is no known-failing table for them.
func TestLocalLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against kfake; not in -short")
	}
	cases := readLocalCases(t)
	var topics []string
	for i := range cases {
		topics = append(topics, fmt.Sprintf("local_%d", i))
	}
	b := testnode.StartBroker(t, 1, topics...)
	node := testnode.Start(t, testnode.Options{DataDir: t.TempDir()})
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	w := &loadWorld{c: node.Client(t), broker: b.Addrs()[0], prod: prod, ctx: ctx}
	pass := 0
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ct := newCaseT(t)
				ct.run(func(ct *caseT) { runLocalCase(ct, w, c, i) })
				if f := ct.failures(); len(f) > 0 {
					t.Errorf("%s (checks: %s):\n%s", c.name, c.Checks, strings.Join(f, "\n"))
					return
				}
				pass++
			})
		}
	})
	line := fmt.Sprintf("conformance: %d of %d pass (loadnode's own cases, not in the corpus's figures)", pass, len(cases))
	t.Log(line)
	fmt.Println(line)
}

func runLocalCase(t *caseT, w *loadWorld, c *localCase, i int) {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join(c.dir, "ddl.sql"))
	if err != nil {
		t.Fatal(err)
	}
	stmts := splitStatements(string(ddl))
	rename := renameTables(stmts, fmt.Sprintf("_l%d", i))
	for j := range stmts {
		stmts[j] = rename(stmts[j])
	}
	table := rename(c.Table)
	exec := func(s string) {
		t.Helper()
		if _, err := dorisexec.Exec(w.ctx, w.c, s); err != nil {
			t.Fatalf("statement refused: %v\n\t%s", err, strings.ReplaceAll(s, "\n", "\n\t"))
		}
	}
	for _, s := range stmts {
		exec(s)
	}
	topic := fmt.Sprintf("local_%d", i)
	job := fmt.Sprintf("local_job_%d", i)
	records, err := caseRecords(&c.loadCase)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(recs []string) int64 {
		t.Helper()
		var out []*kgo.Record
		for _, r := range recs {
			if c.MultiTable {
				tb, rest, _ := strings.Cut(r, "|")
				r = rename(tb) + "|" + rest
			}
			out = append(out, &kgo.Record{Topic: topic, Value: []byte(r)})
		}
		if len(out) > 0 {
			if err := w.prod.ProduceSync(w.ctx, out...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		return int64(len(out))
	}
	stmt, err := loadStatement(&c.loadCase, job, table, w.broker, topic, len(records))
	if err != nil {
		t.Fatal(err)
	}
	if c.MultiTable {
		stmt = strings.Replace(stmt, " ON "+table, "", 1)
	}
	end := produce(records)
	if c.Refused != "" {
		_, err := dorisexec.Exec(w.ctx, w.c, stmt)
		if err == nil {
			t.Fatalf("CREATE ROUTINE LOAD accepted, want it refused with %q\n\t%s", c.Refused, stmt)
		}
		if !strings.Contains(err.Error(), c.Refused) {
			t.Fatalf("refused with %v, want an error holding %q", err, c.Refused)
		}
	} else {
		exec(stmt)
		defer dorisexec.Exec(w.ctx, w.c, "STOP ROUTINE LOAD FOR "+job)
		waitRead(t, w, job, end)
		for n, s := range c.Steps {
			for _, q := range s.SQL {
				exec(rename(strings.ReplaceAll(q, "<job>", job)))
			}
			if s.Produce != "" {
				recs, err := fileRecords(&c.loadCase, filepath.Join(c.dir, s.Produce), normalProps(c.Properties))
				if err != nil {
					t.Fatalf("step %d: %v", n+1, err)
				}
				end += produce(recs)
			}
			waitRead(t, w, job, end)
		}
	}
	got, err := runQuery(w, rename(c.Query))
	if err != nil {
		t.Fatalf("query %q: %v", c.Query, err)
	}
	want, err := expectedRows(filepath.Join(c.dir, "expected.out"))
	if err != nil {
		t.Fatal(err)
	}
	if !hasOrderBy(c.Query) {
		slices.Sort(got)
		slices.Sort(want)
	}
	if d := diffLines(got, want); d != "" {
		t.Fatalf("rows differ:\n%s", d)
	}
	if c.LoadedRowsMatch {
		info, err := w.c.ShowJob(w.ctx, job)
		if err != nil {
			t.Fatal(err)
		}
		n, err := runQuery(w, "select count(*) from "+table)
		if err != nil || len(n) != 1 {
			t.Fatalf("count: %v %v", n, err)
		}
		if strconv.FormatInt(info.GetStats().GetLoadedRows(), 10) != n[0] {
			t.Fatalf("job's loaded_rows %d, but the table holds %s rows", info.GetStats().GetLoadedRows(), n[0])
		}
	}
}

// waitRead waits until job has read every record to offset end (its
// committed offset, the next to read, is end) and is RUNNING.
func waitRead(t *caseT, w *loadWorld, job string, end int64) {
	t.Helper()
	poll(t, func() (bool, func() string) {
		info, err := w.c.ShowJob(w.ctx, job)
		if err != nil {
			return false, func() string { return fmt.Sprintf("job %s: %v", job, err) }
		}
		st := info.GetSummary().GetState()
		var next int64
		for _, p := range info.GetPartitions() {
			next = p.GetCommittedOffset()
		}
		return next >= end && st == api.JobState_RUNNING, func() string {
			return fmt.Sprintf("job %s read to offset %d of %d: %v %s", job, next, end, st, info.GetSummary().GetReasonMessage())
		}
	})
}
