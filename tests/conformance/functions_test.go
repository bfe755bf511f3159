package conformance

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/table"
)

// knownFunctionsFile is the known-failing table of the corpus's function
// rows: one row per line, the row's file, expression and tag field as the
// corpus has them, then what loadnode gives (Go-quoted):
//
//	date_format.tsv <TAB> DATE_FORMAT('2009-10-04', '%D') <TAB> date_format_9 <TAB> "got \"D\""
//
// It lists every row of a function loadnode accepts (table.KnownFunction)
// that does not match Doris, and every row of a function it does not
// accept that is not refused by name (an expression that does not parse).
//
// INVARIANT: a row fails TestDorisFunctions unless it matches and is not
// listed, is listed with exactly what loadnode gives, or belongs to a
// function loadnode does not accept and is refused by name (unsupported,
// not listed). A new wrong value, a listed row that now gives something
// else (fixed or not), and a listed row that is no corpus row all fail.
const knownFunctionsFile = "testdata/known-failing-functions.tsv"

// funcRow is one row of functions/<function>.tsv.
type funcRow struct {
	file, expr, expected, source, tag string
	tz                                string // the session time zone the suite set ("" none)
	lcTimeNames                       string // the session's lc_time_names the suite set ("" none)
}

func (r funcRow) key() string { return r.file + "\t" + r.expr + "\t" + r.tag }

// readFuncRows reads every row of the corpus's functions/.
func readFuncRows(t *testing.T, corpus string) []funcRow {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(corpus, "functions", "*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no functions/*.tsv in %s (%v)", corpus, err)
	}
	var rows []funcRow
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			fields := strings.Split(l, "\t")
			if len(fields) != 4 {
				t.Fatalf("%s:%d: %d tab-separated fields, want 4 (expression, expected, source, tag)", f, i+1, len(fields))
			}
			r := funcRow{file: filepath.Base(f), expr: fields[0], expected: fields[1], source: fields[2], tag: fields[3]}
			for _, opt := range strings.Split(r.tag, ";")[1:] {
				if v, ok := strings.CutPrefix(opt, "tz="); ok {
					r.tz = v
				}
				if v, ok := strings.CutPrefix(opt, "var:lc_time_names="); ok {
					r.lcTimeNames = v
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Outcomes of a function row.
const (
	rowMatch      = "match"
	rowWrong      = "wrong value"
	rowRefused    = "refused"    // by name: a function unknown to the engine, a form (arity, INTERVAL unit) it lacks
	rowUnparsable = "unparsable" // any other refusal of the expression: its syntax
)

// evalRow evaluates a row's expression and returns its outcome and what
// loadnode gave: the value as Doris would render it, or the error.
func evalRow(r funcRow) (verdict, observed string) {
	loc := time.UTC
	if r.tz != "" {
		l, err := table.LoadTimezone(r.tz)
		if err != nil {
			return rowUnparsable, "tz=" + r.tz + ": " + err.Error()
		}
		loc = l
	}
	var opts []table.EvalOption
	if r.lcTimeNames != "" {
		opts = append(opts, table.WithLCTimeNames(r.lcTimeNames))
	}
	c, err := table.EvalConst(r.expr, loc, opts...)
	if err != nil {
		if name, ok := table.IsUnknownFunction(err); ok {
			return rowRefused, "refused: unknown function " + name
		}
		if _, ok := table.IsRefusedForm(err); ok {
			return rowRefused, "refused: " + err.Error()
		}
		return rowUnparsable, "unparsable: " + err.Error()
	}
	got := renderConst(c)
	if got == r.expected || numEqual(c, r.expected) {
		return rowMatch, got
	}
	return rowWrong, "got " + got
}

// renderConst renders a value as Doris's regression framework prints it
// (renderValue's rules).
func renderConst(c table.Const) string {
	switch c.Kind {
	case table.ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case table.ConstFloat:
		return javaFloat(c.Float, 64)
	case table.ConstText:
		return csvEscape(c.Text)
	case table.ConstBool:
		return strconv.FormatBool(c.Int != 0)
	case table.ConstDate:
		return time.Unix(c.Int*86400, 0).UTC().Format(time.DateOnly)
	case table.ConstDatetime:
		return javaLocalDateTime(time.UnixMicro(c.Int).UTC())
	case table.ConstTime:
		return dorisTime(c.Int, c.Scale)
	}
	return `\N`
}

// dorisTime renders a TIME as Doris's regression framework prints one:
// [-]HH:MM:SS (hours past 99 in as many digits as they take), then the
// type's scale digits of fraction (00:00:06.666, 01:01:01.900000).
func dorisTime(us int64, scale int) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	s := us / 1e6
	out := fmt.Sprintf("%s%02d:%02d:%02d", sign, s/3600, s/60%60, s%60)
	if scale > 0 {
		out += "." + fmt.Sprintf("%06d", us%1e6)[:min(scale, 6)]
	}
	return out
}

// numEqual reports whether a number loadnode computed is the number Doris
// printed, whatever the type Doris gave it: the engine computes integers
// and float64s, where Doris may type the same value DECIMAL(10, 3) (81.570)
// or DOUBLE (3.0); in a load the column's type decides how it is kept.
// The float must be the float64 nearest to Doris's number.
func numEqual(c table.Const, expected string) bool {
	want, err := strconv.ParseFloat(expected, 64)
	if err != nil || math.IsNaN(want) || math.IsInf(want, 0) || strings.ContainsAny(expected, "xXpP_") {
		return false
	}
	switch c.Kind {
	case table.ConstInt:
		if n, err := strconv.ParseInt(expected, 10, 64); err == nil {
			return n == c.Int
		}
		return want == float64(c.Int) && math.Abs(want) < 1<<53
	case table.ConstFloat:
		return want == c.Float
	}
	return false
}

// mustList reports whether a row belongs in knownFunctionsFile: it does
// not match, and it is not a row of a function the engine lacks refused
// by name (unsupported).
func mustList(accepted bool, verdict, observed string) bool {
	unknownFn := strings.HasPrefix(observed, "refused: unknown function ")
	return verdict != rowMatch && (accepted || !unknownFn)
}

// judgeRow holds a row's verdict and what loadnode gave against the table
// (want, listed): "" when it agrees, else why the test fails.
func judgeRow(accepted bool, verdict, observed, want string, listed bool) string {
	list := mustList(accepted, verdict, observed)
	switch {
	case list && !listed:
		return fmt.Sprintf("%s, not listed in %s", observed, knownFunctionsFile)
	case list && want != observed:
		return fmt.Sprintf("%s, but %s lists it as %q: update the line", observed, knownFunctionsFile, want)
	case !list && listed && verdict == rowMatch:
		return fmt.Sprintf("matches Doris now: remove it from %s (listed as %q)", knownFunctionsFile, want)
	case !list && listed:
		return fmt.Sprintf("refused by name (unsupported): remove it from %s (listed as %q)", knownFunctionsFile, want)
	}
	return ""
}

func TestJudgeRow(t *testing.T) {
	for _, tc := range []struct {
		accepted     bool
		verdict, obs string
		want         string
		listed       bool
		fails        string // a part of the message, "" when it passes
	}{
		{true, rowMatch, "ab", "", false, ""},
		{true, rowWrong, "got D", "", false, "got D, not listed"},         // a new wrong value
		{true, rowWrong, "got D", "got D", true, ""},                      // a known one
		{true, rowWrong, "got E", "got D", true, "lists it as \"got D\""}, // another wrong value
		{true, rowMatch, "x", "got D", true, "matches Doris now"},         // fixed, still listed
		{true, rowRefused, "refused: unknown function NOW", "", false, "not listed"},
		{false, rowRefused, "refused: unknown function HOUR", "", false, ""}, // unsupported
		{false, rowRefused, "refused: unknown function HOUR", "x", true, "unsupported): remove it"},
		{false, rowUnparsable, "unparsable: unexpected \"FROM\"", "", false, "not listed"},
		{false, rowMatch, "1", "", false, ""},
	} {
		got := judgeRow(tc.accepted, tc.verdict, tc.obs, tc.want, tc.listed)
		if (tc.fails == "") != (got == "") || !strings.Contains(got, tc.fails) {
			t.Errorf("judgeRow(%v, %s, %q, %q, %v) = %q, want %q", tc.accepted, tc.verdict, tc.obs, tc.want, tc.listed, got, tc.fails)
		}
	}
}

// readKnownFunctions reads knownFunctionsFile: key -> observed.
func readKnownFunctions(t *testing.T) map[string]string {
	t.Helper()
	known := map[string]string{}
	f, err := os.Open(knownFunctionsFile)
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
		fields := strings.Split(l, "\t")
		if len(fields) != 4 {
			t.Fatalf("%s:%d: %d tab-separated fields, want 4 (file, expression, tag, observed)", knownFunctionsFile, n, len(fields))
		}
		obs, err := strconv.Unquote(fields[3])
		if err != nil {
			t.Fatalf("%s:%d: observed %s: %v", knownFunctionsFile, n, fields[3], err)
		}
		k := strings.Join(fields[:3], "\t")
		if _, dup := known[k]; dup {
			t.Fatalf("%s:%d: listed twice", knownFunctionsFile, n)
		}
		known[k] = obs
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

// writeKnownFunctions rewrites knownFunctionsFile with the rows given.
func writeKnownFunctions(t *testing.T, rows []funcRow, observed map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# The corpus's function rows loadnode does not pass yet (tests/conformance/functions_test.go,\n" +
		"# knownFunctionsFile): file, expression, tag, what loadnode gives (Go-quoted). Rewritten by\n" +
		"# LOADNODE_CONFORMANCE_WRITE_KNOWN=1 go test ./tests/conformance -run TestDorisFunctions.\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\n", r.file, r.expr, r.tag, strconv.Quote(observed[r.key()]))
	}
	if err := os.WriteFile(knownFunctionsFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d rows)", knownFunctionsFile, len(rows))
}

// TestDorisFunctions evaluates every row of the corpus's functions/ as a
// constant expression of a load (the session time zone a row names is the
// job's timezone) and compares it with Doris's value; see
// knownFunctionsFile for the verdicts.
func TestDorisFunctions(t *testing.T) {
	corpus := requireCorpus(t)
	rows := readFuncRows(t, corpus)
	known := readKnownFunctions(t)
	write := os.Getenv(writeKnownEnv) == "1"

	seen := map[string]bool{}
	observed := map[string]string{}
	var toList []funcRow
	count := map[string]int{}
	var accRows, accPass, pass, unsupported int
	refusedFuncs := map[string]bool{}
	for _, r := range rows {
		k := r.key()
		seen[k] = true
		fn := strings.TrimSuffix(r.file, ".tsv")
		accepted := table.KnownFunction(fn)
		o, obs := evalRow(r)
		observed[k] = obs
		count[o]++
		if accepted {
			accRows++
		}
		if o == rowMatch {
			pass++
			if accepted {
				accPass++
			}
		}
		unknownFn := strings.HasPrefix(obs, "refused: unknown function ")
		if !accepted && unknownFn {
			unsupported++
			refusedFuncs[fn] = true
		}
		if mustList(accepted, o, obs) {
			toList = append(toList, r)
		}
		if write {
			continue
		}
		want, listed := known[k]
		if msg := judgeRow(accepted, o, obs, want, listed); msg != "" {
			t.Errorf("%s: %s (want %q; %s, %s): %s", r.file, r.expr, r.expected, r.source, r.tag, msg)
		}
	}
	if write {
		writeKnownFunctions(t, toList, observed)
	} else {
		for k := range known {
			if !seen[k] {
				t.Errorf("%s lists %q, which is no row of the corpus", knownFunctionsFile, k)
			}
		}
	}
	var refused []string
	for fn := range refusedFuncs {
		refused = append(refused, fn)
	}
	slices.Sort(refused)
	t.Logf("functions loadnode does not accept (refused by name): %s", strings.Join(refused, " "))
	t.Logf("function rows: %d match, %d wrong value, %d refused, %d unparsable", count[rowMatch], count[rowWrong], count[rowRefused], count[rowUnparsable])
	lines := []string{
		fmt.Sprintf("conformance: %d of %d pass (functions: rows of the functions loadnode accepts)", accPass, accRows),
		fmt.Sprintf("conformance: %d of %d pass (all function rows; %d refused by name, %d wrong value, %d unparsable)",
			pass, len(rows), count[rowRefused], count[rowWrong], count[rowUnparsable]),
	}
	for _, l := range lines {
		t.Log(l)
		fmt.Println(l)
	}
	summary.Lock()
	summary.funcsRan = true
	summary.funcPass, summary.funcAll = accPass, accRows
	summary.rowsPass, summary.rowsAll = pass, len(rows)
	summary.funcUnsupported = unsupported
	summary.Unlock()
}
