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
// rows); a group keeps its items' values and its aggregates' running
// state, never rows.
type groupPlan struct {
	q      *Query
	cfg    config
	where  *table.RowExpr
	keys   []*cell
	items  []groupItem
	cols   []outColumn
	order  []sortKey // over the result's columns
	groups map[string]*group
	// list is the groups in the order their first row came.
	// INVARIANT: len(list) == len(groups) <= cfg.maxRows.
	list []*group
	key  []byte // scratch
}

// groupItem is an item of an aggregate query: a value of its group (the
// same for each of its rows), or an aggregate.
type groupItem struct {
	cell *cell // nil for COUNT(*)
	agg  string
	// largeint: the argument is a LARGEINT column (its AVG is a DOUBLE).
	largeint bool
}

type group struct {
	vals []*api.Value // per item: a grouped value (aggregates: nil)
	accs []acc        // per item: an aggregate's state
}

func newGroupPlan(q *Query, schema *api.TableSpec, cfg config) (*groupPlan, error) {
	cp := compiler{schema: schema, loc: cfg.loc}
	p := &groupPlan{q: q, cfg: cfg, groups: map[string]*group{}}
	for _, it := range q.Items {
		if it.Star {
			return nil, errorf("SELECT", "SELECT * with GROUP BY or an aggregate is not supported: name the grouped columns")
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
			if q.Items[at].Agg != "" {
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
	// The items: an aggregate, or a value of the group: a key, or an
	// expression over grouped columns only.
	grouped := map[int]bool{}
	for _, k := range p.keys {
		if k.expr == nil {
			grouped[k.col] = true
		}
	}
	for i, it := range q.Items {
		gi := groupItem{agg: it.Agg}
		if it.Agg == "" || it.Expr != "*" {
			c, err := cp.cell("SELECT", it.Expr)
			if err != nil {
				return nil, err
			}
			gi.cell = c
			gi.largeint = c.expr == nil && schema.GetColumns()[c.col].GetType() == api.ColumnType_INT128
		}
		name := it.Name
		if !it.alias && gi.cell != nil && gi.cell.expr == nil && it.Agg == "" {
			name = schema.GetColumns()[gi.cell.col].GetName()
		}
		col := outColumn{Column: Column{Name: name}, infer: true}
		if it.Agg == "" {
			ok := slices.Contains(keyItem, i) || slices.Contains(keyNorms, it.norm)
			if !ok {
				ok = true
				for _, c := range gi.cell.reads() {
					ok = ok && grouped[c]
				}
			}
			if !ok {
				if len(q.GroupBy) == 0 {
					return nil, errorf("SELECT", "%s is not an aggregate: with an aggregate, the other items need GROUP BY", it.Name)
				}
				return nil, errorf("SELECT", "%s is neither grouped (GROUP BY) nor an aggregate", it.Name)
			}
			col = cp.columnOf(name, gi.cell)
		} else if it.Agg == "COUNT" {
			col = outColumn{Column: Column{Name: name, Type: api.ColumnType_INT64}}
		} else if (it.Agg == "MIN" || it.Agg == "MAX") && gi.cell.expr == nil {
			col = cp.columnOf(name, gi.cell)
		}
		p.items = append(p.items, gi)
		p.cols = append(p.cols, col)
	}
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
		p.newGroup("", nil)
	}
	return p, nil
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
	g := &group{vals: make([]*api.Value, len(p.items)), accs: make([]acc, len(p.items))}
	for i, it := range p.items {
		if it.agg != "" {
			g.accs[i].fn, g.accs[i].ints = it.agg, it.largeint
			continue
		}
		if row == nil { // no GROUP BY: the items are constants
			row = make([]*api.Value, 0)
		}
		v, err := it.cell.eval(row)
		if err != nil {
			return nil, err
		}
		g.vals[i] = v
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
	for i, it := range p.items {
		if it.agg == "" {
			continue
		}
		if it.cell == nil { // COUNT(*)
			g.accs[i].n++
			continue
		}
		v, err := it.cell.eval(row)
		if err != nil {
			return false, err
		}
		if err := g.accs[i].add(v); err != nil {
			return false, errorf("SELECT", "%s: %v", p.q.Items[i].Name, err)
		}
	}
	return false, nil
}

func (p *groupPlan) result() (*Result, error) {
	rows := make([][]*api.Value, 0, len(p.list))
	for _, g := range p.list {
		row := make([]*api.Value, len(p.items))
		for i, it := range p.items {
			if it.agg == "" {
				row[i] = g.vals[i]
				continue
			}
			v, err := g.accs[i].result()
			if err != nil {
				return nil, errorf("SELECT", "%s: %v", p.q.Items[i].Name, err)
			}
			row[i] = v
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
		if c.Type == api.ColumnType_DECIMAL && p.items[j].agg != "" {
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
