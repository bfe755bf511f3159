package table

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestMetaColumns(t *testing.T) {
	s := typedSchema(t, "id int", "k varchar(40)", "h varchar(20)", "ts timestamp", "n bigint")
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	meta := &RecordMeta{Key: []byte{0xca, 0xfe}, Topic: "orders", Partition: 3, Offset: 42, Seq: "4959", Timestamp: at,
		Headers: []Header{{Key: "h", Value: []byte("first")}, {Key: "h", Value: []byte("last")}, {Key: "x-y", Value: []byte("dash")}}}
	tests := []struct {
		name  string
		items []string
		where string
		want  string
	}{
		{"key hex, last header, timestamp", []string{"id", "k = __key_hex", "h = `__header.h`", "ts = __timestamp", "n = __offset"}, "", "1|cafe|last|2026-12-01T10:00:00.123456Z|42"},
		{"topic, partition, header with a dash, ms", []string{"id", "k = concat(__topic, '#', __partition)", "h = `__header.x-y`", "n = __timestamp_ms"}, "", "1|orders#3|dash|NULL|" + "1796119200123"},
		{"absent header and sequence", []string{"id", "h = `__header.none`", "k = __sequence"}, "", "1|4959|NULL|NULL|NULL"},
		{"where on metadata", []string{"id"}, "__partition = 4", ErrFiltered.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, Format{Columns: tt.items, Where: tt.where})
			if err != nil {
				t.Fatal(err)
			}
			if !p.UsesMeta() {
				t.Fatal("UsesMeta false for a mapping that reads metadata")
			}
			p.SetMeta(meta)
			row, err := p.Parse([]byte("1"), nil)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = render(s, row)
			}
			if got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
	if p, err := NewParser(s, Format{Columns: []string{"id", "t", "k = upper(t)"}}); err != nil || p.UsesMeta() {
		t.Fatalf("a mapping without metadata: UsesMeta %v, %v", p != nil && p.UsesMeta(), err)
	}
	if _, err := NewParser(s, Format{Columns: []string{"id", "k = __kee"}}); err == nil || !strings.Contains(err.Error(), "unknown source metadata") {
		t.Fatalf("a misspelt metadata name: %v", err)
	}
}

// jsonDecoder is a Decoder for tests: records are JSON already, "down"
// is an outage and "bad" does not decode.
type jsonDecoder struct{}

func (jsonDecoder) AppendJSON(dst, raw []byte, limit int) ([]byte, error) {
	if len(raw) > limit {
		return dst, &ParseError{Reason: fmt.Sprintf("json: over %d bytes", limit)}
	}
	switch string(raw) {
	case "down":
		return dst, &UnavailableError{Err: errors.New("connection refused")}
	case "bad":
		return dst, &ParseError{Reason: "avro: does not decode"}
	}
	return append(dst, raw...), nil
}

func TestBinaryFormat(t *testing.T) {
	s := typedSchema(t, "id int", "city varchar(20)", "n bigint")
	s.meta[2].hasDef, s.meta[2].def = true, Value{Int: 9}
	p, err := NewParser(s, Format{Kind: "avro", Decoder: jsonDecoder{}, JSONPaths: []string{"$.id", "$.addr.city", "$.n"}})
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.ParseBorrowed([]byte(`{"id": 5, "addr": {"city": "Oslo"}}`), nil)
	if err != nil || render(s, row) != "5|Oslo|9" {
		t.Fatalf("got %v %v", row, err)
	}
	var ue *UnavailableError
	if _, err := p.Parse([]byte("down"), nil); !errors.As(err, &ue) {
		t.Fatalf("outage: %v", err)
	}
	var pe *ParseError
	if _, err := p.Parse([]byte("bad"), nil); !errors.As(err, &pe) || pe.Reason != "avro: does not decode" {
		t.Fatalf("bad record: %v", err)
	}
	// The decoder is given the limit on a value.
	small, err := NewParser(s, Format{Kind: "avro", Decoder: jsonDecoder{}, MaxValueBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.Parse([]byte(`{"id": 5, "n": 1}`), nil); err == nil || err.Error() != "json: over 10 bytes" {
		t.Fatalf("over the limit: %v", err)
	}
	// Without a decoder (a spec check), every record is refused.
	p, err = NewParser(s, Format{Kind: "protobuf"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]byte("{}"), nil); !errors.As(err, &pe) {
		t.Fatalf("no decoder: %v", err)
	}
}

// TestKeyJSON: __key_json is the key decoded with the job's decoder.
func TestKeyJSON(t *testing.T) {
	s := typedSchema(t, "id int", "k varchar(40)")
	p, err := NewParser(s, Format{Kind: "avro", Decoder: jsonDecoder{}, Columns: []string{"id", "k = get_json_string(__key_json, '$.user')"}})
	if err != nil {
		t.Fatal(err)
	}
	p.SetMeta(&RecordMeta{Key: []byte(`{"user": "ann"}`)})
	row, err := p.Parse([]byte(`{"id": 1}`), nil)
	if err != nil || render(s, row) != "1|ann" {
		t.Fatalf("got %v %v", row, err)
	}
	p.SetMeta(&RecordMeta{Key: []byte("bad")})
	var pe *ParseError
	if _, err := p.Parse([]byte(`{"id": 1}`), nil); !errors.As(err, &pe) || !strings.HasPrefix(pe.Reason, "key: ") {
		t.Fatalf("a key that does not decode: %v", err)
	}
	p.SetMeta(&RecordMeta{Key: []byte("down")})
	var ue *UnavailableError
	if _, err := p.Parse([]byte(`{"id": 1}`), nil); !errors.As(err, &ue) {
		t.Fatalf("registry down for the key: %v", err)
	}
}
