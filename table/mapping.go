package table

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
)

// A column mapping (Doris COLUMNS (...), YAML columns_mapping) says which
// fields a record has and how the table's columns are computed from them:
//
//	COLUMNS (k1, tmp, k3, v2 = tmp * 100)
//
// The names without "=" are the record's fields in order (CSV positions;
// JSON keys, or the jsonpaths in order). A field named like a table column
// that no expression computes loads into that column as it is; other
// fields (temporaries) are text for expressions to use. "col = expr"
// computes a table column. A list with no plain name reads every table
// column's field by name, as Doris does. Table columns neither listed nor
// computed take their DEFAULT (NULL without one). A filter (WHERE) sees
// the table columns after the mapping, and temporaries by name.
//
// The expressions are Doris's derived columns, taken in the order written
// (Doris's rewriteColumns, then initColumns):
//   - an expression reads the value of a name computed by an expression
//     before it, else the field of that name: in (a, b = a + 1, c = b * 2)
//     c is (a + 1) * 2, and in (id, id = id * 10) id reads the field id;
//   - "name = expr" for a name no table column has computes no column: a
//     later expression may read its value, else it is dropped unread, as
//     Doris drops it (test_json_load select26: COLUMNS(id = id * 10) into a
//     table without id loads as if it were not there).
//
// A field and an expression may share a name (COLUMNS(id, id = id * 10)):
// the expression reads the field and computes the column.

// slot is one field of a record.
type slot struct {
	name   string
	typ    api.ColumnType
	meta   colMeta
	column int // the table column it loads as is, or -1
}

// outCol says how a table column is computed.
type outCol struct {
	slot int  // the slot loaded as is, or -1
	expr node // computed (by derived[...]), or nil
}

// derived is one "name = expr" of the mapping, in the order written. Its
// value is kept in the expression environment after the slots (at
// len(slots) + its index) for the expressions after it.
type derived struct {
	name string
	col  int  // the table column it computes, or -1 (a temporary)
	expr node // nil: a temporary nothing reads, not evaluated
}

// mapping is a compiled column mapping and filter.
type mapping struct {
	slots []slot
	// derived are the expressions in the order written; their values
	// follow the slots' in the expression environment.
	derived []derived
	// metas are the source metadata names the expressions read (meta.go);
	// their values follow the derived values in the expression environment.
	metas []metaRef
	out   []outCol
	where node
	// deleteOn, merge type MERGE: a row for which it is true deletes its
	// key (Doris DELETE ON).
	deleteOn node
	loc      *time.Location
	env      evalEnv // scratch: slot values, then (for where) column values
}

// ErrFiltered is returned by Parse for a record the filter (WHERE) leaves
// out: it is neither loaded nor an error row (Doris counts it among the
// unselected rows).
var ErrFiltered = &ParseError{Reason: "filtered out by the WHERE clause"}

// compileMapping builds the mapping of items (COLUMNS entries as written)
// and where over s. An empty items and where yield nil: the record's
// fields are the table's columns in order. seq, for a table with a hidden
// sequence, names the field (or the table column, computed or not) whose
// value is the hidden sequence's (out's last entry).
func compileMapping(s *Schema, items []string, where, deleteOn, seq string, loc *time.Location) (*mapping, error) {
	if len(items) == 0 && strings.TrimSpace(where) == "" && strings.TrimSpace(deleteOn) == "" && seq == "" {
		return nil, nil
	}
	m := &mapping{out: make([]outCol, s.Width()), loc: loc}
	for i := range m.out {
		m.out[i].slot = -1
	}
	type item struct {
		name, src string
		col       int // the table column, or -1
		at        int // its index in items
	}
	var exprs []item
	var plain []string
	seenPlain, seenExpr := map[string]int{}, map[string]int{}
	for i, it := range items {
		name, src, isExpr := strings.Cut(it, "=")
		if isExpr && (strings.HasSuffix(name, "<") || strings.HasSuffix(name, ">") || strings.HasSuffix(name, "!")) {
			isExpr = false // a comparison, not an assignment: refused below as a bad name
		}
		name = strings.Trim(strings.TrimSpace(name), "`")
		field := fmt.Sprintf("columns_mapping[%d]", i)
		if err := checkName(name); err != nil {
			return nil, fieldErr(field, "%s", err)
		}
		seen := seenPlain
		if isExpr {
			seen = seenExpr
		}
		if j, dup := seen[strings.ToLower(name)]; dup {
			return nil, fieldErr(field, "%q is named twice (also columns_mapping[%d])", name, j)
		}
		seen[strings.ToLower(name)] = i
		if !isExpr {
			plain = append(plain, name)
			continue
		}
		col, ok := s.columnFold(name)
		if !ok {
			col = -1
		}
		exprs = append(exprs, item{name, src, col, i})
	}
	computed := map[int]bool{}
	for _, d := range exprs {
		if d.col >= 0 {
			computed[d.col] = true
		}
	}
	if len(plain) == 0 {
		for _, c := range s.cols {
			plain = append(plain, c.GetName())
		}
	}
	for _, name := range plain {
		sl := slot{name: name, typ: api.ColumnType_STRING, column: -1}
		if col, ok := s.columnFold(name); ok && !computed[col] {
			sl.typ, sl.meta, sl.column = s.types[col], s.meta[col], col
			m.out[col].slot = len(m.slots)
		}
		m.slots = append(m.slots, sl)
	}
	nslots, nderived := len(m.slots), len(exprs)
	// resolve finds a name for the expression of exprs[upto] (upto 0 for
	// the filters, which read no derived value): an earlier derived value,
	// a field, or source metadata.
	resolve := func(name string, upto int) (int, error) {
		name = strings.Trim(name, "`")
		for k := upto - 1; k >= 0; k-- {
			if strings.EqualFold(exprs[k].name, name) {
				return nslots + k, nil
			}
		}
		for i, sl := range m.slots {
			if strings.EqualFold(sl.name, name) {
				return i, nil
			}
		}
		r, ok, err := parseMetaName(name)
		if err != nil {
			return 0, err
		}
		if ok {
			for k, mr := range m.metas {
				if mr == r {
					return nslots + nderived + k, nil
				}
			}
			m.metas = append(m.metas, r)
			return nslots + nderived + len(m.metas) - 1, nil
		}
		return 0, &unknownFieldError{name: name, fields: m.slotNames()}
	}
	// A temporary is compiled only if a later expression reads it: Doris
	// drops an unread one before it looks at it (so an unknown field in it
	// is no error), and substitutes a read one into its readers.
	read := make([]bool, len(exprs))
	m.derived = make([]derived, len(exprs))
	errs := make([]error, len(exprs))
	for k := len(exprs) - 1; k >= 0; k-- {
		d := exprs[k]
		m.derived[k] = derived{name: d.name, col: d.col}
		if d.col < 0 && !read[k] {
			// Parsed for its syntax and functions only.
			_, err := parseExpr(d.src, func(name string) (int, error) {
				if _, ok, err := parseMetaName(strings.Trim(name, "`")); ok || err != nil {
					return 0, err // not kept: no metadata to fetch for it
				}
				return resolve(name, k)
			})
			var uf *unknownFieldError
			if err != nil && !errors.As(err, &uf) {
				return nil, fieldErr(fmt.Sprintf("columns_mapping[%d]", d.at), "%s", err)
			}
			continue
		}
		n, err := parseExpr(d.src, func(name string) (int, error) {
			i, err := resolve(name, k)
			if err == nil && i >= nslots && i < nslots+nderived {
				read[i-nslots] = true
			}
			return i, err
		})
		if err != nil {
			errs[k] = err
			continue
		}
		m.derived[k].expr = n
		if d.col >= 0 {
			m.out[d.col].expr = n
		}
	}
	// The first error in the order written is reported.
	for k, d := range exprs {
		if errs[k] != nil {
			return nil, fieldErr(fmt.Sprintf("columns_mapping[%d]", d.at), "%s", errs[k])
		}
	}
	if seq != "" {
		// Doris maps __DORIS_SEQUENCE_COL__ = seq: a field of the record,
		// or a computed column's expression.
		if col, ok := s.columnFold(seq); ok && m.out[col].expr != nil {
			m.out[len(s.cols)].expr = m.out[col].expr
		} else {
			n, err := parseExpr("`"+seq+"`", func(name string) (int, error) { return resolve(name, 0) })
			if err != nil {
				return nil, fieldErr("sequence_column", "%s", err)
			}
			m.out[len(s.cols)].expr = n
		}
	}
	ncols := len(s.cols)
	resolveAll := func(name string) (int, error) {
		if col, ok := s.columnFold(strings.Trim(name, "`")); ok {
			return col, nil
		}
		i, err := resolve(name, 0)
		return ncols + i, err
	}
	if strings.TrimSpace(where) != "" {
		n, err := parseExpr(where, resolveAll)
		if err != nil {
			return nil, fieldErr("where", "%s", err)
		}
		m.where = n
	}
	if strings.TrimSpace(deleteOn) != "" {
		n, err := parseExpr(deleteOn, resolveAll)
		if err != nil {
			return nil, fieldErr("delete_on", "%s", err)
		}
		m.deleteOn = n
	}
	m.env = evalEnv{vals: make([]ev, len(s.cols)+len(m.slots)+len(m.derived)+len(m.metas)), loc: loc}
	return m, nil
}

// unknownFieldError is an expression's name that is no field.
type unknownFieldError struct{ name, fields string }

func (e *unknownFieldError) Error() string {
	return fmt.Sprintf("unknown field %q (the fields are %s)", e.name, e.fields)
}

func (m *mapping) slotNames() string {
	names := make([]string, len(m.slots))
	for i, sl := range m.slots {
		names[i] = sl.name
	}
	return strings.Join(names, ", ")
}

// columnFold finds a column by name, case-insensitively (as Doris).
func (s *Schema) columnFold(name string) (int, bool) {
	if i, ok := s.index[name]; ok {
		return i, true
	}
	for i, c := range s.cols {
		if strings.EqualFold(c.GetName(), name) {
			return i, true
		}
	}
	return 0, false
}

// toEv reads a typed cell as an expression value. A TIMESTAMP read in the
// job's zone (jobZone) is its wall clock in loc, as Doris shows it.
func toEv(t api.ColumnType, m colMeta, v Value, loc *time.Location) ev {
	if v.Null {
		return evNull
	}
	if t == api.ColumnType_TIMESTAMP && m.jobZone {
		_, off := time.UnixMicro(v.Int).In(loc).Zone()
		return ev{k: eDatetime, i: v.Int + int64(off)*1e6}
	}
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64:
		return evInt(v.Int)
	case api.ColumnType_INT128, api.ColumnType_DECIMAL:
		return evStr(FormatDecimal(v, m.scale))
	case api.ColumnType_FLOAT32, api.ColumnType_FLOAT64:
		return evFloat(v.Float)
	case api.ColumnType_BOOL:
		return evBool(v.Bool)
	case api.ColumnType_DATE:
		return ev{k: eDate, i: v.Int}
	case api.ColumnType_DATETIME, api.ColumnType_TIMESTAMP:
		return ev{k: eDatetime, i: v.Int}
	}
	return evStr(v.Str)
}

// apply computes the table row out from the parsed slots src, then
// applies the filter. It reports ErrFiltered for a row the filter leaves
// out.
func (p *Parser) apply(src, out []Value) error {
	m := p.m
	s := p.s
	for i, sl := range m.slots {
		m.env.vals[len(s.cols)+i] = toEv(sl.typ, sl.meta, src[i], m.loc)
	}
	for k, r := range m.metas {
		if r.kind == metaKeyHex && p.meta0 != nil && 2*len(p.meta0.Key) > p.maxValue {
			return &ParseError{Reason: (&LimitError{Func: "__key_hex", Size: 2 * int64(len(p.meta0.Key)), Limit: p.maxValue}).Error()}
		}
		m.env.vals[len(s.cols)+len(m.slots)+len(m.derived)+k] = p.metaEv(r)
	}
	envSlots := evalEnv{vals: m.env.vals[len(s.cols):], loc: m.loc, limit: m.env.limit, names: m.env.names}
	// The expressions in the order written: each may read the values
	// before it (see derived).
	for k, d := range m.derived {
		if d.expr == nil {
			continue
		}
		r := d.expr.eval(&envSlots)
		if envSlots.over != nil {
			p.setErrName(d.name, "%s = ...: %s", d.name, envSlots.over)
			return nil
		}
		envSlots.vals[len(m.slots)+k] = r
		if d.col >= 0 {
			p.setComputed(d.col, r)
		}
	}
	for col, oc := range m.out {
		v := &out[col]
		switch {
		case oc.expr != nil && col >= len(s.cols):
			// The hidden sequence (__DORIS_SEQUENCE_COL__ = seq): a
			// field of the record or a computed column's expression.
			r := oc.expr.eval(&envSlots)
			if envSlots.over != nil {
				name := s.colName(col)
				p.setErrName(name, "%s = ...: %s", name, envSlots.over)
				return nil
			}
			p.setComputed(col, r)
		case oc.expr != nil:
			// computed above
		case oc.slot >= 0:
			*v = src[oc.slot]
		default:
			*v = p.defaultOf(&s.meta[col])
		}
	}
	if m.where == nil && m.deleteOn == nil || p.colErr != nil {
		return nil
	}
	for col := range s.cols {
		m.env.vals[col] = toEv(s.types[col], s.meta[col], out[col], m.loc)
	}
	m.env.over, m.env.made = nil, 0
	if m.where != nil {
		r := m.where.eval(&m.env)
		if m.env.over != nil {
			return &ParseError{Reason: "where: " + m.env.over.Error()}
		}
		if r.k == eNull || !r.truth() {
			return ErrFiltered
		}
	}
	if m.deleteOn != nil {
		r := m.deleteOn.eval(&m.env)
		if m.env.over != nil {
			return &ParseError{Reason: "delete_on: " + m.env.over.Error()}
		}
		p.deleted = r.k != eNull && r.truth()
	}
	return nil
}

// setComputed converts an expression's result into table column col, with
// strict_mode's rules for a value that does not convert.
func (p *Parser) setComputed(col int, r ev) {
	v := &p.out[col]
	*v = Value{}
	t, meta := p.s.types[col], p.s.meta[col]
	if r.k == eNull {
		v.Null = true
		return
	}
	text := r.text()
	switch {
	case r.k == eFloat && isInt(t):
		if r.f != math.Trunc(r.f) || math.Abs(r.f) >= 9.2e18 {
			if math.IsNaN(r.f) || math.Abs(r.f) >= 9.2e18 {
				break
			}
			text = fmt.Sprintf("%d", int64(r.f)) // a cast to an integer truncates
		} else {
			text = fmt.Sprintf("%d", int64(r.f))
		}
	case r.k == eDatetime && t == api.ColumnType_DATE:
		text = string(appendDate(nil, floorDiv(r.i, 86400*1e6)))
	case r.k == eBool && t == api.ColumnType_BOOL:
		v.Bool = r.i != 0
		return
	}
	b := []byte(text)
	e := numOK
	if t == api.ColumnType_TIMESTAMP && meta.jobZone {
		v.Int, e = zonedTimestamp(b, p.loc)
	} else {
		e = convertInto(v, t, &meta, b, p.loc)
	}
	if e != numOK {
		reason := p.s.colName(col) + " = ...: " + convReason(t, meta, b, e)
		switch {
		case p.strict:
			p.setErrName(p.s.colName(col), "%s", reason)
		case e == numLength:
			v.Str = string(truncText(b, meta.length)) // not strict: cut, as Doris
		default:
			*v = Value{Null: true}
			if meta.notNull {
				p.setErrName(p.s.colName(col), "%s (strict_mode is false, but the column is NOT NULL)", reason)
			}
		}
		return
	}
	if isText(t) && t != api.ColumnType_JSON {
		v.Str = text
	}
}
