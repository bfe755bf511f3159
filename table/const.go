package table

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ConstKind is the kind of a constant expression's value.
type ConstKind uint8

// The kinds of Const.
const (
	ConstNull     ConstKind = iota
	ConstInt                // Int
	ConstFloat              // Float
	ConstText               // Text
	ConstBool               // Int: 0 or 1
	ConstDate               // Int: days since 1970-01-01
	ConstDatetime           // Int: wall-clock microseconds since 1970-01-01 00:00:00
	ConstTime               // Int: signed microseconds (a TIME); Scale: its fractional digits
)

// Const is the value of a constant expression (EvalConst).
type Const struct {
	Kind  ConstKind
	Int   int64
	Float float64
	Text  string
	Scale int // ConstTime: the fractional digits Doris renders (0 to 6)
}

// UnknownFunctionError is the refusal of an expression that calls a
// function the engine does not have: it names the function.
type UnknownFunctionError struct {
	Name string // upper case, as the parser reads it
}

func (e *UnknownFunctionError) Error() string {
	return fmt.Sprintf("unknown function %s (the functions loadnode has are listed in docs/doris.md and doris/doc.go)", e.Name)
}

// FormError is the refusal of a call of a known function in a form the
// engine does not take: another number of arguments, an INTERVAL unit it
// lacks. Msg names the function or the unit.
type FormError struct {
	Func string // upper case
	Msg  string
}

func (e *FormError) Error() string { return e.Msg }

// KnownFunction reports whether expressions may call the function named
// name (any case).
func KnownFunction(name string) bool {
	name = strings.ToUpper(name)
	_, ok := functions[name]
	return ok
}

// EvalConst evaluates src, an expression over constants only, as a load's
// COLUMNS or WHERE expression computes it with the job's timezone loc
// (UTC when nil). An expression that calls a function the engine lacks is
// refused with an *UnknownFunctionError; one that names a column, or that
// does not parse, with an error saying where. A value larger than
// DefaultMaxValueBytes is refused with a *LimitError.
//
// Options name other settings of the session the expression is evaluated
// in, as a SELECT has them (WithLCTimeNames).
func EvalConst(src string, loc *time.Location, opts ...EvalOption) (Const, error) {
	if loc == nil {
		loc = time.UTC
	}
	var set evalSettings
	for _, o := range opts {
		o(&set)
	}
	n, err := parseExpr(src, func(name string) (int, error) {
		return 0, fmt.Errorf("%q: a constant expression names no column", name)
	})
	if err != nil {
		return Const{}, err
	}
	names, err := lookupTimeNames(set.lcTimeNames)
	if err != nil {
		return Const{}, err
	}
	env := &evalEnv{loc: loc, names: names}
	v := n.eval(env)
	if env.over != nil {
		return Const{}, env.over
	}
	switch v.k {
	case eInt:
		return Const{Kind: ConstInt, Int: v.i}, nil
	case eFloat:
		return Const{Kind: ConstFloat, Float: v.f}, nil
	case eStr:
		return Const{Kind: ConstText, Text: v.s}, nil
	case eArray: // as Doris casts it to a string
		return Const{Kind: ConstText, Text: v.text()}, nil
	case eBool:
		return Const{Kind: ConstBool, Int: v.i}, nil
	case eDate:
		return Const{Kind: ConstDate, Int: v.i}, nil
	case eDatetime:
		return Const{Kind: ConstDatetime, Int: v.i}, nil
	case eTime:
		return Const{Kind: ConstTime, Int: v.i, Scale: int(v.scale)}, nil
	}
	return Const{}, nil
}

// IsRefusedForm reports whether err refuses a known function's form
// (FormError), and which function.
func IsRefusedForm(err error) (string, bool) {
	var f *FormError
	if errors.As(err, &f) {
		return f.Func, true
	}
	return "", false
}

// IsUnknownFunction reports whether err refuses a function the engine
// lacks, and which.
func IsUnknownFunction(err error) (string, bool) {
	var u *UnknownFunctionError
	if errors.As(err, &u) {
		return u.Name, true
	}
	return "", false
}
