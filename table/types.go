package table

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
)

var utf8Valid = utf8.Valid

// Limits of the Doris types (api.ColumnType documents each type's form).
const (
	// MaxDecimalPrecision is the largest DECIMAL precision: 38 digits fit
	// in a signed 128-bit unscaled integer (10^38 < 2^127).
	MaxDecimalPrecision = 38
	// MaxDatetimePrecision is the largest DATETIME fraction precision.
	MaxDatetimePrecision = 6
	// MaxVarcharLength is Doris's largest VARCHAR length, in bytes, and
	// the length of a VARCHAR declared without one.
	MaxVarcharLength = 65533
	// MaxCharLength is Doris's largest CHAR length, in bytes.
	MaxCharLength = 255
)

// colMeta is what a Schema knows of one column beyond its type.
type colMeta struct {
	notNull bool
	hasDef  bool
	def     Value // the parsed default, when hasDef
	// defNow: the default is the load time (DATETIME, Doris DEFAULT
	// CURRENT_TIMESTAMP[(p)]) with nowPrec fraction digits; hasDef is
	// then false and the parser supplies the value (Parser.SetLoadTime).
	defNow  bool
	nowPrec int
	// jobZone: a TIMESTAMP whose zone-less text is a wall clock in the
	// job's zone (Doris's TIMESTAMP; zonedTimestamp)
	jobZone   bool
	length    int // CHAR, VARCHAR: bytes
	precision int // DECIMAL digits, DATETIME fraction digits
	scale     int // DECIMAL fraction digits
}

// isText reports whether values of t are held in Value.Str.
func isText(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
		return true
	}
	return false
}

// isInt reports whether values of t are held in Value.Int as integers
// range-checked by intRange.
func isInt(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64:
		return true
	}
	return false
}

// intRange is the range of an integer type.
func intRange(t api.ColumnType) (int64, int64) {
	switch t {
	case api.ColumnType_INT8:
		return math.MinInt8, math.MaxInt8
	case api.ColumnType_INT16:
		return math.MinInt16, math.MaxInt16
	case api.ColumnType_INT32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// typeName is the Doris name of a column type, for messages.
func typeName(t api.ColumnType) string {
	switch t {
	case api.ColumnType_INT8:
		return "TINYINT"
	case api.ColumnType_INT16:
		return "SMALLINT"
	case api.ColumnType_INT32:
		return "INT"
	case api.ColumnType_INT128:
		return "LARGEINT"
	case api.ColumnType_FLOAT32:
		return "FLOAT"
	}
	return t.String()
}

// ---------------------------------------------------------------- 128 bits

var (
	two128    = new(big.Int).Lsh(big.NewInt(1), 128)
	mask64    = new(big.Int).SetUint64(math.MaxUint64)
	minInt128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))
	maxInt128 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 127), big.NewInt(1))
)

// pow10 returns 10^n.
func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// set128 stores b, which must fit in 128 signed bits, in v.Hi:v.Int.
func set128(v *Value, b *big.Int) {
	u := new(big.Int).Set(b)
	if u.Sign() < 0 {
		u.Add(u, two128)
	}
	v.Int = int64(new(big.Int).And(u, mask64).Uint64())
	v.Hi = int64(new(big.Int).Rsh(u, 64).Uint64())
}

// Big128 returns the 128-bit integer v.Hi:v.Int (INT128, and the unscaled
// value of a DECIMAL).
func Big128(v Value) *big.Int {
	b := new(big.Int).SetInt64(v.Hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(uint64(v.Int)))
}

// parseLargeint parses a decimal integer into a signed 128-bit value.
func parseLargeint(b []byte, v *Value) numError {
	s := string(b)
	if s == "" || strings.Trim(strings.TrimLeft(s, "+-"), "0123456789") != "" || len(s)-len(strings.TrimLeft(s, "+-")) > 1 || strings.TrimLeft(s, "+-") == "" {
		return numSyntax
	}
	n, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10)
	if !ok {
		return numSyntax
	}
	if n.Cmp(minInt128) < 0 || n.Cmp(maxInt128) > 0 {
		return numRange
	}
	set128(v, n)
	return numOK
}

// ---------------------------------------------------------------- decimal

// parseDecimal parses a decimal number ("-12.345", "1e3", "+.5") into the
// unscaled integer at scale, rounding half away from zero past the scale, as
// Doris does. The value must have at most precision-scale integer digits:
// numRange otherwise (v then holds the largest or smallest DECIMAL(precision,
// scale), which no caller loads: Doris loads NULL without strict mode). It never goes
// through a float.
func parseDecimal(b []byte, precision, scale int, v *Value) numError {
	i := 0
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var digits []byte
	point := -1 // number of digits before the point
	nd := 0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			nd++
		case c == '.' && point < 0:
			point = nd
		default:
			goto exp
		}
	}
exp:
	if nd == 0 {
		return numSyntax
	}
	if point < 0 {
		point = nd
	}
	if i < len(b) {
		if b[i] != 'e' && b[i] != 'E' {
			return numSyntax
		}
		e, en := parseInt(b[i+1:])
		if en != numOK || e > 400 || e < -400 {
			return numSyntax
		}
		point += int(e)
	}
	// value = 0.digits * 10^point; unscaled = digits * 10^(scale-(nd-point)).
	shift := scale - (nd - point)
	n, _ := new(big.Int).SetString(string(digits), 10)
	if shift >= 0 {
		n.Mul(n, pow10(shift))
	} else {
		q, r := new(big.Int).QuoRem(n, pow10(-shift), new(big.Int))
		if r.Mul(r, big.NewInt(2)).Cmp(pow10(-shift)) >= 0 {
			q.Add(q, big.NewInt(1))
		}
		n = q
	}
	limit := pow10(precision)
	if n.Cmp(limit) >= 0 {
		n.Sub(limit, big.NewInt(1))
		if neg {
			n.Neg(n)
		}
		set128(v, n)
		return numRange
	}
	if neg {
		n.Neg(n)
	}
	set128(v, n)
	return numOK
}

// FormatDecimal renders a DECIMAL value with exactly scale fraction digits.
func FormatDecimal(v Value, scale int) string {
	return string(appendDecimal(nil, v, scale))
}

func appendDecimal(dst []byte, v Value, scale int) []byte {
	n := Big128(v)
	if n.Sign() < 0 {
		dst = append(dst, '-')
		n.Neg(n)
	}
	s := n.String()
	if scale == 0 {
		return append(dst, s...)
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	dst = append(dst, s[:len(s)-scale]...)
	dst = append(dst, '.')
	return append(dst, s[len(s)-scale:]...)
}

// ---------------------------------------------------------------- date, datetime

// Dates and datetimes are bounded to years 0000..9999, as in Doris.
const (
	minDateDays = -719528 // 0000-01-01
	maxDateDays = 2932896 // 9999-12-31
)

// parseDatetime parses a wall-clock date and time, as Doris reads one:
//
//	2006-01-02                       midnight
//	2006-01-02 15:04:05[.ffffff]     also T or : between date and time
//	2006-01-02 15:04[:05]            seconds may be left out
//	20060102[150405]                 digits only
//
// It returns microseconds since 1970-01-01 00:00:00, with the fraction
// rounded to prec digits (half up, as Doris). A zone is not accepted here:
// zonedDatetime reads one.
func parseDatetime(b []byte, prec int) (int64, numError) {
	b = bytes.TrimSpace(b)
	var y, mo, d, h, mi, s, frac int64
	fracDigits := 0
	if len(b) >= 8 && isDigits(b[:8]) && (len(b) == 8 || len(b) == 14 && isDigits(b)) {
		y, _ = digits(b[0:4])
		mo, _ = digits(b[4:6])
		d, _ = digits(b[6:8])
		if len(b) == 14 {
			h, _ = digits(b[8:10])
			mi, _ = digits(b[10:12])
			s, _ = digits(b[12:14])
		}
	} else {
		if len(b) < 8 {
			return 0, numSyntax
		}
		// date: y-m-d with one or two digit month and day
		var ok bool
		var rest []byte
		if y, rest, ok = field(b, 4, 4); !ok || len(rest) == 0 || (rest[0] != '-' && rest[0] != '/') {
			return 0, numSyntax
		}
		sep := rest[0]
		if mo, rest, ok = field(rest[1:], 1, 2); !ok || len(rest) == 0 || rest[0] != sep {
			return 0, numSyntax
		}
		if d, rest, ok = field(rest[1:], 1, 2); !ok {
			return 0, numSyntax
		}
		if len(rest) > 0 {
			if rest[0] != ' ' && rest[0] != 'T' && rest[0] != 't' && rest[0] != ':' {
				return 0, numSyntax
			}
			rest = bytes.TrimLeft(rest[1:], " ")
			if h, rest, ok = field(rest, 1, 2); !ok {
				return 0, numSyntax
			}
			if len(rest) > 0 && rest[0] == ':' {
				if mi, rest, ok = field(rest[1:], 1, 2); !ok {
					return 0, numSyntax
				}
				if len(rest) > 0 && rest[0] == ':' {
					if s, rest, ok = field(rest[1:], 1, 2); !ok {
						return 0, numSyntax
					}
				}
			}
			if len(rest) > 0 && rest[0] == '.' {
				rest = rest[1:]
				n := 0
				for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
					n++
				}
				if n == 0 {
					return 0, numSyntax
				}
				keep := min(n, 7) // one more than microseconds, for rounding
				frac, _ = digits(rest[:keep])
				fracDigits = keep
				rest = rest[n:]
			}
			if len(rest) > 0 {
				return 0, numSyntax
			}
		}
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h > 23 || mi > 59 || s > 59 {
		return 0, numSyntax
	}
	// frac as microseconds rounded to prec digits.
	for fracDigits < 7 {
		frac *= 10
		fracDigits++
	}
	unit := int64(10)
	for i := prec; i < 6; i++ {
		unit *= 10
	}
	frac = (frac + unit/2) / unit * unit / 10 // rounded to prec digits, in micros
	days := daysFromCivil(y, mo, d)
	t := (days*86400+h*3600+mi*60+s)*1e6 + frac
	if days < minDateDays || t > (maxDateDays+1)*86400*1e6-1 {
		return 0, numRange
	}
	return t, numOK
}

// parseDate parses a date (a datetime's time of day is dropped, as Doris
// does) into days since 1970-01-01.
func parseDate(b []byte) (int64, numError) {
	t, e := parseDatetime(b, 6)
	if e != numOK {
		return 0, e
	}
	return floorDiv(t, 86400*1e6), numOK
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// field reads between lo and hi digits from the start of b.
func field(b []byte, lo, hi int) (int64, []byte, bool) {
	n := 0
	for n < len(b) && n < hi && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n < lo {
		return 0, nil, false
	}
	v, _ := digits(b[:n])
	return v, b[n:], true
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendDate appends days since 1970-01-01 as 2006-01-02.
func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	dst = appendPad(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPad(dst, m, 2)
	dst = append(dst, '-')
	return appendPad(dst, d, 2)
}

// appendDatetime appends a wall-clock datetime as 2006-01-02 15:04:05 with
// prec fraction digits.
func appendDatetime(dst []byte, micros int64, prec int) []byte {
	days := floorDiv(micros, 86400*1e6)
	rem := micros - days*86400*1e6
	dst = appendDate(dst, days)
	secs := rem / 1e6
	dst = append(dst, ' ')
	dst = appendPad(dst, secs/3600, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, secs/60%60, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, secs%60, 2)
	if prec > 0 {
		f := strconv.FormatInt(rem%1e6+1e6, 10)[1:]
		dst = append(dst, '.')
		dst = append(dst, f[:prec]...)
	}
	return dst
}

func appendPad(dst []byte, n int64, width int) []byte {
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// ---------------------------------------------------------------- json

// canonicalJSON validates b as one JSON document and returns it compact
// (insignificant white space removed; keys and numbers as written).
func canonicalJSON(b []byte) (string, bool) {
	if !json.Valid(b) {
		return "", false
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return "", false
	}
	return out.String(), true
}

// ---------------------------------------------------------------- conversion

// Reasons a text does not convert, beyond numSyntax and numRange.
const (
	numLength numError = iota + 16 // longer than a CHAR or VARCHAR allows
	numUTF8                        // not valid UTF-8
	numJSON                        // not valid JSON
)

// convertText converts text b into a value of a column of type t with
// options m (the conversion of CSV fields, JSON strings and defaults). A
// text value (STRING, CHAR, VARCHAR, JSON) is a copy of b. On failure it
// returns a reason.
func convertText(t api.ColumnType, m colMeta, b []byte) (Value, string) {
	var v Value
	e := convertInto(&v, t, &m, b, time.UTC)
	if e == numOK {
		if isText(t) && t != api.ColumnType_JSON {
			v.Str = string(b)
		}
		return v, ""
	}
	return v, convReason(t, m, b, e)
}

// convertInto converts b into v, except that it leaves v.Str unset for
// STRING, CHAR and VARCHAR (the caller slices its own copy of b). A DATE
// or DATETIME text with a zone is read as a wall clock of loc (zone.go).
func convertInto(v *Value, t api.ColumnType, m *colMeta, b []byte, loc *time.Location) numError {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64:
		n, e := parseInt(b)
		if e != numOK {
			return e
		}
		if lo, hi := intRange(t); n < lo || n > hi {
			return numRange
		}
		v.Int = n
	case api.ColumnType_INT128:
		return parseLargeint(b, v)
	case api.ColumnType_DECIMAL:
		return parseDecimal(b, m.precision, m.scale, v)
	case api.ColumnType_FLOAT64:
		f, e := parseFloat(b)
		if e != numOK {
			return e
		}
		v.Float = f
	case api.ColumnType_FLOAT32:
		f, e := parseFloat(b)
		if e != numOK {
			return e
		}
		if math.Abs(f) > math.MaxFloat32 {
			return numRange
		}
		v.Float = float64(float32(f))
	case api.ColumnType_BOOL:
		t, ok := parseBool(b)
		if !ok {
			return numSyntax
		}
		v.Bool = t
	case api.ColumnType_TIMESTAMP:
		parse := parseTimestamp
		if m.jobZone {
			// Without a job (an INSERT, a DEFAULT): UTC.
			parse = func(b []byte) (int64, numError) { return zonedTimestamp(b, time.UTC) }
		}
		n, e := parse(b)
		if e != numOK {
			return e
		}
		v.Int = n
	case api.ColumnType_DATE:
		n, e := parseDate(b)
		if e == numSyntax {
			n, e = zonedDate(b)
		}
		if e != numOK {
			return e
		}
		v.Int = n
	case api.ColumnType_DATETIME:
		n, e := parseDatetime(b, m.precision)
		if e == numSyntax {
			n, e = zonedDatetime(b, m.precision, loc)
		}
		if e != numOK {
			return e
		}
		v.Int = n
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR:
		if !utf8Valid(b) {
			return numUTF8
		}
		if t != api.ColumnType_STRING && len(b) > m.length {
			return numLength
		}
	case api.ColumnType_JSON:
		s, ok := canonicalJSON(b)
		if !ok {
			return numJSON
		}
		v.Str = s
	}
	return numOK
}

// truncText is text b (valid UTF-8) cut to at most n bytes at a character
// boundary: a CHAR(n) or VARCHAR(n) value too long as Doris loads it
// without strict mode (the length counts bytes; a character is never
// split, so the result may be shorter than n).
func truncText(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return b[:n]
}

// convReason says why b did not convert.
func convReason(t api.ColumnType, m colMeta, b []byte, e numError) string {
	switch e {
	case numRange:
		if t == api.ColumnType_DECIMAL {
			return quote(b) + " is out of range for DECIMAL(" + strconv.Itoa(m.precision) + "," + strconv.Itoa(m.scale) + ")"
		}
		return quote(b) + " is out of range for " + typeName(t)
	case numLength:
		return quote(b) + " is " + strconv.Itoa(len(b)) + " bytes, longer than " + typeName(t) + "(" + strconv.Itoa(m.length) + ")"
	case numUTF8:
		return quote(b) + " is not valid UTF-8"
	case numJSON:
		return quote(b) + " is not valid JSON"
	}
	return quote(b) + " is not " + article(t)
}

// Value128 returns the Value holding b (INT128, or the unscaled value of a
// DECIMAL) in Hi:Int.
//
// REQUIRES: b fits in 128 signed bits.
func Value128(b *big.Int) Value {
	var v Value
	set128(&v, b)
	return v
}

// zonedTimestamp reads b as Doris reads a TIMESTAMP: text without an
// offset is a DATETIME's text (parseDatetime, to whole seconds), a wall
// clock in loc; text with one ("...Z", "...+08:00", or another zone of
// zone.go: "...UTC+8", "...Asia/Shanghai") is that instant.
func zonedTimestamp(b []byte, loc *time.Location) (int64, numError) {
	b = bytes.TrimSpace(b)
	if n := len(b); n > 10 && (b[n-1] == 'Z' || b[n-1] == 'z' || n >= 16 && (b[n-6] == '+' || b[n-6] == '-') && b[n-3] == ':') {
		return parseTimestamp(b)
	}
	w, e := parseDatetime(b, 0)
	if e == numSyntax {
		// Another zone (UTC+8, Asia/Shanghai: zone.go): that instant.
		body, zone := cutZone(b)
		if z, ok := lookupZone(string(zone)); ok && len(zone) > 0 {
			if w, e = parseDatetime(body, 6); e == numOK {
				w, loc = instant(w, z), time.UTC
			}
		}
	}
	if e != numOK {
		return 0, e
	}
	t := time.UnixMicro(w).UTC()
	u := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UnixMicro()
	if u < minTimestampMicros || u > maxTimestampMicros {
		return 0, numRange
	}
	return u, numOK
}
