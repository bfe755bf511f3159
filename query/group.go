package query

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// groupPlan is a query with GROUP BY or aggregates: each row goes to its
// group (one group without GROUP BY, which answers a row even for no
// rows); a group keeps its items' values, its aggregates' running state
// and the values its expressions over aggregates read of its first row,
// never rows.
type groupPlan struct {
	q     *Query
	cfg   config
	where *table.RowExpr
	keys  []*cell
	aggs  []aggItem // every aggregate the items and HAVING compute
	items []groupItem
	// having filters the groups (nil when none); it reads the virtual row.
	having *cell
	// need is the columns whose first-row values a group keeps for the
	// expressions over aggregates (the grouped columns they read).
	need   []int
	schema *api.TableSpec
	ncols  int // the table's columns
	cols   []outColumn
	order  []sortKey // over the result's columns
	groups map[string]*group
	// list is the groups in the order their first row came.
	// INVARIANT: len(list) == len(groups) <= cfg.maxRows.
	list []*group
	key  []byte // scratch
	// kept is the bytes DISTINCT aggregates keep, over every group.
	// INVARIANT: kept <= cfg.maxDistinctBytes.
	kept int
}

// An expression over aggregates (an item, HAVING) is evaluated once per
// group over a virtual row: the table's columns (the group's first row's
// values of the grouped columns it reads), then each aggregate's result
// (aggs), then each item's value (HAVING reads the SELECT list's aliases).

// aggItem is one aggregate of the query.
type aggItem struct {
	fn       string
	args     []*cell // none for COUNT(*); several for COUNT(DISTINCT a, b)
	distinct bool
	// largeint: the argument is a LARGEINT column (its AVG is a DOUBLE).
	largeint bool
	name     string // as written, for errors
	sig      string // what makes two aggregates the same one
}

// groupItem is an item of an aggregate query: a value of its group (the
// same for each of its rows), an aggregate, or an expression over
// aggregates.
type groupItem struct {
	cell *cell // a value of the group; an expression over aggregates (over)
	agg  int   // >= 0: the item is aggs[agg]
	over bool  // cell reads the virtual row
}

type group struct {
	vals []*api.Value // per item: a grouped value (else nil)
	row  []*api.Value // the first row's values of need (nil without need)
	accs []acc        // per aggregate: its state
}

func newGroupPlan(q *Query, schema *api.TableSpec, cfg config) (*groupPlan, error) {
	cp := compiler{schema: schema, loc: cfg.loc}
	p := &groupPlan{q: q, cfg: cfg, groups: map[string]*group{}, schema: schema, ncols: len(schema.GetColumns())}
	for _, it := range q.Items {
		if it.Star {
			return nil, errorf("SELECT", "SELECT * with GROUP BY or an aggregate is not supported: name the grouped columns")
		}
	}
	for _, c := range schema.GetColumns() {
		if _, ok := aggIndex(c.GetName()); ok {
			return nil, errorf("SELECT", "table %s has a column named %s, a name loadnode's aggregates use: rename it to aggregate over the table", schema.GetName(), c.GetName())
		}
	}
	if q.Where != "" {
		e, err := table.CompileRowExpr(q.Where, cp.column, cfg.loc)
		if err != nil {
			return nil, errorf("WHERE", "%v", err)
		}
		p.where = e
	}
	// The keys: a position or an alias names an item; else an expression.
	keyNorms := make([]string, len(q.GroupBy))
	keyItem := make([]int, len(q.GroupBy))
	for i, k := range q.GroupBy {
		at, ok, err := matchItem("GROUP BY", k, q.Items)
		if err != nil {
			return nil, err
		}
		keyItem[i] = -1
		src := k.Expr
		if ok && (k.Pos > 0 || q.Items[at].alias) {
			if q.Items[at].aggregated() {
				return nil, errorf("GROUP BY", "GROUP BY %s names the aggregate %s", keyText(k), q.Items[at].Name)
			}
			keyItem[i], src, keyNorms[i] = at, q.Items[at].Expr, q.Items[at].norm
		} else {
			keyNorms[i] = k.norm
		}
		c, err := cp.cell("GROUP BY", src)
		if err != nil {
			return nil, err
		}
		p.keys = append(p.keys, c)
	}
	grouped := map[int]bool{}
	for _, k := range p.keys {
		if k.expr == nil {
			grouped[k.col] = true
		}
	}
	// The aggregates, of the items then of HAVING: at[i][k] is the index
	// in p.aggs of item i's k-th (at[len(items)]: HAVING's). An aggregate
	// written twice (count(*) = count(DISTINCT id), count(DISTINCT id))
	// is computed once.
	at := make([][]int, len(q.Items)+1)
	for i, it := range append(slices.Clone(q.Items), Item{Aggs: q.HavingAggs}) {
		aggs := it.Aggs
		if it.Agg != "" {
			aggs = []Item{it}
		}
		owner := i
		if i == len(q.Items) {
			owner = -1
		}
		for _, a := range aggs {
			ai, err := p.aggregate(cp, a, owner)
			if err != nil {
				return nil, err
			}
			k := slices.IndexFunc(p.aggs, func(b aggItem) bool { return b.sig == ai.sig })
			if k < 0 {
				k = len(p.aggs)
				p.aggs = append(p.aggs, ai)
			}
			at[i] = append(at[i], k)
		}
	}
	// The items: an aggregate, an expression over aggregates, or a value
	// of the group: a key, or an expression over grouped columns only.
	need := map[int]bool{}
	for i, it := range q.Items {
		gi := groupItem{agg: -1}
		name := it.Name
		var col outColumn
		switch {
		case it.Agg != "":
			gi.agg = at[i][0]
			col = outColumn{Column: Column{Name: name}, infer: true}
			a := p.aggs[gi.agg]
			if it.Agg == "COUNT" {
				col = outColumn{Column: Column{Name: name, Type: api.ColumnType_INT64}}
			} else if (it.Agg == "MIN" || it.Agg == "MAX") && a.args[0].expr == nil {
				col = cp.columnOf(name, a.args[0])
			}
		case len(it.Aggs) > 0:
			c, err := p.over("SELECT", it.Expr, it.Name, at[i], false, grouped, need)
			if err != nil {
				return nil, err
			}
			gi.cell, gi.over = c, true
			col = outColumn{Column: Column{Name: name}, infer: true}
		default:
			c, err := cp.cell("SELECT", it.Expr)
			if err != nil {
				return nil, err
			}
			gi.cell = c
			if !it.alias && c.expr == nil {
				name = schema.GetColumns()[c.col].GetName()
			}
			ok := slices.Contains(keyItem, i) || slices.Contains(keyNorms, it.norm)
			if !ok {
				ok = true
				for _, c := range c.reads() {
					ok = ok && grouped[c]
				}
			}
			if !ok {
				if len(q.GroupBy) == 0 {
					return nil, errorf("SELECT", "%s is not an aggregate: with an aggregate, the other items need GROUP BY", it.Name)
				}
				return nil, errorf("SELECT", "%s is neither grouped (GROUP BY) nor an aggregate", it.Name)
			}
			col = cp.columnOf(name, c)
		}
		p.items = append(p.items, gi)
		p.cols = append(p.cols, col)
	}
	if q.Having != "" {
		c, err := p.over("HAVING", q.Having, "HAVING", at[len(q.Items)], true, grouped, need)
		if err != nil {
			return nil, err
		}
		p.having = c
	}
	for c := range need {
		p.need = append(p.need, c)
	}
	slices.Sort(p.need)
	for _, k := range q.OrderBy {
		at, ok, err := matchItem("ORDER BY", k.Key, q.Items)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errorf("ORDER BY", "ORDER BY %s: with GROUP BY or an aggregate, order by a SELECT item: its position, its alias or the item as written", keyText(k.Key))
		}
		p.order = append(p.order, sortKey{at: at, desc: k.Desc, nullsFirst: k.NullsFirst})
	}
	if len(q.GroupBy) == 0 {
		if _, err := p.newGroup("", nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// aggregate compiles the aggregate a (of item i; -1: of HAVING).
func (p *groupPlan) aggregate(cp compiler, a Item, i int) (aggItem, error) {
	clause, name := "SELECT", a.Name
	if i < 0 {
		clause = "HAVING"
	} else if a.Name == "" || len(p.q.Items[i].Aggs) == 0 {
		name = p.q.Items[i].Name
	}
	ai := aggItem{fn: a.Agg, distinct: a.Distinct, name: name}
	// The same function over the same arguments, as normalized text.
	ai.sig = strings.Join(append([]string{a.Agg, fmt.Sprint(a.Distinct), strings.ToLower(strings.Join(strings.Fields(a.Expr), " "))}, a.More...), "\x00")
	if a.Expr == "*" || a.Agg == "COUNT" && strings.TrimSpace(a.Expr) == "1" && !a.Distinct {
		ai.sig = "COUNT(*)"
	}
	if a.Expr == "*" {
		return ai, nil
	}
	for _, src := range append([]string{a.Expr}, a.More...) {
		c, err := cp.cell(clause, src)
		if err != nil {
			return aggItem{}, err
		}
		ai.args = append(ai.args, c)
	}
	c := ai.args[0]
	ai.largeint = c.expr == nil && cp.schema.GetColumns()[c.col].GetType() == api.ColumnType_INT128
	return ai, nil
}

// over compiles src, an expression over aggregates whose k-th aggregate
// is p.aggs[idx[k]], over the virtual row; a column it reads must be
// grouped (need gets it); aliases: a name that is no column may be an
// item's alias (HAVING).
func (p *groupPlan) over(clause, src, name string, idx []int, aliases bool, grouped, need map[int]bool) (*cell, error) {
	cp := compiler{schema: p.schema, loc: p.cfg.loc}
	resolve := func(col string) (int, error) {
		n := strings.Trim(strings.TrimSpace(col), "`")
		if k, ok := aggIndex(n); ok && k < len(idx) {
			return p.ncols + idx[k], nil
		}
		i, err := cp.column(n)
		if err == nil && (!aliases || grouped[i]) {
			return i, nil
		}
		if aliases {
			// HAVING: an item's alias, unless the name is a grouped
			// column (MySQL's preference).
			for j, it := range p.q.Items {
				if it.alias && strings.EqualFold(it.Name, n) {
					return p.ncols + len(p.aggs) + j, nil
				}
			}
		}
		return i, err
	}
	e, err := table.CompileRowExpr(src, resolve, p.cfg.loc)
	if err != nil {
		return nil, errorf(clause, "%s: %v", name, err)
	}
	for _, c := range e.Reads() {
		if c >= p.ncols {
			continue
		}
		if !grouped[c] {
			col := cp.schema.GetColumns()[c].GetName()
			if len(p.q.GroupBy) == 0 {
				return nil, errorf(clause, "%s reads column %s outside an aggregate: with an aggregate, that needs GROUP BY %s", name, col, col)
			}
			return nil, errorf(clause, "%s reads column %s, which is neither grouped (GROUP BY) nor inside an aggregate", name, col)
		}
		need[c] = true
	}
	return &cell{col: -1, expr: e, text: name}, nil
}

func keyText(k Key) string {
	if k.Pos > 0 {
		return strconv.Itoa(k.Pos)
	}
	return strings.TrimSpace(k.Expr)
}

// newGroup adds the group of key, its grouped items computed from row.
func (p *groupPlan) newGroup(key string, row []*api.Value) (*group, error) {
	if len(p.list) >= p.cfg.maxRows {
		return nil, errorf("GROUP BY", "GROUP BY makes more than %d groups", p.cfg.maxRows)
	}
	g := &group{vals: make([]*api.Value, len(p.items)), accs: make([]acc, len(p.aggs))}
	for k, a := range p.aggs {
		g.accs[k].fn, g.accs[k].ints = a.fn, a.largeint
	}
	if row == nil { // no GROUP BY: the grouped items are constants
		row = make([]*api.Value, 0)
	}
	for i, it := range p.items {
		if it.agg >= 0 || it.over {
			continue
		}
		v, err := it.cell.eval(row)
		if err != nil {
			return nil, err
		}
		g.vals[i] = v
	}
	if len(p.need) > 0 {
		g.row = make([]*api.Value, p.ncols)
		for _, c := range p.need {
			if c < len(row) {
				g.row[c] = row[c]
			}
		}
	}
	p.groups[key] = g
	p.list = append(p.list, g)
	return g, nil
}

func (p *groupPlan) add(row []*api.Value) (bool, error) {
	if p.where != nil {
		v, err := p.where.Eval(row)
		if err != nil {
			return false, fmt.Errorf("query: WHERE: %w", err)
		}
		if !v.Truth() {
			return false, nil
		}
	}
	var g *group
	if len(p.keys) == 0 {
		g = p.list[0]
	} else {
		p.key = p.key[:0]
		for _, k := range p.keys {
			v, err := k.eval(row)
			if err != nil {
				return false, err
			}
			p.key = appendKey(p.key, v)
		}
		var ok bool
		if g, ok = p.groups[string(p.key)]; !ok {
			var err error
			if g, err = p.newGroup(string(p.key), row); err != nil {
				return false, err
			}
		}
	}
	for k := range p.aggs {
		a, ac := &p.aggs[k], &g.accs[k]
		if a.args == nil { // COUNT(*)
			ac.n++
			continue
		}
		v, err := a.args[0].eval(row)
		if err != nil {
			return false, err
		}
		if a.distinct {
			fresh, err := p.distinct(ac, a, v, row)
			if err != nil {
				return false, err
			}
			if !fresh {
				continue
			}
		}
		if err := ac.add(v); err != nil {
			return false, errorf("SELECT", "%s: %v", a.name, err)
		}
	}
	return false, nil
}

// distinct reports whether the values of a's arguments in row (the
// first is v) are new to ac: not seen before, none NULL.
func (p *groupPlan) distinct(ac *acc, a *aggItem, v *api.Value, row []*api.Value) (bool, error) {
	if isNull(v) {
		return false, nil
	}
	if iv, ok := v.GetKind().(*api.Value_Int64); ok && len(a.args) == 1 {
		// An integer (an id: the check of exactly once) is kept as one,
		// in about a fifth of a text key's memory.
		if _, ok := ac.seenInts[iv.Int64]; ok {
			return false, nil
		}
		if err := p.keep(a, intKeyBytes); err != nil {
			return false, err
		}
		if ac.seenInts == nil {
			ac.seenInts = map[int64]struct{}{}
		}
		ac.seenInts[iv.Int64] = struct{}{}
		return true, nil
	}
	p.key = appendKey(p.key[:0], v)
	for _, c := range a.args[1:] {
		w, err := c.eval(row)
		if err != nil {
			return false, err
		}
		if isNull(w) {
			return false, nil
		}
		p.key = appendKey(p.key, w)
	}
	if _, ok := ac.seen[string(p.key)]; ok {
		return false, nil
	}
	if err := p.keep(a, textKeyBytes+len(p.key)); err != nil {
		return false, err
	}
	if ac.seen == nil {
		ac.seen = map[string]struct{}{}
	}
	ac.seen[string(p.key)] = struct{}{}
	return true, nil
}

// The memory a DISTINCT aggregate's value takes, at most, as measured
// with Go 1.26's maps from 100,000 to 3,000,000 values (the table's spare
// slots and its growth included): an integer in map[int64]struct{} 24-38
// bytes, a 9-byte text key in map[string]struct{} 51-72 (the string
// header, its allocation) plus, for a longer key, its bytes.
const (
	intKeyBytes  = 40
	textKeyBytes = 64
)

// keep counts n more bytes of DISTINCT values against the query's bound.
func (p *groupPlan) keep(a *aggItem, n int) error {
	if p.kept+n > p.cfg.maxDistinctBytes {
		size := fmt.Sprintf("%d bytes", p.cfg.maxDistinctBytes)
		if p.cfg.maxDistinctBytes >= 1<<20 {
			size = fmt.Sprintf("%d MiB", p.cfg.maxDistinctBytes>>20)
		}
		return errorf("SELECT", "%s: DISTINCT keeps more than %s of values (some %d integers, or %d short texts), the bound of a query", a.name,
			size, p.cfg.maxDistinctBytes/intKeyBytes, p.cfg.maxDistinctBytes/(textKeyBytes+9))
	}
	p.kept += n
	return nil
}

func (p *groupPlan) result() (*Result, error) {
	rows := make([][]*api.Value, 0, len(p.list))
	virtual := make([]*api.Value, p.ncols+len(p.aggs)+len(p.items))
	for _, g := range p.list {
		for c := range p.ncols {
			virtual[c] = nullValue
			if g.row != nil && g.row[c] != nil {
				virtual[c] = g.row[c]
			}
		}
		for k := range p.aggs {
			v, err := g.accs[k].result()
			if err != nil {
				return nil, errorf("SELECT", "%s: %v", p.aggs[k].name, err)
			}
			virtual[p.ncols+k] = v
		}
		row := make([]*api.Value, len(p.items))
		for i, it := range p.items {
			switch {
			case it.agg >= 0:
				row[i] = virtual[p.ncols+it.agg]
			case it.over:
				v, err := it.cell.eval(virtual)
				if err != nil {
					return nil, err
				}
				row[i] = v
			default:
				row[i] = g.vals[i]
			}
			virtual[p.ncols+len(p.aggs)+i] = row[i]
		}
		if p.having != nil {
			v, err := p.having.expr.Eval(virtual)
			if err != nil {
				return nil, fmt.Errorf("query: HAVING: %w", err)
			}
			if !v.Truth() {
				continue
			}
		}
		rows = append(rows, row)
	}
	if len(p.order) > 0 {
		rp := rowPlan{order: p.order}
		slices.SortStableFunc(rows, rp.compare)
	}
	rows = rows[min(int64(len(rows)), p.q.Offset):]
	if p.q.Limit >= 0 && int64(len(rows)) > p.q.Limit {
		rows = rows[:p.q.Limit]
	}
	res := finish(p.cols, rows)
	// SUM and AVG of DECIMAL are DECIMAL(38, s) as Doris types them.
	for j, c := range res.Columns {
		if c.Type == api.ColumnType_DECIMAL && p.items[j].agg >= 0 {
			res.Columns[j].Precision = 38
		}
	}
	return res, nil
}

// acc is an aggregate's running state over one group. NULLs are skipped.
// SUM and AVG add integers exactly (int64, then big past its range),
// DECIMAL and LARGEINT exactly at the largest scale seen, FLOAT, DOUBLE
// and text (read as a number, NULL when it spells none) as float64.
type acc struct {
	fn   string
	n    int64 // the values counted (COUNT(*): the rows)
	kind byte  // 0 none yet, 'i' int64, 'd' exact decimal (big), 'f' float64
	// overflow: an integer sum left int64's range (SUM of integers is
	// BIGINT, as in Doris: then an error, never a wrapped number).
	overflow bool
	i        int64
	dec      *big.Int // the unscaled exact sum
	scale    int
	f        float64
	best     *api.Value // MIN, MAX
	ints     bool       // the values are LARGEINTs
	// seen and seenInts are a DISTINCT aggregate's values so far: the
	// keys of its values (appendKey), its integers as themselves.
	seen     map[string]struct{}
	seenInts map[int64]struct{}
}

func (a *acc) add(v *api.Value) error {
	if isNull(v) {
		return nil
	}
	switch a.fn {
	case "COUNT":
		a.n++
		return nil
	case "MIN", "MAX":
		a.n++
		if a.best == nil {
			a.best = v
			return nil
		}
		c := compareValues(v, a.best)
		if a.fn == "MIN" && c < 0 || a.fn == "MAX" && c > 0 {
			a.best = v
		}
		return nil
	}
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		a.addInt(k.Int64)
	case *api.Value_Bool:
		a.addInt(b2i(k.Bool))
	case *api.Value_Decimal:
		n, s, ok := parseDecimal(k.Decimal)
		if !ok {
			return fmt.Errorf("%q is not a number", k.Decimal)
		}
		a.addDecimal(n, s)
	case *api.Value_Float64:
		a.addFloat(k.Float64)
	case *api.Value_String_:
		f, err := strconv.ParseFloat(strings.TrimSpace(k.String_), 64)
		if err != nil {
			return nil // text that spells no number is NULL, as Doris casts it
		}
		a.addFloat(f)
	default:
		return fmt.Errorf("%s of a %s value is not supported", a.fn, kindName(v))
	}
	a.n++
	return nil
}

func kindName(v *api.Value) string {
	switch v.GetKind().(type) {
	case *api.Value_Date:
		return "DATE"
	case *api.Value_DatetimeMicros, *api.Value_TimestampMicros:
		return "DATETIME"
	case *api.Value_Json:
		return "JSON"
	}
	return "non-numeric"
}

func (a *acc) addInt(x int64) {
	switch a.kind {
	case 0, 'i':
		a.kind = 'i'
		if s := a.i + x; (s > a.i) == (x > 0) {
			a.i = s
			return
		}
		a.overflow = true
		a.kind, a.dec, a.scale = 'd', big.NewInt(a.i), 0
		a.dec.Add(a.dec, big.NewInt(x))
	case 'd':
		a.dec.Add(a.dec, rescale(big.NewInt(x), a.scale))
	case 'f':
		a.f += float64(x)
	}
}

func (a *acc) addDecimal(n *big.Int, s int) {
	switch a.kind {
	case 0:
		a.kind, a.dec, a.scale = 'd', n, s
		return
	case 'i':
		a.kind, a.dec, a.scale = 'd', big.NewInt(a.i), 0
	case 'f':
		f, _ := new(big.Rat).SetFrac(n, rescale(big.NewInt(1), s)).Float64()
		a.f += f
		return
	}
	if s > a.scale {
		a.dec = rescale(a.dec, s-a.scale)
		a.scale = s
	}
	a.dec.Add(a.dec, rescale(n, a.scale-s))
}

func (a *acc) addFloat(f float64) {
	switch a.kind {
	case 'i':
		a.f = float64(a.i)
	case 'd':
		a.f, _ = new(big.Rat).SetFrac(a.dec, rescale(big.NewInt(1), a.scale)).Float64()
	}
	a.kind = 'f'
	a.f += f
}

// result is the aggregate's value: COUNT a BIGINT; SUM a BIGINT of
// integers, a DECIMAL (LARGEINT) of DECIMALs (LARGEINTs), a DOUBLE of the
// rest; AVG a DECIMAL with at least 4 fraction digits of DECIMALs, else a
// DOUBLE; MIN and MAX a value of the argument's type. NULL for no values
// (COUNT: 0).
func (a *acc) result() (*api.Value, error) {
	if a.fn == "COUNT" {
		return &api.Value{Kind: &api.Value_Int64{Int64: a.n}}, nil
	}
	if a.n == 0 {
		return nullValue, nil
	}
	switch a.fn {
	case "MIN", "MAX":
		return a.best, nil
	case "SUM":
		switch a.kind {
		case 'i':
			return &api.Value{Kind: &api.Value_Int64{Int64: a.i}}, nil
		case 'd':
			if a.overflow {
				return nil, fmt.Errorf("the sum %s is out of the range of BIGINT", a.dec)
			}
			return &api.Value{Kind: &api.Value_Decimal{Decimal: formatDecimal(a.dec, a.scale)}}, nil
		}
		return &api.Value{Kind: &api.Value_Float64{Float64: a.f}}, nil
	}
	// AVG
	switch a.kind {
	case 'i':
		return &api.Value{Kind: &api.Value_Float64{Float64: float64(a.i) / float64(a.n)}}, nil
	case 'd':
		if a.overflow || a.ints {
			f, _ := new(big.Rat).SetFrac(a.dec, big.NewInt(a.n)).Float64()
			return &api.Value{Kind: &api.Value_Float64{Float64: f}}, nil
		}
		s := max(a.scale, 4)
		num := rescale(new(big.Int).Set(a.dec), s-a.scale)
		// Round half away from zero.
		q, r := new(big.Int).QuoRem(num, big.NewInt(a.n), new(big.Int))
		if r.Abs(r).Mul(r, big.NewInt(2)).Cmp(big.NewInt(a.n)) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
		return &api.Value{Kind: &api.Value_Decimal{Decimal: formatDecimal(q, s)}}, nil
	}
	return &api.Value{Kind: &api.Value_Float64{Float64: a.f / float64(a.n)}}, nil
}
