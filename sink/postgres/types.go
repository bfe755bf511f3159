package postgres

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// How each loadnode column type is held in PostgreSQL, in one place: its
// column (stored, pgType, columnDDL), whether an existing column holds it
// (compatible, typedCompatible), its binary COPY field (appendCopyRow in
// copy.go; appendTypedCell), its scan (cell) and what text refuses
// (checkRow).
//
// The Doris types that have no narrower PostgreSQL twin are held so:
//
//	DECIMAL(p,s)  numeric(p,s)   binary COPY of the exact 128-bit unscaled value
//	LARGEINT      numeric(39,0)  the same, scale 0
//	DATE          date           days since 2000-01-01
//	DATETIME(p)   timestamp(p) without time zone: a wall clock, as in Doris
//	JSON          json           the compact text loadnode validated, kept
//	                             byte for byte (jsonb would reorder keys and
//	                             drop duplicates, so a scan would not give
//	                             back what was loaded)

// apiString is the stored type of every text column.
const apiString = api.ColumnType_STRING

// stored is the column type whose PostgreSQL column holds t's values: the
// narrower Doris integers in bigint, FLOAT in double precision (a float32
// value is exact in a float64), CHAR and VARCHAR in text (their lengths are
// checked by loadnode's parser). Each is held in table.Value as its wider
// type is, so the COPY encoding and the scan are those of the wider type.
// DECIMAL, LARGEINT, DATE, DATETIME and JSON are themselves (mapped
// below).
func stored(t api.ColumnType) api.ColumnType {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32:
		return api.ColumnType_INT64
	case api.ColumnType_FLOAT32:
		return api.ColumnType_FLOAT64
	case api.ColumnType_CHAR, api.ColumnType_VARCHAR:
		return api.ColumnType_STRING
	}
	return t
}

// pgType is the PostgreSQL type of a column type, as information_schema
// names it (format_type for the DDL is the same text).
func pgType(t api.ColumnType) string {
	switch stored(t) {
	case api.ColumnType_INT64:
		return "bigint"
	case api.ColumnType_FLOAT64:
		return "double precision"
	case api.ColumnType_STRING:
		return "text"
	case api.ColumnType_BOOL:
		return "boolean"
	case api.ColumnType_TIMESTAMP:
		return "timestamp with time zone"
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		return "numeric"
	case api.ColumnType_DATE:
		return "date"
	case api.ColumnType_DATETIME:
		return "timestamp without time zone"
	case api.ColumnType_JSON:
		return "json"
	}
	return ""
}

// compatible reports whether an existing column of PostgreSQL type have
// holds every value of t without loss.
func compatible(t api.ColumnType, have string) bool {
	if have == pgType(t) {
		return true
	}
	return stored(t) == api.ColumnType_STRING && have == "character varying" // without a length: checked by the caller
}

// pgEpochMicros is 2000-01-01T00:00:00Z, PostgreSQL's timestamp epoch, in
// microseconds since the Unix epoch.
const pgEpochMicros = 946684800 * 1e6

// pgEpochDays is 2000-01-01, PostgreSQL's date epoch, in days since the
// Unix epoch.
const pgEpochDays = 10957

// largeintPrecision is the numeric precision that holds every LARGEINT
// (2^127 has 39 digits).
const largeintPrecision = 39

// decimalOf is a column's numeric precision and scale.
func decimalOf(c *api.Column) (p, s int) {
	if c.GetType() == api.ColumnType_INT128 {
		return largeintPrecision, 0
	}
	p, s = int(c.GetPrecision()), int(c.GetScale())
	if p == 0 {
		p = 9
	}
	return p, s
}

// columnDDL is the PostgreSQL type of a column in CREATE TABLE.
func columnDDL(c *api.Column) string {
	switch c.GetType() {
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		p, s := decimalOf(c)
		return fmt.Sprintf("numeric(%d,%d)", p, s)
	case api.ColumnType_DATETIME:
		return fmt.Sprintf("timestamp(%d) without time zone", c.GetPrecision())
	}
	return pgType(c.GetType())
}

// appendNumeric appends the binary COPY field of the numeric unscaled /
// 10^scale: ndigits, weight, sign, dscale, then base-10000 digits.
func appendNumeric(b []byte, v table.Value, scale int) []byte {
	n := table.Big128(v)
	sign := uint16(0)
	if n.Sign() < 0 {
		sign = 0x4000
		n.Neg(n)
	}
	d := n.String()
	if len(d) <= scale {
		d = strings.Repeat("0", scale-len(d)+1) + d
	}
	ip, fp := d[:len(d)-scale], d[len(d)-scale:]
	if r := len(ip) % 4; r != 0 {
		ip = strings.Repeat("0", 4-r) + ip
	}
	if r := len(fp) % 4; r != 0 {
		fp += strings.Repeat("0", 4-r)
	}
	all := ip + fp
	groups := make([]uint16, 0, len(all)/4)
	for i := 0; i < len(all); i += 4 {
		var g uint16
		for _, c := range all[i : i+4] {
			g = g*10 + uint16(c-'0')
		}
		groups = append(groups, g)
	}
	weight := len(ip)/4 - 1
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	if len(groups) == 0 {
		weight, sign = 0, 0
	}
	b = binary.BigEndian.AppendUint32(b, uint32(8+2*len(groups)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(groups)))
	b = binary.BigEndian.AppendUint16(b, uint16(int16(weight)))
	b = binary.BigEndian.AppendUint16(b, sign)
	b = binary.BigEndian.AppendUint16(b, uint16(scale))
	for _, g := range groups {
		b = binary.BigEndian.AppendUint16(b, g)
	}
	return b
}

// appendTypedCell appends the COPY field of a non-NULL value of the types
// this file maps; ok is false for other types.
func appendTypedCell(b []byte, c *api.Column, v *table.Value) ([]byte, bool) {
	switch c.GetType() {
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		_, s := decimalOf(c)
		return appendNumeric(b, *v, s), true
	case api.ColumnType_DATE:
		b = binary.BigEndian.AppendUint32(b, 4)
		return binary.BigEndian.AppendUint32(b, uint32(int32(v.Int-pgEpochDays))), true
	case api.ColumnType_DATETIME:
		return appendInt64(b, v.Int-pgEpochMicros), true
	case api.ColumnType_JSON:
		b = binary.BigEndian.AppendUint32(b, uint32(len(v.Str)))
		return append(b, v.Str...), true
	}
	return b, false
}

// cell receives one column of a scanned row.
type cell struct {
	i  pgtype.Int8
	f  pgtype.Float8
	s  pgtype.Text
	b  pgtype.Bool
	ts pgtype.Timestamptz
	typedCell
}

func (c *cell) target(t api.ColumnType) any {
	switch stored(t) {
	case api.ColumnType_INT64:
		return &c.i
	case api.ColumnType_FLOAT64:
		return &c.f
	case api.ColumnType_STRING:
		return &c.s
	case api.ColumnType_BOOL:
		return &c.b
	case api.ColumnType_TIMESTAMP:
		return &c.ts
	}
	return c.typedCell.target(t)
}

func (c *cell) value(col *api.Column) (table.Value, error) {
	null := table.Value{Null: true}
	switch stored(col.GetType()) {
	case api.ColumnType_INT64:
		if !c.i.Valid {
			return null, nil
		}
		return table.Value{Int: c.i.Int64}, nil
	case api.ColumnType_FLOAT64:
		if !c.f.Valid {
			return null, nil
		}
		return table.Value{Float: c.f.Float64}, nil
	case api.ColumnType_STRING:
		if !c.s.Valid {
			return null, nil
		}
		return table.Value{Str: c.s.String}, nil
	case api.ColumnType_BOOL:
		if !c.b.Valid {
			return null, nil
		}
		return table.Value{Bool: c.b.Bool}, nil
	case api.ColumnType_TIMESTAMP:
		if !c.ts.Valid {
			return null, nil
		}
		if c.ts.InfinityModifier != pgtype.Finite {
			return null, fmt.Errorf("column %s: an infinite timestamp", col.GetName())
		}
		return table.Value{Int: c.ts.Time.UnixMicro()}, nil
	}
	if v, ok, err := c.typedCell.value(col); ok {
		return v, err
	}
	return null, fmt.Errorf("column %s: type %s", col.GetName(), col.GetType())
}

// typedCell receives one scanned column of the types this file maps.
type typedCell struct {
	num  pgtype.Numeric
	date pgtype.Date
	ts   pgtype.Timestamp
	json []byte
}

func (c *typedCell) target(t api.ColumnType) any {
	switch t {
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		return &c.num
	case api.ColumnType_DATE:
		return &c.date
	case api.ColumnType_DATETIME:
		return &c.ts
	case api.ColumnType_JSON:
		return &c.json
	}
	return nil
}

func (c *typedCell) value(col *api.Column) (table.Value, bool, error) {
	null := table.Value{Null: true}
	switch col.GetType() {
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		if !c.num.Valid {
			return null, true, nil
		}
		if c.num.NaN || c.num.InfinityModifier != pgtype.Finite {
			return null, true, fmt.Errorf("column %s: numeric %v is not a number loadnode holds", col.GetName(), c.num)
		}
		_, s := decimalOf(col)
		u := new(big.Int).Set(c.num.Int)
		if e := int(c.num.Exp) + s; e >= 0 {
			u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
		} else {
			var rem big.Int
			u.QuoRem(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-e)), nil), &rem)
			if rem.Sign() != 0 {
				return null, true, fmt.Errorf("column %s: numeric has more than %d fraction digits", col.GetName(), s)
			}
		}
		if u.BitLen() > 127 && (u.Sign() > 0 || u.BitLen() > 128 || u.TrailingZeroBits() != 127) {
			return null, true, fmt.Errorf("column %s: numeric out of the 128-bit range", col.GetName())
		}
		return table.Value128(u), true, nil
	case api.ColumnType_DATE:
		if !c.date.Valid {
			return null, true, nil
		}
		if c.date.InfinityModifier != pgtype.Finite {
			return null, true, fmt.Errorf("column %s: an infinite date", col.GetName())
		}
		return table.Value{Int: floorDiv(c.date.Time.Unix(), 86400)}, true, nil
	case api.ColumnType_DATETIME:
		if !c.ts.Valid {
			return null, true, nil
		}
		if c.ts.InfinityModifier != pgtype.Finite {
			return null, true, fmt.Errorf("column %s: an infinite timestamp", col.GetName())
		}
		return table.Value{Int: c.ts.Time.UnixMicro()}, true, nil
	case api.ColumnType_JSON:
		if c.json == nil {
			return null, true, nil
		}
		return table.Value{Str: string(c.json)}, true, nil
	}
	return null, false, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// typedInfo is the information_schema data_type of the types this file
// maps, and whether a column of type have with the given numeric
// precision and scale or datetime precision holds c's values exactly.
func typedCompatible(c *api.Column, have pgColumn) (known, ok bool) {
	switch c.GetType() {
	case api.ColumnType_DECIMAL, api.ColumnType_INT128:
		p, s := decimalOf(c)
		return true, have.typ == "numeric" && have.numPrec != nil && have.numScale != nil &&
			int(*have.numPrec)-int(*have.numScale) >= p-s && int(*have.numScale) == s
	case api.ColumnType_DATE:
		return true, have.typ == "date"
	case api.ColumnType_DATETIME:
		return true, have.typ == "timestamp without time zone" && have.dtPrec != nil && int(*have.dtPrec) >= int(c.GetPrecision())
	case api.ColumnType_JSON:
		return true, have.typ == "json"
	}
	return false, false
}

// checkRow is CheckRow (sink.go): what PostgreSQL text refuses.
func checkRow(sc *table.Schema, vals []table.Value) error {
	for i, c := range sc.Columns() {
		if stored(c.GetType()) != apiString || vals[i].Null {
			continue
		}
		v := vals[i].Str
		for j := 0; j < len(v); j++ {
			if v[j] == 0 {
				return fmt.Errorf("column %s: PostgreSQL text cannot hold a NUL byte (at byte %d)", c.GetName(), j)
			}
		}
		if !utf8.ValidString(v) {
			return fmt.Errorf("column %s: PostgreSQL text must be valid UTF-8", c.GetName())
		}
	}
	return nil
}
