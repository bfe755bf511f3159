package table

import (
	"fmt"
	"time"

	"github.com/loadnode/loadnode/api"
)

// RowExpr is an expression of the engine (the operators and functions a
// load's COLUMNS and WHERE take) compiled against a row of stored values,
// as a SELECT evaluates its items and its WHERE over a table scan (package
// query). Names resolve to positions in the row.
//
// A RowExpr reuses its scratch space: it belongs to one goroutine.
type RowExpr struct {
	n     node
	slots []int // the row positions the expression reads
	env   evalEnv
}

// CompileRowExpr parses src, resolving each name it reads to a position
// in the rows it will be evaluated on (resolve returns an error for a name
// that is no column). Time zone conversions use loc (UTC when nil). An
// expression that calls a function the engine lacks is refused with an
// *UnknownFunctionError, a known function in a form it does not take with
// a *FormError.
func CompileRowExpr(src string, resolve func(name string) (int, error), loc *time.Location) (*RowExpr, error) {
	if loc == nil {
		loc = time.UTC
	}
	e := &RowExpr{}
	seen := map[int]bool{}
	n, err := parseExpr(src, func(name string) (int, error) {
		i, err := resolve(name)
		if err != nil {
			return 0, err
		}
		if i < 0 {
			return 0, fmt.Errorf("%q resolves to no position", name)
		}
		if !seen[i] {
			seen[i] = true
			e.slots = append(e.slots, i)
		}
		return i, nil
	})
	if err != nil {
		return nil, err
	}
	width := 0
	for _, i := range e.slots {
		width = max(width, i+1)
	}
	e.n = n
	e.env = evalEnv{vals: make([]ev, width), loc: loc}
	return e, nil
}

// Reads is the row positions the expression reads, in the order it names
// them first: none for a constant expression.
func (e *RowExpr) Reads() []int { return e.slots }

// Eval evaluates the expression over row (api values in column order;
// DECIMAL and LARGEINT read as the number their text spells, JSON as
// text, TIMESTAMP as a datetime in UTC). A value larger than
// DefaultMaxValueBytes is refused with a *LimitError, a function failing
// on a value as Doris fails it with its error.
//
// REQUIRES: len(row) covers every position Reads names.
func (e *RowExpr) Eval(row []*api.Value) (Const, error) {
	for _, i := range e.slots {
		e.env.vals[i] = evOfValue(row[i])
	}
	e.env.made, e.env.over, e.env.fn = 0, nil, ""
	v := e.n.eval(&e.env)
	if e.env.over != nil {
		return Const{}, e.env.over
	}
	return constOf(v), nil
}

// evOfValue reads a wire value as an expression value.
func evOfValue(v *api.Value) ev {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return evInt(k.Int64)
	case *api.Value_Float64:
		return evFloat(k.Float64)
	case *api.Value_String_:
		return evStr(k.String_)
	case *api.Value_Json:
		return evStr(k.Json)
	case *api.Value_Decimal:
		return evStr(k.Decimal)
	case *api.Value_Bool:
		return evBool(k.Bool)
	case *api.Value_Date:
		return ev{k: eDate, i: int64(k.Date)}
	case *api.Value_DatetimeMicros:
		return ev{k: eDatetime, i: k.DatetimeMicros}
	case *api.Value_TimestampMicros:
		return ev{k: eDatetime, i: k.TimestampMicros}
	}
	return evNull
}

// constOf is an evaluated value as a Const.
func constOf(v ev) Const {
	switch v.k {
	case eInt:
		return Const{Kind: ConstInt, Int: v.i}
	case eFloat:
		return Const{Kind: ConstFloat, Float: v.f}
	case eStr:
		return Const{Kind: ConstText, Text: v.s}
	case eArray: // as Doris casts it to a string
		return Const{Kind: ConstText, Text: v.text()}
	case eBool:
		return Const{Kind: ConstBool, Int: v.i}
	case eDate:
		return Const{Kind: ConstDate, Int: v.i}
	case eDatetime:
		return Const{Kind: ConstDatetime, Int: v.i}
	case eTime:
		return Const{Kind: ConstTime, Int: v.i, Scale: int(v.scale)}
	}
	return Const{}
}

// Truth reads c as a condition, as a load's WHERE does: NULL and text
// that spells no number are false.
func (c Const) Truth() bool {
	switch c.Kind {
	case ConstNull:
		return false
	case ConstInt, ConstBool:
		return c.Int != 0
	case ConstFloat:
		return c.Float != 0
	case ConstText:
		return evStr(c.Text).truth()
	case ConstTime:
		return c.Int != 0
	}
	return true
}

// TimeText is a ConstTime as Doris renders a TIME: [-]HH:MM:SS, then
// Scale digits of fraction.
func (c Const) TimeText() string { return string(appendTime(nil, c.Int, c.Scale)) }
