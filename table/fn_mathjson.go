package table

import (
	"bytes"
	"crypto/aes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// mathJSONFunctions returns the numeric, conditional, JSON and encoding
// functions: GREATEST, LEAST, ROUND, TRUNCATE, CEIL, FLOOR, MOD, POW, the
// conditionals (IF, IFNULL, COALESCE, NULLIF), the JSON path functions,
// TO_BASE64/FROM_BASE64 and AES_ENCRYPT/AES_DECRYPT.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
//
// Bounds: ROUND and its kin work on the shortest decimal text of their
// argument, scales clamped to ±maxScale; the JSON functions make at most
// the bytes of the values they find (sized first: jsonExtract), walking
// the document once per path step; TO_BASE64 and AES_ENCRYPT size their
// result (4/3 of the argument, one AES block more) before making it.
func mathJSONFunctions() map[string]fnSpec {
	fs := map[string]fnSpec{
		"IFNULL": {min: 2, max: 2, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			if a[0].k == eNull {
				return commonKind(a[1], a)
			}
			return commonKind(a[0], a)
		}},
		"COALESCE": {min: 1, max: -1, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			for _, v := range a {
				if v.k != eNull {
					return commonKind(v, a)
				}
			}
			return evNull
		}},
		"NULLIF": {min: 2, max: 2, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			if a[0].k != eNull && a[1].k != eNull && compare(a[0], a[1]) == 0 {
				return evNull
			}
			return a[0]
		}},
		"IF": {min: 3, max: 3, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			if a[0].k != eNull && a[0].truth() {
				return commonKind(a[1], a[1:])
			}
			return commonKind(a[2], a[1:])
		}},
		"GREATEST": {min: 1, max: -1, fn: func(_ *evalEnv, a []ev) ev { return extreme(a, 1) }},
		"LEAST":    {min: 1, max: -1, fn: func(_ *evalEnv, a []ev) ev { return extreme(a, -1) }},
		"ABS": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			x, ok := a[0].num()
			switch {
			case !ok:
				return evNull
			case x.k == eInt && x.i != math.MinInt64:
				return evInt(max(x.i, -x.i))
			}
			return evFloat(math.Abs(x.float()))
		}},
		"ROUND":    scaled(roundHalfUp),
		"TRUNCATE": scaled(roundDown),
		"CEIL":     scaled(roundCeil),
		"FLOOR":    scaled(roundFloor),
		"MOD":      {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev { return arith("%", a[0], a[1]) }},
		"SQRT":     realFn(math.Sqrt, func(x float64) bool { return x >= 0 }),
		"EXP":      realFn(math.Exp, nil),
		"LN":       realFn(math.Log, func(x float64) bool { return x > 0 }),
		"LOG10":    realFn(math.Log10, func(x float64) bool { return x > 0 }),
		"LOG2":     realFn(math.Log2, func(x float64) bool { return x > 0 }),
		"POW": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			x, ok1 := a[0].num()
			y, ok2 := a[1].num()
			if !ok1 || !ok2 {
				return evNull
			}
			return finite(math.Pow(x.float(), y.float()))
		}},
		"SIGN": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			x, ok := a[0].num()
			if !ok || math.IsNaN(x.float()) {
				return evNull
			}
			f := x.float()
			switch {
			case f > 0:
				return evInt(1)
			case f < 0:
				return evInt(-1)
			}
			return evInt(0)
		}},

		"JSON_EXTRACT":        {min: 2, max: -1, fn: jsonExtract},
		"GET_JSON_STRING":     jsonGet(jsonString),
		"GET_JSON_INT":        jsonGet(jsonInt),
		"GET_JSON_DOUBLE":     jsonGet(jsonDouble),
		"JSON_EXTRACT_BOOL":   jsonGet(jsonBool),
		"JSON_EXTRACT_ISNULL": jsonGet(jsonIsNull),
		"JSON_EXISTS_PATH": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			w, root, ok := jsonDoc(a[0].text())
			steps, _, pok := parseJSONPath(a[1].text())
			if !ok || !pok {
				return evNull
			}
			return evBool(len(w.walk(root, steps)) > 0)
		}},
		"JSON_ARRAY": {min: 0, max: -1, nullSafe: true, fn: jsonArray},
		"JSON_UNQUOTE": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			s := a[0].text()
			var out string
			if strings.HasPrefix(s, `"`) && json.Unmarshal([]byte(s), &out) == nil {
				return evStr(out)
			}
			return evStr(s)
		}},

		"TO_BASE64": {min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			s := a[0].text()
			if !e.fits(int64(base64.StdEncoding.EncodedLen(len(s))), false) {
				return evNull
			}
			return evStr(base64.StdEncoding.EncodeToString([]byte(s)))
		}},
		"FROM_BASE64": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			b, err := base64.StdEncoding.DecodeString(a[0].text())
			if err != nil {
				return evNull
			}
			return evStr(string(b))
		}},
		"AES_ENCRYPT": {min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev {
			s := a[0].text()
			if !e.fits(int64(len(s))/aes.BlockSize*aes.BlockSize+aes.BlockSize, false) {
				return evNull
			}
			return aesECB(s, a[1].text(), true)
		}},
		"AES_DECRYPT": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev { return aesECB(a[0].text(), a[1].text(), false) }},
	}
	for alias, name := range map[string]string{
		"CEILING": "CEIL", "NVL": "IFNULL", "POWER": "POW", "DCEIL": "CEIL", "DFLOOR": "FLOOR", "DSQRT": "SQRT",
		"JSONB_EXTRACT":       "JSON_EXTRACT",
		"JSON_EXTRACT_STRING": "GET_JSON_STRING", "JSONB_EXTRACT_STRING": "GET_JSON_STRING",
		"GET_JSON_BIGINT": "GET_JSON_INT", "JSON_EXTRACT_INT": "GET_JSON_INT", "JSON_EXTRACT_BIGINT": "GET_JSON_INT",
		"JSONB_EXTRACT_INT": "GET_JSON_INT", "JSONB_EXTRACT_BIGINT": "GET_JSON_INT",
		"JSON_EXTRACT_DOUBLE": "GET_JSON_DOUBLE", "JSONB_EXTRACT_DOUBLE": "GET_JSON_DOUBLE",
		"JSONB_EXTRACT_BOOL": "JSON_EXTRACT_BOOL", "JSONB_EXTRACT_ISNULL": "JSON_EXTRACT_ISNULL",
		"JSONB_EXISTS_PATH": "JSON_EXISTS_PATH",
	} {
		fs[alias] = fs[name]
	}
	return fs
}

// commonKind gives v, the value a conditional chose among vals, the kind
// Doris gives the conditional: a boolean among numbers is 1 or 0, among
// text "1" or "0".
func commonKind(v ev, vals []ev) ev {
	if v.k != eBool {
		return v
	}
	for _, o := range vals {
		switch o.k {
		case eStr:
			return evStr(v.text())
		case eInt, eFloat:
			return evInt(v.i)
		}
	}
	return v
}

// extreme is GREATEST (sign 1) or LEAST (-1) of non-NULL values: numbers
// compare as numbers (a float among them makes the result a float), dates
// as times, anything else as text.
func extreme(a []ev, sign int) ev {
	numeric, float := true, false
	for _, v := range a {
		switch v.k {
		case eFloat:
			float = true
		case eInt, eBool:
		default:
			numeric = false
		}
	}
	best := a[0]
	for _, v := range a[1:] {
		var c int
		if numeric {
			c = compare(v, best)
		} else if v.k == eStr && best.k == eStr {
			c = strings.Compare(v.s, best.s)
		} else {
			c = compare(v, best)
		}
		if c*sign > 0 {
			best = v
		}
	}
	if numeric && float {
		return evFloat(best.float())
	}
	if best.k == eBool {
		return evInt(best.i)
	}
	return best
}

// realFn is a function of one real number, NULL outside its domain (ok nil:
// every number) or where it is not finite.
func realFn(f func(float64) float64, ok func(float64) bool) fnSpec {
	return fnSpec{min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
		x, isNum := a[0].num()
		if !isNum || ok != nil && !ok(x.float()) {
			return evNull
		}
		return finite(f(x.float()))
	}}
}

func finite(f float64) ev {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return evNull
	}
	return evFloat(f)
}

// ---------------------------------------------------------------- ROUND and its kin

// roundMode says which way a dropped part goes.
type roundMode uint8

const (
	roundHalfUp roundMode = iota // ROUND: half away from zero
	roundDown                    // TRUNCATE: toward zero
	roundCeil                    // CEIL
	roundFloor                   // FLOOR
)

// maxScale bounds a scale argument: a float64 has no digit beyond
// 10^-324 nor above 10^309.
const maxScale = 400

// decimalPrecision is the precision of the DECIMAL Doris makes a float
// rounded to a positive scale (round_double_returns_decimal_for_const_scale):
// a value whose digits do not fit is NULL, as Doris's overflow rows
// (round(1e16, 2)) show.
const decimalPrecision = 18

// scaled is ROUND, TRUNCATE, CEIL or FLOOR (x[, scale]): x rounded at the
// scale-th digit after the point (before it when negative), on x's
// decimal digits as Doris types a literal (DECIMAL), so that
// round(2.675, 2) is 2.68. An integer stays an integer, a float a float.
func scaled(mode roundMode) fnSpec {
	return fnSpec{min: 1, max: 2, fn: func(_ *evalEnv, a []ev) ev {
		x, ok := a[0].num()
		if !ok {
			return evNull
		}
		d := 0
		if len(a) == 2 {
			if d, ok = intArg(a[1], -maxScale, maxScale); !ok {
				return evNull
			}
		}
		return roundAt(x, d, mode, len(a) == 2)
	}}
}

// roundAt rounds the number x at 10^-d. withScale: the scale was given
// (a float then makes a DECIMAL in Doris, bounded by decimalPrecision).
func roundAt(x ev, d int, mode roundMode, withScale bool) ev {
	if x.k == eFloat && (math.IsNaN(x.f) || math.IsInf(x.f, 0)) {
		return evNull
	}
	// x = m * 10^exp, exactly as its shortest decimal text says.
	var m big.Int
	exp := 0
	if x.k == eInt {
		m.SetInt64(x.i)
	} else {
		mant, e, _ := strings.Cut(strconv.FormatFloat(x.f, 'e', -1, 64), "e")
		exp, _ = strconv.Atoi(e)
		digits := strings.Replace(mant, ".", "", 1)
		if i := strings.IndexByte(mant, '.'); i >= 0 {
			exp -= len(mant) - i - 1
		}
		m.SetString(digits, 10)
	}
	if exp < -d { // drop -d-exp digits
		var q, r, pow big.Int
		pow.Exp(big.NewInt(10), big.NewInt(int64(-d-exp)), nil)
		q.QuoRem(&m, &pow, &r) // truncated toward zero
		if r.Sign() != 0 {
			up := false
			switch mode {
			case roundHalfUp:
				r.Abs(&r).Lsh(&r, 1)
				up = r.Cmp(&pow) >= 0
			case roundCeil:
				up = m.Sign() > 0
			case roundFloor:
				up = m.Sign() < 0
			}
			if up {
				q.Add(&q, big.NewInt(int64(m.Sign())))
			}
		}
		m, exp = q, -d
	}
	// The DECIMAL's digits: those before the point (m's and the zeros to
	// exp), then the scale's. A scale beyond the precision makes no
	// DECIMAL: the float is rounded.
	if x.k == eFloat && withScale && d > 0 && d <= decimalPrecision && m.Sign() != 0 && len(new(big.Int).Abs(&m).String())+exp+d > decimalPrecision {
		return evNull
	}
	if x.k == eInt && exp >= 0 {
		var p big.Int
		p.Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)
		if p.Mul(&p, &m); p.IsInt64() {
			return evInt(p.Int64())
		}
	}
	f, err := strconv.ParseFloat(m.String()+"e"+strconv.Itoa(exp), 64)
	if err != nil && !math.IsInf(f, 0) {
		return evNull
	}
	return finite(f)
}

// ---------------------------------------------------------------- AES

// aesECB is AES_ENCRYPT (enc) or AES_DECRYPT with Doris's default block
// mode, AES_128_ECB, and PKCS#7 padding; the key is folded into 16 bytes
// by XOR, byte i into byte i%16 (as MySQL). A decryption whose padding is
// wrong is NULL.
func aesECB(s, key string, enc bool) ev {
	var k [16]byte
	for i := 0; i < len(key); i++ {
		k[i%16] ^= key[i]
	}
	c, _ := aes.NewCipher(k[:]) // a 16-byte key never fails
	bs := aes.BlockSize
	if enc {
		pad := bs - len(s)%bs
		out := make([]byte, len(s)+pad)
		copy(out, s)
		for i := len(s); i < len(out); i++ {
			out[i] = byte(pad)
		}
		for i := 0; i < len(out); i += bs {
			c.Encrypt(out[i:i+bs], out[i:i+bs])
		}
		return evStr(string(out))
	}
	if len(s) == 0 || len(s)%bs != 0 {
		return evNull
	}
	out := []byte(s)
	for i := 0; i < len(out); i += bs {
		c.Decrypt(out[i:i+bs], out[i:i+bs])
	}
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs {
		return evNull
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return evNull
		}
	}
	return evStr(string(out[:len(out)-pad]))
}

// ---------------------------------------------------------------- JSON

// The kinds of value the JSON getters read.
type jsonKindWant uint8

const (
	jsonString jsonKindWant = iota // a string's content, any other value's JSON text
	jsonInt
	jsonDouble
	jsonBool
	jsonIsNull
)

// jsonGet is a getter of one path: GET_JSON_STRING, GET_JSON_INT, ...
func jsonGet(kind jsonKindWant) fnSpec {
	return fnSpec{min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return jsonPath(e, a[0].text(), a[1].text(), kind) }}
}

// jsonPathStep is one step of a JSON path: a member (key, or any when
// wild) or an element (index, counted from the end when fromEnd: 0 is
// the last; any when wild).
type jsonPathStep struct {
	member  bool
	wild    bool
	key     string
	index   int
	fromEnd bool
}

// parseJSONPath reads a path as Doris does: $, then .key, ."quoted.key",
// .*, [n], [-n] (from the end), [last], [last-n], [*], ['key']; a "."
// before "[" is allowed ($.[1]). wild reports a wildcard. ok is false for
// a path that is none of these.
func parseJSONPath(path string) (steps []jsonPathStep, wild, ok bool) {
	path = strings.TrimSpace(path)
	if !strings.HasPrefix(path, "$") {
		return nil, false, false
	}
	rest := path[1:]
	for rest != "" {
		var s jsonPathStep
		switch rest[0] {
		case '.':
			rest = rest[1:]
			if strings.HasPrefix(rest, "[") {
				continue
			}
			s.member = true
			switch {
			case strings.HasPrefix(rest, "*"):
				s.wild, rest = true, rest[1:]
			case strings.HasPrefix(rest, `"`):
				n := strings.IndexByte(rest[1:], '"')
				if n < 0 {
					return nil, false, false
				}
				s.key, rest = rest[1:1+n], rest[2+n:]
			default:
				n := strings.IndexAny(rest, ".[")
				if n < 0 {
					n = len(rest)
				}
				if n == 0 {
					return nil, false, false
				}
				s.key, rest = rest[:n], rest[n:]
			}
		case '[':
			n := strings.IndexByte(rest, ']')
			if n < 0 {
				return nil, false, false
			}
			in := strings.TrimSpace(rest[1:n])
			rest = rest[n+1:]
			switch {
			case in == "*":
				s.wild = true
			case len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
				s.member, s.key = true, in[1:len(in)-1]
			case strings.HasPrefix(in, "last"):
				s.fromEnd = true
				if t := strings.TrimSpace(in[4:]); t != "" {
					t, minus := strings.CutPrefix(t, "-")
					k, err := strconv.Atoi(strings.TrimSpace(t))
					if !minus || err != nil || k < 0 {
						return nil, false, false
					}
					s.index = k
				}
			default:
				k, err := strconv.Atoi(in)
				if err != nil {
					return nil, false, false
				}
				if k < 0 {
					s.fromEnd, k = true, -k-1
				}
				s.index = k
			}
		default:
			return nil, false, false
		}
		wild = wild || s.wild
		steps = append(steps, s)
	}
	return steps, wild, true
}

// jsonWalker reads a valid JSON document in place.
type jsonWalker struct{ p *Parser }

// span is a value's bounds in the document.
type span struct{ start, end int }

// jsonDoc validates doc as one JSON document; root is its value.
func jsonDoc(doc string) (jsonWalker, span, bool) {
	w := jsonWalker{&Parser{raw: unsafe.Slice(unsafe.StringData(doc), len(doc))}} // read only
	i := skipWS(w.p.raw, 0)
	end, err := w.p.value(i, nil, 0) // validates the document (nesting bounded)
	if err != nil || skipWS(w.p.raw, end) != len(w.p.raw) {
		return w, span{}, false
	}
	return w, span{i, end}, true
}

// walk returns the values at steps from v, in document order. Each step
// scans the values the previous one found, which do not overlap: a step
// costs at most the document's bytes.
func (w jsonWalker) walk(v span, steps []jsonPathStep) []span {
	cur := []span{v}
	for _, s := range steps {
		var next []span
		for _, c := range cur {
			switch {
			case s.member && s.wild:
				next = w.children(c, '{', next)
			case s.member:
				if st, en, ok := w.p.member(c.start, s.key); ok {
					next = append(next, span{st, en})
				}
			case s.wild:
				next = w.children(c, '[', next)
			default:
				if w.p.raw[c.start] != '[' {
					break
				}
				idx := s.index
				if s.fromEnd {
					idx = len(w.children(c, '[', nil)) - 1 - s.index
				}
				if idx < 0 {
					break
				}
				if st, en, ok := w.p.element(c.start, idx); ok {
					next = append(next, span{st, en})
				}
			}
		}
		cur = next
		if len(cur) == 0 {
			break
		}
	}
	return cur
}

// children appends the values of the object (open '{') or array ('[') at
// v to dst; nothing when v is another kind of value.
func (w jsonWalker) children(v span, open byte, dst []span) []span {
	raw := w.p.raw
	if raw[v.start] != open {
		return dst
	}
	i := skipWS(raw, v.start+1)
	if raw[i] == '}' || raw[i] == ']' {
		return dst
	}
	for {
		if open == '{' {
			kend, _, _ := w.p.scanString(i)
			i = skipWS(raw, skipWS(raw, kend)+1) // after the ':'
		}
		end, _ := w.p.value(i, nil, 0)
		dst = append(dst, span{i, end})
		if i = skipWS(raw, end); raw[i] == '}' || raw[i] == ']' {
			return dst
		}
		i = skipWS(raw, i+1) // after the ','
	}
}

// compactJSON appends the JSON text of a valid value compact, keys and
// numbers as written (as a JSON column keeps it).
func compactJSON(dst *bytes.Buffer, v []byte) {
	json.Compact(dst, v) // valid: cannot fail
}

// jsonArray is JSON_ARRAY(v, ...): the JSON array of its arguments
// (NULL is null, text a string, a boolean true or false), sized before it
// is made.
func jsonArray(e *evalEnv, a []ev) ev {
	items := make([]string, len(a))
	quoted := make([]bool, len(a))
	size := int64(len(a) + 1)
	for i, v := range a {
		switch v.k {
		case eNull:
			items[i] = "null"
		case eBool:
			items[i] = strconv.FormatBool(v.i != 0)
		case eInt:
			items[i] = v.text()
		case eFloat:
			if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
				items[i] = "null"
			} else {
				items[i] = v.text()
			}
		default:
			items[i], quoted[i] = v.text(), true
		}
		if quoted[i] {
			size += jsonQuotedLen(items[i])
		} else {
			size += int64(len(items[i]))
		}
	}
	if !e.fits(size, false) {
		return evNull
	}
	b := make([]byte, 0, size)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if quoted[i] {
			b = appendJSONQuoted(b, it)
		} else {
			b = append(b, it...)
		}
	}
	return evStr(string(append(b, ']')))
}

// jsonQuotedLen is len(appendJSONQuoted(nil, s)).
func jsonQuotedLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			n += 2
		case c < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

// appendJSONQuoted appends s as a JSON string: quotes, backslashes and
// control characters escaped, every other byte as it is.
func appendJSONQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// jsonExtract is JSON_EXTRACT(doc, path, ...): with one path without a
// wildcard, the value found (a JSON null is the text null); with
// wildcards or several paths, the array of every value found. NULL when
// nothing is found, when doc is not JSON or a path is not one.
func jsonExtract(e *evalEnv, a []ev) ev {
	w, root, ok := jsonDoc(a[0].text())
	if !ok {
		return evNull
	}
	var found []span
	array := len(a) > 2
	// The result is at most the values found, a comma each and brackets:
	// checked after each path, so that many paths over a large document
	// hold no more than one path's spans beyond the limit.
	size := int64(1)
	for _, p := range a[1:] {
		steps, wild, ok := parseJSONPath(p.text())
		if !ok {
			return evNull
		}
		array = array || wild
		more := w.walk(root, steps)
		for _, f := range more {
			size += int64(f.end-f.start) + 1
		}
		if !e.fits(size, false) {
			return evNull
		}
		found = append(found, more...)
	}
	if len(found) == 0 {
		return evNull
	}
	var b bytes.Buffer
	b.Grow(int(size))
	if array {
		b.WriteByte('[')
	}
	for i, f := range found {
		if i > 0 {
			b.WriteByte(',')
		}
		compactJSON(&b, w.p.raw[f.start:f.end])
	}
	if array {
		b.WriteByte(']')
	}
	return evStr(b.String())
}

// jsonPath reads the value at path in doc as kind; NULL when doc is not
// JSON, the path is not one or finds nothing, or the value is not of the
// kind (a JSON null is NULL, but true for JSON_EXTRACT_ISNULL).
func jsonPath(e *evalEnv, doc, path string, kind jsonKindWant) ev {
	steps, wild, ok := parseJSONPath(path)
	if !ok {
		return evNull
	}
	if wild {
		v := jsonExtract(e, []ev{evStr(doc), evStr(path)})
		if kind != jsonString {
			return evNull
		}
		return v
	}
	w, root, ok := jsonDoc(doc)
	if !ok {
		return evNull
	}
	found := w.walk(root, steps)
	if len(found) == 0 {
		return evNull
	}
	v := w.p.raw[found[0].start:found[0].end]
	c := v[0]
	switch {
	case kind == jsonIsNull:
		return evBool(c == 'n')
	case c == 'n':
		return evNull
	case kind == jsonBool:
		if c == 't' || c == 'f' {
			return evBool(c == 't')
		}
		return evNull
	case kind == jsonInt || kind == jsonDouble:
		if c != '-' && (c < '0' || c > '9') {
			return evNull
		}
		if kind == jsonInt {
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return evInt(i)
			}
			return evNull
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return evFloat(f)
		}
		return evNull
	case c == '"':
		// As encoding/json: a byte that is not UTF-8 is U+FFFD.
		s := unescape(nil, v[1:len(v)-1])
		if !utf8.Valid(s) {
			return evStr(runeText(string(s)))
		}
		return evStr(string(s))
	}
	var b bytes.Buffer
	compactJSON(&b, v)
	return evStr(b.String())
}

// member finds key in the object at raw[i] (the last one, when repeated,
// as encoding/json) and returns its value's bounds. raw is valid JSON.
func (p *Parser) member(i int, key string) (start, end int, ok bool) {
	raw := p.raw
	if raw[i] != '{' {
		return 0, 0, false
	}
	for i = skipWS(raw, i+1); raw[i] == '"'; i = skipWS(raw, i+1) {
		kend, esc, _ := p.scanString(i)
		k := raw[i+1 : kend-1]
		if esc {
			k = unescape(nil, k)
		}
		if !utf8.Valid(k) { // as encoding/json decodes it
			k = []byte(string([]rune(string(k))))
		}
		vs := skipWS(raw, skipWS(raw, kend)+1) // after the ':'
		ve, _ := p.value(vs, nil, 0)
		if string(k) == key {
			start, end, ok = vs, ve, true
		}
		if i = skipWS(raw, ve); raw[i] == '}' {
			break
		}
	}
	return start, end, ok
}

// element finds element idx of the array at raw[i] and returns its bounds.
// raw is valid JSON.
func (p *Parser) element(i, idx int) (start, end int, ok bool) {
	raw := p.raw
	if raw[i] != '[' {
		return 0, 0, false
	}
	if i = skipWS(raw, i+1); raw[i] == ']' {
		return 0, 0, false
	}
	for k := 0; ; k++ {
		end, _ := p.value(i, nil, 0)
		if k == idx {
			return i, end, true
		}
		if i = skipWS(raw, end); raw[i] == ']' {
			return 0, 0, false
		}
		i = skipWS(raw, i+1) // after the ','
	}
}
