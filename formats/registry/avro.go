package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/loadnode/loadnode/table"
)

// avroSchema is a compiled writer schema: its plan (avrojson.go).
type avroSchema struct {
	plan *anode
}

type avroDecoder struct{ r *Registry }

var _ table.Decoder = (*avroDecoder)(nil)

func (d *avroDecoder) AppendJSON(dst, raw []byte, limit int) ([]byte, error) {
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
	if as.plan.kind != aRecord {
		return dst, &table.ParseError{Reason: fmt.Sprintf("avro: schema id %d is not a record schema", id)}
	}
	start := len(dst)
	r := avroReader{b: body, max: start + limit}
	out, err := transcode(dst, as.plan, &r, 0)
	if err == nil && r.i != len(body) {
		err = fmt.Errorf("%d bytes after the record", len(body)-r.i)
	}
	if err == errOverMax || err == nil && len(out)-start > limit {
		err = tooLarge(limit)
	}
	if err != nil {
		return dst[:start], &table.ParseError{Reason: fmt.Sprintf("avro: record does not decode with schema id %d: %v", id, err)}
	}
	return out, nil
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
	if err := checkNesting(e.schema.Schema, maxDepth, false); err != nil {
		e.err = &table.ParseError{Reason: fmt.Sprintf("avro schema id %d: %v", id, err)}
		return nil, e.err
	}
	s, err := avro.ParseWithCache(e.schema.Schema, "", &avro.SchemaCache{})
	if err != nil {
		e.err = &table.ParseError{Reason: fmt.Sprintf("avro schema id %d does not parse: %v", id, err)}
		return nil, e.err
	}
	plan, err := compilePlan(s)
	if err != nil {
		e.err = &table.ParseError{Reason: fmt.Sprintf("avro schema id %d: %v", id, err)}
		return nil, e.err
	}
	e.avro = &avroSchema{plan: plan}
	return e.avro, nil
}

// maxDepth bounds how deeply a schema (its text, then its types) and a
// record nest, so that neither the schema parsers (hamba/avro,
// protocompile), nor the plan compiler, nor a record's decoding can
// exhaust the stack.
const maxDepth = 1000

// checkNesting refuses schema text whose brackets ({ [ ( <) nest deeper
// than limit, outside strings (and, in .proto text, comments), before a
// parser that recurses per level reads it.
func checkNesting(text string, limit int, proto bool) error {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"' || proto && c == '\'':
			for i++; i < len(text) && text[i] != c; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case proto && c == '/' && strings.HasPrefix(text[i:], "//"):
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(text)
			}
		case proto && c == '/' && strings.HasPrefix(text[i:], "/*"):
			if j := strings.Index(text[i+2:], "*/"); j >= 0 {
				i += j + 3
			} else {
				i = len(text)
			}
		case c == '{' || c == '[' || c == '(' || c == '<':
			if depth++; depth > limit {
				return fmt.Errorf("schema nests deeper than %d levels", limit)
			}
		case c == '}' || c == ']' || c == ')' || c == '>':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendString(dst, strconv.FormatFloat(f, 'g', -1, bits))
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString[T string | []byte](dst []byte, s T) []byte {
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
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\ufffd"...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}
