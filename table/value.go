package table

import (
	"math"
	"strconv"
)

// Value is one typed cell. Which field is meaningful follows the column type
// (api.ColumnType says the same, type by type):
//
//	INT8, INT16, INT32, INT64   Int, within the type's range
//	TIMESTAMP                   Int: microseconds since the Unix epoch, UTC
//	DATE                        Int: days since 1970-01-01
//	DATETIME                    Int: wall clock (no zone), microseconds since
//	                            1970-01-01 00:00:00, at the column's precision
//	INT128                      Hi:Int, a signed 128-bit two's complement
//	                            integer (Int holds the low 64 bits)
//	DECIMAL(p,s)                Hi:Int, the unscaled integer: the value is
//	                            Hi:Int / 10^s, |Hi:Int| < 10^p (exact)
//	FLOAT64                     Float
//	FLOAT32                     Float, a value a float32 represents exactly
//	STRING, CHAR, VARCHAR       Str (UTF-8; CHAR and VARCHAR at most the
//	                            column's length in bytes)
//	JSON                        Str: valid JSON, compact
//	BOOL                        Bool
//
// A NULL cell has Null set and the other fields zero.
type Value struct {
	Null  bool
	Int   int64
	Hi    int64
	Float float64
	Str   string
	Bool  bool
}

// reset makes v the zero Value field by field, as *v = Value{} does. A
// parser resets a cell of every field of every record: while the GC marks,
// the whole-struct form takes a bulk write barrier, this one at most one
// pointer's.
func (v *Value) reset() {
	v.Null, v.Int, v.Hi, v.Float, v.Bool = false, 0, 0, 0, false
	if v.Str != "" {
		v.Str = ""
	}
}

// Pos is where a row came from.
type Pos struct {
	JobID     uint64
	Partition int32
	Offset    int64
}

// Timestamps are bounded to years 0000..9999 so that every stored value
// renders as RFC 3339 and parses back.
const (
	minTimestampMicros int64 = -62167219200 * 1e6        // 0000-01-01T00:00:00Z
	maxTimestampMicros int64 = 253402300799*1e6 + 999999 // 9999-12-31T23:59:59.999999Z
)

// numError says why a text did not parse.
type numError uint8

const (
	numOK numError = iota
	numSyntax
	numRange
)

// parseInt parses an optionally signed decimal integer.
func parseInt(b []byte) (int64, numError) {
	if len(b) == 0 {
		return 0, numSyntax
	}
	neg := false
	switch b[0] {
	case '-':
		neg = true
		b = b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, numSyntax
	}
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, numSyntax
		}
		if u > (math.MaxUint64-9)/10 {
			// Keep scanning for syntax, but the value is out of range.
			for _, c := range b {
				if c-'0' > 9 {
					return 0, numSyntax
				}
			}
			return 0, numRange
		}
		u = u*10 + uint64(d)
	}
	if neg {
		if u > 1<<63 {
			return 0, numRange
		}
		return -int64(u), numOK
	}
	if u > math.MaxInt64 {
		return 0, numRange
	}
	return int64(u), numOK
}

// parseFloat parses a finite float64.
func parseFloat(b []byte) (float64, numError) {
	if f, ok := parseSimpleFloat(b); ok {
		return f, numOK
	}
	// string(b) does not escape, so short inputs convert on the stack.
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, numRange
		}
		return 0, numSyntax
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, numSyntax
	}
	return f, numOK
}

// float64pow10 are the powers of ten a float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseSimpleFloat parses the common decimal -?d+(.d+)? of at most 15
// significant digits and 22 decimals, and reports false for anything else
// (signs but '-', exponents, longer numbers, malformed input:
// strconv.ParseFloat decides those). Its result is strconv.ParseFloat's,
// bit for bit: the digits as an integer below 10^15 and 10^k (k <= 22) are
// exact float64s, and one IEEE division of exact operands rounds
// correctly, as strconv's own exact path does. It skips strconv's general
// scanner (a tenth of a json load's parse).
func parseSimpleFloat(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && b[0] == '-' {
		i, neg = 1, true
	}
	var mant uint64
	digits, sig, frac, dot := 0, 0, 0, false
	start := i
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if mant != 0 {
				sig++
			}
			if dot {
				frac++
			}
			if sig > 15 {
				return 0, false
			}
		case c == '.' && !dot && i > start:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 || (dot && frac == 0) || frac >= len(float64pow10) {
		return 0, false
	}
	f := float64(mant) / float64pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// parseBool parses true/false/1/0, case-insensitively.
func parseBool(b []byte) (bool, bool) {
	switch len(b) {
	case 1:
		switch b[0] {
		case '1':
			return true, true
		case '0':
			return false, true
		}
	case 4:
		if b[0]|0x20 == 't' && b[1]|0x20 == 'r' && b[2]|0x20 == 'u' && b[3]|0x20 == 'e' {
			return true, true
		}
	case 5:
		if b[0]|0x20 == 'f' && b[1]|0x20 == 'a' && b[2]|0x20 == 'l' && b[3]|0x20 == 's' && b[4]|0x20 == 'e' {
			return false, true
		}
	}
	return false, false
}

// epochMillisToMicros converts epoch milliseconds, bounded to the timestamp
// range.
func epochMillisToMicros(ms int64) (int64, numError) {
	if ms < minTimestampMicros/1000 || ms > maxTimestampMicros/1000 {
		return 0, numRange
	}
	return ms * 1000, numOK
}

// parseTimestamp parses, into microseconds since the epoch UTC:
//
//	2006-01-02T15:04:05[.fffffffff](Z|±07:00)   RFC 3339 (t and z also)
//	2006-01-02 15:04:05[.ffffff][zone]           UTC unless a zone is given
//	2006-01-02T15:04:05[.ffffff]                 UTC
//	2006-01-02                                   midnight UTC
//	1136214245000                                integer epoch milliseconds
//
// Fractions beyond microseconds are truncated.
func parseTimestamp(b []byte) (int64, numError) {
	if len(b) == 0 {
		return 0, numSyntax
	}
	if len(b) < 10 || b[4] != '-' {
		ms, e := parseInt(b)
		if e != numOK {
			return 0, e
		}
		return epochMillisToMicros(ms)
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	if !ok1 || !ok2 || !ok3 || b[7] != '-' {
		return 0, numSyntax
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) {
		return 0, numSyntax
	}
	secs := daysFromCivil(year, month, day) * 86400
	var micros int64
	b = b[10:]
	if len(b) > 0 {
		if len(b) < 9 || (b[0] != ' ' && b[0] != 'T' && b[0] != 't') || b[3] != ':' || b[6] != ':' {
			return 0, numSyntax
		}
		h, ok1 := digits(b[1:3])
		m, ok2 := digits(b[4:6])
		s, ok3 := digits(b[7:9])
		if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || s > 59 {
			return 0, numSyntax
		}
		secs += h*3600 + m*60 + s
		b = b[9:]
		if len(b) > 0 && b[0] == '.' {
			n := 1
			var frac int64
			for n < len(b) && b[n]-'0' <= 9 {
				if n <= 6 {
					frac = frac*10 + int64(b[n]-'0')
				}
				n++
			}
			if n == 1 || n > 10 {
				return 0, numSyntax
			}
			for i := n; i <= 6; i++ {
				frac *= 10
			}
			micros = frac
			b = b[n:]
		}
		switch {
		case len(b) == 0:
		case len(b) == 1 && (b[0] == 'Z' || b[0] == 'z'):
		case len(b) == 6 && (b[0] == '+' || b[0] == '-') && b[3] == ':':
			zh, ok1 := digits(b[1:3])
			zm, ok2 := digits(b[4:6])
			if !ok1 || !ok2 || zh > 23 || zm > 59 {
				return 0, numSyntax
			}
			off := zh*3600 + zm*60
			if b[0] == '+' {
				secs -= off
			} else {
				secs += off
			}
		default:
			return 0, numSyntax
		}
	}
	// secs is within a few hundred billion: no overflow.
	t := secs*1e6 + micros
	if t < minTimestampMicros || t > maxTimestampMicros {
		return 0, numRange
	}
	return t, numOK
}

// digits parses a short run of ASCII digits.
func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	return n, true
}

func daysIn(month, year int64) int64 {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
