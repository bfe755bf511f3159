package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/loadnode/loadnode/api"
)

// ErrCorrupt marks a stored key or value that cannot be decoded.
var ErrCorrupt = errors.New("table: corrupt row")

// valueFormatV1 is the leading byte of a row value:
//
//	0x01
//	uvarint job id, varint partition, varint offset
//	uvarint number of columns
//	per column: one flag byte (0 NULL, 1 present), then when present
//	  INT8, INT16, INT32, INT64, TIMESTAMP, DATE, DATETIME: varint
//	  INT128, DECIMAL:  varint high 64 bits, 8 bytes low 64 bits little-endian
//	  FLOAT64:          8 bytes, IEEE 754 bits little-endian
//	  FLOAT32:          4 bytes, IEEE 754 binary32 bits little-endian
//	  STRING, CHAR, VARCHAR, JSON: uvarint length, bytes
//	  BOOL:             1 byte, 0 or 1
const valueFormatV1 = 0x01

// KeyLen is the length of a DUPLICATE key.
const KeyLen = 8 + 4 + 8

// AppendKey appends the row's storage key within its table for the table
// model. DUPLICATE: job id (8 bytes big-endian), partition (4 bytes
// big-endian, sign bit flipped), offset (8 bytes big-endian, sign bit
// flipped), so that keys sort by job, partition and offset numerically.
// vals is unused for DUPLICATE; models keyed by columns will use it.
//
// REQUIRES: model is one NewSchema accepts (it panics otherwise).
func AppendKey(dst []byte, model api.TableModel, pos Pos, vals []Value) []byte {
	switch model {
	case api.TableModel_DUPLICATE:
		dst = binary.BigEndian.AppendUint64(dst, pos.JobID)
		dst = binary.BigEndian.AppendUint32(dst, uint32(pos.Partition)^(1<<31))
		return binary.BigEndian.AppendUint64(dst, uint64(pos.Offset)^(1<<63))
	}
	panic(fmt.Sprintf("table: AppendKey: unknown model %v", model))
}

// AppendElement appends to a row key made by AppendRowKey the index of
// the row's element within its record (strip_outer_array: one record,
// many rows), so that each element of a DUPLICATE table's record has
// its own key: element 0 keeps the record's key, element k > 0 appends
// k as 4 bytes big-endian, which sorts after the record's key and before
// the next record's. A keyed table's rows are keyed by their columns:
// dst is returned unchanged.
func AppendElement(dst []byte, s *Schema, k int) []byte {
	if k == 0 || s.Keyed() {
		return dst
	}
	return binary.BigEndian.AppendUint32(dst, uint32(k))
}

// KeySpace is the job field of a DUPLICATE row key (Pos.JobID in
// AppendKey) for the rows a job loads after its rebase-th move to another
// stream or reset of its positions (api.SourceRebase.count): the job id in
// the low 40 bits, the count above. A new topic's partition 0 offset 0, or
// an offset read again after a rewind, is then another key than the rows
// loaded before, which stay. With no rebase it is the job id, so keys
// written before rebases existed keep their meaning. Job ids are below
// 1<<40; counts are at most MaxKeySpace.
func KeySpace(job uint64, rebase uint32) uint64 {
	return job&(1<<40-1) | uint64(rebase)<<40
}

// MaxKeySpace is the largest key-space count KeySpace keeps apart (24
// bits above the job id): a job's moves and resets beyond it are refused.
const MaxKeySpace = 1<<24 - 1

// AppendValue appends the encoding of a row (see valueFormatV1).
//
// REQUIRES: len(vals) == s.Width().
func AppendValue(dst []byte, s *Schema, pos Pos, vals []Value) []byte {
	if len(vals) != len(s.types) {
		panic(fmt.Sprintf("table: AppendValue: %d values for %d columns", len(vals), len(s.types)))
	}
	dst = append(dst, valueFormatV1)
	dst = binary.AppendUvarint(dst, pos.JobID)
	dst = binary.AppendVarint(dst, int64(pos.Partition))
	dst = binary.AppendVarint(dst, pos.Offset)
	dst = binary.AppendUvarint(dst, uint64(len(vals)))
	for i := range vals {
		v := &vals[i]
		if v.Null {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch s.types[i] {
		case api.ColumnType_INT64, api.ColumnType_TIMESTAMP, api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32,
			api.ColumnType_DATE, api.ColumnType_DATETIME:
			dst = binary.AppendVarint(dst, v.Int)
		case api.ColumnType_INT128, api.ColumnType_DECIMAL:
			dst = binary.AppendVarint(dst, v.Hi)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.Int))
		case api.ColumnType_FLOAT64:
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float))
		case api.ColumnType_FLOAT32:
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.Float)))
		case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
			dst = binary.AppendUvarint(dst, uint64(len(v.Str)))
			dst = append(dst, v.Str...)
		case api.ColumnType_BOOL:
			if v.Bool {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
	}
	return dst
}

// DecodeValue decodes a row value into dst (resized to s.Width(): the
// columns, then a hidden sequence's value). STRING values are copied out of b (which may be reused by the
// caller) into one string per row. Errors wrap ErrCorrupt.
func DecodeValue(s *Schema, b []byte, dst []Value) ([]Value, Pos, error) {
	n := len(s.types)
	if cap(dst) < n {
		dst = make([]Value, n)
	}
	dst = dst[:n]
	d := decoder{b: b}
	if len(b) == 0 || b[0] != valueFormatV1 {
		if len(b) == 0 {
			return dst, Pos{}, fmt.Errorf("%w: empty value", ErrCorrupt)
		}
		return dst, Pos{}, fmt.Errorf("%w: unknown value format %#x", ErrCorrupt, b[0])
	}
	d.i = 1
	var pos Pos
	pos.JobID = d.uvarint()
	part := d.varint()
	pos.Offset = d.varint()
	ncols := d.uvarint()
	if d.bad {
		return dst, Pos{}, fmt.Errorf("%w: truncated header", ErrCorrupt)
	}
	if part < math.MinInt32 || part > math.MaxInt32 {
		return dst, Pos{}, fmt.Errorf("%w: partition %d out of range", ErrCorrupt, part)
	}
	pos.Partition = int32(part)
	if ncols != uint64(n) {
		return dst, pos, fmt.Errorf("%w: value has %d columns, table %s has %d", ErrCorrupt, ncols, s.Name(), n)
	}
	var str string // one copy of b for the row's strings, made on demand
	for i := 0; i < n; i++ {
		v := &dst[i]
		*v = Value{}
		flag := d.byte()
		if flag == 0 && !d.bad {
			v.Null = true
			continue
		}
		if flag != 1 && !d.bad {
			return dst, pos, fmt.Errorf("%w: column %s: bad null flag %d", ErrCorrupt, s.colName(i), flag)
		}
		switch s.types[i] {
		case api.ColumnType_INT64, api.ColumnType_TIMESTAMP, api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32,
			api.ColumnType_DATE, api.ColumnType_DATETIME:
			v.Int = d.varint()
		case api.ColumnType_INT128, api.ColumnType_DECIMAL:
			v.Hi = d.varint()
			if d.bad || d.i+8 > len(b) {
				d.bad = true
				break
			}
			v.Int = int64(binary.LittleEndian.Uint64(b[d.i:]))
			d.i += 8
		case api.ColumnType_FLOAT64:
			if d.i+8 > len(b) {
				d.bad = true
				break
			}
			v.Float = math.Float64frombits(binary.LittleEndian.Uint64(b[d.i:]))
			d.i += 8
		case api.ColumnType_FLOAT32:
			if d.i+4 > len(b) {
				d.bad = true
				break
			}
			v.Float = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[d.i:])))
			d.i += 4
		case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
			l := d.uvarint()
			if d.bad || l > uint64(len(b)-d.i) {
				d.bad = true
				break
			}
			if str == "" {
				str = string(b)
			}
			v.Str = str[d.i : d.i+int(l)]
			d.i += int(l)
		case api.ColumnType_BOOL:
			switch d.byte() {
			case 0:
			case 1:
				v.Bool = true
			default:
				d.bad = true
			}
		}
		if d.bad {
			return dst, pos, fmt.Errorf("%w: column %s: truncated or invalid", ErrCorrupt, s.colName(i))
		}
	}
	if d.i != len(b) {
		return dst, pos, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(b)-d.i)
	}
	return dst, pos, nil
}

// decoder reads varints; bad is sticky.
type decoder struct {
	b   []byte
	i   int
	bad bool
}

func (d *decoder) uvarint() uint64 {
	if d.bad {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.i += n
	return v
}

func (d *decoder) varint() int64 {
	if d.bad {
		return 0
	}
	v, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.i += n
	return v
}

func (d *decoder) byte() byte {
	if d.bad || d.i >= len(d.b) {
		d.bad = true
		return 0
	}
	c := d.b[d.i]
	d.i++
	return c
}
