package query

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// Source reads a table a page at a time: a client's paged scan today, a
// node's store or a PostgreSQL pushdown later. Consumer-side interface.
type Source interface {
	// Page reads the rows of table after cursor (nil: from the start):
	// the table's schema, the page's rows in storage order and the cursor
	// of the next page (empty when the scan is done). The rows stay
	// valid (are not reused) after the next call.
	Page(ctx context.Context, table string, cursor []byte) (schema *api.TableSpec, rows []*api.Row, next []byte, err error)
}

// DefaultMaxRows bounds what a query keeps in memory: the rows ORDER BY
// sorts (with LIMIT: offset + limit of them), the groups GROUP BY makes,
// and the rows of a result.
const DefaultMaxRows = 100_000

// Option configures Run.
type Option func(*config)

type config struct {
	maxRows          int
	maxDistinctBytes int
	loc              *time.Location
}

func defaultConfig() config {
	return config{maxRows: DefaultMaxRows, maxDistinctBytes: DefaultMaxDistinctBytes, loc: time.UTC}
}

// DefaultMaxDistinctBytes bounds the memory of the values a query's
// DISTINCT aggregates keep, all together (64 MiB: some 1.6 million
// integers, the ids of a table of as many rows).
const DefaultMaxDistinctBytes = 64 << 20

// WithMaxDistinctBytes sets the bound on the memory DISTINCT aggregates
// keep (default DefaultMaxDistinctBytes).
func WithMaxDistinctBytes(n int) Option { return func(c *config) { c.maxDistinctBytes = n } }

// WithMaxRows sets the bound on the rows (and groups) a query keeps
// (default DefaultMaxRows).
func WithMaxRows(n int) Option { return func(c *config) { c.maxRows = n } }

// WithLocation sets the session time zone of the expressions (default UTC).
func WithLocation(loc *time.Location) Option { return func(c *config) { c.loc = loc } }

// Run executes q over src, reading the table page by page: WHERE, COUNT
// and SUM stream over the pages without keeping rows; a query without
// ORDER BY stops reading once LIMIT has its rows. Over a bound
// (WithMaxRows) it fails with an *Error naming the bound.
func Run(ctx context.Context, src Source, q *Query, opts ...Option) (*Result, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.loc == nil {
		cfg.loc = time.UTC
	}
	if q.Table == "" {
		return constants(q, cfg)
	}
	schema, rows, next, err := src.Page(ctx, q.Source(), nil)
	if err != nil {
		return nil, err
	}
	if q.DB != "" && !strings.EqualFold(schema.GetDatabase(), q.DB) {
		return nil, errorf("FROM", "table %s is not in database %s", q.Table, q.DB)
	}
	var p plan
	if q.aggregate() {
		p, err = newGroupPlan(q, schema, cfg)
	} else {
		p, err = newRowPlan(q, schema, cfg)
	}
	if err != nil {
		return nil, err
	}
	var cursor []byte
	for {
		for _, r := range rows {
			done, err := p.add(r.GetValues())
			if err != nil {
				return nil, err
			}
			if done {
				return p.result()
			}
		}
		if len(next) == 0 || len(rows) == 0 || string(next) == string(cursor) {
			return p.result()
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cursor = next
		if _, rows, next, err = src.Page(ctx, q.Source(), cursor); err != nil {
			return nil, err
		}
	}
}

// aggregate reports whether q groups rows (GROUP BY or an aggregate).
func (q *Query) aggregate() bool {
	if len(q.GroupBy) > 0 {
		return true
	}
	for _, it := range q.Items {
		if it.aggregated() {
			return true
		}
	}
	return q.Having != ""
}

// plan consumes a table's rows and makes the result.
type plan interface {
	// add takes one row; done when no more rows are needed.
	add(row []*api.Value) (done bool, err error)
	result() (*Result, error)
}

// cell computes one value of a row: a column as stored, or an expression.
type cell struct {
	col  int // >= 0: the column
	expr *table.RowExpr
	text string // as written, for errors
}

func (c *cell) eval(row []*api.Value) (*api.Value, error) {
	if c.expr == nil {
		if c.col < len(row) && row[c.col] != nil {
			return row[c.col], nil
		}
		return nullValue, nil
	}
	v, err := c.expr.Eval(row)
	if err != nil {
		return nil, fmt.Errorf("query: %s: %w", strings.TrimSpace(c.text), err)
	}
	return valueOf(v), nil
}

// reads is the columns the cell reads.
func (c *cell) reads() []int {
	if c.expr == nil {
		return []int{c.col}
	}
	return c.expr.Reads()
}

// compiler compiles expressions against a table's columns.
type compiler struct {
	schema *api.TableSpec
	loc    *time.Location
}

func (cp compiler) column(name string) (int, error) {
	name = strings.Trim(strings.TrimSpace(name), "`")
	for i, c := range cp.schema.GetColumns() {
		if strings.EqualFold(c.GetName(), name) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("table %s has no column %s", cp.schema.GetName(), name)
}

// cell compiles src: a plain column name reads the column as stored
// (keeping its type), anything else is an expression.
func (cp compiler) cell(clause, src string) (*cell, error) {
	if toks, err := lex(src); err == nil && len(toks) == 1 && (toks[0].kind == 'i' || toks[0].kind == 'q') && !isKeyword(toks[0]) {
		if i, err := cp.column(toks[0].text); err == nil {
			return &cell{col: i, text: src}, nil
		}
	}
	e, err := table.CompileRowExpr(src, cp.column, cp.loc)
	if err != nil {
		return nil, errorf(clause, "%s: %v", strings.TrimSpace(src), err)
	}
	return &cell{col: -1, expr: e, text: src}, nil
}

// outColumn is a result column as a plan computes it.
type outColumn struct {
	Column
	infer bool // an expression's: the type is read from its values
}

func (cp compiler) columnOf(name string, c *cell) outColumn {
	if c.expr != nil {
		return outColumn{Column: Column{Name: name}, infer: true}
	}
	sc := cp.schema.GetColumns()[c.col]
	return outColumn{Column: Column{Name: name, Type: sc.GetType(), Precision: sc.GetPrecision(), Scale: sc.GetScale()}}
}

// finish builds the result, typing the expression columns by their
// values.
func finish(cols []outColumn, rows [][]*api.Value) *Result {
	res := &Result{Rows: rows}
	if res.Rows == nil {
		res.Rows = [][]*api.Value{}
	}
	for j, c := range cols {
		if c.infer {
			c.Column = inferColumn(c.Name, rows, j)
		}
		res.Columns = append(res.Columns, c.Column)
	}
	return res
}

// inferColumn types column j by its values: the first value that is not
// NULL, DATETIME with 6 fraction digits when any value has a fraction.
func inferColumn(name string, rows [][]*api.Value, j int) Column {
	c := Column{Name: name, Type: api.ColumnType_STRING}
	found := false
	for _, r := range rows {
		v := r[j]
		if isNull(v) {
			continue
		}
		if !found {
			found = true
			switch k := v.GetKind().(type) {
			case *api.Value_Int64:
				c.Type = api.ColumnType_INT64
			case *api.Value_Float64:
				c.Type = api.ColumnType_FLOAT64
			case *api.Value_Bool:
				c.Type = api.ColumnType_BOOL
			case *api.Value_Date:
				c.Type = api.ColumnType_DATE
			case *api.Value_DatetimeMicros:
				c.Type = api.ColumnType_DATETIME
			case *api.Value_Decimal:
				_, s, _ := parseDecimal(k.Decimal)
				c.Type, c.Precision, c.Scale = api.ColumnType_DECIMAL, 38, int32(s)
			}
		}
		if k, ok := v.GetKind().(*api.Value_DatetimeMicros); ok && k.DatetimeMicros%1e6 != 0 {
			c.Precision = 6
		}
	}
	return c
}

// constants answers a SELECT without FROM: one row of constant items.
func constants(q *Query, cfg config) (*Result, error) {
	var cols []outColumn
	var row []*api.Value
	for _, it := range q.Items {
		e, err := table.CompileRowExpr(it.Expr, func(name string) (int, error) {
			return 0, fmt.Errorf("unknown column %s: a SELECT without FROM reads no table", name)
		}, cfg.loc)
		if err != nil {
			return nil, errorf("SELECT", "%s: %v", strings.TrimSpace(it.Expr), err)
		}
		v, err := e.Eval(nil)
		if err != nil {
			return nil, errorf("SELECT", "%s: %v", strings.TrimSpace(it.Expr), err)
		}
		cols = append(cols, outColumn{Column: Column{Name: it.Name}, infer: true})
		row = append(row, valueOf(v))
	}
	rows := [][]*api.Value{row}
	if q.Limit == 0 || q.Offset > 0 {
		rows = nil
	}
	return finish(cols, rows), nil
}

// ---------------------------------------------------------------- rows

// rowPlan is a query without GROUP BY or aggregates: WHERE, the items,
// ORDER BY (top-K with LIMIT), LIMIT and OFFSET.
type rowPlan struct {
	q     *Query
	cfg   config
	where *table.RowExpr
	cells []*cell // the items (a * as its columns), then hidden ORDER BY keys
	cols  []outColumn
	order []sortKey
	// rows are the rows kept: without ORDER BY the result's, after the
	// offset; with ORDER BY and LIMIT the best offset+limit (a heap);
	// else every row, to sort.
	// INVARIANT: len(rows) <= cfg.maxRows.
	rows    rowHeap
	skipped int64 // rows skipped for OFFSET (without ORDER BY)
	seq     int64
}

type sortKey struct {
	at         int // the cell
	desc       bool
	nullsFirst bool
}

func newRowPlan(q *Query, schema *api.TableSpec, cfg config) (*rowPlan, error) {
	cp := compiler{schema: schema, loc: cfg.loc}
	p := &rowPlan{q: q, cfg: cfg}
	var items []Item // per cell, the item it is (a * expanded)
	for _, it := range q.Items {
		if it.Star {
			for i, c := range schema.GetColumns() {
				cl := &cell{col: i, text: c.GetName()}
				p.cells = append(p.cells, cl)
				p.cols = append(p.cols, cp.columnOf(c.GetName(), cl))
				items = append(items, Item{Name: c.GetName(), norm: strings.ToLower(c.GetName()) + "\x00"})
			}
			continue
		}
		cl, err := cp.cell("SELECT", it.Expr)
		if err != nil {
			return nil, err
		}
		name := it.Name
		if !it.alias && cl.expr == nil {
			name = schema.GetColumns()[cl.col].GetName()
		}
		p.cells = append(p.cells, cl)
		p.cols = append(p.cols, cp.columnOf(name, cl))
		items = append(items, it)
	}
	if q.Where != "" {
		e, err := table.CompileRowExpr(q.Where, cp.column, cfg.loc)
		if err != nil {
			return nil, errorf("WHERE", "%v", err)
		}
		p.where = e
	}
	for _, k := range q.OrderBy {
		at, ok, err := matchItem("ORDER BY", k.Key, items)
		if err != nil {
			return nil, err
		}
		if !ok {
			cl, err := cp.cell("ORDER BY", k.Expr)
			if err != nil {
				return nil, err
			}
			at = len(p.cells)
			p.cells = append(p.cells, cl)
		}
		p.order = append(p.order, sortKey{at: at, desc: k.Desc, nullsFirst: k.NullsFirst})
	}
	if len(p.order) > 0 && q.Limit >= 0 {
		if keep := q.Offset + q.Limit; keep > int64(cfg.maxRows) {
			return nil, errorf("LIMIT", "ORDER BY with LIMIT %d OFFSET %d keeps %d rows, over the limit of %d rows a query sorts", q.Limit, q.Offset, keep, cfg.maxRows)
		}
	}
	p.rows.less = p.worse
	return p, nil
}

// matchItem finds the SELECT item a GROUP BY or ORDER BY key names: by
// position, by alias, or written the same.
func matchItem(clause string, k Key, items []Item) (int, bool, error) {
	if k.Pos > 0 {
		if k.Pos > len(items) {
			return 0, false, errorf(clause, "%s %d: the SELECT list has %d items", clause, k.Pos, len(items))
		}
		return k.Pos - 1, true, nil
	}
	name := strings.TrimRight(k.norm, "\x00")
	for i, it := range items {
		if it.alias && strings.EqualFold(it.Name, name) && !strings.Contains(name, "\x00") {
			return i, true, nil
		}
	}
	for i, it := range items {
		if it.norm == k.norm {
			return i, true, nil
		}
	}
	return 0, false, nil
}

// compare orders two rows by the ORDER BY keys.
func (p *rowPlan) compare(a, b []*api.Value) int {
	for _, k := range p.order {
		x, y := a[k.at], b[k.at]
		xn, yn := isNull(x), isNull(y)
		var c int
		switch {
		case xn && yn:
		case xn:
			c = 1
			if k.nullsFirst {
				c = -1
			}
		case yn:
			c = -1
			if k.nullsFirst {
				c = 1
			}
		default:
			c = compareValues(x, y)
			if k.desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// worse orders the kept rows worst first (the heap's top is evicted):
// later in ORDER BY's order, then later read.
func (p *rowPlan) worse(a, b keptRow) bool {
	if c := p.compare(a.cells, b.cells); c != 0 {
		return c > 0
	}
	return a.seq > b.seq
}

func (p *rowPlan) add(row []*api.Value) (bool, error) {
	if p.where != nil {
		v, err := p.where.Eval(row)
		if err != nil {
			return false, fmt.Errorf("query: WHERE: %w", err)
		}
		if !v.Truth() {
			return false, nil
		}
	}
	if len(p.order) == 0 {
		if p.q.Limit >= 0 && int64(len(p.rows.rows)) >= p.q.Limit {
			return true, nil
		}
		if p.skipped < p.q.Offset {
			p.skipped++
			return false, nil
		}
		if len(p.rows.rows) >= p.cfg.maxRows {
			return false, errorf("LIMIT", "the result has more than %d rows: add a LIMIT (and page with OFFSET)", p.cfg.maxRows)
		}
	}
	cells := make([]*api.Value, len(p.cells))
	for i, c := range p.cells {
		v, err := c.eval(row)
		if err != nil {
			return false, err
		}
		cells[i] = v
	}
	p.seq++
	kept := keptRow{cells: cells, seq: p.seq}
	switch {
	case len(p.order) == 0:
		p.rows.rows = append(p.rows.rows, kept)
		return p.q.Limit >= 0 && int64(len(p.rows.rows)) >= p.q.Limit, nil
	case p.q.Limit >= 0:
		keep := int(p.q.Offset + p.q.Limit)
		if keep == 0 {
			return true, nil
		}
		if len(p.rows.rows) < keep {
			heap.Push(&p.rows, kept)
		} else if p.worse(p.rows.rows[0], kept) {
			p.rows.rows[0] = kept
			heap.Fix(&p.rows, 0)
		}
	default:
		if len(p.rows.rows) >= p.cfg.maxRows {
			return false, errorf("ORDER BY", "ORDER BY without LIMIT sorts at most %d rows, and the table has more: add a LIMIT", p.cfg.maxRows)
		}
		p.rows.rows = append(p.rows.rows, kept)
	}
	return false, nil
}

func (p *rowPlan) result() (*Result, error) {
	kept := p.rows.rows
	if len(p.order) > 0 {
		slices.SortFunc(kept, func(a, b keptRow) int {
			if c := p.compare(a.cells, b.cells); c != 0 {
				return c
			}
			return cmp3(a.seq, b.seq)
		})
		kept = kept[min(int64(len(kept)), p.q.Offset):]
		if p.q.Limit >= 0 && int64(len(kept)) > p.q.Limit {
			kept = kept[:p.q.Limit]
		}
	}
	rows := make([][]*api.Value, len(kept))
	for i, k := range kept {
		rows[i] = k.cells[:len(p.cols)]
	}
	return finish(p.cols, rows), nil
}

// keptRow is a row a plan keeps: its cells and when it was read.
type keptRow struct {
	cells []*api.Value
	seq   int64
}

// rowHeap is a heap of kept rows, the top the one less reports first.
type rowHeap struct {
	rows []keptRow
	less func(a, b keptRow) bool
}

func (h *rowHeap) Len() int           { return len(h.rows) }
func (h *rowHeap) Less(i, j int) bool { return h.less(h.rows[i], h.rows[j]) }
func (h *rowHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *rowHeap) Push(x any)         { h.rows = append(h.rows, x.(keptRow)) }
func (h *rowHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

var _ heap.Interface = (*rowHeap)(nil)
