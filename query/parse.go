package query

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/table"
)

// MaxQueryBytes bounds a statement's text (64 KiB).
const MaxQueryBytes = 64 << 10

// Query is a parsed SELECT. Expressions are kept as text (the statement's
// own, table qualifiers blanked out) and compiled against the table's
// schema when the query runs (Run).
type Query struct {
	// DB and Table are FROM's [db.]table; Table is "" for a SELECT
	// without FROM (constants only).
	DB, Table string
	// TemporaryPartition is FROM's TEMPORARY PARTITION (tp): the query
	// reads that temporary partition of Table only (Source), "" for the
	// table's own rows.
	TemporaryPartition string
	Items              []Item
	Where              string // "" when none
	GroupBy            []Key
	// Having is HAVING's condition ("" when none), over the groups: it
	// reads the i-th of HavingAggs as the column AggColumn(i), grouped
	// columns, and the SELECT list's aliases.
	Having     string
	HavingAggs []Item
	// Distinct is SELECT DISTINCT: Parse makes it a GROUP BY of every
	// item (GroupBy), as Doris plans it.
	Distinct bool
	OrderBy  []OrderKey
	// Limit is the most rows returned, -1 when there is no LIMIT; Offset
	// the rows skipped first.
	Limit, Offset int64
}

// Item is one item of the SELECT list.
type Item struct {
	Star bool   // * (or table.*): every column
	Expr string // the expression (for an aggregate: its argument; "*" for count(*))
	Agg  string // "", "COUNT", "SUM", "MIN", "MAX" or "AVG"
	// Distinct: the aggregate takes each distinct value once
	// (COUNT(DISTINCT x)); More are COUNT(DISTINCT a, b, ...)'s arguments
	// after the first (Expr).
	Distinct bool
	More     []string
	// Aggs are the aggregates an expression item is computed over (Agg
	// is ""): Expr reads the i-th as the column AggColumn(i), as in
	// SUM(a) / COUNT(*) or ROUND(AVG(x), 2).
	Aggs []Item
	// Name is the result column's name: the alias, or the item as written.
	Name  string
	alias bool   // Name is an alias
	norm  string // the item without its alias, normalized (sameText)
}

// Key is a GROUP BY key: a position in the SELECT list (from 1) or an
// expression.
type Key struct {
	Pos  int
	Expr string
	norm string
}

// OrderKey is an ORDER BY key.
type OrderKey struct {
	Key
	Desc bool
	// NullsFirst: NULL sorts before every value; by default when
	// ascending, as in Doris.
	NullsFirst bool
}

// aggregates are the aggregate functions of the subset.
var aggregates = map[string]bool{"COUNT": true, "SUM": true, "MIN": true, "MAX": true, "AVG": true}

// maxAggregates bounds the aggregates of one SELECT item or HAVING.
const maxAggregates = 64

// aggPrefix names the columns an expression reads its aggregates from.
const aggPrefix = "__loadnode_agg_"

// AggColumn is the column name by which an expression over aggregates
// (Item.Expr, Query.Having) reads its i-th aggregate.
func AggColumn(i int) string { return aggPrefix + strconv.Itoa(i) }

// aggIndex is the index AggColumn gave name, if it is one.
func aggIndex(name string) (int, bool) {
	if len(name) <= len(aggPrefix) || !strings.EqualFold(name[:len(aggPrefix)], aggPrefix) {
		return 0, false
	}
	i, err := strconv.Atoi(name[len(aggPrefix):])
	return i, err == nil && i >= 0
}

// aggregated reports whether the item is an aggregate or an expression
// over aggregates.
func (it Item) aggregated() bool { return it.Agg != "" || len(it.Aggs) > 0 }

// unsupported names, per keyword at the top level of a statement, what
// the subset does not do.
var unsupported = map[string]string{
	"JOIN":      "JOIN is not supported (a SELECT reads one table)",
	"UNION":     "UNION is not supported",
	"INTERSECT": "INTERSECT is not supported",
	"EXCEPT":    "EXCEPT is not supported",
	"MINUS":     "MINUS is not supported",
	"WINDOW":    "window functions are not supported",
	"INTO":      "SELECT ... INTO is not supported",
	"FOR":       "SELECT ... FOR UPDATE is not supported",
	"LATERAL":   "LATERAL VIEW is not supported",
	"QUALIFY":   "QUALIFY is not supported",
}

// IsSelect reports whether statement is a query (it starts with SELECT,
// WITH or a parenthesis, after comments): Parse answers it, with an error
// when it is outside the subset.
func IsSelect(statement string) bool {
	toks, err := lex(statement)
	if err != nil || len(toks) == 0 {
		return false
	}
	return toks[0].is("SELECT") || toks[0].is("WITH") || toks[0].op("(")
}

// Error is a statement outside the subset or malformed: Clause names the
// clause at fault (SELECT, FROM, WHERE, GROUP BY, ORDER BY, LIMIT).
type Error struct {
	Clause string
	Msg    string
}

func (e *Error) Error() string { return "query: " + e.Msg }

func errorf(clause, format string, args ...any) error {
	return &Error{Clause: clause, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses one SELECT of the subset:
//
//	SELECT [DISTINCT] item, ... [FROM [db.]table [[AS] alias]] [WHERE expr]
//	    [GROUP BY key, ...] [HAVING cond]
//	    [ORDER BY key [ASC|DESC] [NULLS FIRST|LAST], ...]
//	    [LIMIT n [OFFSET m] | LIMIT m, n]
//
// (package doc). Anything else is an *Error naming what is not supported.
func Parse(src string) (*Query, error) {
	if len(src) > MaxQueryBytes {
		return nil, errorf("SELECT", "the statement is %d bytes, over the limit of %d bytes", len(src), MaxQueryBytes)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, errorf("SELECT", "%v", err)
	}
	for len(toks) > 0 && toks[len(toks)-1].op(";") {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return nil, errorf("SELECT", "empty statement")
	}
	switch {
	case toks[0].is("WITH"):
		return nil, errorf("SELECT", "WITH (common table expressions) is not supported")
	case toks[0].op("("):
		return nil, errorf("SELECT", "a parenthesized query is not supported")
	case !toks[0].is("SELECT"):
		return nil, errorf("SELECT", "not a SELECT")
	}
	// What the subset lacks, wherever it is.
	depth := 0
	for i, t := range toks {
		switch {
		case t.op("("):
			depth++
			if i+1 < len(toks) && (toks[i+1].is("SELECT") || toks[i+1].is("WITH")) {
				return nil, errorf("SELECT", "subqueries are not supported")
			}
		case t.op(")"):
			depth--
			if depth < 0 {
				return nil, errorf("SELECT", "unbalanced ) at %d", t.pos)
			}
		case t.is("OVER") && i+1 < len(toks) && toks[i+1].op("("):
			return nil, errorf("SELECT", "window functions (OVER) are not supported")
		case t.op(";"):
			return nil, errorf("SELECT", "one statement at a time (; at %d)", t.pos)
		case t.kind == 'i' && depth == 0 && unsupported[strings.ToUpper(t.text)] != "":
			return nil, errorf(strings.ToUpper(t.text), "%s", unsupported[strings.ToUpper(t.text)])
		case t.op("?"):
			return nil, errorf("SELECT", "placeholders (?) are not supported")
		case (t.kind == 'i' || t.kind == 'q') && len(t.text) >= len(aggPrefix) && strings.EqualFold(t.text[:len(aggPrefix)], aggPrefix):
			// The names an expression reads its aggregates by.
			return nil, errorf("SELECT", "%s: names beginning with %s are loadnode's own", t.text, aggPrefix)
		}
	}
	if depth != 0 {
		return nil, errorf("SELECT", "unbalanced ( in the statement")
	}
	// The clauses, cut at their keywords at the top level.
	type clause struct {
		name string
		toks []token
	}
	order := []string{"SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "OFFSET"}
	var clauses []clause
	depth = 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		name := ""
		if depth == 0 && t.kind == 'i' {
			switch w := strings.ToUpper(t.text); w {
			case "SELECT", "FROM", "WHERE", "HAVING", "LIMIT", "OFFSET":
				name = w
			case "GROUP", "ORDER":
				if i+1 < len(toks) && toks[i+1].is("BY") {
					name = w + " BY"
					i++
				}
			}
		}
		switch {
		case t.op("("):
			depth++
		case t.op(")"):
			depth--
		}
		if name == "" {
			if len(clauses) == 0 {
				return nil, errorf("SELECT", "not a SELECT")
			}
			clauses[len(clauses)-1].toks = append(clauses[len(clauses)-1].toks, t)
			continue
		}
		if name == "SELECT" && len(clauses) > 0 {
			return nil, errorf("SELECT", "SELECT at %d: one query at a time", t.pos)
		}
		if len(clauses) > 0 {
			prev := clauses[len(clauses)-1].name
			if indexOf(order, name) <= indexOf(order, prev) {
				return nil, errorf(name, "%s at %d comes after %s: the clauses go SELECT, FROM, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT", name, t.pos, prev)
			}
		}
		clauses = append(clauses, clause{name: name})
	}
	q := &Query{Limit: -1}
	var tableNames []string // names that qualify a column: the table, its alias
	for _, c := range clauses {
		if c.name == "FROM" {
			if err := q.parseFrom(c.toks); err != nil {
				return nil, err
			}
			tableNames = append(tableNames, q.Table)
			if a := fromAlias(c.toks); a != "" {
				tableNames = append(tableNames, a)
			}
		}
	}
	text := func(ts []token) string { return exprText(src, ts, tableNames) }
	hasLimit := false
	for _, c := range clauses {
		if len(c.toks) == 0 && c.name != "FROM" {
			return nil, errorf(c.name, "%s is empty", c.name)
		}
		switch c.name {
		case "SELECT":
			ts := c.toks
			if ts[0].is("DISTINCT") || ts[0].is("DISTINCTROW") {
				q.Distinct = true
				ts = ts[1:]
			} else if ts[0].is("ALL") {
				ts = ts[1:]
			}
			if len(ts) == 0 {
				return nil, errorf("SELECT", "SELECT names no items")
			}
			for _, it := range splitCommas(ts) {
				item, err := parseItem(src, it, text, tableNames)
				if err != nil {
					return nil, err
				}
				q.Items = append(q.Items, item)
			}
		case "WHERE":
			if err := noAggregate("WHERE", c.toks); err != nil {
				return nil, err
			}
			q.Where = text(c.toks)
		case "GROUP BY":
			for _, k := range splitCommas(c.toks) {
				key, err := parseKey("GROUP BY", k, text, tableNames)
				if err != nil {
					return nil, err
				}
				if key.Pos == 0 {
					if err := noAggregate("GROUP BY", k); err != nil {
						return nil, err
					}
				}
				q.GroupBy = append(q.GroupBy, key)
			}
		case "HAVING":
			expr, err := extractAggregates("HAVING", c.toks, text, &q.HavingAggs)
			if err != nil {
				return nil, err
			}
			q.Having = expr
		case "ORDER BY":
			for _, k := range splitCommas(c.toks) {
				ok := OrderKey{}
				nulls := false // NULLS FIRST or LAST given
			mods:
				for len(k) > 1 {
					last := k[len(k)-1]
					switch {
					case last.is("ASC"):
					case last.is("DESC"):
						ok.Desc = true
					case len(k) > 2 && k[len(k)-2].is("NULLS") && (last.is("FIRST") || last.is("LAST")):
						ok.NullsFirst, nulls = last.is("FIRST"), true
						k = k[:len(k)-1]
					default:
						break mods
					}
					k = k[:len(k)-1]
				}
				if !nulls {
					ok.NullsFirst = !ok.Desc
				}
				key, err := parseKey("ORDER BY", k, text, tableNames)
				if err != nil {
					return nil, err
				}
				ok.Key = key
				q.OrderBy = append(q.OrderBy, ok)
			}
		case "LIMIT":
			hasLimit = true
			parts := splitCommas(c.toks)
			switch len(parts) {
			case 1:
				n, err := count("LIMIT", parts[0])
				if err != nil {
					return nil, err
				}
				q.Limit = n
			case 2: // LIMIT offset, count
				m, err := count("LIMIT", parts[0])
				if err != nil {
					return nil, err
				}
				n, err := count("LIMIT", parts[1])
				if err != nil {
					return nil, err
				}
				q.Offset, q.Limit = m, n
			default:
				return nil, errorf("LIMIT", "LIMIT takes n, or m, n")
			}
		case "OFFSET":
			if !hasLimit {
				return nil, errorf("OFFSET", "OFFSET without LIMIT is not supported (LIMIT n OFFSET m)")
			}
			m, err := count("OFFSET", c.toks)
			if err != nil {
				return nil, err
			}
			q.Offset = m
		}
	}
	if q.Table == "" && (q.Where != "" || len(q.GroupBy) > 0 || q.Having != "" || len(q.OrderBy) > 0 || q.Distinct) {
		return nil, errorf("FROM", "WHERE, GROUP BY, HAVING, ORDER BY and DISTINCT need FROM a table")
	}
	for _, it := range q.Items {
		if q.Table == "" && (it.Star || it.aggregated()) {
			return nil, errorf("FROM", "%s needs FROM a table", it.Name)
		}
	}
	if q.Distinct {
		// DISTINCT keeps one row of each distinct item list: the groups
		// of a GROUP BY over every item.
		if len(q.GroupBy) > 0 {
			return nil, errorf("SELECT", "SELECT DISTINCT with GROUP BY is not supported")
		}
		for i, it := range q.Items {
			switch {
			case it.Star:
				return nil, errorf("SELECT", "SELECT DISTINCT * is not supported: name the columns")
			case it.aggregated():
				return nil, errorf("SELECT", "SELECT DISTINCT with an aggregate (%s) is not supported", it.Name)
			}
			q.GroupBy = append(q.GroupBy, Key{Pos: i + 1})
		}
	}
	return q, nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// parseFrom reads FROM [db.]table [[AS] alias].
func (q *Query) parseFrom(ts []token) error {
	if len(ts) == 0 {
		return errorf("FROM", "FROM names no table")
	}
	name := func(t token) bool { return t.kind == 'i' || t.kind == 'q' }
	if !name(ts[0]) {
		if ts[0].op("(") {
			return errorf("FROM", "subqueries are not supported")
		}
		return errorf("FROM", "FROM %q: expected a table name", ts[0].text)
	}
	q.Table = ts[0].text
	rest := ts[1:]
	if len(rest) >= 2 && rest[0].op(".") && name(rest[1]) {
		q.DB, q.Table = q.Table, rest[1].text
		rest = rest[2:]
	}
	if len(rest) > 0 && rest[0].is("TEMPORARY") {
		parts, after, err := temporaryPartitions(rest)
		if err != nil {
			return err
		}
		if len(parts) > 1 {
			return errorf("FROM", "FROM ... TEMPORARY PARTITION names %d partitions: reading more than one temporary partition is not supported by loadnode", len(parts))
		}
		q.TemporaryPartition, rest = parts[0], after
	}
	if len(rest) > 0 && rest[0].is("AS") {
		rest = rest[1:]
		if len(rest) == 0 || !name(rest[0]) {
			return errorf("FROM", "AS names no alias")
		}
	}
	if len(rest) > 0 && name(rest[0]) && !isKeyword(rest[0]) && !notAlias[strings.ToUpper(rest[0].text)] {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		t := rest[0]
		switch {
		case t.op(","):
			return errorf("FROM", "JOIN is not supported (FROM names one table)")
		case t.is("PARTITION") || t.is("PARTITIONS") || t.is("TEMPORARY") || t.is("TABLET") || t.is("TABLESAMPLE"):
			return errorf("FROM", "FROM ... %s is not supported", strings.ToUpper(t.text))
		case t.is("LEFT") || t.is("RIGHT") || t.is("INNER") || t.is("CROSS") || t.is("FULL") || t.is("NATURAL") || t.is("OUTER"):
			return errorf("FROM", "JOIN is not supported (a SELECT reads one table)")
		}
		return errorf("FROM", "FROM ... %q at %d is not supported", t.text, t.pos)
	}
	return nil
}

// temporaryPartitions reads TEMPORARY PARTITION[S] (tp, ...) or
// TEMPORARY PARTITION tp at the start of ts, and returns the names and
// the tokens after it.
func temporaryPartitions(ts []token) ([]string, []token, error) {
	name := func(t token) bool { return t.kind == 'i' || t.kind == 'q' }
	if len(ts) < 2 || !ts[1].is("PARTITION") && !ts[1].is("PARTITIONS") {
		return nil, nil, errorf("FROM", "FROM ... TEMPORARY: expected PARTITION")
	}
	ts = ts[2:]
	if len(ts) > 0 && name(ts[0]) {
		return []string{ts[0].text}, ts[1:], nil
	}
	if len(ts) == 0 || !ts[0].op("(") {
		return nil, nil, errorf("FROM", "FROM ... TEMPORARY PARTITION: expected a partition name or (name, ...)")
	}
	var names []string
	for i := 1; i < len(ts); i += 2 {
		if !name(ts[i]) {
			return nil, nil, errorf("FROM", "FROM ... TEMPORARY PARTITION (...): expected a partition name, found %q", ts[i].text)
		}
		names = append(names, ts[i].text)
		switch {
		case i+1 < len(ts) && ts[i+1].op(")"):
			return names, ts[i+2:], nil
		case i+1 >= len(ts) || !ts[i+1].op(","):
			return nil, nil, errorf("FROM", "FROM ... TEMPORARY PARTITION (...): expected , or )")
		}
	}
	return nil, nil, errorf("FROM", "FROM ... TEMPORARY PARTITION (...): expected a partition name")
}

// Source is the catalog table q reads: Table, or its temporary
// partition's (table.TemporaryPartitionTable).
func (q *Query) Source() string {
	if q.TemporaryPartition != "" {
		return table.TemporaryPartitionTable(q.Table, q.TemporaryPartition)
	}
	return q.Table
}

// notAlias are the words after FROM's table that are no alias.
var notAlias = map[string]bool{"PARTITION": true, "PARTITIONS": true, "TEMPORARY": true, "TABLET": true, "TABLESAMPLE": true,
	"LEFT": true, "RIGHT": true, "INNER": true, "CROSS": true, "FULL": true, "NATURAL": true, "OUTER": true}

// fromAlias is the alias FROM gives the table, or "".
func fromAlias(ts []token) string {
	rest := ts[1:]
	if len(rest) >= 2 && rest[0].op(".") {
		rest = rest[2:]
	}
	if len(rest) > 0 && rest[0].is("TEMPORARY") {
		if _, after, err := temporaryPartitions(rest); err == nil {
			rest = after
		}
	}
	if len(rest) > 0 && rest[0].is("AS") {
		rest = rest[1:]
	}
	if len(rest) > 0 && (rest[0].kind == 'i' || rest[0].kind == 'q') && !notAlias[strings.ToUpper(rest[0].text)] {
		return rest[0].text
	}
	return ""
}

// isKeyword reports whether t is a keyword that ends an expression, so
// cannot be an implicit alias.
func isKeyword(t token) bool {
	if t.kind != 'i' {
		return false
	}
	switch strings.ToUpper(t.text) {
	case "END", "NULL", "TRUE", "FALSE", "UNKNOWN", "AND", "OR", "NOT", "IS", "AS", "IN", "LIKE", "BETWEEN", "THEN", "ELSE", "WHEN", "DIV", "MOD":
		return true
	}
	return false
}

// parseItem reads one SELECT item: *, table.*, an aggregate call, or an
// expression, then [AS] alias.
func parseItem(src string, ts []token, text func([]token) string, tables []string) (Item, error) {
	if len(ts) == 0 {
		return Item{}, errorf("SELECT", "an empty item in the SELECT list")
	}
	if len(ts) == 1 && ts[0].op("*") || len(ts) == 3 && ts[1].op(".") && ts[2].op("*") {
		if len(ts) == 3 && !qualifies(ts[0].text, tables) {
			return Item{}, errorf("SELECT", "%s.*: no table %s in FROM", ts[0].text, ts[0].text)
		}
		return Item{Star: true, Name: "*"}, nil
	}
	it := Item{}
	n := len(ts)
	switch {
	case n >= 3 && ts[n-2].is("AS") && (ts[n-1].kind == 'i' || ts[n-1].kind == 'q' || ts[n-1].kind == 's'):
		it.Name, it.alias = unquote(ts[n-1]), true
		ts = ts[:n-2]
	case n >= 2 && (ts[n-1].kind == 'i' || ts[n-1].kind == 'q') && !isKeyword(ts[n-1]) && ts[n-2].kind != 'o' && !isKeyword(ts[n-2]) && !ts[n-2].is("INTERVAL") && !(n >= 3 && ts[n-3].is("INTERVAL")):
		it.Name, it.alias = unquote(ts[n-1]), true
		ts = ts[:n-1]
	case n >= 2 && (ts[n-1].kind == 'i' || ts[n-1].kind == 'q') && !isKeyword(ts[n-1]) && (ts[n-2].op(")") || ts[n-2].is("END")):
		it.Name, it.alias = unquote(ts[n-1]), true
		ts = ts[:n-1]
	}
	if !it.alias {
		it.Name = strings.TrimSpace(src[ts[0].pos:ts[len(ts)-1].end])
		if len(ts) == 1 && ts[0].kind == 'q' {
			it.Name = ts[0].text
		}
		if len(ts) == 3 && ts[1].op(".") && ts[2].kind != 'o' {
			it.Name = unquote(ts[2])
		}
	}
	it.norm = normalize(ts, tables)
	if ts[0].kind == 'i' && aggregates[strings.ToUpper(ts[0].text)] && len(ts) >= 3 && ts[1].op("(") && closes(ts, 1) == len(ts)-1 {
		agg, err := parseAggregate("SELECT", ts, text)
		if err != nil {
			return Item{}, err
		}
		it.Agg, it.Expr, it.Distinct, it.More = agg.Agg, agg.Expr, agg.Distinct, agg.More
		return it, nil
	}
	expr, err := extractAggregates("SELECT", ts, text, &it.Aggs)
	if err != nil {
		return Item{}, err
	}
	it.Expr = expr
	return it, nil
}

// parseAggregate reads the aggregate call ts, NAME([DISTINCT | ALL] arg)
// or COUNT(DISTINCT arg, ...), as an aggregate Item (no name).
func parseAggregate(clause string, ts []token, text func([]token) string) (Item, error) {
	w := strings.ToUpper(ts[0].text)
	it := Item{Agg: w}
	arg := ts[2 : len(ts)-1]
	switch {
	case len(arg) == 0:
		return Item{}, errorf(clause, "%s() takes an argument", w)
	case arg[0].is("DISTINCT"):
		it.Distinct = true
		arg = arg[1:]
	case arg[0].is("ALL"):
		arg = arg[1:]
	}
	if len(arg) == 0 {
		return Item{}, errorf(clause, "%s(%s) takes an argument", w, strings.ToUpper(ts[2].text))
	}
	if len(arg) == 1 && arg[0].op("*") {
		if w != "COUNT" || it.Distinct {
			return Item{}, errorf(clause, "%s(%s*) is not supported (COUNT(*) is)", w, map[bool]string{true: "DISTINCT "}[it.Distinct])
		}
		it.Expr = "*"
		return it, nil
	}
	args := splitCommas(arg)
	if len(args) > 1 && (w != "COUNT" || !it.Distinct) {
		return Item{}, errorf(clause, "%s takes one argument (COUNT(DISTINCT a, b, ...) takes several)", w)
	}
	for i, a := range args {
		if len(a) == 0 {
			return Item{}, errorf(clause, "%s: an empty argument", w)
		}
		if err := noAggregate(clause, a); err != nil {
			return Item{}, err
		}
		if i == 0 {
			it.Expr = text(a)
		} else {
			it.More = append(it.More, text(a))
		}
	}
	return it, nil
}

// extractAggregates returns the text of the expression ts with each
// aggregate call in it replaced by the column AggColumn(k), the call
// appended to *aggs as its k-th.
func extractAggregates(clause string, ts []token, text func([]token) string, aggs *[]Item) (string, error) {
	var parts []string
	start := 0
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if t.kind != 'i' || !aggregates[strings.ToUpper(t.text)] || i+1 >= len(ts) || !ts[i+1].op("(") || i > 0 && ts[i-1].op(".") {
			continue
		}
		end := closes(ts, i+1)
		if end < 0 {
			return "", errorf(clause, "unbalanced ( at %d", ts[i+1].pos)
		}
		if len(*aggs) >= maxAggregates {
			return "", errorf(clause, "more than %d aggregates in one expression", maxAggregates)
		}
		a, err := parseAggregate(clause, ts[i:end+1], text)
		if err != nil {
			return "", err
		}
		a.Name = strings.TrimSpace(text(ts[i : end+1]))
		if start < i {
			parts = append(parts, text(ts[start:i]))
		}
		parts = append(parts, AggColumn(len(*aggs)))
		*aggs = append(*aggs, a)
		i, start = end, end+1
	}
	if start < len(ts) {
		parts = append(parts, text(ts[start:]))
	}
	return strings.Join(parts, " "), nil
}

// closes is the index of the ")" that closes the "(" at ts[open].
func closes(ts []token, open int) int {
	depth := 0
	for i := open; i < len(ts); i++ {
		switch {
		case ts[i].op("("):
			depth++
		case ts[i].op(")"):
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// noAggregate refuses an aggregate call in WHERE, in GROUP BY or in an
// aggregate's argument (SELECT, HAVING).
func noAggregate(clause string, ts []token) error {
	for i, t := range ts {
		if t.kind == 'i' && aggregates[strings.ToUpper(t.text)] && i+1 < len(ts) && ts[i+1].op("(") {
			if clause == "SELECT" || clause == "HAVING" {
				return errorf(clause, "%s inside an aggregate's argument is not supported", strings.ToUpper(t.text))
			}
			return errorf(clause, "%s in %s is not supported", strings.ToUpper(t.text), clause)
		}
	}
	return nil
}

// parseKey reads a GROUP BY or ORDER BY key: a position or an expression.
func parseKey(clause string, ts []token, text func([]token) string, tables []string) (Key, error) {
	if len(ts) == 0 {
		return Key{}, errorf(clause, "an empty key in %s", clause)
	}
	if len(ts) == 1 && ts[0].kind == 'n' {
		n, err := strconv.Atoi(ts[0].text)
		if err != nil || n < 1 {
			return Key{}, errorf(clause, "%s %s: a position counts from 1", clause, ts[0].text)
		}
		return Key{Pos: n}, nil
	}
	return Key{Expr: text(ts), norm: normalize(ts, tables)}, nil
}

// count reads LIMIT's or OFFSET's number.
func count(clause string, ts []token) (int64, error) {
	if len(ts) != 1 || ts[0].kind != 'n' {
		return 0, errorf(clause, "%s takes a number of rows", clause)
	}
	n, err := strconv.ParseInt(ts[0].text, 10, 64)
	if err != nil || n < 0 {
		return 0, errorf(clause, "%s %s: not a number of rows", clause, ts[0].text)
	}
	return n, nil
}

// splitCommas splits ts at its top-level commas.
func splitCommas(ts []token) [][]token {
	var parts [][]token
	depth, start := 0, 0
	for i, t := range ts {
		switch {
		case t.op("(") || t.op("["):
			depth++
		case t.op(")") || t.op("]"):
			depth--
		case t.op(",") && depth == 0:
			parts = append(parts, ts[start:i])
			start = i + 1
		}
	}
	return append(parts, ts[start:])
}

// exprText is the statement's text of ts, with each qualifier
// (table.col, alias.col) blanked out: the expression engine reads plain
// column names.
func exprText(src string, ts []token, tables []string) string {
	if len(ts) == 0 {
		return ""
	}
	b := []byte(src[ts[0].pos:ts[len(ts)-1].end])
	for i := 0; i+2 < len(ts); i++ {
		if (ts[i].kind == 'i' || ts[i].kind == 'q') && ts[i+1].op(".") && (ts[i+2].kind == 'i' || ts[i+2].kind == 'q') && qualifies(ts[i].text, tables) &&
			(i == 0 || !ts[i-1].op(".")) {
			for j := ts[i].pos; j < ts[i+1].end; j++ {
				b[j-ts[0].pos] = ' '
			}
		}
	}
	return string(b)
}

// qualifies reports whether name is the table or its alias.
func qualifies(name string, tables []string) bool {
	for _, t := range tables {
		if strings.EqualFold(t, name) {
			return true
		}
	}
	return false
}

// normalize is ts as one string for comparing expressions as written:
// case, spaces, quotes around names and table qualifiers do not count.
func normalize(ts []token, tables []string) string {
	var b strings.Builder
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		if i+2 < len(ts) && (t.kind == 'i' || t.kind == 'q') && ts[i+1].op(".") && qualifies(t.text, tables) {
			i++
			continue
		}
		if t.kind == 's' {
			b.WriteString(t.text)
		} else {
			b.WriteString(strings.ToLower(t.text))
		}
		b.WriteByte(0)
	}
	return b.String()
}

// unquote is a name token's text (an alias may be a string).
func unquote(t token) string {
	if t.kind == 's' {
		return strings.NewReplacer(`\'`, `'`, `\"`, `"`, `''`, `'`, `""`, `"`, `\\`, `\`).Replace(t.text[1 : len(t.text)-1])
	}
	return t.text
}
