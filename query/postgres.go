package query

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// PostgreSQL pushdown: a query over a table of a PostgreSQL database is
// translated into PostgreSQL's SQL (Postgres) and answered there, when
// every part of it has a PostgreSQL equivalent that gives the same answer
// as Run; anything else is ErrNoPushdown (the caller runs the query over
// the scan instead), never a different answer.
//
// What translates: items * (the table's columns), a column, COUNT(*),
// COUNT(1), COUNT(col), SUM(col) and AVG(col) of an integer column,
// MIN(col) and MAX(col) of an integer, DECIMAL, text, DATE or DATETIME
// column; WHERE with columns, number, string and NULL literals, = <> != <
// <= > >=, IS [NOT] NULL, [NOT] IN (literals), AND, OR, NOT, parentheses
// and the functions length (bytes: octet_length), coalesce and ifnull
// (nvl); GROUP
// BY and ORDER BY on columns (by name, alias or position); LIMIT and
// OFFSET; SELECT DISTINCT as the GROUP BY of its items (Parse makes it
// one); COUNT(DISTINCT col) of those MIN and MAX take. HAVING,
// expressions over aggregates and the other DISTINCT aggregates stay with
// Run. Text compares bytewise (COLLATE "C"), as Run compares it; FLOAT, DOUBLE,
// BOOLEAN, LARGEINT and JSON columns stay with Run (NaN, summation order); rows
// without ORDER BY come in storage order (the key column), groups in the
// order of their first row (min of the key), and ORDER BY's ties in
// storage order, as Run gives them.

// ErrNoPushdown is the error Postgres wraps when a query has a part
// without a PostgreSQL equivalent; its message names the part.
var ErrNoPushdown = errors.New("no PostgreSQL equivalent")

// PostgresQuery is a query translated for PostgreSQL.
type PostgresQuery struct {
	// SQL is the statement; its result columns are Columns, in order.
	SQL string
	// Columns type the result's cells as Run types them.
	Columns []Column
}

func noPush(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrNoPushdown)
}

// QuoteIdent quotes a PostgreSQL identifier.
func QuoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// Postgres translates q over spec's table, stored in PostgreSQL as
// tableSQL (the quoted, qualified table name) with its storage-order key
// column keySQL (quoted). stored reports whether a column of spec is a
// column of the PostgreSQL table. An error wrapping ErrNoPushdown names
// what does not translate; any other error is the query's own (Run gives
// it too).
func Postgres(q *Query, spec *api.TableSpec, tableSQL, keySQL string, maxRows int) (*PostgresQuery, error) {
	if q.Table == "" {
		return nil, noPush("a SELECT without FROM")
	}
	if q.TemporaryPartition != "" {
		return nil, noPush("FROM ... TEMPORARY PARTITION (a table in PostgreSQL has none)")
	}
	if q.DB != "" && !strings.EqualFold(spec.GetDatabase(), q.DB) {
		return nil, errorf("FROM", "table %s is not in database %s", q.Table, q.DB)
	}
	if q.Having != "" {
		return nil, noPush("HAVING")
	}
	for _, it := range q.Items {
		switch {
		case len(it.Aggs) > 0:
			return nil, noPush("SELECT %s: an expression over aggregates", it.Name)
		case it.Distinct && (it.Agg != "COUNT" || len(it.More) > 0):
			return nil, noPush("SELECT %s: %s(DISTINCT ...)", it.Name, it.Agg)
		}
	}
	t := pgTranslator{spec: spec}
	where := ""
	if q.Where != "" {
		toks, err := lex(q.Where)
		if err != nil {
			return nil, noPush("WHERE: %v", err)
		}
		e := &pgExpr{t: &t, toks: toks}
		sql, kind, err := e.or()
		if err != nil {
			return nil, err
		}
		if e.i != len(toks) {
			return nil, noPush("WHERE: %q", toks[e.i].text)
		}
		if kind != 'b' {
			return nil, noPush("WHERE: a condition that is not a comparison")
		}
		where = " WHERE " + sql
	}
	t.from = " FROM " + tableSQL + where
	var b strings.Builder
	var cols []Column
	b.WriteString("SELECT ")
	if q.aggregate() {
		if err := t.groupQuery(q, &b, &cols, keySQL); err != nil {
			return nil, err
		}
	} else {
		var items []string         // per result column, its SQL
		var itemCols []*api.Column // and its column
		for _, it := range q.Items {
			if it.Star {
				for _, c := range spec.GetColumns() {
					items, itemCols = append(items, QuoteIdent(c.GetName())), append(itemCols, c)
					cols = append(cols, columnOfSpec(c.GetName(), c))
				}
				continue
			}
			c, err := t.column(it.Expr)
			if err != nil {
				return nil, noPush("SELECT %s: an expression", it.Name)
			}
			name := it.Name
			if !it.alias {
				name = c.GetName()
			}
			items, itemCols = append(items, QuoteIdent(c.GetName())), append(itemCols, c)
			cols = append(cols, columnOfSpec(name, c))
		}
		b.WriteString(strings.Join(items, ", "))
		b.WriteString(t.from)
		var order []string
		for _, k := range q.OrderBy {
			at, ok, err := matchItem("ORDER BY", k.Key, q.Items)
			if err != nil {
				return nil, err
			}
			var c *api.Column
			if ok && !starBefore(q.Items, at) {
				c = itemCols[at]
			} else if c, err = t.column(k.Expr); err != nil || k.Pos > 0 {
				return nil, noPush("ORDER BY %s", keyText(k.Key))
			}
			if !orderType(c.GetType()) {
				return nil, noPush("ORDER BY %s: the column's type", keyText(k.Key))
			}
			sql := QuoteIdent(c.GetName())
			if textType(c.GetType()) {
				sql += ` COLLATE "C"`
			}
			order = append(order, sql+orderDir(k))
		}
		b.WriteString(" ORDER BY " + strings.Join(append(order, keySQL), ", "))
	}
	limit := int64(maxRows) + 1 // one over: a result over the bound fails, as Run's
	if q.Limit >= 0 && q.Limit < limit {
		limit = q.Limit
	}
	fmt.Fprintf(&b, " LIMIT %d", limit)
	if q.Offset > 0 {
		fmt.Fprintf(&b, " OFFSET %d", q.Offset)
	}
	return &PostgresQuery{SQL: b.String(), Columns: cols}, nil
}

// starBefore reports whether a * item comes before the item at (positions
// then count the table's columns, not the items).
func starBefore(items []Item, at int) bool {
	for _, it := range items[:min(at+1, len(items))] {
		if it.Star {
			return true
		}
	}
	return false
}

func orderDir(k OrderKey) string {
	s := " ASC"
	if k.Desc {
		s = " DESC"
	}
	if k.NullsFirst {
		return s + " NULLS FIRST"
	}
	return s + " NULLS LAST"
}

// groupQuery writes the items, FROM, WHERE, GROUP BY and ORDER BY of an
// aggregate query.
func (t *pgTranslator) groupQuery(q *Query, b *strings.Builder, cols *[]Column, keySQL string) error {
	var keys []string
	keyCols := map[string]bool{} // lower-case names of the grouped columns
	for _, k := range q.GroupBy {
		at, ok, err := matchItem("GROUP BY", k, q.Items)
		if err != nil {
			return err
		}
		src := k.Expr
		if ok && (k.Pos > 0 || q.Items[at].alias) {
			if q.Items[at].Agg != "" || q.Items[at].Star {
				return noPush("GROUP BY %s", keyText(k))
			}
			src = q.Items[at].Expr
		}
		c, err := t.column(src)
		if err != nil {
			return noPush("GROUP BY %s: an expression", keyText(k))
		}
		if !orderType(c.GetType()) {
			return noPush("GROUP BY %s: the column's type", keyText(k))
		}
		keys = append(keys, QuoteIdent(c.GetName()))
		keyCols[strings.ToLower(c.GetName())] = true
	}
	var items []string
	for _, it := range q.Items {
		if it.Star {
			return noPush("SELECT *")
		}
		if it.Agg == "" {
			c, err := t.column(it.Expr)
			if err != nil || !keyCols[strings.ToLower(c.GetName())] {
				return noPush("SELECT %s: not a grouped column", it.Name)
			}
			name := it.Name
			if !it.alias {
				name = c.GetName()
			}
			items = append(items, QuoteIdent(c.GetName()))
			*cols = append(*cols, columnOfSpec(name, c))
			continue
		}
		if !it.Distinct && (it.Expr == "*" || it.Agg == "COUNT" && strings.TrimSpace(it.Expr) == "1") {
			items = append(items, "count(*)")
			*cols = append(*cols, Column{Name: it.Name, Type: api.ColumnType_INT64})
			continue
		}
		c, err := t.column(it.Expr)
		if err != nil {
			return noPush("%s(%s): an expression", it.Agg, strings.TrimSpace(it.Expr))
		}
		col := QuoteIdent(c.GetName())
		typ := c.GetType()
		switch {
		case it.Agg == "COUNT" && it.Distinct && orderType(typ):
			// Equal as Run's DISTINCT keys: text bytewise.
			if textType(typ) {
				col += ` COLLATE "C"`
			}
			items = append(items, "count(DISTINCT "+col+")")
			*cols = append(*cols, Column{Name: it.Name, Type: api.ColumnType_INT64})
		case it.Agg == "COUNT" && !it.Distinct:
			items = append(items, "count("+col+")")
			*cols = append(*cols, Column{Name: it.Name, Type: api.ColumnType_INT64})
		case it.Agg == "SUM" && intType(typ):
			items = append(items, "sum("+col+")::bigint")
			*cols = append(*cols, Column{Name: it.Name, Type: api.ColumnType_INT64})
		case it.Agg == "AVG" && intType(typ):
			items = append(items, "(sum("+col+")::float8 / nullif(count("+col+"), 0))")
			*cols = append(*cols, Column{Name: it.Name, Type: api.ColumnType_FLOAT64})
		case (it.Agg == "MIN" || it.Agg == "MAX") && orderType(typ):
			if textType(typ) {
				col += ` COLLATE "C"`
			}
			items = append(items, strings.ToLower(it.Agg)+"("+col+")")
			*cols = append(*cols, columnOfSpec(it.Name, c))
		default:
			return noPush("%s of a %s column", it.Agg, typ)
		}
	}
	b.WriteString(strings.Join(items, ", "))
	b.WriteString(t.from)
	if len(keys) > 0 {
		b.WriteString(" GROUP BY " + strings.Join(keys, ", "))
	}
	var order []string
	for _, k := range q.OrderBy {
		at, ok, err := matchItem("ORDER BY", k.Key, q.Items)
		if err != nil {
			return err
		}
		if !ok {
			return noPush("ORDER BY %s", keyText(k.Key))
		}
		sql := strconv.Itoa(at + 1)
		if c, err := t.column(q.Items[at].Expr); err == nil && q.Items[at].Agg == "" && textType(c.GetType()) {
			sql = QuoteIdent(c.GetName()) + ` COLLATE "C"`
		}
		order = append(order, sql+orderDir(k))
	}
	if len(keys) > 0 {
		// The first row's key: hex in byte order (min of bytea does not exist).
		order = append(order, "min(encode("+keySQL+`, 'hex') COLLATE "C")`)
	}
	if len(order) > 0 {
		b.WriteString(" ORDER BY " + strings.Join(order, ", "))
	}
	return nil
}

func columnOfSpec(name string, c *api.Column) Column {
	return Column{Name: name, Type: c.GetType(), Precision: c.GetPrecision(), Scale: c.GetScale()}
}

func intType(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64:
		return true
	}
	return false
}

func textType(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_STRING, api.ColumnType_VARCHAR, api.ColumnType_CHAR:
		return true
	}
	return false
}

// orderType reports whether PostgreSQL orders (and groups) a column of
// type t as Run does.
func orderType(t api.ColumnType) bool {
	return intType(t) || textType(t) || t == api.ColumnType_DECIMAL || t == api.ColumnType_DATE || t == api.ColumnType_DATETIME
}

// pgTranslator translates a query's parts over one table.
type pgTranslator struct {
	spec *api.TableSpec
	from string // " FROM table [WHERE ...]"
}

// column is the table's column src names (a plain name, any case).
func (t *pgTranslator) column(src string) (*api.Column, error) {
	toks, err := lex(src)
	if err != nil || len(toks) != 1 || toks[0].kind != 'i' && toks[0].kind != 'q' || toks[0].kind == 'i' && isKeyword(toks[0]) {
		return nil, noPush("%s: not a column", strings.TrimSpace(src))
	}
	for _, c := range t.spec.GetColumns() {
		if strings.EqualFold(c.GetName(), toks[0].text) {
			return c, nil
		}
	}
	return nil, noPush("no column %s", toks[0].text)
}

// pgExpr translates a WHERE condition: a recursive descent over its
// tokens. Each part has a kind: 'b' a condition, 'i' an integer, 'f' a
// float, 'd' a decimal, 's' text, 'n' NULL.
type pgExpr struct {
	t    *pgTranslator
	toks []token
	i    int
}

func (e *pgExpr) peek() (token, bool) {
	if e.i < len(e.toks) {
		return e.toks[e.i], true
	}
	return token{}, false
}

func (e *pgExpr) or() (string, byte, error) {
	l, k, err := e.and()
	if err != nil {
		return "", 0, err
	}
	for {
		t, ok := e.peek()
		if !ok || !t.is("OR") {
			return l, k, nil
		}
		e.i++
		r, rk, err := e.and()
		if err != nil {
			return "", 0, err
		}
		if k != 'b' || rk != 'b' {
			return "", 0, noPush("WHERE: OR of values that are not conditions")
		}
		l = "(" + l + " OR " + r + ")"
	}
}

func (e *pgExpr) and() (string, byte, error) {
	l, k, err := e.not()
	if err != nil {
		return "", 0, err
	}
	for {
		t, ok := e.peek()
		if !ok || !t.is("AND") {
			return l, k, nil
		}
		e.i++
		r, rk, err := e.not()
		if err != nil {
			return "", 0, err
		}
		if k != 'b' || rk != 'b' {
			return "", 0, noPush("WHERE: AND of values that are not conditions")
		}
		l = "(" + l + " AND " + r + ")"
	}
}

func (e *pgExpr) not() (string, byte, error) {
	if t, ok := e.peek(); ok && t.is("NOT") {
		e.i++
		s, k, err := e.not()
		if err != nil {
			return "", 0, err
		}
		if k != 'b' {
			return "", 0, noPush("WHERE: NOT of a value that is not a condition")
		}
		return "(NOT " + s + ")", 'b', nil
	}
	return e.compare()
}

// comparable reports whether PostgreSQL compares kinds a and b as Run does.
func comparable(a, b byte) bool {
	num := func(k byte) bool { return k == 'i' || k == 'f' || k == 'd' }
	return a == 'n' || b == 'n' || num(a) && num(b) || a == 's' && b == 's'
}

func (e *pgExpr) compare() (string, byte, error) {
	l, lk, err := e.operand()
	if err != nil {
		return "", 0, err
	}
	t, ok := e.peek()
	if !ok {
		return l, lk, nil
	}
	switch {
	case t.op("=") || t.op("<>") || t.op("!=") || t.op("<") || t.op("<=") || t.op(">") || t.op(">="):
		e.i++
		r, rk, err := e.operand()
		if err != nil {
			return "", 0, err
		}
		if !comparable(lk, rk) || lk == 'b' || rk == 'b' {
			return "", 0, noPush("WHERE: %s compares values of different types", t.text)
		}
		op := t.text
		if op == "!=" {
			op = "<>"
		}
		if (lk == 's' || rk == 's') && op != "=" && op != "<>" {
			l, r = l+` COLLATE "C"`, r+` COLLATE "C"`
		}
		return "(" + l + " " + op + " " + r + ")", 'b', nil
	case t.is("IS"):
		e.i++
		not := ""
		if n, ok := e.peek(); ok && n.is("NOT") {
			not = " NOT"
			e.i++
		}
		if n, ok := e.peek(); !ok || !n.is("NULL") {
			return "", 0, noPush("WHERE: IS%s other than NULL", not)
		}
		e.i++
		return "(" + l + " IS" + not + " NULL)", 'b', nil
	case t.is("IN") || t.is("NOT") && e.i+1 < len(e.toks) && e.toks[e.i+1].is("IN"):
		not := ""
		if t.is("NOT") {
			not = " NOT"
			e.i++
		}
		e.i++
		if n, ok := e.peek(); !ok || !n.op("(") {
			return "", 0, noPush("WHERE: IN without a list")
		}
		e.i++
		var list []string
		for {
			s, k, err := e.operand()
			if err != nil {
				return "", 0, err
			}
			if k == 'n' || !comparable(lk, k) || lk == 'b' {
				return "", 0, noPush("WHERE: IN compares values of different types")
			}
			list = append(list, s)
			n, ok := e.peek()
			if !ok {
				return "", 0, noPush("WHERE: unterminated IN")
			}
			e.i++
			if n.op(")") {
				break
			}
			if !n.op(",") {
				return "", 0, noPush("WHERE: %q in IN", n.text)
			}
		}
		return "(" + l + not + " IN (" + strings.Join(list, ", ") + "))", 'b', nil
	}
	return l, lk, nil
}

func (e *pgExpr) operand() (string, byte, error) {
	t, ok := e.peek()
	if !ok {
		return "", 0, noPush("WHERE: an operand is missing")
	}
	e.i++
	switch t.kind {
	case 'n':
		if _, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return t.text, 'i', nil
		}
		if strings.ContainsAny(t.text, "eE") {
			if _, err := strconv.ParseFloat(t.text, 64); err == nil {
				return t.text + "::float8", 'f', nil
			}
		} else if strings.Count(t.text, ".") == 1 {
			return t.text, 'd', nil
		}
		return "", 0, noPush("WHERE: the number %s", t.text)
	case 's':
		body := t.text[1 : len(t.text)-1]
		if strings.Contains(body, `\`) || strings.Contains(body, string(t.text[0])) || strings.ContainsRune(body, 0) {
			return "", 0, noPush("WHERE: a string with escapes")
		}
		return "'" + strings.ReplaceAll(body, "'", "''") + "'", 's', nil
	case 'o':
		if t.op("(") {
			s, k, err := e.or()
			if err != nil {
				return "", 0, err
			}
			if n, ok := e.peek(); !ok || !n.op(")") {
				return "", 0, noPush("WHERE: unbalanced (")
			}
			e.i++
			return "(" + s + ")", k, nil
		}
		if t.op("-") {
			if n, ok := e.peek(); ok && n.kind == 'n' {
				s, k, err := e.operand()
				return "(-" + s + ")", k, err
			}
		}
		return "", 0, noPush("WHERE: the operator %s", t.text)
	case 'i', 'q':
		if t.kind == 'i' && t.is("NULL") {
			return "NULL", 'n', nil
		}
		if n, ok := e.peek(); ok && n.op("(") && t.kind == 'i' {
			return e.call(strings.ToLower(t.text))
		}
		if t.kind == 'i' && isKeyword(t) {
			return "", 0, noPush("WHERE: %s", strings.ToUpper(t.text))
		}
		c, err := e.t.column(t.text)
		if t.kind == 'q' {
			c, err = e.t.column("`" + t.text + "`")
		}
		if err != nil {
			return "", 0, err
		}
		if n, ok := e.peek(); ok && n.op(".") {
			return "", 0, noPush("WHERE: a qualified name")
		}
		k := byte(0)
		switch typ := c.GetType(); {
		case intType(typ):
			k = 'i'
		case typ == api.ColumnType_DECIMAL:
			k = 'd'
		case textType(typ):
			k = 's'
		default:
			return "", 0, noPush("WHERE: column %s of type %s", c.GetName(), typ)
		}
		return QuoteIdent(c.GetName()), k, nil
	}
	return "", 0, noPush("WHERE: %q", t.text)
}

// call translates a function call: the functions with a PostgreSQL
// equivalent.
func (e *pgExpr) call(fn string) (string, byte, error) {
	e.i++ // (
	var args []string
	var kinds []byte
	if n, ok := e.peek(); ok && n.op(")") {
		e.i++
	} else {
		for {
			s, k, err := e.or()
			if err != nil {
				return "", 0, err
			}
			args, kinds = append(args, s), append(kinds, k)
			n, ok := e.peek()
			if !ok {
				return "", 0, noPush("WHERE: unterminated %s(", fn)
			}
			e.i++
			if n.op(")") {
				break
			}
			if !n.op(",") {
				return "", 0, noPush("WHERE: %q in %s()", n.text, fn)
			}
		}
	}
	switch {
	case fn == "length" && len(args) == 1 && kinds[0] == 's':
		return "octet_length(" + args[0] + ")", 'i', nil
	case (fn == "coalesce" || fn == "ifnull" || fn == "nvl") && len(args) >= 1:
		k := kinds[0]
		for _, x := range kinds {
			if x != 'n' && k == 'n' {
				k = x
			}
			if x != 'n' && x != k {
				return "", 0, noPush("WHERE: %s of values of different types", fn)
			}
		}
		if fn != "coalesce" && len(args) != 2 {
			return "", 0, noPush("WHERE: ifnull takes two arguments")
		}
		return "coalesce(" + strings.Join(args, ", ") + ")", k, nil
	}
	return "", 0, noPush("WHERE: the function %s", fn)
}
