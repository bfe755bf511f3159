package query

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// Column is a result column: its name and the type its cells are rendered
// as.
type Column struct {
	Name string
	Type api.ColumnType
	// Precision is a DECIMAL's digits or a DATETIME's fraction digits;
	// Scale a DECIMAL's fraction digits.
	Precision, Scale int32
}

// Result is a query's answer: its columns and its rows, each cell a wire
// value (NULL is a Value_Null) in the columns' order.
type Result struct {
	Columns []Column
	Rows    [][]*api.Value
}

// Text is the result's cells as Doris's MySQL protocol renders them
// (Render): nil for NULL.
func (r *Result) Text() [][]*string {
	out := make([][]*string, len(r.Rows))
	for i, row := range r.Rows {
		out[i] = make([]*string, len(row))
		for j, v := range row {
			if s, ok := Render(r.Columns[j], v); ok {
				out[i][j] = &s
			}
		}
	}
	return out
}

// ResultSet is the result as the wire's result set: the column names and
// each row's cells as Text renders them, "NULL" for NULL.
func (r *Result) ResultSet() *api.ResultSet {
	rs := &api.ResultSet{}
	for _, c := range r.Columns {
		rs.Columns = append(rs.Columns, c.Name)
	}
	for _, row := range r.Text() {
		out := &api.ResultRow{Values: make([]string, len(row))}
		for j, cell := range row {
			out.Values[j] = "NULL"
			if cell != nil {
				out.Values[j] = *cell
			}
		}
		rs.Rows = append(rs.Rows, out)
	}
	return rs
}

// Render is a cell as Doris's MySQL protocol renders it in text: ok false
// for NULL. Integers in decimal; BOOLEAN as 1 or 0; DECIMAL with its scale
// (LARGEINT without); FLOAT and DOUBLE with the shortest digits that read
// back, in exponent form (1e+16, 1.5e-05) from 10^16 (FLOAT: 10^7) and
// below 10^-4, as Doris prints them; DATE as YYYY-MM-DD; DATETIME as
// YYYY-MM-DD HH:MM:SS with the column's fraction digits; text and JSON as
// stored.
func Render(c Column, v *api.Value) (string, bool) {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return strconv.FormatInt(k.Int64, 10), true
	case *api.Value_Float64:
		bits := 64
		if c.Type == api.ColumnType_FLOAT32 {
			bits = 32
		}
		return formatFloat(k.Float64, bits), true
	case *api.Value_String_:
		return k.String_, true
	case *api.Value_Json:
		return k.Json, true
	case *api.Value_Decimal:
		return k.Decimal, true
	case *api.Value_Bool:
		if k.Bool {
			return "1", true
		}
		return "0", true
	case *api.Value_Date:
		return time.Unix(int64(k.Date)*86400, 0).UTC().Format(time.DateOnly), true
	case *api.Value_DatetimeMicros:
		return formatDatetime(k.DatetimeMicros, int(c.Precision)), true
	case *api.Value_TimestampMicros:
		return formatDatetime(k.TimestampMicros, int(c.Precision)), true
	}
	return "", false
}

// formatDatetime is YYYY-MM-DD HH:MM:SS and prec digits of fraction.
func formatDatetime(us int64, prec int) string {
	t := time.UnixMicro(us).UTC()
	s := t.Format(time.DateTime)
	if prec > 0 {
		frac := strconv.Itoa(t.Nanosecond()/1000 + 1e6)[1:]
		s += "." + frac[:min(prec, 6)]
	}
	return s
}

// formatFloat prints f as Doris does ({fmt}'s shortest form): fixed
// notation for 10^-4 <= |f| < 10^16 (FLOAT: 10^7), else d[.ddd]e±XX.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	upper := 16
	if bits == 32 {
		upper = 7
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	_, exp, _ := strings.Cut(e, "e")
	n, _ := strconv.Atoi(exp)
	if n < -4 || n >= upper {
		return e
	}
	return strconv.FormatFloat(f, 'f', -1, bits)
}

// isNull reports whether v is NULL.
func isNull(v *api.Value) bool {
	switch v.GetKind().(type) {
	case nil, *api.Value_Null:
		return true
	}
	return false
}

var nullValue = &api.Value{Kind: &api.Value_Null{Null: true}}

// valueOf is an expression's value as a wire value (a TIME as its text).
func valueOf(c table.Const) *api.Value {
	switch c.Kind {
	case table.ConstInt:
		return &api.Value{Kind: &api.Value_Int64{Int64: c.Int}}
	case table.ConstFloat:
		return &api.Value{Kind: &api.Value_Float64{Float64: c.Float}}
	case table.ConstText:
		return &api.Value{Kind: &api.Value_String_{String_: c.Text}}
	case table.ConstBool:
		return &api.Value{Kind: &api.Value_Bool{Bool: c.Int != 0}}
	case table.ConstDate:
		return &api.Value{Kind: &api.Value_Date{Date: int32(c.Int)}}
	case table.ConstDatetime:
		return &api.Value{Kind: &api.Value_DatetimeMicros{DatetimeMicros: c.Int}}
	case table.ConstTime:
		return &api.Value{Kind: &api.Value_String_{String_: c.TimeText()}}
	}
	return nullValue
}

// compareValues orders two values, NULL first: numbers as numbers (DECIMAL
// exactly), times by time, text bytewise.
func compareValues(a, b *api.Value) int {
	an, bn := isNull(a), isNull(b)
	switch {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	switch x := a.GetKind().(type) {
	case *api.Value_Int64:
		switch y := b.GetKind().(type) {
		case *api.Value_Int64:
			return cmp3(x.Int64, y.Int64)
		case *api.Value_Decimal:
			return decimalCmp(strconv.FormatInt(x.Int64, 10), y.Decimal)
		}
	case *api.Value_Decimal:
		switch y := b.GetKind().(type) {
		case *api.Value_Decimal:
			return decimalCmp(x.Decimal, y.Decimal)
		case *api.Value_Int64:
			return decimalCmp(x.Decimal, strconv.FormatInt(y.Int64, 10))
		}
	case *api.Value_String_:
		if y, ok := b.GetKind().(*api.Value_String_); ok {
			return strings.Compare(x.String_, y.String_)
		}
	case *api.Value_Date:
		if y, ok := b.GetKind().(*api.Value_Date); ok {
			return cmp3(int64(x.Date), int64(y.Date))
		}
	case *api.Value_DatetimeMicros:
		if y, ok := b.GetKind().(*api.Value_DatetimeMicros); ok {
			return cmp3(x.DatetimeMicros, y.DatetimeMicros)
		}
	case *api.Value_TimestampMicros:
		if y, ok := b.GetKind().(*api.Value_TimestampMicros); ok {
			return cmp3(x.TimestampMicros, y.TimestampMicros)
		}
	case *api.Value_Bool:
		if y, ok := b.GetKind().(*api.Value_Bool); ok {
			return cmp3(b2i(x.Bool), b2i(y.Bool))
		}
	case *api.Value_Json:
		if y, ok := b.GetKind().(*api.Value_Json); ok {
			return strings.Compare(x.Json, y.Json)
		}
	}
	// Values of different kinds (an expression's): as numbers when both
	// are, else as text.
	if f, ok := floatOf(a); ok {
		if g, ok := floatOf(b); ok {
			switch {
			case f < g:
				return -1
			case f > g:
				return 1
			}
			return 0
		}
	}
	s, _ := Render(Column{Precision: 6}, a)
	t, _ := Render(Column{Precision: 6}, b)
	return strings.Compare(s, t)
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

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// floatOf reads a numeric value as a float.
func floatOf(v *api.Value) (float64, bool) {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return float64(k.Int64), true
	case *api.Value_Float64:
		return k.Float64, true
	case *api.Value_Decimal:
		f, err := strconv.ParseFloat(k.Decimal, 64)
		return f, err == nil
	case *api.Value_Bool:
		return float64(b2i(k.Bool)), true
	}
	return 0, false
}

// decimalCmp compares two decimal texts ([-]digits[.digits]) exactly.
func decimalCmp(a, b string) int {
	na, nb := strings.HasPrefix(a, "-"), strings.HasPrefix(b, "-")
	a, b = strings.TrimPrefix(a, "-"), strings.TrimPrefix(b, "-")
	if isZero(a) && isZero(b) {
		return 0
	}
	switch {
	case na && !nb:
		return -1
	case !na && nb:
		return 1
	}
	c := absCmp(a, b)
	if na {
		return -c
	}
	return c
}

func isZero(s string) bool { return strings.Trim(s, "0.") == "" }

func absCmp(a, b string) int {
	ai, af, _ := strings.Cut(a, ".")
	bi, bf, _ := strings.Cut(b, ".")
	ai, bi = strings.TrimLeft(ai, "0"), strings.TrimLeft(bi, "0")
	if len(ai) != len(bi) {
		return cmp3(int64(len(ai)), int64(len(bi)))
	}
	if c := strings.Compare(ai, bi); c != 0 {
		return c
	}
	for i := 0; i < max(len(af), len(bf)); i++ {
		x, y := byte('0'), byte('0')
		if i < len(af) {
			x = af[i]
		}
		if i < len(bf) {
			y = bf[i]
		}
		if x != y {
			return cmp3(int64(x), int64(y))
		}
	}
	return 0
}

// appendKey appends v's group key encoding: equal values (as GROUP BY
// groups them; NULLs together) encode equally.
func appendKey(dst []byte, v *api.Value) []byte {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return binary.BigEndian.AppendUint64(append(dst, 1), uint64(k.Int64))
	case *api.Value_Float64:
		f := k.Float64
		if f == 0 {
			f = 0 // -0 groups with 0
		}
		return binary.BigEndian.AppendUint64(append(dst, 2), math.Float64bits(f))
	case *api.Value_String_:
		return append(binary.AppendUvarint(append(dst, 3), uint64(len(k.String_))), k.String_...)
	case *api.Value_Json:
		return append(binary.AppendUvarint(append(dst, 4), uint64(len(k.Json))), k.Json...)
	case *api.Value_Decimal:
		return append(binary.AppendUvarint(append(dst, 5), uint64(len(k.Decimal))), k.Decimal...)
	case *api.Value_Bool:
		return append(dst, 6, byte(b2i(k.Bool)))
	case *api.Value_Date:
		return binary.BigEndian.AppendUint32(append(dst, 7), uint32(k.Date))
	case *api.Value_DatetimeMicros:
		return binary.BigEndian.AppendUint64(append(dst, 8), uint64(k.DatetimeMicros))
	case *api.Value_TimestampMicros:
		return binary.BigEndian.AppendUint64(append(dst, 9), uint64(k.TimestampMicros))
	}
	return append(dst, 0)
}

// parseDecimal reads decimal text as its unscaled integer and scale.
func parseDecimal(s string) (*big.Int, int, bool) {
	s = strings.TrimSpace(s)
	i, f, _ := strings.Cut(s, ".")
	n, ok := new(big.Int).SetString(i+f, 10)
	return n, len(f), ok
}

// formatDecimal is the unscaled n with scale fraction digits.
func formatDecimal(n *big.Int, scale int) string {
	s := new(big.Int).Abs(n).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if n.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// rescale multiplies n by 10^by.
func rescale(n *big.Int, by int) *big.Int {
	if by <= 0 {
		return n
	}
	return n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(by)), nil))
}
