package registry_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/internal/registrytest"
)

// TestAvroTypes: every avro type and logical type reaches JSON, and a
// recursive schema decodes.
func TestAvroTypes(t *testing.T) {
	const schema = `{"type":"record","name":"All","fields":[
	 {"name":"b","type":"boolean"},{"name":"i","type":"int"},{"name":"f","type":"float"},{"name":"d","type":"double"},
	 {"name":"raw","type":"bytes"},{"name":"e","type":{"type":"enum","name":"Color","symbols":["RED","GREEN"]}},
	 {"name":"m","type":{"type":"map","values":"long"}},
	 {"name":"fx","type":{"type":"fixed","name":"Money","size":3,"logicalType":"decimal","precision":6,"scale":2}},
	 {"name":"day","type":{"type":"int","logicalType":"date"}},
	 {"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
	 {"name":"u","type":["null","string","long"]},
	 {"name":"next","type":["null","All"],"default":null}]}`
	srv := registrytest.New(t)
	id := srv.Register(t, "all-value", sr.TypeAvro, schema)
	d := decoder(t, srv.URL(), "avro")
	inner := map[string]any{"b": false, "i": int32(-1), "f": float32(0.5), "d": 2.25, "raw": []byte("q\"\x00"), "e": "RED",
		"m": map[string]any{}, "fx": [3]byte{0xff, 0xff, 0x85}, "day": 0, "us": int64(1), "u": nil, "next": nil}
	outer := map[string]any{"b": true, "i": int32(7), "f": float32(1.5), "d": -3.0, "raw": []byte{}, "e": "GREEN",
		"m": map[string]any{"k": int64(9)}, "fx": [3]byte{0, 0x30, 0x39}, "day": 20000, "us": int64(1700000000123456),
		"u": map[string]any{"long": int64(5)}, "next": map[string]any{"All": inner}}
	got, err := d.AppendJSON(nil, avroRecord(t, schema, id, outer), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"i":7,"f":1.5,"d":-3,"raw":"","e":"GREEN","m":{"k":9},"fx":123.45,"day":"2024-10-04","us":"2023-11-14 22:13:20.123456","u":5,` +
		`"next":{"b":false,"i":-1,"f":0.5,"d":2.25,"raw":"q\"\u0000","e":"RED","m":{},"fx":-1.23,"day":"1970-01-01","us":"1970-01-01 00:00:00.000001","u":null,"next":null}}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
