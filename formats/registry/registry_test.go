package registry_test

import (
	"errors"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/bufbuild/protocompile"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/formats/registry"
	"github.com/loadnode/loadnode/internal/registrytest"
	"github.com/loadnode/loadnode/table"
)

const (
	orderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"gone","type":"string"},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}}]}`
	orderV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},{"name":"tags","type":{"type":"array","items":"string"}},{"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}},{"name":"qty","type":"int","default":1}]}`
)

// AvroRecord encodes v with schema text in the wire format under id.
func avroRecord(t *testing.T, schema string, id int, v any) []byte {
	t.Helper()
	s := avro.MustParse(schema)
	body, err := avro.Marshal(s, v)
	if err != nil {
		t.Fatal(err)
	}
	var h sr.ConfluentHeader
	b, _ := h.AppendEncode(nil, id, nil)
	return append(b, body...)
}

func decoder(t testing.TB, url, format string) table.Decoder {
	t.Helper()
	d, err := registry.NewRegistries().Decoder(&api.JobSpec{Format: format, SchemaRegistry: &api.SchemaRegistrySpec{Url: url, TimeoutMs: 2000}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestAvroEvolution(t *testing.T) {
	srv := registrytest.New(t)
	id1 := srv.Register(t, "orders-value", sr.TypeAvro, orderV1)
	id2 := srv.Register(t, "orders-value", sr.TypeAvro, orderV2)
	d := decoder(t, srv.URL(), "avro")
	type addr struct {
		City string `avro:"city"`
	}
	r1 := avroRecord(t, orderV1, id1, map[string]any{"id": int64(7), "note": "hi", "gone": "x", "at": int64(1700000000123), "price": []byte{0x30, 0x39}, "tags": []any{"a", "b"}, "addr": map[string]any{"city": "Oslo"}})
	got, err := d.AppendJSON(nil, r1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_ = addr{}
	want := `{"id":7,"note":"hi","gone":"x","at":"2023-11-14 22:13:20.123","price":123.45,"tags":["a","b"],"addr":{"city":"Oslo"}}`
	if string(got) != want {
		t.Fatalf("v1:\n got %s\nwant %s", got, want)
	}
	r2 := avroRecord(t, orderV2, id2, map[string]any{"id": int64(8), "note": nil, "at": int64(0), "price": []byte{0x01}, "tags": []any{}, "addr": map[string]any{"city": "Rome"}, "qty": 3})
	got, err = d.AppendJSON(nil, r2, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"id":8,"note":null,"at":"1970-01-01 00:00:00","price":0.01,"tags":[],"addr":{"city":"Rome"},"qty":3}`
	if string(got) != want {
		t.Fatalf("v2:\n got %s\nwant %s", got, want)
	}
	// An unknown id is a parse error (an error row), not an outage.
	var h sr.ConfluentHeader
	bad, _ := h.AppendEncode(nil, 999, nil)
	_, err = d.AppendJSON(nil, append(bad, 2, 0), 1<<20)
	var pe *table.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("unknown id: %v (%T), want a ParseError", err, err)
	}
	// Bytes that do not match the schema: a parse error too.
	if _, err = d.AppendJSON(nil, append(r1[:5:5], 0xff), 1<<20); !errors.As(err, &pe) {
		t.Fatalf("bad body: %v, want a ParseError", err)
	}
	if _, err = d.AppendJSON(nil, []byte("{}"), 1<<20); !errors.As(err, &pe) {
		t.Fatalf("no header: %v, want a ParseError", err)
	}
	// A registry that is down: unavailable, for an id not cached yet;
	// cached ids still decode.
	srv.Stop()
	id3 := 1000
	rec3, _ := h.AppendEncode(nil, id3, nil)
	var ue *table.UnavailableError
	if _, err = d.AppendJSON(nil, append(rec3, 2), 1<<20); !errors.As(err, &ue) {
		t.Fatalf("registry down: %v (%T), want an UnavailableError", err, err)
	}
	if _, err = d.AppendJSON(nil, r1, 1<<20); err != nil {
		t.Fatalf("cached id with the registry down: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
}

const protoV1 = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
message Other { string x = 1; }
message Order {
  int64 id = 1;
  string note = 2;
  google.protobuf.Timestamp at = 3;
  message Line { string sku = 1; int32 n = 2; }
  repeated Line lines = 4;
  Status status = 5;
  enum Status { NEW = 0; PAID = 1; }
}`

func TestProtobuf(t *testing.T) {
	srv := registrytest.New(t)
	id := srv.Register(t, "orders-value", sr.TypeProtobuf, protoV1)
	d := decoder(t, srv.URL(), "protobuf")
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(map[string]string{"a.proto": protoV1})})}
	files, err := c.Compile(t.Context(), "a.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := files[0].Messages().ByName("Order")
	m := dynamicpb.NewMessage(md)
	m.Set(md.Fields().ByName("id"), protoValueInt(42))
	m.Set(md.Fields().ByName("note"), protoValueStr("hello"))
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var h sr.ConfluentHeader
	rec, _ := h.AppendEncode(nil, id, []int{1})
	got, err := d.AppendJSON(nil, append(rec, body...), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"42","note":"hello","at":null,"lines":[],"status":"NEW"}`
	if compact(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
