package registry_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/internal/registrytest"
	"github.com/loadnode/loadnode/table"
)

// decodeBounded decodes raw with a limit and reports the error and how
// many bytes the decoding allocated.
func decodeBounded(t *testing.T, d table.Decoder, raw []byte, limit int) (int, uint64, error) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := d.AppendJSON(nil, raw, limit)
	runtime.ReadMemStats(&after)
	return len(out), after.TotalAlloc - before.TotalAlloc, err
}

// TestDecodedJSONBounded (probe 2026-12-02, D5): a few bytes of a binary
// record can stand for a large JSON text (a million items that take no
// bytes; submessages written with every field they leave out). The
// decoders stop at the limit they are given, with a ParseError naming
// it, having allocated little more than the limit.
func TestDecodedJSONBounded(t *testing.T) {
	const limit = 1 << 20
	srv := registrytest.New(t)
	var fields []string
	for i := range 20 {
		fields = append(fields, fmt.Sprintf(`{"name":"field_%02d","type":"null"}`, i))
	}
	empty := `{"type":"record","name":"R","fields":[{"name":"items","type":{"type":"array","items":{"type":"record","name":"E","fields":[` + strings.Join(fields, ",") + `]}}}]}`
	avroID := srv.Register(t, "avro-value", sr.TypeAvro, empty)
	var protoFields []string
	for i := range 20 {
		protoFields = append(protoFields, fmt.Sprintf("string field_%02d = %d;", i, i+1))
	}
	wide := `syntax = "proto3"; message R { message E { ` + strings.Join(protoFields, " ") + ` } repeated E items = 1; }`
	protoID := srv.Register(t, "proto-value", sr.TypeProtobuf, wide)
	avroDec, protoDec := decoder(t, srv.URL(), "avro"), decoder(t, srv.URL(), "protobuf")

	var h sr.ConfluentHeader
	// avro: one block of 2^20 items of zero bytes each (a zigzag varint),
	// then the end of the array: 5 bytes for 2^20 * 320 bytes of JSON.
	avroRec, _ := h.AppendEncode(nil, avroID, nil)
	avroRec = append(avroRec, 0x80, 0x80, 0x80, 0x01, 0x00)
	// protobuf: 100,000 empty submessages, 2 bytes each, every one
	// written with its 20 fields.
	protoRec, _ := h.AppendEncode(nil, protoID, []int{0})
	protoRec = append(protoRec, []byte(strings.Repeat("\x0a\x00", 100_000))...)

	for _, tt := range []struct {
		name string
		d    table.Decoder
		raw  []byte
		want string
	}{
		{"avro", avroDec, avroRec, "avro: record does not decode with schema id 1: its JSON would be over the limit of 1048576 bytes per value (max_record_size)"},
		{"protobuf", protoDec, protoRec, "protobuf: R (schema id 2): its JSON would be over the limit of 1048576 bytes per value (max_record_size)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n, grew, err := decodeBounded(t, tt.d, tt.raw, limit)
			var pe *table.ParseError
			if !errors.As(err, &pe) || pe.Reason != tt.want {
				t.Fatalf("decoded %d bytes, err %v\nwant %s", n, err, tt.want)
			}
			if grew > 8*limit {
				t.Errorf("allocated %d bytes for a limit of %d", grew, limit)
			}
			// With room for it, the record decodes.
			if n, _, err := decodeBounded(t, tt.d, tt.raw, 1<<30); err != nil || n < 20<<20 {
				t.Errorf("under a 1 GiB limit: %d bytes, %v", n, err)
			}
		})
	}
}

// TestSchemaNesting (probe 2026-12-02, D6): a schema whose text nests
// deeper than 1000 levels is refused before a parser that recurses per
// level reads it; every record naming it is an error row.
func TestSchemaNesting(t *testing.T) {
	// nOption levels of an option take 46 bytes each in an answer: 80,000
	// stay under the 4 MiB an answer may hold (TestAnswerBounded).
	const n, nOption = 100_000, 80_000
	srv := registrytest.New(t)
	// A registry refuses avro schemas nesting deeper than its JSON parser
	// takes (srfake: encoding/json's 10,000).
	deepAvro := strings.Repeat(`{"type":"array","items":`, 5000) + `"int"` + strings.Repeat("}", 5000)
	deepMessages := `syntax = "proto3";` + strings.Repeat("message M {", n) + strings.Repeat("}", n)
	deepOption := `syntax = "proto3"; import "google/protobuf/struct.proto"; import "google/protobuf/descriptor.proto";
extend google.protobuf.MessageOptions { google.protobuf.Struct s = 50000; }
message M { option (s) = ` + strings.Repeat("{fields: {key: \"a\" value: {struct_value: ", nOption) + "{}" + strings.Repeat("}}}", nOption) + `; int64 id = 1; }`
	okAvro := strings.Repeat(`{"type":"array","items":`, 500) + `"int"` + strings.Repeat("}", 500)
	// Brackets in strings and comments are not nesting.
	okProto := `syntax = "proto3"; // ` + strings.Repeat("{", 2000) + `
/* ` + strings.Repeat("[", 2000) + ` */ message M { string s = 1 [json_name = "` + strings.Repeat("(", 2000) + `"]; }`
	for _, tt := range []struct {
		name, format, schema string
		typ                  sr.SchemaType
		want                 string // "" decodes
	}{
		{"avro", "avro", deepAvro, sr.TypeAvro, "avro schema id %d: schema nests deeper than 1000 levels"},
		{"protobuf messages", "protobuf", deepMessages, sr.TypeProtobuf, "protobuf schema id %d: loadnode-schema.proto: schema nests deeper than 1000 levels"},
		{"protobuf option", "protobuf", deepOption, sr.TypeProtobuf, "protobuf schema id %d: loadnode-schema.proto: schema nests deeper than 1000 levels"},
		{"avro at 500", "avro", okAvro, sr.TypeAvro, ""},
		{"protobuf with brackets in strings", "protobuf", okProto, sr.TypeProtobuf, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := srv.Register(t, "s"+tt.name+"-value", tt.typ, tt.schema)
			var h sr.ConfluentHeader
			var rec []byte
			if tt.format == "avro" {
				rec, _ = h.AppendEncode(nil, id, nil)
				rec = append(rec, 0x00)
			} else {
				rec, _ = h.AppendEncode(nil, id, []int{0})
			}
			_, err := decoder(t, srv.URL(), tt.format).AppendJSON(nil, rec, 1<<20)
			var pe *table.ParseError
			switch {
			case tt.want == "" && err != nil && !strings.Contains(err.Error(), "not a record schema"):
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (!errors.As(err, &pe) || pe.Reason != fmt.Sprintf(tt.want, id)):
				t.Fatalf("err %.300v\nwant %s", err, fmt.Sprintf(tt.want, id))
			}
		})
	}
}

// TestProtobufMalformedNotBlamedOnSize: the bound on a protobuf record's
// JSON reads the wire bytes first; a record that is small but nests too
// deep, or that does not decode, gets an error row saying so, not one
// blaming max_record_size (the "keep what held" re-run of the 2026-12-02
// probe found a 117 KB recursive message called over the 16 MiB limit).
func TestProtobufMalformedNotBlamedOnSize(t *testing.T) {
	srv := registrytest.New(t)
	id := srv.Register(t, "n-value", sr.TypeProtobuf, `syntax = "proto3"; message N { int64 id = 1; string s = 2; N next = 3; }`)
	dec := decoder(t, srv.URL(), "protobuf")
	var h sr.ConfluentHeader
	rec := func(body []byte) []byte {
		r, _ := h.AppendEncode(nil, id, []int{0})
		return append(r, body...)
	}
	// nested(n) is N{next: N{next: ...}} n levels deep.
	var nested func(n int) []byte
	nested = func(n int) []byte {
		if n == 0 {
			return []byte{0x08, 0x01} // id: 1
		}
		inner := nested(n - 1)
		return append(append([]byte{0x1a}, protowireLen(len(inner))...), inner...)
	}
	for _, tt := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"deep", rec(nested(1500)), "protobuf: record does not decode as N (schema id 1): the message nests deeper than 1000 levels"},
		{"truncated string", rec([]byte{0x12, 0x05, 'a', 'b'}), "protobuf: record does not decode as N (schema id 1): field 2: "},
		{"bad tag", rec([]byte{0x80}), "protobuf: record does not decode as N (schema id 1): field tag: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dec.AppendJSON(nil, tt.raw, 16<<20)
			var pe *table.ParseError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Reason, tt.want) || strings.Contains(pe.Reason, "max_record_size") {
				t.Fatalf("err %v\nwant a reason starting %q", err, tt.want)
			}
		})
	}
	// 900 levels decode.
	if out, err := dec.AppendJSON(nil, rec(nested(900)), 16<<20); err != nil || len(out) == 0 {
		t.Fatalf("900 levels: %v", err)
	}
}

// protowireLen is n as a protobuf varint.
func protowireLen(n int) []byte {
	var b []byte
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}
