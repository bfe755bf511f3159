package conformance

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/testnode"
)

// knownLoadFile is the known-failing table of the corpus's load cases: one
// case a line, its folder name, a tab, and why it does not pass (the first
// 300 characters of what the harness observed, on one line). Cases that need a type loadnode
// lacks (unsupportedNote) pass when a statement of theirs is refused.
//
// INVARIANT: a case fails TestDorisLoad unless it passes and is not
// listed, or fails and is listed; a listed case that passes fails it too
// (remove it), and so does a listed name that is no case (knownFailures).
const knownLoadFile = "testdata/known-failing-load.tsv"

// loadParallel is how many cases run at once against the one node.
const loadParallel = 4

// unsupportedNote matches the note of a case that needs a type loadnode
// does not have (issue 26: MAP, ARRAY, STRUCT, VARIANT, encryption keys).
var unsupportedNote = regexp.MustCompile(`\bneeds (MAP|ARRAY|STRUCT|VARIANT|ENCRYPTKEY)\b`)

// orderQT finds a note saying the suite's tag is order_qt_ (the framework
// sorts the result rows as strings).
var orderQT = regexp.MustCompile(`\border_qt_\w+`)

// loadCase is a load/<case>/case.yaml.
type loadCase struct {
	name       string
	dir        string
	Kind       string            `yaml:"kind"`
	Table      string            `yaml:"table"`
	Properties map[string]string `yaml:"properties"`
	Records    string            `yaml:"records"`
	Query      string            `yaml:"query"`
	Expect     string            `yaml:"expect"`
	Note       string            `yaml:"note"`
}

// readLoadCases reads every case of the corpus's load/.
func readLoadCases(t *testing.T, corpus string) []*loadCase {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(corpus, "load", "*", "case.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no load/*/case.yaml in %s (%v)", corpus, err)
	}
	var cases []*loadCase
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &loadCase{dir: filepath.Dir(f), name: filepath.Base(filepath.Dir(f))}
		if err := yaml.Unmarshal(b, c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch {
		case c.Kind != "stream_load" && c.Kind != "routine_load":
			t.Fatalf("%s: kind %q, want stream_load or routine_load", f, c.Kind)
		case c.Records != "one_per_line" && c.Records != "whole_file":
			t.Fatalf("%s: records %q, want one_per_line or whole_file", f, c.Records)
		case c.Table == "" || c.Query == "":
			t.Fatalf("%s: no table or query", f)
		}
		cases = append(cases, c)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	return cases
}

// readKnownLoad reads knownLoadFile.
func readKnownLoad(t *testing.T) knownFailures {
	t.Helper()
	k := knownFailures{}
	f, err := os.Open(knownLoadFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, reason, ok := strings.Cut(l, "\t")
		if !ok || reason == "" {
			t.Fatalf("%s:%d: want a case name, a tab and the reason", knownLoadFile, n)
		}
		if _, dup := k[name]; dup {
			t.Fatalf("%s:%d: %s listed twice", knownLoadFile, n, name)
		}
		k[name] = reason
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return k
}

// loadWorld is what every case shares: one node, one broker.
type loadWorld struct {
	c      *client.Client
	broker string
	prod   *kgo.Client
	ctx    context.Context
}

// TestDorisLoad runs every load case of the corpus (but those needing a
// type loadnode lacks) through the binary: the case's DDL, a routine load
// built from its properties (loadStatement), its records as Kafka
// messages, and its query (runQuery), compared with expected.out.
func TestDorisLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary against kfake; not in -short")
	}
	corpus := requireCorpus(t)
	start := time.Now()
	cases := readLoadCases(t, corpus)
	known := readKnownLoad(t)
	write := os.Getenv(writeKnownEnv) == "1"

	run := cases
	var names []string
	unsupported := 0
	for _, c := range cases {
		names = append(names, c.name)
		if unsupportedNote.MatchString(c.Note) {
			unsupported++
		}
	}
	if bad := known.unknown(names); len(bad) > 0 && !write {
		t.Errorf("%s lists %q, which are no cases that run", knownLoadFile, bad)
	}

	var topics []string
	for i := range run {
		topics = append(topics, fmt.Sprintf("corpus_%d", i))
	}
	b := testnode.StartBroker(t, 1, topics...)
	node := testnode.Start(t, testnode.Options{DataDir: t.TempDir()})
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	w := &loadWorld{c: node.Client(t), broker: b.Addrs()[0], prod: prod, ctx: ctx}

	type result struct {
		ran      bool
		failures []string
	}
	results := make([]result, len(run))
	sem := make(chan struct{}, loadParallel)
	// Each case runs in a subtest of its own; the subtests run at most
	// loadParallel at once, against the one node and broker.
	t.Run("cases", func(t *testing.T) {
		for i, c := range run {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				ct := newCaseT(t)
				if unsupportedNote.MatchString(c.Note) {
					ct.run(func(ct *caseT) { refuseLoadCase(ct, w, c, i) })
				} else {
					ct.run(func(ct *caseT) { runLoadCase(ct, w, c, i) })
				}
				results[i].ran, results[i].failures = true, ct.failures()
				if write {
					if f := results[i].failures; len(f) > 0 {
						t.Log(strings.Join(f, "\n"))
					}
					return
				}
				o, msg := known.judge(c.name, results[i].failures)
				switch o {
				case outcomeKnown:
					t.Log(msg)
				case outcomeFail, outcomeStale:
					t.Error(msg)
				}
			})
		}
	})

	pass := map[string]int{}
	all := map[string]int{}
	var newKnown []string
	ran := 0
	for i, c := range run {
		if !results[i].ran { // left out by -run
			continue
		}
		supported := !unsupportedNote.MatchString(c.Note)
		if supported {
			ran++
			all[c.Kind]++
		}
		if len(results[i].failures) == 0 {
			if supported {
				pass[c.Kind]++
			}
			continue
		}
		reason := strings.Join(strings.Fields(fileLine.ReplaceAllString(results[i].failures[0], "")), " ")
		if r := []rune(reason); len(r) > 300 {
			reason = string(r[:300]) + "..."
		}
		newKnown = append(newKnown, c.name+"\t"+strings.ReplaceAll(reason, "\t", " "))
	}
	if write && ran+unsupported == len(run) {
		head := "# The corpus's load cases loadnode does not pass yet (tests/conformance/load_test.go, knownLoadFile):\n" +
			"# the case, a tab, what the harness observed (its start, on one line). Rewritten by\n" +
			"# LOADNODE_CONFORMANCE_WRITE_KNOWN=1 go test ./tests/conformance -run TestDorisLoad.\n"
		if err := os.WriteFile(knownLoadFile, []byte(head+strings.Join(newKnown, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines := []string{
		fmt.Sprintf("conformance: %d of %d pass (routine load)", pass["routine_load"], all["routine_load"]),
		fmt.Sprintf("conformance: %d of %d pass (stream-load semantics)", pass["stream_load"], all["stream_load"]),
		fmt.Sprintf("conformance: %d of %d pass (load cases; %d more need a type loadnode lacks) in %s",
			pass["routine_load"]+pass["stream_load"], ran, unsupported, time.Since(start).Round(time.Second)),
	}
	for _, l := range lines {
		t.Log(l)
		fmt.Println(l)
	}
	summary.Lock()
	summary.loadRan = true
	summary.loadPass, summary.loadAll = pass["routine_load"]+pass["stream_load"], ran
	summary.loadUnsupported = unsupported
	summary.Unlock()
}

// refuseLoadCase runs the statements of case c, which needs a type
// loadnode lacks: its DDL and its routine load (no records). One must be
// refused, naming what it lacks; a case whose statements are all accepted
// fails, since loadnode would load what it cannot hold as Doris does.
func refuseLoadCase(t *caseT, w *loadWorld, c *loadCase, i int) {
	t.Helper()
	stmts, table, err := caseDDL(c, i)
	if err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf("corpus_job_c%d", i)
	ls, err := loadStatement(c, job, table, w.broker, fmt.Sprintf("corpus_%d", i), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(stmts, ls) {
		if _, err := dorisexec.Exec(w.ctx, w.c, s); err != nil {
			t.Logf("unsupported, refused: %v", err)
			return
		}
	}
	dorisexec.Exec(w.ctx, w.c, "STOP ROUTINE LOAD FOR "+job)
	t.Fatalf("the case needs a type loadnode lacks (%s), yet loadnode accepted its DDL and routine load", unsupportedNote.FindString(c.Note))
}

// caseDDL is case c's DDL as the i-th case runs it (renameTables), and the
// table its query reads.
func caseDDL(c *loadCase, i int) (stmts []string, table string, err error) {
	ddl, err := os.ReadFile(filepath.Join(c.dir, "ddl.sql"))
	if err != nil {
		return nil, "", err
	}
	stmts = splitStatements(string(ddl))
	rename := renameTables(stmts, fmt.Sprintf("_c%d", i))
	for j := range stmts {
		stmts[j] = rename(stmts[j])
	}
	return stmts, rename(c.Table), nil
}

// renameTables returns a function that gives the tables stmts create the
// suffix, wherever a statement or query names them.
func renameTables(stmts []string, suffix string) func(string) string {
	var res []*regexp.Regexp
	var names []string
	for _, s := range stmts {
		if m := createTableRE.FindStringSubmatch(s); m != nil {
			tb := strings.Trim(m[1], "`")
			names = append(names, tb)
			res = append(res, regexp.MustCompile(`(?i)(^|[^\w.])`+"`?"+regexp.QuoteMeta(tb)+"`?"+`($|[^\w])`))
		}
	}
	return func(s string) string {
		for j, re := range res {
			s = re.ReplaceAllString(s, "${1}"+names[j]+suffix+"${2}")
		}
		return s
	}
}

// runLoadCase runs case c as the i-th: its tables get the suffix _c<i>
// (the cases share one node and many use the same table names), its job
// reads topic corpus_<i>.
func runLoadCase(t *caseT, w *loadWorld, c *loadCase, i int) {
	t.Helper()
	suffix := fmt.Sprintf("_c%d", i)
	ddl, err := os.ReadFile(filepath.Join(c.dir, "ddl.sql"))
	if err != nil {
		t.Fatal(err)
	}
	stmts := splitStatements(string(ddl))
	rename := renameTables(stmts, suffix)
	exec := func(s string) {
		t.Helper()
		if _, err := dorisexec.Exec(w.ctx, w.c, s); err != nil {
			t.Fatalf("statement refused: %v\n\t%s", err, strings.ReplaceAll(s, "\n", "\n\t"))
		}
	}
	for _, s := range stmts {
		exec(rename(s))
	}
	steps := noteSteps(c.Note)
	if steps.alterTable != "" {
		exec(rename(steps.alterTable))
	}
	if steps.insert != "" {
		exec(rename(steps.insert))
	}
	table := rename(c.Table)
	loads, err := caseLoads(c)
	if err != nil {
		t.Fatal(err)
	}
	topic := fmt.Sprintf("corpus_%d", i)
	// The loads run in turn, each a job reading its records of the topic
	// (the first from the beginning, a later one from its first offset),
	// stopped before the next load's records are produced.
	var state api.JobState
	var reason string
	var end int64
	for n, l := range loads {
		job := "corpus_job" + suffix
		lc := *c
		lc.Properties = l.props
		if n > 0 {
			job = fmt.Sprintf("%s_%d", job, n+1)
			lc.Properties = maps.Clone(l.props)
			lc.Properties["kafka_partitions"] = "0"
			lc.Properties["kafka_offsets"] = strconv.FormatInt(end, 10)
		}
		stmt, err := loadStatement(&lc, job, table, w.broker, topic, len(l.records))
		if err != nil {
			t.Fatal(err)
		}
		produce := func() {
			if len(l.records) == 0 {
				return
			}
			var recs []*kgo.Record
			for _, r := range l.records {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(r)})
			}
			if err := w.prod.ProduceSync(w.ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		end += int64(len(l.records))
		if n == 0 && steps.alter != "" {
			// The suite alters the job before its records are produced.
			exec(stmt)
			exec("PAUSE ROUTINE LOAD FOR " + job)
			exec("ALTER ROUTINE LOAD FOR " + job + " PROPERTIES (" + steps.alter + ")")
			exec("RESUME ROUTINE LOAD FOR " + job)
			produce()
		} else {
			produce()
			exec(stmt)
		}
		// The job has read every record when its committed offset (the
		// next to read) is past the last; a job that paused read what it
		// could.
		poll(t, func() (bool, func() string) {
			info, err := w.c.ShowJob(w.ctx, job)
			if err != nil {
				return false, func() string { return fmt.Sprintf("job %s: %v", job, err) }
			}
			state, reason = info.GetSummary().GetState(), info.GetSummary().GetReasonMessage()
			var next int64
			for _, p := range info.GetPartitions() {
				next = p.GetCommittedOffset()
			}
			done := next >= end || state == api.JobState_PAUSED || state == api.JobState_CANCELLED || state == api.JobState_STOPPED
			return done, func() string {
				return fmt.Sprintf("job %s read to offset %d of %d records: %v %s", job, next, end, state, reason)
			}
		})
		dorisexec.Exec(w.ctx, w.c, "STOP ROUTINE LOAD FOR "+job)
		if n+1 < len(loads) {
			poll(t, func() (bool, func() string) {
				info, err := w.c.ShowJob(w.ctx, job)
				st := info.GetSummary().GetState()
				return err == nil && (st == api.JobState_STOPPED || st == api.JobState_CANCELLED), func() string {
					return fmt.Sprintf("job %s not stopped: %v %v", job, st, err)
				}
			})
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
	// Doris returns the rows in no order without ORDER BY: a multiset; an
	// order_qt_ tag's framework sorts the rendered rows as strings before
	// comparing, so its section is in that order, whatever the query's.
	if !hasOrderBy(c.Query) || orderQT.MatchString(c.Note) {
		slices.Sort(got)
		slices.Sort(want)
	}
	if d := diffLines(got, want); d != "" {
		jobNote := ""
		if state != api.JobState_RUNNING {
			jobNote = fmt.Sprintf(" (job %v: %s)", state, reason)
		}
		t.Fatalf("rows differ%s:\n%s", jobNote, d)
	}
}

// caseSteps are the statements a case's note says the suite runs around
// its job: alterTable, an ALTER TABLE run after CREATE TABLE (ADD
// TEMPORARY PARTITION); insert, an INSERT INTO ... VALUES before the job;
// alter, the PROPERTIES of an ALTER ROUTINE LOAD run (PAUSE, ALTER,
// RESUME) after the job is created and before its records are produced.
type caseSteps struct{ alterTable, insert, alter string }

var (
	noteAlterTableRE = regexp.MustCompile(`After CREATE TABLE the suite runs: (ALTER TABLE [^;]*);`)
	noteInsertRE     = regexp.MustCompile(`(?:Before the job|\bbefore the load): (INSERT INTO [^;]*?\))\.(?:\s|$)`)
	noteAlterRE      = regexp.MustCompile(`ALTER ROUTINE LOAD (?:FOR <job>|\.\.\.) PROPERTIES \((.*?)\);`)
)

// noteSteps reads caseSteps from a case's note.
func noteSteps(note string) caseSteps {
	var st caseSteps
	if m := noteAlterTableRE.FindStringSubmatch(note); m != nil {
		st.alterTable = m[1]
	}
	if m := noteInsertRE.FindStringSubmatch(note); m != nil {
		st.insert = m[1]
	}
	if m := noteAlterRE.FindStringSubmatch(note); m != nil {
		st.alter = m[1]
	}
	return st
}

// fileLine is the "load_test.go:184: " a failure starts with.
var fileLine = regexp.MustCompile(`^\w+\.go:\d+: `)

var createTableRE = regexp.MustCompile("(?is)^\\s*CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?(`[^`]+`|[\\w]+)")

// laterLoads are the property changes of a case's later loads, by data
// file (data.N.<ext>), as its note gives them: a case whose suite loads
// several files into one table with other properties for some. A file
// not listed loads with the properties of the file before it; an empty
// value removes the property.
var laterLoads = map[string]map[int]map[string]string{
	// "data.2.csv with column_separator '114455' and trim_double_quotes 'true'"
	"test_csv_split_line__sql__2": {2: {"column_separator": "114455"}},
	// "data.5 ... with max_filter_ratio 0.5 added ...; data.6 with the
	// properties above; data.7 with column_separator '@@' and
	// line_delimiter '$$$' (other properties as above); data.8 with
	// trim_double_quotes 'false'"
	"test_csv_with_enclose_and_escape__select": {
		5: {"max_filter_ratio": "0.5"},
		6: {"max_filter_ratio": ""},
		7: {"column_separator": "@@", "line_delimiter": "$$$"},
		8: {"column_separator": ",", "line_delimiter": "", "trim_double_quotes": "false"},
	},
	// "then data.2.json, data.3.json, data.4.json each with jsonpaths
	// '["$.id",  "$.city", "$.code"]' ...; load 3 sets max_filter_ratio 1"
	"test_json_load__select14": {
		2: {"jsonpaths": `["$.id",  "$.city", "$.code"]`},
		3: {"jsonpaths": `["$.id",  "$.city", "$.code"]`, "max_filter_ratio": "1"},
		4: {"jsonpaths": `["$.id",  "$.city", "$.code"]`, "max_filter_ratio": "0"},
	},
}

// caseLoad is one load of a case: its properties and its records.
type caseLoad struct {
	props   map[string]string
	records []string
}

// caseLoads are the loads of case c, in order: its data files (data.<ext>,
// or data.1.<ext>, data.2.<ext>, ... loaded in order) with their
// properties (laterLoads), consecutive files of the same properties one
// load. Each file's messages are each line (one_per_line) or the file
// (whole_file). A line_delimiter splits the records instead of the line
// break, in both. A csv load with header lines (skip_lines,
// csv_with_names, csv_with_names_and_types) sends each file as one
// record: Doris skips them at the start of the stream load's file,
// loadnode at the start of each record, whose lines are its rows.
func caseLoads(c *loadCase) ([]caseLoad, error) {
	files, err := filepath.Glob(filepath.Join(c.dir, "data.*"))
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return dataIndex(files[i]) < dataIndex(files[j]) })
	var loads []caseLoad
	props := c.Properties
	for _, f := range files {
		changed := false
		if ch, ok := laterLoads[c.name][dataIndex(f)]; ok {
			props = maps.Clone(props)
			maps.Copy(props, ch)
			maps.DeleteFunc(props, func(_, v string) bool { return v == "" })
			changed = true
		}
		recs, err := fileRecords(c, f, normalProps(props))
		if err != nil {
			return nil, err
		}
		if len(loads) == 0 || changed {
			loads = append(loads, caseLoad{props: props})
		}
		l := &loads[len(loads)-1]
		l.records = append(l.records, recs...)
	}
	return loads, nil
}

// caseRecords are the messages of all of case c's loads.
func caseRecords(c *loadCase) ([]string, error) {
	loads, err := caseLoads(c)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range loads {
		out = append(out, l.records...)
	}
	return out, nil
}

// fileRecords are the messages of data file f of case c, loaded with the
// (normalProps) properties props.
func fileRecords(c *loadCase, f string, props map[string]string) ([]string, error) {
	delim := ""
	if d, ok := props["line_delimiter"]; ok {
		delim = unescapeDelim(d)
	}
	wholeFile := c.Records == "whole_file"
	switch f := strings.ToLower(props["format"]); {
	case f == "csv_with_names", f == "csv_with_names_and_types":
		wholeFile = true
	case props["skip_lines"] != "" && f != "json":
		wholeFile = true
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return nil, err
	}
	s := string(b)
	var recs []string
	switch {
	case delim != "" && props["enclose"] != "":
		recs = splitEnclosed(s, delim, props)
	case delim != "":
		recs = strings.Split(strings.TrimSuffix(strings.TrimSuffix(s, "\n"), delim), delim)
	case wholeFile:
		recs = []string{s}
	default:
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSuffix(l, "\r"); l != "" {
				recs = append(recs, l)
			}
		}
	}
	return recs, nil
}

// splitEnclosed splits s at line delimiter delim outside enclosed
// fields, as Doris's reader finds a stream load's lines (a field that
// starts with the enclose character runs to the enclose character that
// is neither escaped nor doubled).
func splitEnclosed(s, delim string, props map[string]string) []string {
	enc, sep := props["enclose"][0], unescapeDelim(props["column_separator"])
	if sep == "" {
		sep = "\t"
	}
	var esc byte
	if e := props["escape"]; e != "" {
		esc = e[0]
	}
	var recs []string
	start, fieldStart := 0, true
	for i := 0; i < len(s); {
		if fieldStart && s[i] == enc {
			escaped, closing := false, false
			for i++; i < len(s); i++ {
				c := s[i]
				if esc != 0 && c == esc {
					escaped = !escaped
				} else if escaped {
					escaped = false
				} else if closing {
					if c != enc {
						break
					}
					closing = false
				} else if c == enc {
					closing = true
				}
			}
			fieldStart = false
			continue
		}
		fieldStart = false
		switch {
		case strings.HasPrefix(s[i:], delim):
			recs = append(recs, s[start:i])
			i += len(delim)
			start, fieldStart = i, true
		case strings.HasPrefix(s[i:], sep):
			i += len(sep)
			fieldStart = true
		default:
			i++
		}
	}
	if start < len(s) {
		recs = append(recs, s[start:])
	}
	return recs
}

// dataIndex orders data.<ext> first, then data.N.<ext> by N.
func dataIndex(path string) int {
	parts := strings.Split(filepath.Base(path), ".")
	if len(parts) >= 3 {
		if n, err := strconv.Atoi(parts[1]); err == nil {
			return n
		}
	}
	return 0
}

// unescapeDelim reads a separator as Doris's headers give it: \n, \t,
// \xNN, or the literal text.
func unescapeDelim(s string) string {
	switch {
	case s == `\n`:
		return "\n"
	case s == `\t`:
		return "\t"
	case strings.HasPrefix(strings.ToLower(s), `\x`) && len(s) == 4:
		if n, err := strconv.ParseUint(s[2:], 16, 8); err == nil {
			return string([]byte{byte(n)})
		}
	}
	return s
}

// quoteSQL is s as a SQL string literal, written as a Doris user writes a
// header's value in a statement: as it is (a separator's \t or \x01
// stays as typed), between quotes it does not hold (a backslash before
// the quote when it holds both).
func quoteSQL(s string) string {
	if strings.HasSuffix(s, `\`) && !strings.HasSuffix(s, `\\`) {
		s += `\` // a lone backslash at the end (escape: \) would escape the quote
	}
	switch {
	case !strings.Contains(s, `"`):
		return `"` + s + `"`
	case !strings.Contains(s, "'"):
		return "'" + s + "'"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// Stream-load headers that are not a routine load's PROPERTIES, and how
// loadStatement maps each.
var (
	// clauseHeaders become the statement's clauses
	// (function_column.sequence_col: ORDER BY, as Doris's docs map it).
	clauseHeaders = []string{"column_separator", "columns", "where", "partitions", "temporary_partitions", "merge_type", "delete", "function_column.sequence_col"}
	// recordHeaders say how the file splits into records (caseRecords).
	recordHeaders = []string{"line_delimiter", "read_json_by_line"}
	// sessionHeaders tune how the stream load runs, not what it loads:
	// memtable_on_sink_node (where the memtable lives).
	sessionHeaders = []string{"memtable_on_sink_node"}
	// renamedHeaders are a routine load's properties under another name.
	renamedHeaders = map[string]string{"time_zone": "timezone"}
)

// recordingZone is the session time zone Doris's regression suites run
// in (the FE's default time_zone there): a case that sets none loaded its
// datetimes in it (from_unixtime(2019) is 1970-01-01T08:33:39 in
// test_stream_load__sql1), so its job gets it as its timezone.
const recordingZone = "Asia/Shanghai"

// sessionZone is recordingZone, the zone the suites' queries show a
// TIMESTAMP in (+08:00: test_stream_load_timestamp sets it as well).
var sessionZone = time.FixedZone("+08:00", 8*3600)

// loadStatement is the CREATE ROUTINE LOAD of case c: its properties as a
// Doris user would write them in a routine load (stream-load headers
// mapped onto the clauses), reading topic from the beginning. A stream
// load of records records gets streamLoadProps.
func loadStatement(c *loadCase, job, table, broker, topic string, records int) (string, error) {
	p := normalProps(c.Properties)
	if c.Kind == "stream_load" {
		for k, v := range streamLoadProps(records) {
			if _, ok := p[k]; !ok {
				p[k] = v
			}
		}
	}
	var clauses []string
	if v, ok := p["columns terminated by"]; ok {
		p["column_separator"] = v
	}
	if v, ok := p["column_separator"]; ok {
		clauses = append(clauses, "COLUMNS TERMINATED BY "+quoteSQL(v))
	}
	if v, ok := p["columns"]; ok {
		clauses = append(clauses, "COLUMNS("+v+")")
	}
	if v, ok := p["where"]; ok {
		clauses = append(clauses, "WHERE "+v)
	}
	if v, ok := p["partitions"]; ok {
		clauses = append(clauses, "PARTITION("+v+")")
	}
	if v, ok := p["temporary_partitions"]; ok {
		clauses = append(clauses, "TEMPORARY PARTITION("+v+")")
	}
	if v, ok := p["delete"]; ok {
		clauses = append(clauses, "DELETE ON "+v)
	}
	if v, ok := p["function_column.sequence_col"]; ok {
		clauses = append(clauses, "ORDER BY "+v)
	}
	var props []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var kafka []string
	for _, k := range keys {
		if strings.HasPrefix(k, "property.") || strings.HasPrefix(k, "kafka_") {
			// FROM KAFKA's; the harness gives the broker, the topic and
			// where to start.
			if k != "property.kafka_default_offsets" && k != "kafka_broker_list" && k != "kafka_topic" {
				kafka = append(kafka, quoteSQL(k)+" = "+quoteSQL(p[k]))
			}
			continue
		}
		if k == "columns terminated by" || slices.Contains(clauseHeaders, k) || slices.Contains(recordHeaders, k) || slices.Contains(sessionHeaders, k) {
			continue
		}
		name := k
		if r, ok := renamedHeaders[k]; ok {
			name = r
		}
		// A header's value is its text: as a SQL literal, its
		// backslashes are doubled, so that the statement's value is it.
		props = append(props, quoteSQL(name)+" = "+quoteSQL(strings.ReplaceAll(p[k], `\`, `\\`)))
	}
	if _, ok := p["time_zone"]; !ok {
		if _, ok := p["timezone"]; !ok {
			props = append(props, quoteSQL("timezone")+" = "+quoteSQL(recordingZone))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE ROUTINE LOAD %s ON %s", job, table)
	if v, ok := p["merge_type"]; ok {
		fmt.Fprintf(&b, " WITH %s", strings.ToUpper(v))
	}
	if len(clauses) > 0 {
		b.WriteString("\n" + strings.Join(clauses, ",\n"))
	}
	if len(props) > 0 {
		b.WriteString("\nPROPERTIES (" + strings.Join(props, ", ") + ")")
	}
	kafka = append([]string{quoteSQL("kafka_broker_list") + " = " + quoteSQL(broker), quoteSQL("kafka_topic") + " = " + quoteSQL(topic),
		quoteSQL("property.kafka_default_offsets") + " = " + quoteSQL("OFFSET_BEGINNING")}, kafka...)
	fmt.Fprintf(&b, "\nFROM KAFKA (%s)", strings.Join(kafka, ", "))
	return b.String(), nil
}

// streamLoadProps map a stream load of n records, one Doris transaction,
// onto a routine load: its one batch holds every record (max_batch_rows
// n; the records are in the topic before the job starts, so its first
// read ends when it has them all, caught up, never on a timer: a long
// max_batch_interval), filtered rows may be at most max_filter_ratio of
// it (the stream load's own, else its default 0) or nothing of it loads,
// and there is no count of error rows (a stream load has no
// max_error_number). A case of several data files (several stream loads
// in the suite) loads them as one transaction.
func streamLoadProps(n int) map[string]string {
	return map[string]string{
		"max_batch_rows":     strconv.Itoa(max(n, 1)),
		"max_batch_interval": "60",
		"max_filter_ratio":   "0",
		"max_error_number":   strconv.FormatInt(math.MaxInt64, 10),
	}
}

// normalProps are a case's properties with lower-case names: a routine
// load's suite writes its clauses as COLUMNS, WHERE, COLUMNS TERMINATED BY.
// {{DB}}, the suite's database, becomes corpusDB.
func normalProps(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[strings.ToLower(strings.TrimSpace(k))] = strings.ReplaceAll(v, "{{DB}}", corpusDB)
	}
	return out
}

// corpusDB stands for the suite's database where a case names it ({{DB}}).
const corpusDB = "corpus"

// expectedRows reads expected.out's one section.
func expectedRows(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []string
	sections := 0
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "-- !") && strings.HasSuffix(l, " --"):
			sections++
		case strings.HasPrefix(l, "--"), l == "":
		default:
			rows = append(rows, l)
		}
	}
	if sections != 1 {
		return nil, fmt.Errorf("%s: %d sections, want 1", path, sections)
	}
	return rows, nil
}

// diffLines describes how got differs from want ("" when it does not).
func diffLines(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(got) || i < len(want); i++ {
		g, w := "<none>", "<none>"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "line %d\n  got  %q\n  want %q\n", i+1, g, w)
		}
	}
	return b.String()
}

// poll calls cond every 50ms until it holds; after 60s it fails the case
// with cond's description of what it last saw.
func poll(t *caseT, cond func() (bool, func() string)) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, what := cond()
		if ok {
			return
		}
		select {
		case <-deadline:
			t.Fatal(what())
		case <-tick.C:
		}
	}
}
