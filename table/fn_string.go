package table

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// stringFunctions returns the text functions as Doris computes them
// (be/src/vec/functions/function_string*.cpp): LOCATE, INSTR, REPEAT,
// SPACE, ASCII, STARTS_WITH, ENDS_WITH, TRIM/LTRIM/RTRIM with the text to
// remove, REPLACE, SPLIT_PART, REVERSE and CONCAT_WS of arrays.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
//
// Positions and lengths count characters (a byte that is not UTF-8 is
// one), as Doris's UTF-8 paths; STARTS_WITH, ENDS_WITH, TRIM and REPLACE
// compare bytes, ASCII reads the first byte.
func stringFunctions() map[string]fnSpec {
	trim := func(left, right bool) fnSpec {
		return fnSpec{min: 1, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			cut := " "
			if len(a) == 2 {
				cut = a[1].text()
			}
			return evStr(trimText(a[0].text(), cut, left, right))
		}}
	}
	return map[string]fnSpec{
		"LOCATE": {min: 2, max: 3, fn: func(_ *evalEnv, a []ev) ev {
			s := a[1].text()
			pos := 1
			if len(a) == 3 {
				p, ok := intArg(a[2], 0, utf8.RuneCountInString(s)+2) // past the end: 0
				if !ok {
					return evNull
				}
				pos = p
			}
			return evInt(locate(a[0].text(), s, pos))
		}},
		"INSTR": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			return evInt(locate(a[1].text(), a[0].text(), 1))
		}},
		"REPEAT": {min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev {
			return repeatText(e, a[0].text(), a[1])
		}},
		"SPACE": {min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			return repeatText(e, " ", a[0])
		}},
		"ASCII": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			if s := a[0].text(); s != "" {
				return evInt(int64(s[0]))
			}
			return evInt(0)
		}},
		"STARTS_WITH": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			return evBool(strings.HasPrefix(a[0].text(), a[1].text()))
		}},
		"ENDS_WITH": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			return evBool(strings.HasSuffix(a[0].text(), a[1].text()))
		}},
		"TRIM":  trim(true, true),
		"LTRIM": trim(true, false),
		"RTRIM": trim(false, true),
		"REPLACE": {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev {
			s, from, to := a[0].text(), a[1].text(), a[2].text()
			if from == "" { // Doris replaces nothing
				return evStr(s)
			}
			if len(to) > len(from) {
				n := int64(strings.Count(s, from))
				if !e.fits(int64(len(s))+n*int64(len(to)-len(from)), false) {
					return evNull
				}
			}
			return evStr(strings.ReplaceAll(s, from, to))
		}},
		"SPLIT_PART": {min: 3, max: 3, fn: func(_ *evalEnv, a []ev) ev {
			s := a[0].text()
			// A string has at most len(s)+1 parts: a part number beyond
			// that is NULL, clamped or not.
			k, ok := intArg(a[2], -len(s)-2, len(s)+2)
			if !ok {
				return evNull
			}
			return splitPart(s, a[1].text(), k)
		}},
		"REVERSE": {min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			if a[0].k == eArray {
				in := *a[0].arr
				out := make([]ev, len(in))
				for i, v := range in {
					out[len(in)-1-i] = v
				}
				return ev{k: eArray, arr: &out}
			}
			s := a[0].text()
			if !e.fits(runeTextLen(s), false) {
				return evNull
			}
			r := []rune(s)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return evStr(string(r))
		}},
		"CONCAT_WS": {min: 2, max: -1, nullSafe: true, check: checkConcatWs, fn: concatWs},
	}
}

// locate is Doris's LOCATE(sub, s, pos): the character position of the
// first sub in s at or after character pos (1 is the first), 0 when there
// is none or pos is outside s; an empty sub is found at pos.
func locate(sub, s string, pos int) int64 {
	if s == "" && sub == "" && pos == 1 {
		return 1 // as MySQL: LOCATE('', '') is 1, LOCATE('', '', 2) is 0
	}
	if pos <= 0 || pos > utf8.RuneCountInString(s) {
		return 0
	}
	if sub == "" {
		return int64(pos)
	}
	off := runeOffset(s, pos-1)
	k := strings.Index(s[off:], sub)
	if k < 0 {
		return 0
	}
	return int64(pos + utf8.RuneCountInString(s[off:off+k]))
}

// repeatText is REPEAT(s, count) (SPACE is REPEAT(' ', n)): empty for a
// count of 0 or less; its size is checked against the limit before it is
// made.
func repeatText(e *evalEnv, s string, count ev) ev {
	const most = 1 << 62
	c, ok := intArg(count, 0, most)
	if !ok {
		return evNull
	}
	if c == 0 || s == "" {
		return evStr("")
	}
	if c == most || int64(c) > most/int64(len(s)) { // clamped, or would overflow
		e.fits(most, true)
		return evNull
	}
	if !e.fits(int64(c)*int64(len(s)), false) {
		return evNull
	}
	return evStr(strings.Repeat(s, c))
}

// trimText removes cut from the start (left) and the end (right) of s as
// many times as it is there, as Doris's TRIM(s, cut); an empty cut
// removes nothing. Without cut, Doris removes spaces: cut is " ".
func trimText(s, cut string, left, right bool) string {
	if cut == "" {
		return s
	}
	for left && strings.HasPrefix(s, cut) {
		s = s[len(cut):]
	}
	for right && strings.HasSuffix(s, cut) {
		s = s[:len(s)-len(cut)]
	}
	return s
}

// splitPart is Doris's SPLIT_PART(s, sep, k): part k of s split at sep,
// counted from the start, or from the end when k is negative (found from
// the end: 'a##b###c' split at '##' is 'a', 'b#', 'c' from the end);
// NULL when k is 0, when s has no sep at all, or no part k; empty when
// sep is.
func splitPart(s, sep string, k int) ev {
	switch {
	case k == 0:
		return evNull
	case sep == "":
		return evStr("")
	case k > 0:
		rest := s
		for i := 1; i < k; i++ {
			j := strings.Index(rest, sep)
			if j < 0 {
				return evNull
			}
			rest = rest[j+len(sep):]
		}
		if j := strings.Index(rest, sep); j >= 0 {
			return evStr(rest[:j])
		}
		if k == 1 { // no sep at all
			return evNull
		}
		return evStr(rest)
	}
	end := len(s) // the parts after end are counted
	for i := 1; ; i++ {
		j := strings.LastIndex(s[:end], sep)
		if j < 0 {
			if i > 1 && i == -k {
				return evStr(s[:end])
			}
			return evNull
		}
		if i == -k {
			return evStr(s[j+len(sep) : end])
		}
		end = j
	}
}

// concatWs is CONCAT_WS(sep, x, ...): the x that are not NULL joined with
// sep; NULL when sep is. The x may instead all be arrays (checkConcatWs):
// then their elements that are not NULL are joined, and a NULL among the
// arrays makes empty text, as Doris.
func concatWs(e *evalEnv, a []ev) ev {
	if a[0].k == eNull {
		return evNull
	}
	sep := a[0].text()
	var parts []string
	arrays := false
	for _, v := range a[1:] {
		arrays = arrays || v.k == eArray
	}
	for _, v := range a[1:] {
		switch {
		case v.k == eArray:
			for _, x := range *v.arr {
				if x.k != eNull {
					parts = append(parts, x.text())
				}
			}
		case v.k == eNull && arrays:
			return evStr("")
		case v.k != eNull:
			parts = append(parts, v.text())
		}
	}
	var size int64
	for i, p := range parts {
		if i > 0 {
			size += int64(len(sep))
		}
		size += int64(len(p))
	}
	if !e.fits(size, false) {
		return evNull
	}
	return evStr(strings.Join(parts, sep))
}

// checkConcatWs refuses a separator that is an array, and arrays mixed
// with values that are not (a NULL aside): Doris's CONCAT_WS takes
// (text, text...) or (text, array...).
func checkConcatWs(name string, args []node) error {
	if isArray(args[0]) {
		return &FormError{Func: name, Msg: name + ": the separator is an array"}
	}
	arrays, others := 0, 0
	for _, x := range args[1:] {
		switch {
		case isArray(x):
			arrays++
		case !isNullLit(x):
			others++
		}
	}
	if arrays > 0 && others > 0 {
		return &FormError{Func: name, Msg: name + " takes text or arrays after the separator, not both"}
	}
	return nil
}

// ---------------------------------------------------------------- arrays

// An array literal (['a', NULL, 'b']) is read only where a string
// function takes an array: after CONCAT_WS's separator, and as REVERSE's
// argument; as the whole expression, it is its text (arrayText), as
// Doris casts an array to a string.
type arrayNode struct{ elems []node }

func (n *arrayNode) eval(e *evalEnv) ev {
	elems := make([]ev, len(n.elems))
	for i, x := range n.elems {
		elems[i] = x.eval(e)
	}
	if e.over != nil {
		return evNull
	}
	// Its text is bounded as any value is, so that an array of columns
	// cannot become a value over the limit.
	e.fn = "ARRAY"
	if !e.fits(arrayTextLen(elems), false) {
		return evNull
	}
	return ev{k: eArray, arr: &elems}
}

// arrayLit reads an array literal after its "[".
func (p *exprParser) arrayLit() (node, error) {
	n := &arrayNode{}
	if p.op("]") {
		p.i++
		return n, nil
	}
	for {
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, x)
		if p.op(",") {
			p.i++
			continue
		}
		return n, p.expectOp("]")
	}
}

// isArray reports whether n makes an array: an array literal, or REVERSE
// of one.
func isArray(n node) bool {
	for {
		switch x := n.(type) {
		case *arrayNode:
			return true
		case *callNode:
			if x.name != "REVERSE" || len(x.args) != 1 {
				return false
			}
			n = x.args[0]
		default:
			return false
		}
	}
}

func isNullLit(n node) bool {
	l, ok := n.(*litNode)
	return ok && l.v.k == eNull
}

// checkArrays refuses an array anywhere but after CONCAT_WS's separator,
// as REVERSE's argument, or as the whole expression: loadnode has no
// array columns, and no other function takes one. It walks the tree
// without recursion.
func checkArrays(root node) error {
	stack := []node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		takes := false
		if c, ok := n.(*callNode); ok && (c.name == "CONCAT_WS" || c.name == "REVERSE") {
			takes = true // CONCAT_WS's separator: checkConcatWs
		}
		for _, k := range children(n) {
			if k == nil {
				continue
			}
			if !takes && isArray(k) {
				if c, ok := n.(*callNode); ok {
					return &FormError{Func: c.name, Msg: c.name + " takes no array (an array is read only by CONCAT_WS and REVERSE)"}
				}
				return fmt.Errorf("an array is read only by CONCAT_WS and REVERSE")
			}
			stack = append(stack, k)
		}
	}
	return nil
}

// arrayText renders an array as Doris casts one to a string: [1, 2],
// ["a", null]; text is quoted when an element is text or a date.
func arrayText(elems []ev) string {
	quote := arrayQuoted(elems)
	var b strings.Builder
	b.Grow(int(arrayTextLen(elems)))
	b.WriteByte('[')
	for i, x := range elems {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case x.k == eNull:
			b.WriteString("null")
		case quote:
			b.WriteByte('"')
			b.WriteString(x.text())
			b.WriteByte('"')
		default:
			b.WriteString(x.text())
		}
	}
	b.WriteByte(']')
	return b.String()
}

// arrayTextLen is len(arrayText(elems)), computed without making it (an
// element's text is at most a few dozen bytes, or its string).
func arrayTextLen(elems []ev) int64 {
	quote := arrayQuoted(elems)
	n := int64(2)
	for i, x := range elems {
		if i > 0 {
			n += 2
		}
		switch {
		case x.k == eNull:
			n += 4
		case x.k == eStr:
			n += int64(len(x.s)) + 2
		case quote:
			n += int64(len(x.text())) + 2
		default:
			n += int64(len(x.text()))
		}
	}
	return n
}

func arrayQuoted(elems []ev) bool {
	for _, x := range elems {
		if x.k == eStr || x.k == eDate || x.k == eDatetime {
			return true
		}
	}
	return false
}

// substringArgs reads SUBSTRING's arguments up to and including ")":
// (s, pos[, len]) or, as Doris also reads them, (s FROM pos [FOR len]).
func (p *exprParser) substringArgs() ([]node, error) {
	s, err := p.or()
	if err != nil {
		return nil, err
	}
	if !p.acceptKw("FROM") {
		if p.acceptOp(",") {
			rest, err := p.args()
			return append([]node{s}, rest...), err
		}
		return []node{s}, p.expectOp(")")
	}
	args := []node{s, nil}
	if args[1], err = p.or(); err != nil {
		return nil, err
	}
	if p.acceptKw("FOR") {
		l, err := p.or()
		if err != nil {
			return nil, err
		}
		args = append(args, l)
	}
	return args, p.expectOp(")")
}
