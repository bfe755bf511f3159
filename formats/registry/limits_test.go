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
func decodeBounded(t *testing.T, d table.Decoder, raw []byte, limit int) (int, error, uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := d.AppendJSON(nil, raw, limit)
	runtime.ReadMemStats(&after)
	return len(out), err, after.TotalAlloc - before.TotalAlloc
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
			n, err, grew := decodeBounded(t, tt.d, tt.raw, limit)
			var pe *table.ParseError
			if !errors.As(err, &pe) || pe.Reason != tt.want {
				t.Fatalf("decoded %d bytes, err %v\nwant %s", n, err, tt.want)
			}
			if grew > 8*limit {
				t.Errorf("allocated %d bytes for a limit of %d", grew, limit)
			}
			// With room for it, the record decodes.
			if n, err, _ := decodeBounded(t, tt.d, tt.raw, 1<<30); err != nil || n < 20<<20 {
				t.Errorf("under a 1 GiB limit: %d bytes, %v", n, err)
			}
		})
	}
}
