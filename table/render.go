package table

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
)

// ToProto converts a row to its wire form: each api.Value's kind follows the
// column type, NULL is Value_Null{true}. Invalid UTF-8 in a STRING becomes
// U+FFFD (protobuf strings must be UTF-8; the parsers never produce it).
//
// REQUIRES: len(vals) == s.NumColumns().
func ToProto(s *Schema, vals []Value, pos Pos) *api.Row {
	row := &api.Row{
		Values:    make([]*api.Value, len(vals)),
		JobId:     pos.JobID,
		Partition: pos.Partition,
		Offset:    pos.Offset,
	}
	// One allocation for all the values of the row.
	backing := make([]api.Value, len(vals))
	for i := range vals {
		v, pv := &vals[i], &backing[i]
		switch {
		case v.Null:
			pv.Kind = &api.Value_Null{Null: true}
		case isInt(s.types[i]):
			pv.Kind = &api.Value_Int64{Int64: v.Int}
		case s.types[i] == api.ColumnType_INT128 || s.types[i] == api.ColumnType_DECIMAL:
			pv.Kind = &api.Value_Decimal{Decimal: FormatDecimal(*v, s.meta[i].scale)}
		case s.types[i] == api.ColumnType_FLOAT32:
			pv.Kind = &api.Value_Float64{Float64: v.Float}
		case s.types[i] == api.ColumnType_DATE:
			pv.Kind = &api.Value_Date{Date: int32(v.Int)}
		case s.types[i] == api.ColumnType_DATETIME:
			pv.Kind = &api.Value_DatetimeMicros{DatetimeMicros: v.Int}
		case s.types[i] == api.ColumnType_JSON:
			pv.Kind = &api.Value_Json{Json: v.Str}
		case s.types[i] == api.ColumnType_FLOAT64:
			pv.Kind = &api.Value_Float64{Float64: v.Float}
		case isText(s.types[i]):
			str := v.Str
			if !utf8.ValidString(str) {
				str = strings.ToValidUTF8(str, "\uFFFD")
			}
			pv.Kind = &api.Value_String_{String_: str}
		case s.types[i] == api.ColumnType_BOOL:
			pv.Kind = &api.Value_Bool{Bool: v.Bool}
		case s.types[i] == api.ColumnType_TIMESTAMP:
			pv.Kind = &api.Value_TimestampMicros{TimestampMicros: v.Int}
		}
		row.Values[i] = pv
	}
	return row
}

// appendFloat formats like encoding/json: shortest representation, 'e'
// notation only for very small or large magnitudes.
func appendFloat(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendFloat32 is appendFloat for a FLOAT32 value: the shortest text that
// reads back as the same float32.
func appendFloat32(dst []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(dst, f, format, -1, 32)
}

func appendTimestamp(dst []byte, micros int64) []byte {
	return time.UnixMicro(micros).UTC().AppendFormat(dst, time.RFC3339Nano)
}

// FormatValue renders one cell for table output: NULL as "NULL", TIMESTAMP
// as RFC 3339 in UTC, DATE as 2006-01-02, DATETIME as 2006-01-02 15:04:05
// (with its precision's fraction digits), FLOAT64 and FLOAT32 as in JSON,
// DECIMAL with its scale's fraction digits, text as is.
func FormatValue(col *api.Column, v Value) string {
	if v.Null {
		return "NULL"
	}
	switch col.GetType() {
	case api.ColumnType_INT64, api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32:
		return strconv.FormatInt(v.Int, 10)
	case api.ColumnType_INT128, api.ColumnType_DECIMAL:
		return FormatDecimal(v, int(col.GetScale()))
	case api.ColumnType_FLOAT64:
		return string(appendFloat(nil, v.Float))
	case api.ColumnType_FLOAT32:
		return string(appendFloat32(nil, v.Float))
	case api.ColumnType_DATE:
		return string(appendDate(nil, v.Int))
	case api.ColumnType_DATETIME:
		return string(appendDatetime(nil, v.Int, int(col.GetPrecision())))
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
		return v.Str
	case api.ColumnType_BOOL:
		return strconv.FormatBool(v.Bool)
	case api.ColumnType_TIMESTAMP:
		return string(appendTimestamp(nil, v.Int))
	}
	return "?"
}
