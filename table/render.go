package table

import (
	"strings"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
)

// ToProto converts a row to its wire form: each api.Value's kind follows the
// column type, NULL is Value_Null{true}. Invalid UTF-8 in a STRING becomes
// U+FFFD (protobuf strings must be UTF-8; the parsers never produce it).
//
// A hidden sequence's value, after the columns, is left out.
//
// REQUIRES: len(vals) >= s.NumColumns().
func ToProto(s *Schema, vals []Value, pos Pos) *api.Row {
	vals = vals[:len(s.cols)]
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
