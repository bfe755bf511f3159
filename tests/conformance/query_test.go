package conformance

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The SELECT subset the corpus's queries use, run over a table scan:
//
//	SELECT * | count(*) | count(1) | col, col, ...
//	FROM table
//	[WHERE cond [AND cond ...]]      cond: col = 'text' | col = "text" | col <op> number | col IS [NOT] NULL
//	[ORDER BY col [ASC|DESC], ...]
//
// Cells are compared as renderValue renders them (compareCells: numbers
// as numbers, NULL first). A query outside the subset is an error naming
// it, so a case cannot pass on a query the harness did not run.

var (
	selectRE = regexp.MustCompile(`(?is)^\s*select\s+(.+?)\s+from\s+([\w` + "`" + `]+)(\s+where\s+.+?)?(\s+order\s+by\s+.+?)?\s*;?\s*$`)
	condRE   = regexp.MustCompile(`(?is)^\s*` + "`?" + `(\w+)` + "`?" + `\s*(?:(=|!=|<>|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?[\d.]+)|is\s+(not\s+)?null)\s*$`)
)

// query is a parsed SELECT.
type query struct {
	count bool
	cols  []string // nil: *
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
		for _, c := range strings.Split(proj, ",") {
			c = strings.Trim(strings.TrimSpace(c), "`")
			if !regexp.MustCompile(`^\w+$`).MatchString(c) {
				return nil, fmt.Errorf("projection %q: the harness reads only column names, *, count(*)", c)
			}
			q.cols = append(q.cols, c)
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
	var table [][]string
	for _, r := range rows {
		var cells []string
		for i, v := range r.GetValues() {
			cells = append(cells, renderValue(spec.GetColumns()[i], v))
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
	for _, name := range q.cols {
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
		{"select * from t order by k1, k2", `&{false [] t [] [{k1 false} {k2 false}]}`},
		{"SELECT count(*) FROM t", `&{true [] t [] []}`},
		{`select * from t3 where tag_value="" order by user_id;`, `&{false [] t3 [{tag_value =  false false}] [{user_id false}]}`},
		{"select count(1) from t where date_time is not null", `&{true [] t [{date_time   false true}] []}`},
		{"select id, name from t", `&{false [id name] t [] []}`},
		{"SELECT id, m[1] FROM t", `projection "m[1]"`},
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
