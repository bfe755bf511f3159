package registry

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/loadnode/loadnode/table"
)

// avroSchema is a compiled writer schema.
type avroSchema struct {
	s avro.Schema
}

type avroDecoder struct{ r *Registry }

// avroAPI bounds what one record may make the decoder allocate: a hostile
// length prefix would otherwise allocate gigabytes before the record runs
// out (found by FuzzAvroDecode). Strings and bytes up to 16 MiB (the
// default max_record_size), arrays up to 1,048,576 elements.
var avroAPI = avro.Config{MaxByteSliceSize: 16 << 20, MaxSliceAllocSize: 1 << 20}.Freeze()

var _ table.Decoder = (*avroDecoder)(nil)

func (d *avroDecoder) AppendJSON(dst, raw []byte) ([]byte, error) {
	id, body, err := header(raw)
	if err != nil {
		return dst, err
	}
	e, err := d.r.lookup(id)
	if err != nil {
		return dst, err
	}
	as, err := d.r.compileAvro(id, e)
	if err != nil {
		return dst, err
	}
	var v any
	if err := avroAPI.Unmarshal(as.s, body, &v); err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("avro: record does not decode with schema id %d: %v", id, err)}
	}
	if _, ok := v.(map[string]any); !ok {
		return dst, &table.ParseError{Reason: fmt.Sprintf("avro: schema id %d is not a record schema (%s)", id, as.s.Type())}
	}
	return appendAvro(dst, as.s, v, 0)
}

// compileAvro parses e's schema text once.
func (r *Registry) compileAvro(id int, e *entry) (*avroSchema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.avro != nil || e.err != nil {
		return e.avro, e.err
	}
	if t := e.schema.Type; t != 0 && t.String() != "AVRO" {
		e.err = &table.ParseError{Reason: fmt.Sprintf("schema id %d is a %s schema, not avro", id, t)}
		return nil, e.err
	}
	if len(e.schema.References) > 0 {
		e.err = &table.ParseError{Reason: fmt.Sprintf("avro schema id %d has references, which loadnode does not resolve", id)}
		return nil, e.err
	}
	s, err := avro.ParseWithCache(e.schema.Schema, "", &avro.SchemaCache{})
	if err != nil {
		e.err = &table.ParseError{Reason: fmt.Sprintf("avro schema id %d does not parse: %v", id, err)}
		return nil, e.err
	}
	e.avro = &avroSchema{s: s}
	return e.avro, nil
}

const maxDepth = 1000

// appendAvro writes v, decoded by hamba/avro with schema s, as JSON.
func appendAvro(dst []byte, s avro.Schema, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, &table.ParseError{Reason: "avro: nesting too deep"}
	}
	if ref, ok := s.(*avro.RefSchema); ok {
		s = ref.Schema()
	}
	switch s := s.(type) {
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return appendAny(dst, v), nil
		}
		dst = append(dst, '{')
		first := true
		for _, f := range s.Fields() {
			fv, ok := m[f.Name()]
			if !ok {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, f.Name())
			dst = append(dst, ':')
			var err error
			if dst, err = appendAvro(dst, f.Type(), fv, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case *avro.UnionSchema:
		if v == nil {
			return append(dst, "null"...), nil
		}
		types := s.Types()
		// hamba leaves a union value it could not resolve wrapped in a
		// one-key map named by its branch.
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for k, inner := range m {
				for _, t := range types {
					if branchName(t) == k {
						return appendAvro(dst, t, inner, depth+1)
					}
				}
			}
		}
		var nonNull []avro.Schema
		for _, t := range types {
			if t.Type() != avro.Null {
				nonNull = append(nonNull, t)
			}
		}
		if len(nonNull) == 1 {
			return appendAvro(dst, nonNull[0], v, depth+1)
		}
		return appendAny(dst, v), nil
	case *avro.ArraySchema:
		a, ok := v.([]any)
		if !ok {
			return appendAny(dst, v), nil
		}
		dst = append(dst, '[')
		for i, x := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendAvro(dst, s.Items(), x, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return appendAny(dst, v), nil
		}
		dst = append(dst, '{')
		first := true
		for k, x := range m {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, k)
			dst = append(dst, ':')
			var err error
			if dst, err = appendAvro(dst, s.Values(), x, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	case *avro.PrimitiveSchema:
		if r, ok := v.(*big.Rat); ok {
			scale := 0
			if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
				scale = l.Scale()
			}
			return append(dst, r.FloatString(scale)...), nil
		}
	case *avro.FixedSchema:
		if r, ok := v.(*big.Rat); ok {
			scale := 0
			if l, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
				scale = l.Scale()
			}
			return append(dst, r.FloatString(scale)...), nil
		}
	}
	return appendAny(dst, v), nil
}

func branchName(s avro.Schema) string {
	if n, ok := s.(avro.NamedSchema); ok {
		return n.FullName()
	}
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return string(s.Type()) + "." + string(l.Logical().Type())
	}
	return string(s.Type())
}

// appendAny writes a scalar (or a structure without its schema) as JSON.
func appendAny(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float32:
		return appendFloat(dst, float64(x), 32)
	case float64:
		return appendFloat(dst, x, 64)
	case string:
		return appendString(dst, x)
	case []byte:
		return appendString(dst, string(x))
	case time.Time:
		return appendString(dst, x.UTC().Format("2006-01-02 15:04:05.999999"))
	case time.Duration:
		return strconv.AppendInt(dst, x.Milliseconds(), 10)
	case *big.Rat:
		return append(dst, x.FloatString(18)...)
	case map[string]any:
		dst = append(dst, '{')
		first := true
		for k, e := range x {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendAny(dst, e)
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendAny(dst, e)
		}
		return append(dst, ']')
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return appendString(dst, string(b))
	}
	return appendString(dst, fmt.Sprint(v))
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendString(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20:
				switch c {
				case '\n':
					dst = append(dst, '\\', 'n')
				case '\r':
					dst = append(dst, '\\', 'r')
				case '\t':
					dst = append(dst, '\\', 't')
				default:
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				}
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
