package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/hamba/avro/v2"
)

// Avro binary to JSON, in one pass and without building values: the writer
// schema (parsed by hamba/avro) is compiled once into a plan of anodes, and
// each record's bytes are read by the plan and written as JSON text. This
// is several times cheaper than decoding into generic Go values and
// marshalling them (the bench measured the difference), and it bounds what
// a hostile record can cost: every length is checked against the bytes
// left, a record holds at most maxItems array or map items, and its JSON
// text at most the limit the caller gives (checked before each value is
// written: an array of a million nulls is a few bytes of avro).

const maxItems = 1 << 20

// maxDecimalScale bounds a decimal's scale, the digits written after its
// point (Doris's widest DECIMAL has 38).
const maxDecimalScale = 1000

type akind uint8

const (
	aNull akind = iota
	aBool
	aInt
	aLong
	aFloat
	aDouble
	aBytes
	aString
	aRecord
	aEnum
	aArray
	aMap
	aUnion
	aFixed
)

// logical types that change the JSON form
type alogic uint8

const (
	lNone alogic = iota
	lDecimal
	lDate
	lTimeMillis
	lTimeMicros
	lTimestampMillis
	lTimestampMicros
)

type anode struct {
	kind     akind
	logic    alogic
	scale    int
	size     int      // fixed
	fields   []afield // record
	symbols  [][]byte // enum, as quoted JSON strings
	items    *anode   // array items, map values
	branches []*anode // union
	name     string   // record: for error messages
}

type afield struct {
	key  []byte // `"name":`
	node *anode
}

// compileAvro builds the plan of s. Named types are compiled once, so that
// a recursive schema is a cyclic plan.
func compilePlan(s avro.Schema) (*anode, error) {
	return compileNode(s, map[string]*anode{}, 0)
}

func compileNode(s avro.Schema, named map[string]*anode, depth int) (*anode, error) {
	if depth > maxDepth {
		return nil, errors.New("schema nests too deep")
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	if n, ok := s.(avro.NamedSchema); ok {
		if a, ok := named[n.FullName()]; ok {
			return a, nil
		}
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		a := &anode{kind: aRecord, name: s.FullName()}
		named[s.FullName()] = a
		for i, f := range s.Fields() {
			key := appendString(nil, f.Name())
			if i > 0 {
				key = append([]byte{','}, key...)
			}
			key = append(key, ':')
			fn, err := compileNode(f.Type(), named, depth+1)
			if err != nil {
				return nil, err
			}
			a.fields = append(a.fields, afield{key: key, node: fn})
		}
		return a, nil
	case *avro.EnumSchema:
		a := &anode{kind: aEnum}
		named[s.FullName()] = a
		for _, sym := range s.Symbols() {
			a.symbols = append(a.symbols, appendString(nil, sym))
		}
		return a, nil
	case *avro.FixedSchema:
		a := &anode{kind: aFixed, size: s.Size()}
		named[s.FullName()] = a
		if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			a.logic, a.scale = lDecimal, l.Scale()
		}
		return a, checkScale(a)
	case *avro.ArraySchema:
		it, err := compileNode(s.Items(), named, depth+1)
		if err != nil {
			return nil, err
		}
		return &anode{kind: aArray, items: it}, nil
	case *avro.MapSchema:
		it, err := compileNode(s.Values(), named, depth+1)
		if err != nil {
			return nil, err
		}
		return &anode{kind: aMap, items: it}, nil
	case *avro.UnionSchema:
		a := &anode{kind: aUnion}
		for _, t := range s.Types() {
			b, err := compileNode(t, named, depth+1)
			if err != nil {
				return nil, err
			}
			a.branches = append(a.branches, b)
		}
		return a, nil
	case *avro.NullSchema:
		return &anode{kind: aNull}, nil
	case *avro.PrimitiveSchema:
		a := &anode{}
		switch s.Type() {
		case avro.Null:
			a.kind = aNull
		case avro.Boolean:
			a.kind = aBool
		case avro.Int:
			a.kind = aInt
		case avro.Long:
			a.kind = aLong
		case avro.Float:
			a.kind = aFloat
		case avro.Double:
			a.kind = aDouble
		case avro.Bytes:
			a.kind = aBytes
		case avro.String:
			a.kind = aString
		default:
			return nil, fmt.Errorf("unknown primitive type %s", s.Type())
		}
		if l := s.Logical(); l != nil {
			switch l.Type() {
			case avro.Decimal:
				if d, ok := l.(*avro.DecimalLogicalSchema); ok && a.kind == aBytes {
					a.logic, a.scale = lDecimal, d.Scale()
				}
				if err := checkScale(a); err != nil {
					return nil, err
				}
			case avro.Date:
				a.logic = lDate
			case avro.TimeMillis:
				a.logic = lTimeMillis
			case avro.TimeMicros:
				a.logic = lTimeMicros
			case avro.TimestampMillis, avro.LocalTimestampMillis:
				a.logic = lTimestampMillis
			case avro.TimestampMicros, avro.LocalTimestampMicros:
				a.logic = lTimestampMicros
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("unsupported schema %s", s.Type())
}

func checkScale(a *anode) error {
	if a.scale > maxDecimalScale {
		return fmt.Errorf("decimal scale %d is over %d", a.scale, maxDecimalScale)
	}
	return nil
}

// avroReader reads one record's bytes.
type avroReader struct {
	b     []byte
	i     int
	items int
	// max is the most bytes dst may hold: no value is started past it.
	max int
}

// tooLarge is the error of a record whose JSON would be over limit bytes.
func tooLarge(limit int) error {
	return fmt.Errorf("its JSON would be over the limit of %d bytes per value (max_record_size)", limit)
}

var (
	errShort   = errors.New("record ends early")
	errOverMax = errors.New("over the limit") // AppendJSON names it
)

func (r *avroReader) long() (int64, error) {
	u, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		if n == 0 {
			return 0, errShort
		}
		return 0, errors.New("varint overflows 64 bits")
	}
	r.i += n
	return int64(u>>1) ^ -int64(u&1), nil
}

func (r *avroReader) int32() (int64, error) {
	v, err := r.long()
	if err == nil && (v < math.MinInt32 || v > math.MaxInt32) {
		return 0, fmt.Errorf("int %d out of 32-bit range", v)
	}
	return v, err
}

// span reads a length-prefixed byte string.
func (r *avroReader) span() ([]byte, error) {
	n, err := r.long()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > int64(len(r.b)-r.i) {
		return nil, fmt.Errorf("length %d exceeds the %d bytes left", n, len(r.b)-r.i)
	}
	s := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return s, nil
}

func (r *avroReader) fixed(n int) ([]byte, error) {
	if n > len(r.b)-r.i {
		return nil, errShort
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s, nil
}

// transcode reads one value of plan a and appends it as JSON.
func transcode(dst []byte, a *anode, r *avroReader, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, errors.New("value nests too deep")
	}
	if len(dst) > r.max {
		return dst, errOverMax
	}
	switch a.kind {
	case aNull:
		return append(dst, "null"...), nil
	case aBool:
		b, err := r.fixed(1)
		if err != nil {
			return dst, err
		}
		switch b[0] {
		case 0:
			return append(dst, "false"...), nil
		case 1:
			return append(dst, "true"...), nil
		}
		return dst, fmt.Errorf("boolean byte %d", b[0])
	case aInt, aLong:
		var v int64
		var err error
		if a.kind == aInt {
			v, err = r.int32()
		} else {
			v, err = r.long()
		}
		if err != nil {
			return dst, err
		}
		switch a.logic {
		case lDate:
			return appendQuotedTime(dst, time.Unix(v*86400, 0), "2006-01-02"), nil
		case lTimestampMillis:
			return appendQuotedTime(dst, time.UnixMilli(v), "2006-01-02 15:04:05.999999"), nil
		case lTimestampMicros:
			return appendQuotedTime(dst, time.UnixMicro(v), "2006-01-02 15:04:05.999999"), nil
		case lTimeMicros:
			return strconv.AppendInt(dst, v/1000, 10), nil // milliseconds, as time-millis
		}
		return strconv.AppendInt(dst, v, 10), nil
	case aFloat:
		b, err := r.fixed(4)
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), 32), nil
	case aDouble:
		b, err := r.fixed(8)
		if err != nil {
			return dst, err
		}
		return appendFloat(dst, math.Float64frombits(binary.LittleEndian.Uint64(b)), 64), nil
	case aBytes, aString:
		s, err := r.span()
		if err != nil {
			return dst, err
		}
		if a.logic == lDecimal {
			return appendDecimal(dst, s, a.scale), nil
		}
		return appendString(dst, s), nil
	case aFixed:
		s, err := r.fixed(a.size)
		if err != nil {
			return dst, err
		}
		if a.logic == lDecimal {
			return appendDecimal(dst, s, a.scale), nil
		}
		return appendString(dst, s), nil
	case aEnum:
		i, err := r.int32()
		if err != nil {
			return dst, err
		}
		if i < 0 || int(i) >= len(a.symbols) {
			return dst, fmt.Errorf("enum index %d of %d symbols", i, len(a.symbols))
		}
		return append(dst, a.symbols[i]...), nil
	case aUnion:
		i, err := r.long()
		if err != nil {
			return dst, err
		}
		if i < 0 || int(i) >= len(a.branches) {
			return dst, fmt.Errorf("union index %d of %d branches", i, len(a.branches))
		}
		return transcode(dst, a.branches[i], r, depth+1)
	case aRecord:
		dst = append(dst, '{')
		for _, f := range a.fields {
			dst = append(dst, f.key...)
			var err error
			if dst, err = transcode(dst, f.node, r, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case aArray, aMap:
		open, close := byte('['), byte(']')
		if a.kind == aMap {
			open, close = '{', '}'
		}
		dst = append(dst, open)
		first := true
		for {
			n, err := r.long()
			if err != nil {
				return dst, err
			}
			if n == 0 {
				break
			}
			if n < 0 {
				if n == math.MinInt64 {
					return dst, errors.New("bad block count")
				}
				n = -n
				if _, err := r.long(); err != nil { // the block's size in bytes
					return dst, err
				}
			}
			if n > int64(maxItems-r.items) {
				return dst, fmt.Errorf("more than %d array or map items in a record", maxItems)
			}
			r.items += int(n)
			for ; n > 0; n-- {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				if a.kind == aMap {
					k, err := r.span()
					if err != nil {
						return dst, err
					}
					dst = appendString(dst, k)
					dst = append(dst, ':')
				}
				if dst, err = transcode(dst, a.items, r, depth+1); err != nil {
					return dst, err
				}
			}
		}
		return append(dst, close), nil
	}
	return dst, fmt.Errorf("unknown plan kind %d", a.kind)
}

func appendQuotedTime(dst []byte, t time.Time, layout string) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, layout)
	return append(dst, '"')
}

// appendDecimal writes the two's-complement big-endian unscaled value b
// with scale digits after the point.
func appendDecimal(dst, b []byte, scale int) []byte {
	if len(b) == 0 {
		return append(dst, '0')
	}
	var v big.Int
	v.SetBytes(b)
	if b[0]&0x80 != 0 {
		v.Sub(&v, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return append(dst, new(big.Rat).SetFrac(&v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)...)
}
