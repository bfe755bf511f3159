package table

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// fnSpec is a function's arity (max -1: any) and body; args are evaluated
// first. A NULL argument makes NULL unless nullSafe.
//
// Bounds: no text value is larger than the limit (evalEnv.fits). A
// function whose result can be much larger than its arguments (CONCAT,
// CONCAT_WS, REPLACE, LPAD, RPAD, UPPER, LOWER, REVERSE) computes the
// size first and allocates only if it fits; DATE_FORMAT and
// FROM_UNIXTIME make at most 111 bytes, as Doris (datefmt.go);
// the others make at most a few times their arguments' bytes (a JSON
// text re-escaped, bytes that are not UTF-8 made U+FFFD), and callNode
// checks their result. Counts and positions from arguments are clamped
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
	str := func(f func(string) string) fnSpec {
		return fnSpec{min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return evStr(f(a[0].text())) }}
	}
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
	num := func(f func(float64) float64) fnSpec {
		return fnSpec{min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			x, ok := a[0].num()
			if !ok {
				return evNull
			}
			if x.k == eInt {
				return x
			}
			return evFloat(f(x.f))
		}}
	}
	jsonGet := func(kind string) fnSpec {
		return fnSpec{min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev { return jsonPath(a[0].text(), a[1].text(), kind) }}
	}
	functions = map[string]fnSpec{
		"IFNULL": {min: 2, max: 2, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			if a[0].k == eNull {
				return a[1]
			}
			return a[0]
		}},
		"COALESCE": {min: 1, max: -1, nullSafe: true, fn: func(_ *evalEnv, a []ev) ev {
			for _, v := range a {
				if v.k != eNull {
					return v
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
				return a[1]
			}
			return a[2]
		}},
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
		"CONCAT_WS": {min: 2, max: -1, nullSafe: true, fn: func(e *evalEnv, a []ev) ev {
			if a[0].k == eNull {
				return evNull
			}
			sep := a[0].text()
			var parts []string
			var size int64
			for _, v := range a[1:] {
				if v.k != eNull { // CONCAT_WS skips NULLs
					if len(parts) > 0 {
						size += int64(len(sep))
					}
					parts = append(parts, v.text())
					size += int64(len(parts[len(parts)-1]))
				}
			}
			if !e.fits(size, false) {
				return evNull
			}
			return evStr(strings.Join(parts, sep))
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
		"UPPER": mapped(strings.ToUpper, unicode.ToUpper),
		"LOWER": mapped(strings.ToLower, unicode.ToLower),
		"TRIM":  str(func(s string) string { return strings.Trim(s, " ") }),
		"LTRIM": str(func(s string) string { return strings.TrimLeft(s, " ") }),
		"RTRIM": str(func(s string) string { return strings.TrimRight(s, " ") }),
		"REVERSE": {min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			s := a[0].text()
			if !e.fits(runeTextLen(s), false) {
				return evNull
			}
			r := []rune(s)
			slicesReverse(r)
			return evStr(string(r))
		}},
		"REPLACE": {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev {
			s, from, to := a[0].text(), a[1].text(), a[2].text()
			if len(to) > len(from) {
				// An empty from matches before every character and at the end.
				n := int64(strings.Count(s, from))
				if !e.fits(int64(len(s))+n*int64(len(to)-len(from)), false) {
					return evNull
				}
			}
			return evStr(strings.ReplaceAll(s, from, to))
		}},
		"SPLIT_PART": {min: 3, max: 3, fn: func(_ *evalEnv, a []ev) ev {
			s, sep := a[0].text(), a[1].text()
			i, ok := intArg(a[2], 0, len(s)+2) // a string has at most len(s)+1 parts
			if !ok || i < 1 || sep == "" {
				return evNull
			}
			for ; i > 1; i-- { // skip to part i
				k := strings.Index(s, sep)
				if k < 0 {
					return evNull
				}
				s = s[k+len(sep):]
			}
			if k := strings.Index(s, sep); k >= 0 {
				s = s[:k]
			}
			return evStr(s)
		}},
		"LENGTH":      {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return evInt(int64(len(a[0].text()))) }},
		"CHAR_LENGTH": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return evInt(int64(utf8.RuneCountInString(a[0].text()))) }},
		"LPAD":        {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return pad(e, a, true) }},
		"RPAD":        {min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return pad(e, a, false) }},
		"ABS":         num(math.Abs),
		"FLOOR":       num(math.Floor),
		"CEIL":        num(math.Ceil),
		"ROUND": {min: 1, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			x, ok := a[0].num()
			if !ok {
				return evNull
			}
			d := 0.0
			if len(a) == 2 {
				n, ok := a[1].num()
				if !ok {
					return evNull
				}
				d = n.float()
			}
			if x.k == eInt && d >= 0 {
				return x
			}
			m := math.Pow(10, d)
			r := math.Round(x.float()*m) / m
			if d <= 0 {
				return evInt(int64(r))
			}
			return evFloat(r)
		}},
		"MOD": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev { return arith("%", a[0], a[1]) }},
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
		"STR_TO_DATE":     {min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return strToDate(e, a[0].text(), a[1].text()) }},
		"TO_DATE":         {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return castTo(a[0], "date") }},
		"YEAR":            {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 0) }},
		"MONTH":           {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 1) }},
		"DAY":             {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return datePart(a[0], 2) }},
		"JSON_EXTRACT":    jsonGet("json"),
		"GET_JSON_STRING": jsonGet("string"),
		"GET_JSON_INT":    jsonGet("int"),
		"GET_JSON_DOUBLE": jsonGet("double"),
		"JSON_UNQUOTE": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			s := a[0].text()
			var out string
			if strings.HasPrefix(s, `"`) && json.Unmarshal([]byte(s), &out) == nil {
				return evStr(out)
			}
			return evStr(s)
		}},
	}
	for alias, name := range map[string]string{
		"SUBSTRING": "SUBSTR", "UCASE": "UPPER", "LCASE": "LOWER", "CHARACTER_LENGTH": "CHAR_LENGTH",
		"CEILING": "CEIL", "NVL": "IFNULL", "DATE": "TO_DATE", "DAYOFMONTH": "DAY",
		"JSONB_EXTRACT": "JSON_EXTRACT", "JSONB_EXTRACT_STRING": "GET_JSON_STRING", "JSON_EXTRACT_STRING": "GET_JSON_STRING",
		"GET_JSON_BIGINT": "GET_JSON_INT", "JSONB_EXTRACT_INT": "GET_JSON_INT", "JSONB_EXTRACT_BIGINT": "GET_JSON_INT",
		"JSONB_EXTRACT_DOUBLE": "GET_JSON_DOUBLE",
	} {
		functions[alias] = functions[name]
	}
	dateAdd := fnSpec{min: 2, max: 2}
	for _, n := range []string{"DATE_ADD", "DATE_SUB", "DAYS_ADD", "DAYS_SUB", "ADDDATE", "SUBDATE"} {
		functions[n] = dateAdd
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

func slicesReverse(r []rune) {
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
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
	switch n.name {
	case "DATE_ADD", "DATE_SUB", "DAYS_ADD", "DAYS_SUB", "ADDDATE", "SUBDATE":
		return dateAdd(args[0], args[1], n.unit, strings.HasSuffix(n.name, "SUB"))
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

// dateAdd adds n units to a date or datetime (a date stays a date for
// whole days, months and years).
func dateAdd(v, n ev, unit string, sub bool) ev {
	t, ok := v.asTime()
	k, ok2 := n.num()
	if !ok || !ok2 {
		return evNull
	}
	amount := int64(k.float())
	if sub {
		amount = -amount
	}
	isDate := v.k == eDate || v.k == eStr && len(strings.TrimSpace(v.s)) <= 10
	days := floorDiv(t, 86400*1e6)
	rem := t - days*86400*1e6
	switch unit {
	case "YEAR", "MONTH":
		y, m, d := civilFromDays(days)
		months := amount
		if unit == "YEAR" {
			months *= 12
		}
		total := y*12 + (m - 1) + months
		y, m = floorDiv(total, 12), total-floorDiv(total, 12)*12+1
		d = min(d, daysIn(m, y))
		days = daysFromCivil(y, m, d)
	case "WEEK":
		days += 7 * amount
	case "DAY":
		days += amount
	default:
		isDate = false
		mult := map[string]int64{"HOUR": 3600e6, "MINUTE": 60e6, "SECOND": 1e6}[unit]
		t += amount * mult
		days = floorDiv(t, 86400*1e6)
		rem = t - days*86400*1e6
	}
	if days < minDateDays || days > maxDateDays {
		return evNull
	}
	if isDate {
		return ev{k: eDate, i: days}
	}
	return ev{k: eDatetime, i: days*86400*1e6 + rem}
}

// jsonPath extracts $.a.b[0] from a JSON document: as JSON text (json), its
// string content or text (string), or a number (int, double); NULL when
// doc is not JSON or has nothing at path. Only the value found is
// decoded: the document is walked in place (its nesting bounded as a
// record's), so that a large document costs no more than its bytes.
func jsonPath(doc, path, kind string) ev {
	if !strings.HasPrefix(path, "$") {
		return evNull
	}
	w := &Parser{raw: unsafe.Slice(unsafe.StringData(doc), len(doc))} // read only
	i := skipWS(w.raw, 0)
	end, err := w.value(i, nil, 0) // validates the document
	if err != nil {
		return evNull
	}
	rest := path[1:]
	for rest != "" {
		var ok bool
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			i, end, ok = w.member(i, strings.Trim(rest[:n], `"`))
			rest = rest[n:]
		case '[':
			n := strings.IndexByte(rest, ']')
			if n < 0 {
				return evNull
			}
			in := strings.Trim(rest[1:n], `'"`)
			rest = rest[n+1:]
			if w.raw[i] == '{' {
				i, end, ok = w.member(i, in)
				break
			}
			idx, err := strconv.Atoi(in)
			ok = err == nil && idx >= 0
			if ok {
				i, end, ok = w.element(i, idx)
			}
		}
		if !ok {
			return evNull
		}
	}
	v := w.raw[i:end]
	switch c := v[0]; {
	case c == 'n':
		return evNull
	case kind == "string" && c == '"':
		// As encoding/json: a byte that is not UTF-8 is U+FFFD.
		return evStr(runeText(string(unescape(nil, v[1:len(v)-1]))))
	case kind == "int" || kind == "double":
		if c != '-' && (c < '0' || c > '9') {
			return evNull
		}
		if kind == "int" {
			if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return evInt(i)
			}
			return evNull
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return evFloat(f)
		}
		return evNull
	}
	// JSON text as encoding/json writes it: keys sorted, compact.
	var x any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&x) != nil {
		return evNull
	}
	b, err := json.Marshal(x)
	if err != nil {
		return evNull
	}
	return evStr(string(b))
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
