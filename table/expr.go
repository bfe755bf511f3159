package table

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Column mapping expressions and filters, in the SQL subset Doris load
// statements use (COLUMNS (k2 = k1 * 100), WHERE k1 > 10):
//
//	literals     123, -1.5, 'text', "text", NULL, TRUE, FALSE; arrays ['a', NULL]
//	             only where CONCAT_WS and REVERSE read them (fn_string.go)
//	columns      name, `name`
//	operators    + - * / % DIV, = != <> < <= > >= <=>, AND (&&) OR (||) NOT, IS [NOT] NULL,
//	             [NOT] IN (...), [NOT] BETWEEN a AND b, [NOT] LIKE 'a%_'
//	conditions   CASE [x] WHEN ... THEN ... [ELSE ...] END, IF(c, a, b),
//	             IFNULL(a, b), NVL(a, b), COALESCE(...), NULLIF(a, b)
//	casts        CAST(x AS type), any type ParseType reads
//	strings      CONCAT, CONCAT_WS, SUBSTR/SUBSTRING(s, pos[, len] | s FROM pos [FOR len]),
//	             LEFT, RIGHT, UPPER/UCASE, LOWER/LCASE, TRIM/LTRIM/RTRIM(s[, text]), REPLACE,
//	             SPLIT_PART, LENGTH (bytes), CHAR_LENGTH/CHARACTER_LENGTH, REVERSE, LPAD,
//	             RPAD, LOCATE, INSTR, REPEAT, SPACE, ASCII, STARTS_WITH, ENDS_WITH
//	numbers      ABS, ROUND/TRUNCATE/FLOOR/CEIL/CEILING(x[, d]), MOD, POW/POWER, SQRT,
//	             EXP, LN, LOG10, LOG2, SIGN, GREATEST, LEAST
//	dates        FROM_UNIXTIME(secs[, format]), UNIX_TIMESTAMP(datetime[, format]),
//	             DATE_FORMAT(dt, format), STR_TO_DATE(s, format), TO_DATE, DATE,
//	             YEAR, MONTH, DAY; DATE_ADD/DATE_SUB(dt, n | INTERVAL n unit) and
//	             the rest of the arithmetic of fn_datearith.go; formats as Doris reads them: every MySQL
//	             specifier Doris documents, its Java-style patterns, its limits
//	             (datefmt.go)
//	json         JSON_EXTRACT/JSONB_EXTRACT(doc, path, ...), paths as Doris reads them
//	             ($.k, $."a.b", $[n], $[-n], $[last-n], $.*, $[*]); GET_JSON_STRING,
//	             GET_JSON_INT/BIGINT, GET_JSON_DOUBLE, JSON[B]_EXTRACT_STRING/INT/BIGINT/
//	             DOUBLE/BOOL/ISNULL, JSON[B]_EXISTS_PATH, JSON_ARRAY, JSON_UNQUOTE
//	encoding     TO_BASE64, FROM_BASE64, AES_ENCRYPT/AES_DECRYPT(s, key): AES-128-ECB,
//	             PKCS#7 padding (Doris's default); KEY name (CREATE ENCRYPTKEY) is refused
//
// Values are NULL, integers (int64), floats (float64), text, booleans,
// dates, datetimes and times; arithmetic on integers stays exact (an overflow
// makes a float), on anything else is float64. Text meets a number as the
// number it spells (NULL if it spells none), as in Doris. Any NULL operand
// makes NULL, except in IS NULL, <=>, IFNULL, COALESCE, IF and CASE.
// Time zone conversions (FROM_UNIXTIME, UNIX_TIMESTAMP) use the job's
// timezone.
//
// Bounds: an expression nests at most MaxExprDepth levels (refused when
// parsed), and no text value it makes is larger than the parser's
// Format.MaxValueBytes (the row is an error row naming the function and
// the limit: LimitError; funcs.go says how each function keeps it). A
// function that fails on a value as Doris fails it (DATE_FORMAT's
// limits, datefmt.go) makes the row an error row naming it: FuncError.

// ekind is the kind of an evaluated value.
type ekind uint8

const (
	eNull ekind = iota
	eInt
	eFloat
	eStr
	eBool
	eDate     // i: days since 1970-01-01
	eDatetime // i: wall-clock microseconds since 1970-01-01 00:00:00
	eArray    // arr: an array literal's elements, or REVERSE's of one (fn_string.go)
	eTime     // i: signed microseconds (Doris's TIME, at most 838:59:59); scale: its fractional digits
)

// ev is an evaluated value.
type ev struct {
	k     ekind
	scale int8 // eTime: the fractional digits it is rendered with (0 to 6)
	i     int64
	f     float64
	s     string
	arr   *[]ev
}

var evNull = ev{}

func evInt(i int64) ev     { return ev{k: eInt, i: i} }
func evFloat(f float64) ev { return ev{k: eFloat, f: f} }
func evStr(s string) ev    { return ev{k: eStr, s: s} }
func evBool(b bool) ev {
	if b {
		return ev{k: eBool, i: 1}
	}
	return ev{k: eBool}
}

// text renders v as text (the form a cast to a string column takes).
func (v ev) text() string {
	switch v.k {
	case eInt:
		return strconv.FormatInt(v.i, 10)
	case eFloat:
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1e15 {
			return strconv.FormatFloat(v.f, 'f', -1, 64)
		}
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case eStr:
		return v.s
	case eBool:
		if v.i != 0 {
			return "1"
		}
		return "0"
	case eDate:
		return string(appendDate(nil, v.i))
	case eDatetime:
		prec := 0
		if v.i%1e6 != 0 {
			prec = 6
		}
		return string(appendDatetime(nil, v.i, prec))
	case eArray:
		return arrayText(*v.arr)
	case eTime:
		return string(appendTime(nil, v.i, int(v.scale)))
	}
	return ""
}

// num reads v as a number: ok false when it is NULL or text that spells
// no number.
func (v ev) num() (ev, bool) {
	switch v.k {
	case eInt, eFloat:
		return v, true
	case eBool:
		return evInt(v.i), true
	case eStr:
		s := strings.TrimSpace(v.s)
		if n, e := parseInt([]byte(s)); e == numOK {
			return evInt(n), true
		}
		if f, e := parseFloat([]byte(s)); e == numOK {
			return evFloat(f), true
		}
	case eDate, eDatetime:
		n, _ := strconv.ParseInt(strings.NewReplacer("-", "", " ", "", ":", "", ".", "").Replace(v.text()), 10, 64)
		return evInt(n), true
	case eTime:
		return timeNum(v), true
	}
	return evNull, false
}

func (v ev) float() float64 {
	if v.k == eInt {
		return float64(v.i)
	}
	return v.f
}

// truth reads v as a condition: NULL and unreadable text are false.
func (v ev) truth() bool {
	switch v.k {
	case eBool, eInt:
		return v.i != 0
	case eFloat:
		return v.f != 0
	case eStr:
		if b, ok := parseBool([]byte(strings.TrimSpace(v.s))); ok {
			return b
		}
		n, ok := v.num()
		return ok && n.float() != 0
	case eDate, eDatetime:
		return true
	case eTime:
		return v.i != 0
	}
	return false
}

// asTime reads v as a wall-clock datetime in microseconds.
func (v ev) asTime() (int64, bool) {
	switch v.k {
	case eDatetime:
		return v.i, true
	case eDate:
		return v.i * 86400 * 1e6, true
	case eStr:
		t, e := parseDatetime([]byte(v.s), 6)
		return t, e == numOK
	case eInt:
		t, e := parseDatetime([]byte(strconv.FormatInt(v.i, 10)), 6)
		return t, e == numOK
	}
	return 0, false
}

// ---------------------------------------------------------------- AST

// node is an expression; eval reads the row through env.
type node interface {
	eval(env *evalEnv) ev
}

// evalEnv is what an expression sees: the values of the names it refers
// to, and the job's time zone; and what bounds it: the largest text value
// it may make, and the first value that would have been larger.
type evalEnv struct {
	vals []ev
	loc  *time.Location
	// names are the days' and months' names of the session's
	// lc_time_names (DAYNAME, MONTHNAME); nil is en_US.
	names *timeNames
	// limit is the most bytes a text value may have (Format.MaxValueBytes);
	// 0 means DefaultMaxValueBytes.
	limit int
	// fn is the function being called, for over.
	fn string
	// made counts the bytes of text the calls made for this record (not
	// counting results that are an argument or a part of one).
	// INVARIANT: made <= madeFactor * limit.
	made int64
	// over is set by the first function whose result would exceed limit
	// (or bring made over its bound: a *LimitError), or that fails on a
	// value as Doris fails it (a *FuncError). From then on every call is
	// NULL without being computed, and the row is an error row
	// (mapping.go).
	over error
}

// madeFactor bounds the text the expressions of one record make
// together, in values of the limit: each value is at most the limit, and
// without this, one CONCAT of 200 LPADs would hold 200 of them at once.
const madeFactor = 4

// LimitError says an expression would have made a value larger than the
// limit on a value (Format.MaxValueBytes, a node's max_record_size): the
// record is an error row. Its message names the function and the limit.
type LimitError struct {
	Func string // the function, as written, in upper case
	// Size is the size of the value in bytes; when AtLeast, a lower bound
	// of it (the value was not computed). When Total, the size of all the
	// text the record's expressions would have made with it.
	Size    int64
	AtLeast bool
	Total   bool
	Limit   int
}

func (e *LimitError) Error() string {
	if e.Total {
		return fmt.Sprintf("%s would bring the text this record's expressions make to %d bytes, over %d times the limit of %d bytes per value (max_record_size)", e.Func, e.Size, madeFactor, e.Limit)
	}
	at := ""
	if e.AtLeast {
		at = "at least "
	}
	return fmt.Sprintf("%s would make a value of %s%d bytes, over the limit of %d bytes per value (max_record_size)", e.Func, at, e.Size, e.Limit)
}

func (e *evalEnv) max() int {
	if e.limit <= 0 {
		return DefaultMaxValueBytes
	}
	return e.limit
}

// fits reports whether the function being called may make a value of size
// bytes (a lower bound of it when atLeast): at most the limit, and
// together with what the record's expressions made already at most
// madeFactor times it. When not, it records why. Functions whose result
// may be larger than their arguments call it before they allocate the
// result; callNode counts what they made.
func (e *evalEnv) fits(size int64, atLeast bool) bool {
	limit := int64(e.max())
	switch {
	case size > limit:
		if e.over == nil {
			e.over = &LimitError{Func: e.fn, Size: size, AtLeast: atLeast, Limit: e.max()}
		}
		return false
	case e.made+size > madeFactor*limit:
		if e.over == nil {
			e.over = &LimitError{Func: e.fn, Size: e.made + size, Total: true, Limit: e.max()}
		}
		return false
	}
	return true
}

// aliases reports whether s lies in the bytes of one of args: a function
// that returned an argument, or a part of one, made nothing.
func aliases(s string, args []ev) bool {
	if s == "" {
		return true
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, a := range args {
		if a.k == eStr && a.s != "" {
			q := uintptr(unsafe.Pointer(unsafe.StringData(a.s)))
			if p >= q && p < q+uintptr(len(a.s)) {
				return true
			}
		}
	}
	return false
}

type (
	litNode struct{ v ev }
	refNode struct {
		name string
		slot int
	}
	unaryNode struct {
		op string
		x  node
	}
	binNode struct {
		op   string
		l, r node
	}
	isNullNode struct {
		x   node
		not bool
	}
	inNode struct {
		x    node
		list []node
		not  bool
	}
	likeNode struct {
		x, pat node
		not    bool
	}
	caseNode struct {
		operand node // nil for CASE WHEN cond
		whens   []node
		thens   []node
		els     node
	}
	castNode struct {
		x   node
		typ string // lower-case type name
		// scale is the type's first parameter, -1 when none is given: a
		// DATETIME's fractional digits (DATETIME is DATETIME(0)).
		scale int
	}
	callNode struct {
		name string
		args []node
	}
)

func (n *litNode) eval(*evalEnv) ev   { return n.v }
func (n *refNode) eval(e *evalEnv) ev { return e.vals[n.slot] }

func (n *unaryNode) eval(e *evalEnv) ev {
	x := n.x.eval(e)
	switch n.op {
	case "NOT":
		if x.k == eNull {
			return evNull
		}
		return evBool(!x.truth())
	case "-":
		v, ok := x.num()
		if !ok {
			return evNull
		}
		if v.k == eInt && v.i != math.MinInt64 {
			return evInt(-v.i)
		}
		return evFloat(-v.float())
	}
	return x
}

func (n *binNode) eval(e *evalEnv) ev {
	switch n.op {
	case "AND":
		l := n.l.eval(e)
		if l.k != eNull && !l.truth() {
			return evBool(false)
		}
		r := n.r.eval(e)
		if r.k != eNull && !r.truth() {
			return evBool(false)
		}
		if l.k == eNull || r.k == eNull {
			return evNull
		}
		return evBool(true)
	case "OR":
		l := n.l.eval(e)
		if l.k != eNull && l.truth() {
			return evBool(true)
		}
		r := n.r.eval(e)
		if r.k != eNull && r.truth() {
			return evBool(true)
		}
		if l.k == eNull || r.k == eNull {
			return evNull
		}
		return evBool(false)
	}
	l, r := n.l.eval(e), n.r.eval(e)
	if n.op == "<=>" {
		if l.k == eNull || r.k == eNull {
			return evBool(l.k == r.k)
		}
		return evBool(compare(l, r) == 0)
	}
	if l.k == eNull || r.k == eNull {
		return evNull
	}
	switch n.op {
	case "=", "!=", "<>", "<", "<=", ">", ">=":
		c := compare(l, r)
		switch n.op {
		case "=":
			return evBool(c == 0)
		case "!=", "<>":
			return evBool(c != 0)
		case "<":
			return evBool(c < 0)
		case "<=":
			return evBool(c <= 0)
		case ">":
			return evBool(c > 0)
		}
		return evBool(c >= 0)
	}
	return arith(n.op, l, r)
}

// arith applies + - * / % DIV.
func arith(op string, l, r ev) ev {
	a, ok1 := l.num()
	b, ok2 := r.num()
	if !ok1 || !ok2 {
		return evNull
	}
	if a.k == eInt && b.k == eInt {
		x, y := a.i, b.i
		switch op {
		case "+":
			if s := x + y; (s > x) == (y > 0) {
				return evInt(s)
			}
		case "-":
			if s := x - y; (s < x) == (y > 0) {
				return evInt(s)
			}
		case "*":
			if x == 0 || y == 0 {
				return evInt(0)
			}
			if p := x * y; p/y == x && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64) {
				return evInt(p)
			}
		case "%", "MOD":
			if y == 0 {
				return evNull
			}
			return evInt(x % y)
		case "DIV":
			if y == 0 || (x == math.MinInt64 && y == -1) {
				return evNull
			}
			return evInt(x / y)
		}
	}
	x, y := a.float(), b.float()
	switch op {
	case "+":
		return evFloat(x + y)
	case "-":
		return evFloat(x - y)
	case "*":
		return evFloat(x * y)
	case "/":
		if y == 0 {
			return evNull
		}
		return evFloat(x / y)
	case "%", "MOD":
		if y == 0 {
			return evNull
		}
		return evFloat(math.Mod(x, y))
	case "DIV":
		if y == 0 {
			return evNull
		}
		return evInt(int64(x / y))
	}
	return evNull
}

// compare orders two non-NULL values: numerically when both read as
// numbers and one is a number, by time when one is a date, else as text.
func compare(l, r ev) int {
	if l.k == eDate || l.k == eDatetime || r.k == eDate || r.k == eDatetime {
		a, ok1 := l.asTime()
		b, ok2 := r.asTime()
		if ok1 && ok2 {
			return cmp3(a, b)
		}
	}
	if l.k != eStr || r.k != eStr {
		a, ok1 := l.num()
		b, ok2 := r.num()
		if ok1 && ok2 {
			if a.k == eInt && b.k == eInt {
				return cmp3(a.i, b.i)
			}
			x, y := a.float(), b.float()
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	return strings.Compare(l.text(), r.text())
}

func cmp3(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (n *isNullNode) eval(e *evalEnv) ev {
	return evBool((n.x.eval(e).k == eNull) != n.not)
}

func (n *inNode) eval(e *evalEnv) ev {
	x := n.x.eval(e)
	if x.k == eNull {
		return evNull
	}
	sawNull := false
	for _, it := range n.list {
		v := it.eval(e)
		if v.k == eNull {
			sawNull = true
			continue
		}
		if compare(x, v) == 0 {
			return evBool(!n.not)
		}
	}
	if sawNull {
		return evNull
	}
	return evBool(n.not)
}

func (n *likeNode) eval(e *evalEnv) ev {
	x, p := n.x.eval(e), n.pat.eval(e)
	if x.k == eNull || p.k == eNull {
		return evNull
	}
	return evBool(like(x.text(), p.text()) != n.not)
}

// Like reports whether s matches the SQL LIKE pattern p, as the
// expressions' LIKE does (case-sensitive).
func Like(s, p string) bool { return like(s, p) }

// like matches SQL LIKE: % any run, _ one character, \ escapes (a
// trailing \ is itself). It does not recurse, and uses no memory: after a
// mismatch it retries from the last %, one character further on (the
// greedy wildcard match, at most len(s) * len(p) steps).
func like(s, p string) bool {
	si, pi := 0, 0
	starP, starS := -1, 0 // the pattern after the last %, and where its run ends in s
	for si < len(s) {
		if pi < len(p) {
			r, n := utf8.DecodeRuneInString(p[pi:])
			switch {
			case r == '%':
				pi += n
				starP, starS = pi, si
				continue
			case r == '_':
				_, m := utf8.DecodeRuneInString(s[si:])
				si, pi = si+m, pi+n
				continue
			case r == '\\' && pi+n < len(p):
				var m int
				r, m = utf8.DecodeRuneInString(p[pi+n:])
				n += m
			}
			if c, m := utf8.DecodeRuneInString(s[si:]); c == r {
				si, pi = si+m, pi+n
				continue
			}
		}
		if starP < 0 {
			return false
		}
		_, m := utf8.DecodeRuneInString(s[starS:])
		starS += m
		si, pi = starS, starP
	}
	for pi < len(p) { // s is used up: only %s may be left
		r, n := utf8.DecodeRuneInString(p[pi:])
		if r != '%' {
			return false
		}
		pi += n
	}
	return true
}

func (n *caseNode) eval(e *evalEnv) ev {
	var op ev
	if n.operand != nil {
		op = n.operand.eval(e)
	}
	for i, w := range n.whens {
		v := w.eval(e)
		if n.operand != nil {
			if op.k != eNull && v.k != eNull && compare(op, v) == 0 {
				return n.thens[i].eval(e)
			}
		} else if v.k != eNull && v.truth() {
			return n.thens[i].eval(e)
		}
	}
	if n.els != nil {
		return n.els.eval(e)
	}
	return evNull
}

func (n *castNode) eval(e *evalEnv) ev {
	x := n.x.eval(e)
	v := castTo(x, n.typ)
	if v.k == eNull && x.k == eStr {
		v = castZoned(x.s, n.typ, e.loc)
	}
	if v.k == eDatetime {
		return roundDatetime(v, max(n.scale, 0))
	}
	return v
}

// castZoned casts text with a zone (zone.go) to a date or datetime as
// Doris does: a DATETIME is the wall clock of loc (the job's zone) at that
// instant, a DATE the date written. Anything else is NULL.
func castZoned(s, typ string, loc *time.Location) ev {
	switch typ {
	case "date", "datev2":
		if d, e := zonedDate([]byte(s)); e == numOK {
			return ev{k: eDate, i: d}
		}
	case "datetime", "datetimev2", "timestamp":
		if t, e := zonedDatetime([]byte(s), 6, loc); e == numOK {
			return ev{k: eDatetime, i: t}
		}
	}
	return evNull
}

// castTo converts v to the kind of a type name.
func castTo(v ev, typ string) ev {
	if v.k == eNull {
		return evNull
	}
	switch typ {
	case "tinyint", "smallint", "int", "integer", "bigint", "largeint", "int64", "int32", "int16", "int8", "signed", "unsigned":
		x, ok := v.num()
		if !ok {
			return evNull
		}
		if x.k == eFloat {
			if math.IsNaN(x.f) || x.f >= 9.3e18 || x.f <= -9.3e18 {
				return evNull
			}
			return evInt(int64(x.f))
		}
		return x
	case "float", "double", "float32", "float64", "decimal", "decimalv2", "decimalv3":
		if v.k == eStr && strings.HasPrefix(typ, "decimal") {
			return evStr(strings.TrimSpace(v.s)) // exact: the column parses the text
		}
		x, ok := v.num()
		if !ok {
			return evNull
		}
		return evFloat(x.float())
	case "date", "datev2":
		t, ok := v.asTime()
		if !ok {
			return evNull
		}
		return ev{k: eDate, i: floorDiv(t, 86400*1e6)}
	case "datetime", "datetimev2", "timestamp":
		t, ok := v.asTime()
		if !ok {
			return evNull
		}
		return ev{k: eDatetime, i: t}
	case "boolean", "bool":
		return evBool(v.truth())
	case "time":
		return castTime(v)
	}
	return evStr(v.text()) // char, varchar, string, text, json
}

// ---------------------------------------------------------------- parser

// exprToken is a token of an expression.
type exprToken struct {
	kind byte // 'n' number, 's' string, 'i' identifier, 'q' quoted identifier, 'o' operator, 0 end
	text string
	pos  int
}

func lexExpr(src string) ([]exprToken, error) {
	var toks []exprToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for j = k; j < len(src) && src[j] >= '0' && src[j] <= '9'; j++ {
					}
				}
			}
			toks = append(toks, exprToken{'n', src[i:j], i})
			i = j
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(src) {
					return nil, fmt.Errorf("unterminated string at %d", i)
				}
				if src[j] == '\\' && j+1 < len(src) {
					switch src[j+1] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					default:
						b.WriteByte(src[j+1])
					}
					j += 2
					continue
				}
				if src[j] == c {
					if j+1 < len(src) && src[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			toks = append(toks, exprToken{'s', b.String(), i})
			i = j + 1
		case c == '`':
			j := strings.IndexByte(src[i+1:], '`')
			if j < 0 {
				return nil, fmt.Errorf("unterminated `name` at %d", i)
			}
			toks = append(toks, exprToken{'q', src[i+1 : i+1+j], i})
			i += j + 2
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf:
			j := i
			for j < len(src) {
				r, n := utf8.DecodeRuneInString(src[j:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += n
			}
			if j == i {
				return nil, fmt.Errorf("unexpected %q at %d", src[i:i+1], i)
			}
			toks = append(toks, exprToken{'i', src[i:j], i})
			i = j
		default:
			op := ""
			for _, o := range []string{"<=>", "<=", ">=", "!=", "<>", "||", "&&", "=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", "[", "]", "."} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("unexpected %q at %d", src[i:i+1], i)
			}
			toks = append(toks, exprToken{'o', op, i})
			i += len(op)
		}
	}
	return append(toks, exprToken{pos: len(src)}), nil
}

// MaxExprDepth bounds how deeply an expression (columns_mapping, where,
// delete_on) nests: parentheses, function arguments, CASE, NOT and unary
// minus each add a level, and so does each operator of a chain such as
// a + b + c (the tree is evaluated recursively, one level per operator).
// It is the default of Doris's expr_depth_limit. Deeper expressions are
// refused when the job is created, so that neither the parser nor the
// evaluation of a row can exhaust the stack.
const MaxExprDepth = 3000

// errTooDeep is the error of an expression deeper than MaxExprDepth.
var errTooDeep = fmt.Errorf("expression nests deeper than %d levels", MaxExprDepth)

// exprParser parses one expression; resolve maps a column name to its
// slot (an error for an unknown name).
type exprParser struct {
	toks    []exprToken
	i       int
	resolve func(name string) (int, error)
	// depth counts the recursive calls in progress.
	// INVARIANT: depth <= MaxExprDepth.
	depth int
}

// parseExpr parses src into an expression tree no deeper than
// MaxExprDepth.
func parseExpr(src string, resolve func(string) (int, error)) (node, error) {
	toks, err := lexExpr(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks, resolve: resolve}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != 0 {
		return nil, fmt.Errorf("unexpected %q at %d", t.text, t.pos)
	}
	// The recursion above is bounded, but a chain (a + b + c ...) makes a
	// tree one level deeper per operator without recursing.
	if height(n) > MaxExprDepth {
		return nil, errTooDeep
	}
	return n, checkArrays(n)
}

// enter counts one more level of recursion; leave undoes it.
func (p *exprParser) enter() error {
	if p.depth >= MaxExprDepth {
		return errTooDeep
	}
	p.depth++
	return nil
}

func (p *exprParser) leave() { p.depth-- }

// height is the number of levels of n's tree, counted without recursion.
func height(n node) int {
	type item struct {
		n node
		h int
	}
	most := 0
	stack := []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		most = max(most, it.h)
		for _, k := range children(it.n) {
			if k != nil {
				stack = append(stack, item{k, it.h + 1})
			}
		}
	}
	return most
}

// children are the subexpressions of n (some may be nil).
func children(n node) []node {
	switch n := n.(type) {
	case *unaryNode:
		return []node{n.x}
	case *binNode:
		return []node{n.l, n.r}
	case *isNullNode:
		return []node{n.x}
	case *inNode:
		return append([]node{n.x}, n.list...)
	case *likeNode:
		return []node{n.x, n.pat}
	case *caseNode:
		return append(append([]node{n.operand, n.els}, n.whens...), n.thens...)
	case *castNode:
		return []node{n.x}
	case *callNode:
		return n.args
	case *arrayNode:
		return n.elems
	}
	return nil
}

func (p *exprParser) peek() exprToken { return p.toks[p.i] }
func (p *exprParser) next() exprToken {
	t := p.toks[p.i]
	if t.kind != 0 {
		p.i++
	}
	return t
}

// kw reports whether the next token is keyword k (case-insensitive).
func (p *exprParser) kw(k string) bool {
	t := p.peek()
	return t.kind == 'i' && strings.EqualFold(t.text, k)
}

func (p *exprParser) acceptKw(k string) bool {
	if p.kw(k) {
		p.i++
		return true
	}
	return false
}

func (p *exprParser) op(o string) bool {
	t := p.peek()
	return t.kind == 'o' && t.text == o
}

func (p *exprParser) acceptOp(o string) bool {
	if p.op(o) {
		p.i++
		return true
	}
	return false
}

func (p *exprParser) expectOp(o string) error {
	if !p.op(o) {
		t := p.peek()
		return fmt.Errorf("expected %q at %d, found %q", o, t.pos, t.text)
	}
	p.i++
	return nil
}

func (p *exprParser) or() (node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	l, err := p.and()
	for err == nil && (p.acceptKw("OR") || p.acceptOp("||")) { // || is OR, as in Doris's default sql_mode
		var r node
		if r, err = p.and(); err == nil {
			l = &binNode{op: "OR", l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) and() (node, error) {
	l, err := p.not()
	for err == nil && (p.acceptKw("AND") || p.acceptOp("&&")) {
		var r node
		if r, err = p.not(); err == nil {
			l = &binNode{op: "AND", l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) not() (node, error) {
	if p.acceptKw("NOT") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.not()
		return &unaryNode{op: "NOT", x: x}, err
	}
	return p.cmp()
}

func (p *exprParser) cmp() (node, error) {
	l, err := p.add()
	if err != nil {
		return nil, err
	}
	for _, o := range []string{"<=>", "=", "!=", "<>", "<=", ">=", "<", ">"} {
		if p.op(o) {
			p.i++
			r, err := p.add()
			return &binNode{op: o, l: l, r: r}, err
		}
	}
	if p.acceptKw("IS") {
		not := p.acceptKw("NOT")
		if !p.acceptKw("NULL") {
			return nil, fmt.Errorf("expected NULL after IS at %d", p.peek().pos)
		}
		return &isNullNode{x: l, not: not}, nil
	}
	not := false
	if p.kw("NOT") && p.i+1 < len(p.toks) {
		if n := p.toks[p.i+1]; n.kind == 'i' && (strings.EqualFold(n.text, "IN") || strings.EqualFold(n.text, "LIKE") || strings.EqualFold(n.text, "BETWEEN")) {
			p.i++
			not = true
		}
	}
	switch {
	case p.acceptKw("IN"):
		if err := p.expectOp("("); err != nil {
			return nil, err
		}
		list, err := p.args()
		return &inNode{x: l, list: list, not: not}, err
	case p.acceptKw("LIKE"):
		pat, err := p.add()
		return &likeNode{x: l, pat: pat, not: not}, err
	case p.acceptKw("BETWEEN"):
		lo, err := p.add()
		if err != nil {
			return nil, err
		}
		if !p.acceptKw("AND") {
			return nil, fmt.Errorf("expected AND in BETWEEN at %d", p.peek().pos)
		}
		hi, err := p.add()
		var n node = &binNode{op: "AND", l: &binNode{op: ">=", l: l, r: lo}, r: &binNode{op: "<=", l: l, r: hi}}
		if not {
			n = &unaryNode{op: "NOT", x: n}
		}
		return n, err
	}
	return l, nil
}

func (p *exprParser) add() (node, error) {
	l, err := p.mul()
	for err == nil && (p.op("+") || p.op("-")) {
		o := p.next().text
		var r node
		if r, err = p.mul(); err == nil {
			l = &binNode{op: o, l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) mul() (node, error) {
	l, err := p.unary()
	for err == nil && (p.op("*") || p.op("/") || p.op("%") || p.kw("DIV") || p.kw("MOD")) {
		o := strings.ToUpper(p.next().text)
		var r node
		if r, err = p.unary(); err == nil {
			l = &binNode{op: o, l: l, r: r}
		}
	}
	return l, err
}

func (p *exprParser) unary() (node, error) {
	if p.op("-") || p.op("+") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
	}
	if p.op("-") {
		p.i++
		x, err := p.unary()
		return &unaryNode{op: "-", x: x}, err
	}
	if p.op("+") {
		p.i++
		return p.unary()
	}
	return p.primary()
}

// args parses a comma-separated list up to and including ")".
func (p *exprParser) args() ([]node, error) {
	var list []node
	if p.op(")") {
		p.i++
		return list, nil
	}
	for {
		a, err := p.or()
		if err != nil {
			return nil, err
		}
		list = append(list, a)
		if p.op(",") {
			p.i++
			continue
		}
		return list, p.expectOp(")")
	}
}

func (p *exprParser) primary() (node, error) {
	t := p.next()
	switch t.kind {
	case 'n':
		if n, e := parseInt([]byte(t.text)); e == numOK {
			return &litNode{evInt(n)}, nil
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q at %d", t.text, t.pos)
		}
		return &litNode{evFloat(f)}, nil
	case 's':
		return &litNode{evStr(t.text)}, nil
	case 'q':
		return p.ref(t)
	case 'o':
		if t.text == "(" {
			x, err := p.or()
			if err != nil {
				return nil, err
			}
			return x, p.expectOp(")")
		}
		if t.text == "[" {
			return p.arrayLit()
		}
		return nil, fmt.Errorf("unexpected %q at %d", t.text, t.pos)
	case 0:
		return nil, fmt.Errorf("unexpected end of expression")
	}
	word := strings.ToUpper(t.text)
	switch word {
	case "NULL":
		return &litNode{evNull}, nil
	case "TRUE":
		return &litNode{evBool(true)}, nil
	case "FALSE":
		return &litNode{evBool(false)}, nil
	case "CASE":
		return p.caseExpr()
	case "KEY":
		if n := p.peek(); n.kind == 'i' || n.kind == 'q' {
			return nil, p.encryptKey()
		}
	}
	if !p.op("(") {
		return p.ref(t)
	}
	p.i++
	switch word {
	case "EXTRACT":
		return p.extract()
	case "CAST":
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.acceptKw("AS") {
			return nil, fmt.Errorf("expected AS in CAST at %d", p.peek().pos)
		}
		tt := p.next()
		if tt.kind != 'i' {
			return nil, fmt.Errorf("expected a type in CAST at %d", tt.pos)
		}
		typ := strings.ToLower(tt.text)
		if _, err := TypeOf(typ, nil); err != nil && typ != "signed" && typ != "unsigned" && typ != "time" {
			return nil, fmt.Errorf("CAST AS %s: unknown type", tt.text)
		}
		scale := -1
		if p.op("(") { // the type's parameters: (10, 2)
			if t := p.toks[p.i+1]; t.kind == 'n' {
				scale, _ = strconv.Atoi(t.text)
			}
			for !p.op(")") && p.peek().kind != 0 {
				p.i++
			}
			if err := p.expectOp(")"); err != nil {
				return nil, err
			}
		}
		return &castNode{x: x, typ: typ, scale: scale}, p.expectOp(")")
	case "DATE_ADD", "DATE_SUB", "DAYS_ADD", "DAYS_SUB", "ADDDATE", "SUBDATE", "DATE_FLOOR", "DATE_CEIL": // intervalForms
		// (x, INTERVAL n unit) or (x, n): the unit is the call's last
		// argument, a text literal (fn_datearith.go).
		x, err := p.or()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		unit := "DAY"
		var n node
		if p.acceptKw("INTERVAL") {
			if n, err = p.add(); err != nil {
				return nil, err
			}
			u := p.next()
			if unit = intervalUnit(u.text); unit == "" {
				return nil, &FormError{Func: word, Msg: fmt.Sprintf("unknown INTERVAL unit %q", u.text)}
			}
		} else if n, err = p.or(); err != nil {
			return nil, err
		}
		args := []node{x, n, &litNode{evStr(unit)}}
		if check := functions[word].check; check != nil {
			if err := check(word, args); err != nil {
				return nil, err
			}
		}
		return &callNode{name: word, args: args}, p.expectOp(")")
	case "TIMESTAMPADD", "TIMESTAMPDIFF":
		// (unit, ...): the unit, a keyword, is the call's first argument.
		u := p.next()
		unit := intervalUnit(u.text)
		if u.kind != 'i' || !simpleUnits[unit] {
			return nil, &FormError{Func: word, Msg: fmt.Sprintf("%s: unknown unit %q", word, u.text)}
		}
		if err := p.expectOp(","); err != nil {
			return nil, err
		}
		args, err := p.args()
		if err != nil {
			return nil, err
		}
		if len(args) != 2 {
			return nil, &FormError{Func: word, Msg: fmt.Sprintf("%s takes 3 arguments, not %d", word, len(args)+1)}
		}
		return &callNode{name: word, args: append([]node{&litNode{evStr(unit)}}, args...)}, nil
	}
	// The name first: a function the engine lacks is refused by name,
	// whatever its arguments (TIMESTAMPADD(MINUTE, ...)).
	fn, ok := functions[word]
	if !ok {
		return nil, &UnknownFunctionError{Name: word}
	}
	var args []node
	var err error
	if word == "SUBSTRING" || word == "SUBSTR" {
		args, err = p.substringArgs()
	} else {
		args, err = p.args()
	}
	if err != nil {
		return nil, err
	}
	if len(args) < fn.min || fn.max >= 0 && len(args) > fn.max {
		return nil, &FormError{Func: word, Msg: fmt.Sprintf("%s takes %s arguments, not %d", word, fn.arity(), len(args))}
	}
	if fn.check != nil {
		if err := fn.check(word, args); err != nil {
			return nil, err
		}
	}
	return &callNode{name: word, args: args}, nil
}

// encryptKey refuses KEY [db.]name, a key made with CREATE ENCRYPTKEY,
// naming it: loadnode keeps no encryption keys.
func (p *exprParser) encryptKey() error {
	name := p.next().text
	if p.acceptOp(".") {
		if t := p.peek(); t.kind == 'i' || t.kind == 'q' {
			name += "." + p.next().text
		}
	}
	return &FormError{Func: "KEY", Msg: fmt.Sprintf("KEY %s: encryption keys (CREATE ENCRYPTKEY) are not supported by loadnode; give the key as a string", name)}
}

func (p *exprParser) ref(t exprToken) (node, error) {
	slot, err := p.resolve(t.text)
	if err != nil {
		return nil, err
	}
	return &refNode{name: t.text, slot: slot}, nil
}

func (p *exprParser) caseExpr() (node, error) {
	n := &caseNode{}
	if !p.kw("WHEN") {
		op, err := p.or()
		if err != nil {
			return nil, err
		}
		n.operand = op
	}
	for p.acceptKw("WHEN") {
		w, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.acceptKw("THEN") {
			return nil, fmt.Errorf("expected THEN at %d", p.peek().pos)
		}
		th, err := p.or()
		if err != nil {
			return nil, err
		}
		n.whens, n.thens = append(n.whens, w), append(n.thens, th)
	}
	if len(n.whens) == 0 {
		return nil, fmt.Errorf("CASE without WHEN at %d", p.peek().pos)
	}
	if p.acceptKw("ELSE") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		n.els = e
	}
	if !p.acceptKw("END") {
		return nil, fmt.Errorf("expected END at %d", p.peek().pos)
	}
	return n, nil
}
