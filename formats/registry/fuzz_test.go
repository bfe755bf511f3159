package registry_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/internal/registrytest"
	"github.com/loadnode/loadnode/table"
)

// fuzzDecode checks that any record either decodes into valid JSON or is
// a ParseError: never a panic, never an outage, never invalid JSON, never
// more than the limit.
func fuzzDecode(t *testing.T, d table.Decoder, raw []byte) {
	if out, err := d.AppendJSON(nil, raw, 64); err == nil && len(out) > 64 {
		t.Fatalf("%x: %d bytes of JSON under a limit of 64", raw, len(out))
	}
	out, err := d.AppendJSON(nil, raw, 1<<20)
	if err != nil {
		var pe *table.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%x: %v (%T), want a ParseError", raw, err, err)
		}
		return
	}
	if !json.Valid(out) {
		t.Fatalf("%x: invalid JSON %q", raw, out)
	}
}

func FuzzAvroDecode(f *testing.F) {
	srv := registrytest.New(f)
	id := srv.Register(f, "f-value", sr.TypeAvro, orderV2)
	d := decoder(f, srv.URL(), "avro")
	body, err := avro.Marshal(avro.MustParse(orderV2), map[string]any{"id": int64(1), "note": "x", "at": int64(5), "price": []byte{1}, "tags": []any{"t"}, "addr": map[string]any{"city": "c\"\\\n\x01é"}, "qty": 2})
	if err != nil {
		f.Fatal(err)
	}
	var h sr.ConfluentHeader
	hdr, _ := h.AppendEncode(nil, id, nil)
	f.Add(body)
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})
	// A million tags of no bytes each (a JSON array of 1M strings).
	f.Add([]byte{0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x80, 0x80, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzDecode(t, d, append(append([]byte(nil), hdr...), b...))
	})
}

func FuzzProtobufDecode(f *testing.F) {
	srv := registrytest.New(f)
	id := srv.Register(f, "f-value", sr.TypeProtobuf, protoV1)
	d := decoder(f, srv.URL(), "protobuf")
	var h sr.ConfluentHeader
	hdr, _ := h.AppendEncode(nil, id, nil)
	f.Add([]byte{0x02, 0x02, 0x08, 0x2a, 0x12, 0x02, 'h', 'i'}) // indexes [1], id 42, note "hi"
	f.Add([]byte{0x00, 0x22, 0x03, 0x0a, 0x01, 'x'})
	f.Add([]byte{0x04, 0x02, 0x00})
	f.Add(append([]byte{0x02, 0x02}, []byte(strings.Repeat("\x22\x00", 5000))...)) // 5,000 empty lines, each written whole
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzDecode(t, d, append(append([]byte(nil), hdr[:5]...), b...))
	})
}
