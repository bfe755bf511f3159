package conformance

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// The SELECT subset the corpus's queries use, run over a table scan:
//
//	SELECT * | count(*) | count(1) | item, item, ...   item: col | expr [AS name]
//	FROM table
//	[WHERE cond [AND cond ...]]      cond: col = 'text' | col = "text" | col <op> number | col IS [NOT] NULL
//	[ORDER BY col [ASC|DESC], ...]
//
// Cells are compared as renderValue renders them (compareCells: numbers
// as numbers, NULL first). A query outside the subset is an error naming
// it, so a case cannot pass on a query the harness did not run. An expr
// (AES_DECRYPT(FROM_BASE64(c), 'key')) is evaluated per row by loadnode's
// expression engine (table.EvalConst) with the row's values as literals.

var (
	selectRE = regexp.MustCompile(`(?is)^\s*select\s+(.+?)\s+from\s+([\w` + "`" + `]+)(\s+where\s+.+?)?(\s+order\s+by\s+.+?)?\s*;?\s*$`)
	condRE   = regexp.MustCompile(`(?is)^\s*` + "`?" + `(\w+)` + "`?" + `\s*(?:(=|!=|<>|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?[\d.]+)|is\s+(not\s+)?null)\s*$`)
)

// query is a parsed SELECT.
type query struct {
	count bool
	cols  []string // nil: *
	// exprs are the expression items of cols, by position (the name in
	// cols is the item's AS name, or its text).
	exprs map[int]string
	table string
	where []cond
	order []orderKey
}

type cond struct {
	col, op, lit string
	isNull       bool
	notNull      bool
}

type orderKey struct {
	col  string
	desc bool
}

func parseQuery(src string) (*query, error) {
	m := selectRE.FindStringSubmatch(src)
	if m == nil {
		return nil, fmt.Errorf("not in the harness's SELECT subset (SELECT cols FROM table [WHERE] [ORDER BY])")
	}
	q := &query{table: strings.Trim(m[2], "`")}
	proj := strings.TrimSpace(m[1])
	switch strings.ToLower(strings.ReplaceAll(proj, " ", "")) {
	case "*":
	case "count(*)", "count(1)":
		q.count = true
	default:
		for _, c := range splitTopLevel(proj) {
			c = strings.TrimSpace(c)
			if name := strings.Trim(c, "`"); regexp.MustCompile(`^\w+$`).MatchString(name) {
				q.cols = append(q.cols, name)
				continue
			}
			expr, name := c, c
			if m := aliasRE.FindStringSubmatch(c); m != nil {
				expr, name = m[1], strings.Trim(m[2], "`")
			}
			if !strings.Contains(expr, "(") {
				return nil, fmt.Errorf("projection %q: the harness reads column names, *, count(*) and function calls", c)
			}
			if q.exprs == nil {
				q.exprs = map[int]string{}
			}
			q.exprs[len(q.cols)] = expr
			q.cols = append(q.cols, name)
		}
	}
	if w := strings.TrimSpace(m[3]); w != "" {
		w = regexp.MustCompile(`(?i)^where\s+`).ReplaceAllString(w, "")
		for _, part := range regexp.MustCompile(`(?i)\s+and\s+`).Split(w, -1) {
			cm := condRE.FindStringSubmatch(part)
			if cm == nil {
				return nil, fmt.Errorf("WHERE %q: the harness reads only col <op> literal and col IS [NOT] NULL, joined by AND", part)
			}
			c := cond{col: cm[1], op: cm[2], lit: cm[3]}
			if c.op == "" {
				c.isNull, c.notNull = cm[4] == "", cm[4] != ""
			}
			if len(c.lit) >= 2 && (c.lit[0] == '\'' || c.lit[0] == '"') {
				c.lit = c.lit[1 : len(c.lit)-1]
			}
			q.where = append(q.where, c)
		}
	}
	if o := strings.TrimSpace(m[4]); o != "" {
		o = regexp.MustCompile(`(?i)^order\s+by\s+`).ReplaceAllString(o, "")
		for _, k := range strings.Split(o, ",") {
			f := strings.Fields(k)
			if len(f) == 0 || len(f) > 2 || len(f) == 2 && !strings.EqualFold(f[1], "asc") && !strings.EqualFold(f[1], "desc") {
				return nil, fmt.Errorf("ORDER BY %q: the harness orders by column names only", k)
			}
			q.order = append(q.order, orderKey{col: strings.Trim(f[0], "`"), desc: len(f) == 2 && strings.EqualFold(f[1], "desc")})
		}
	}
	return q, nil
}

// aliasRE is a projection item with a name: expr AS name.
var aliasRE = regexp.MustCompile("(?is)^(.+?)\\s+as\\s+(`?\\w+`?)$")

// splitTopLevel splits a projection at the commas outside parentheses
// and quotes.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			i = skipQuoted(s, i)
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// skipQuoted returns the offset of the quote closing the one at s[i] (a
// doubled quote or a backslash escapes), or len(s).
func skipQuoted(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j++
		case s[j] == q:
			return j
		}
	}
	return len(s)
}

// evalItem evaluates a projection expression over one row: each name of
// a column (not followed by "(") becomes the row's value as a literal.
func evalItem(expr string, index map[string]int, vals []*api.Value) (string, error) {
	var b strings.Builder
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '\'' || c == '"':
			j := min(skipQuoted(expr, i)+1, len(expr))
			b.WriteString(expr[i:j])
			i = j
		case c == '`' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			if c == '`' {
				j = min(skipQuoted(expr, i)+1, len(expr))
			} else {
				for j < len(expr) && (expr[j] == '_' || expr[j] >= 'a' && expr[j] <= 'z' || expr[j] >= 'A' && expr[j] <= 'Z' || expr[j] >= '0' && expr[j] <= '9') {
					j++
				}
			}
			name := strings.Trim(expr[i:j], "`")
			k, isCol := index[strings.ToLower(name)]
			if isCol && !strings.HasPrefix(strings.TrimSpace(expr[j:]), "(") {
				b.WriteString(literalOf(vals[k]))
			} else {
				b.WriteString(expr[i:j])
			}
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	c, err := table.EvalConst(b.String(), nil)
	if err != nil {
		return "", fmt.Errorf("projection %q: %w", expr, err)
	}
	return renderConst(c), nil
}

// literalOf is a stored value as an expression literal.
func literalOf(v *api.Value) string {
	quote := func(s string) string {
		return "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(s) + "'"
	}
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return "(" + strconv.FormatInt(k.Int64, 10) + ")"
	case *api.Value_Float64:
		return "(" + strconv.FormatFloat(k.Float64, 'g', -1, 64) + ")"
	case *api.Value_String_:
		return quote(k.String_)
	case *api.Value_Json:
		return quote(k.Json)
	case *api.Value_Bool:
		return strconv.FormatBool(k.Bool)
	case *api.Value_Decimal:
		return "(" + k.Decimal + ")"
	case *api.Value_Date:
		return quote(time.Unix(int64(k.Date)*86400, 0).UTC().Format(time.DateOnly))
	case *api.Value_DatetimeMicros:
		return quote(time.UnixMicro(k.DatetimeMicros).UTC().Format("2006-01-02 15:04:05.999999"))
	case *api.Value_TimestampMicros:
		return quote(time.UnixMicro(k.TimestampMicros).UTC().Format("2006-01-02 15:04:05.999999"))
	}
	return "NULL"
}

// hasOrderBy reports whether a query orders its rows.
func hasOrderBy(src string) bool {
	q, err := parseQuery(src)
	return err == nil && (len(q.order) > 0 || q.count)
}

// holds reports whether a rendered cell meets c.
func (c cond) holds(cell string) bool {
	switch {
	case c.isNull:
		return cell == `\N`
	case c.notNull:
		return cell != `\N`
	case cell == `\N`:
		return false
	}
	x := compareCells(cell, c.lit)
	switch c.op {
	case "=":
		return x == 0
	case "!=", "<>":
		return x != 0
	case "<":
		return x < 0
	case "<=":
		return x <= 0
	case ">":
		return x > 0
	case ">=":
		return x >= 0
	}
	return false
}

// runQuery runs src on loadnode's table and returns its rows rendered as
// Doris's regression framework prints them, tab-separated.
func runQuery(w *loadWorld, src string) ([]string, error) {
	q, err := parseQuery(src)
	if err != nil {
		return nil, err
	}
	spec, rows, err := w.c.Scan(w.ctx, q.table, 0)
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, c := range spec.GetColumns() {
		index[strings.ToLower(c.GetName())] = i
	}
	col := func(name string) (int, error) {
		if n, err := strconv.Atoi(name); err == nil { // ORDER BY 1: a position in the select list
			switch {
			case q.cols != nil && n >= 1 && n <= len(q.cols):
				name = q.cols[n-1]
			case q.cols == nil && n >= 1 && n <= len(spec.GetColumns()):
				return n - 1, nil
			default:
				return 0, fmt.Errorf("ORDER BY %d: no such position in the select list", n)
			}
		}
		i, ok := index[strings.ToLower(name)]
		if !ok {
			return 0, fmt.Errorf("table %s has no column %s", q.table, name)
		}
		return i, nil
	}
	// The cells of a row: its columns, then its expression items'.
	ncol := len(spec.GetColumns())
	var exprAt []int
	for i := range q.cols {
		if _, ok := q.exprs[i]; ok {
			exprAt = append(exprAt, i)
		}
	}
	var table [][]string
	for _, r := range rows {
		var cells []string
		for i, v := range r.GetValues() {
			cells = append(cells, renderValue(spec.GetColumns()[i], v))
		}
		for _, i := range exprAt {
			cell, err := evalItem(q.exprs[i], index, r.GetValues())
			if err != nil {
				return nil, err
			}
			cells = append(cells, cell)
		}
		table = append(table, cells)
	}
	for _, c := range q.where {
		i, err := col(c.col)
		if err != nil {
			return nil, err
		}
		var kept [][]string
		for _, cells := range table {
			if c.holds(cells[i]) {
				kept = append(kept, cells)
			}
		}
		table = kept
	}
	if q.count {
		return []string{strconv.Itoa(len(table))}, nil
	}
	var keys []int
	for _, k := range q.order {
		i, err := col(k.col)
		if err != nil {
			return nil, err
		}
		keys = append(keys, i)
	}
	sort.SliceStable(table, func(a, b int) bool {
		for n, k := range keys {
			c := compareCells(table[a][k], table[b][k])
			if q.order[n].desc {
				c = -c
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	proj := make([]int, 0, len(spec.GetColumns()))
	if q.cols == nil {
		for i := range spec.GetColumns() {
			proj = append(proj, i)
		}
	}
	for n, name := range q.cols {
		if _, ok := q.exprs[n]; ok {
			proj = append(proj, ncol+slices.Index(exprAt, n))
			continue
		}
		i, err := col(name)
		if err != nil {
			return nil, err
		}
		proj = append(proj, i)
	}
	out := make([]string, 0, len(table))
	for _, cells := range table {
		var p []string
		for _, i := range proj {
			p = append(p, cells[i])
		}
		out = append(out, strings.Join(p, "\t"))
	}
	return out, nil
}

func TestParseQuery(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want string // fmt of the query, or the error's start
	}{
		{"select * from t order by k1, k2", `&{false [] map[] t [] [{k1 false} {k2 false}]}`},
		{"SELECT count(*) FROM t", `&{true [] map[] t [] []}`},
		{`select * from t3 where tag_value="" order by user_id;`, `&{false [] map[] t3 [{tag_value =  false false}] [{user_id false}]}`},
		{"select count(1) from t where date_time is not null", `&{true [] map[] t [{date_time   false true}] []}`},
		{"select id, name from t", `&{false [id name] map[] t [] []}`},
		{"SELECT id, m[1] FROM t", `projection "m[1]"`},
		{"SELECT id, AES_DECRYPT(FROM_BASE64(d), 'k, ey') as dd FROM t ORDER BY id", `&{false [id dd] map[1:AES_DECRYPT(FROM_BASE64(d), 'k, ey')] t [] [{id false}]}`},
		{"SELECT id, a + 1 FROM t", `projection "a + 1"`},
		{"SELECT * FROM t TEMPORARY PARTITION(test) order by k1", "not in the harness's SELECT subset"},
		{"select * from t where a like 'x%'", `WHERE "a like 'x%'"`},
	} {
		q, err := parseQuery(tc.src)
		got := fmt.Sprint(q)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("parseQuery(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}

func TestEvalItem(t *testing.T) {
	str := func(s string) *api.Value { return &api.Value{Kind: &api.Value_String_{String_: s}} }
	index := map[string]int{"id": 0, "d": 1, "name": 2}
	vals := []*api.Value{{Kind: &api.Value_Int64{Int64: -7}}, str("aGVsbG8="), str(`it's a \ back`), {}}
	for _, tc := range []struct{ expr, want string }{
		{"FROM_BASE64(d)", "hello"},
		{"concat(name, '|', `id`)", `it's a \\ back|-7`}, // rendered as the framework writes text
		{"abs(id) + 1", "8"},
		{"ifnull(NULL, 'id')", "id"}, // a quoted name stays text
		{"length(name)", "13"},
	} {
		got, err := evalItem(tc.expr, index, vals)
		if err != nil || got != tc.want {
			t.Errorf("evalItem(%s) = %q, %v, want %q", tc.expr, got, err, tc.want)
		}
	}
	if _, err := evalItem("nosuch(d)", index, vals); err == nil {
		t.Errorf("an unknown function evaluates")
	}
}
