package table

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// fnSpec is a function's arity (max -1: any) and body; args are evaluated
// first. A NULL argument makes NULL unless nullSafe.
//
// Bounds: no text value is larger than the limit (evalEnv.fits). A
// function whose result can be much larger than its arguments (CONCAT,
// CONCAT_WS, REPLACE, LPAD, RPAD, UPPER, LOWER, REVERSE, JSON_EXTRACT with
// several paths or wildcards, JSON_ARRAY, TO_BASE64, AES_ENCRYPT)
// computes the size first and allocates only if it fits; DATE_FORMAT and
// FROM_UNIXTIME make at most 111 bytes, as Doris (datefmt.go);
// the others make at most a few times their arguments' bytes (bytes
// that are not UTF-8 made U+FFFD), and callNode checks their result. Counts and positions from arguments are clamped
// before they become ints (intArg), and no loop runs longer than its
// arguments' bytes.
type fnSpec struct {
	min, max int
	nullSafe bool
	fn       func(e *evalEnv, args []ev) ev
	// check, when set, refuses arguments when the expression is parsed
	// (a constant format Doris fails on every record).
	check func(name string, args []node) error
}

func (f fnSpec) arity() string {
	switch {
	case f.max < 0:
		return strconv.Itoa(f.min) + " or more"
	case f.min == f.max:
		return strconv.Itoa(f.min)
	}
	return strconv.Itoa(f.min) + " to " + strconv.Itoa(f.max)
}

// functions are the functions expressions may call, by upper-case name.
// It is built once and never changed.
var functions = buildFunctions()

func buildFunctions() map[string]fnSpec {
	var functions map[string]fnSpec
	// mapped is UPPER or LOWER: strings.Map can make a character longer
	// (and makes each byte that is not UTF-8 the 3 bytes of U+FFFD).
	mapped := func(f func(string) string, r func(rune) rune) fnSpec {
		return fnSpec{min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			s := a[0].text()
			if 3*int64(len(s)) > int64(e.max()) && !e.fits(mappedLen(s, r), false) {
				return evNull
			}
			return evStr(f(s))
		}}
	}
	functions = map[string]fnSpec{
		"CONCAT": {min: 1, max: -1, fn: func(e *evalEnv, a []ev) ev {
			parts := make([]string, len(a))
			var size int64
			for i, v := range a {
				parts[i] = v.text()
				size += int64(len(parts[i]))
			}
			if !e.fits(size, false) {
				return evNull
			}
			return evStr(strings.Join(parts, ""))
		}},
		"SUBSTR": {min: 2, max: 3, fn: substr},
		"LEFT": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			s := a[0].text()
			k, ok := intArg(a[1], 0, utf8.RuneCountInString(s))
			if !ok {
				return evNull
			}
			return evStr(runeText(s[:runeOffset(s, k)]))
		}},
		"RIGHT": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			s := a[0].text()
			n := utf8.RuneCountInString(s)
			k, ok := intArg(a[1], 0, n)
			if !ok {
				return evNull
			}
			return evStr(runeText(s[runeOffset(s, n-k):]))
		}},
		"UPPER":       mapped(strings.ToUpper, unicode.ToUpper),
		"LOWER":       mapped(strings.ToLower, unicode.ToLower),
		"LENGTH":      {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return evInt(int64(len(a[0].text()))) }},
		"CHAR_LENGTH": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return evInt(int64(utf8.RuneCountInString(a[0].text()))) }},
		"LPAD":        {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return pad(e, a, true) }},
		"RPAD":        {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return pad(e, a, false) }},
		"FROM_UNIXTIME": {min: 1, max: 2, check: checkFormat, fn: func(e *evalEnv, a []ev) ev {
			n, ok := a[0].num()
			if !ok || n.float() < 0 || n.float() > 32536771199 {
				return evNull
			}
			secs := int64(n.float())
			t := time.Unix(secs, 0).In(e.loc)
			wall := (daysFromCivil(int64(t.Year()), int64(t.Month()), int64(t.Day()))*86400 + int64(t.Hour()*3600+t.Minute()*60+t.Second())) * 1e6
			if len(a) == 2 {
				return formatDatetime(e, wall, a[1].text())
			}
			return evStr(string(appendDatetime(nil, wall, 0)))
		}},
		"DATE_FORMAT": {min: 2, max: 2, check: checkFormat, fn: func(e *evalEnv, a []ev) ev {
			t, ok := a[0].asTime()
			if !ok {
				return evNull
			}
			return formatDatetime(e, t, a[1].text())
		}},
		"STR_TO_DATE": {min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return strToDate(e, a[0].text(), a[1].text()) }},
		"TO_DATE":     {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return castTo(a[0], "date") }},
		"YEAR":        {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 0) }},
		"MONTH":       {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 1) }},
		"DAY":         {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 2) }},
	}
	for alias, name := range map[string]string{
		"SUBSTRING": "SUBSTR", "UCASE": "UPPER", "LCASE": "LOWER", "CHARACTER_LENGTH": "CHAR_LENGTH",
		"DATE": "TO_DATE", "DAYOFMONTH": "DAY",
	} {
		functions[alias] = functions[name]
	}
	// Each family adds its functions from a file of its own; a name is
	// declared once in the whole registry.
	for _, family := range []map[string]fnSpec{
		dateArithFunctions(), datePartFunctions(), stringFunctions(), mathJSONFunctions(),
	} {
		for name, f := range family {
			if _, dup := functions[name]; dup {
				panic("table: function " + name + " declared twice")
			}
			functions[name] = f
		}
	}
	return functions
}

func (n *callNode) eval(e *evalEnv) ev {
	if e.over != nil {
		return evNull // the row is an error row already
	}
	args := make([]ev, len(n.args))
	fn := functions[n.name]
	for i, a := range n.args {
		args[i] = a.eval(e)
		if args[i].k == eNull && !fn.nullSafe {
			return evNull
		}
	}
	if e.over != nil {
		return evNull
	}
	e.fn = n.name
	r := fn.fn(e, args)
	if r.k == eStr && !aliases(r.s, args) {
		if !e.fits(int64(len(r.s)), false) {
			return evNull
		}
		e.made += int64(len(r.s))
	}
	return r
}

// intArg reads a count or position: v as a whole number (a fraction
// truncated), clamped to [lo, hi]; false when v is no number (or NaN).
func intArg(v ev, lo, hi int) (int, bool) {
	x, ok := v.num()
	if !ok {
		return 0, false
	}
	if x.k == eInt {
		return int(max(int64(lo), min(x.i, int64(hi)))), true
	}
	if math.IsNaN(x.f) {
		return 0, false
	}
	return int(max(float64(lo), min(math.Trunc(x.f), float64(hi)))), true
}

// runeOffset is the byte offset of character k of s (len(s) when s has
// fewer). A byte that is not UTF-8 is a character, as in []rune(s).
func runeOffset(s string, k int) int {
	i := 0
	for ; k > 0 && i < len(s); k-- {
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return i
}

// runeText is string([]rune(s)): s, with each byte that is not UTF-8
// made U+FFFD; it allocates only for such bytes.
func runeText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// runeTextLen is len(runeText(s)), computed without making it.
func runeTextLen(s string) int64 {
	return mappedLen(s, nil)
}

// mappedLen is len(strings.Map(f, s)) for an f that maps no character to
// a negative one (nil: the identity), computed without making it.
func mappedLen(s string, f func(rune) rune) int64 {
	var n int64
	for _, r := range s { // a byte that is not UTF-8 is U+FFFD
		if f != nil {
			r = f(r)
		}
		n += int64(utf8.RuneLen(r))
	}
	return n
}

func substr(_ *evalEnv, a []ev) ev {
	s := a[0].text()
	n := utf8.RuneCountInString(s)
	pos, ok := intArg(a[1], -n-1, n+1)
	if !ok {
		return evNull
	}
	if pos < 0 {
		pos = n + pos + 1
	}
	if pos < 1 || pos > n {
		return evStr("")
	}
	end := n
	if len(a) == 3 {
		l, ok := intArg(a[2], 0, n)
		if !ok {
			return evNull
		}
		if l < 1 {
			return evStr("")
		}
		end = min(n, pos-1+l)
	}
	i := runeOffset(s, pos-1)
	return evStr(runeText(s[i : i+runeOffset(s[i:], end-pos+1)]))
}

// pad is LPAD (left) or RPAD: s cut or filled with fill to a width in
// characters. The width is checked against the limit (a character is at
// least a byte) before anything is made, then the exact size.
func pad(e *evalEnv, a []ev, left bool) ev {
	s, fill := runeText(a[0].text()), runeText(a[2].text())
	n, ok := a[1].num()
	if !ok || n.float() < 0 || math.IsNaN(n.float()) {
		return evNull
	}
	if w := n.float(); w > float64(e.max()) {
		e.fits(int64(min(w, 1<<62)), true)
		return evNull
	}
	want := int(n.float())
	have := utf8.RuneCountInString(s)
	if want <= have {
		return evStr(s[:runeOffset(s, want)])
	}
	per := utf8.RuneCountInString(fill)
	if per == 0 {
		return evStr("")
	}
	k := want - have // characters of fill
	full, rest := k/per, runeOffset(fill, k%per)
	size := int64(len(s)) + int64(full)*int64(len(fill)) + int64(rest)
	if !e.fits(size, false) {
		return evNull
	}
	var b strings.Builder
	b.Grow(int(size))
	if !left {
		b.WriteString(s)
	}
	for range full {
		b.WriteString(fill)
	}
	b.WriteString(fill[:rest])
	if left {
		b.WriteString(s)
	}
	return evStr(b.String())
}

func datePart(v ev, part int) ev {
	t, ok := v.asTime()
	if !ok {
		return evNull
	}
	y, m, d := civilFromDays(floorDiv(t, 86400*1e6))
	return evInt([]int64{y, m, d}[part])
}
