package registry

import (
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestJSONBound: the bound counted from the wire bytes is at least what
// protojson writes, for ordinary messages and the well-known types it
// writes in their own form.
func TestJSONBound(t *testing.T) {
	const src = `syntax = "proto3";
import "google/protobuf/timestamp.proto"; import "google/protobuf/duration.proto";
import "google/protobuf/struct.proto"; import "google/protobuf/any.proto";
import "google/protobuf/wrappers.proto"; import "google/protobuf/field_mask.proto";
message M {
  int64 id = 1; string s = 2; bytes b = 3; repeated int32 packed = 4; map<string, M> kids = 5;
  E e = 6; enum E { ZERO = 0; A_RATHER_LONG_NAME = 1; }
  google.protobuf.Timestamp at = 7; google.protobuf.Duration d = 8; google.protobuf.Struct st = 9;
  google.protobuf.Any any = 10; google.protobuf.StringValue w = 11; google.protobuf.FieldMask fm = 12;
  repeated M more = 13; double f = 14; optional string o = 15;
}`
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(map[string]string{"m.proto": src})})}
	files, err := c.Compile(t.Context(), "m.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := files[0].Messages().ByName("M")
	for _, text := range []string{
		`{}`,
		`{"id": "-9223372036854775808", "s": "a\"\\\u0001\n` + strings.Repeat("é", 50) + `", "b": "AAEC", "packed": [1, -1, 2147483647], "e": "A_RATHER_LONG_NAME"}`,
		`{"kids": {"x": {}, "y": {"kids": {"z": {"id": "1"}}}}, "more": [{}, {}, {"e": 1}], "f": "-Infinity"}`,
		`{"at": "2024-02-29T23:59:59.999999999Z", "d": "-315576000000.999999999s", "w": "<&>"}`,
		`{"st": {"a": [1, "x", null, {"b": true}], "c": {}}, "fm": "aB.cD,eF"}`,
		`{"any": {"@type": "type.googleapis.com/google.protobuf.Duration", "value": "1.5s"}}`,
		`{"any": {"@type": "type.googleapis.com/google.protobuf.Struct", "value": {"k": [[[]]]}}}`,
		`{"o": ""}`,
	} {
		m := dynamicpb.NewMessage(md)
		if err := protojson.Unmarshal([]byte(text), m); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out, err := marshalJSON.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if bound, err := jsonBound(body, md, 1<<30, 0); err != nil || bound < int64(len(out)) {
			t.Errorf("%s: bound %d (%v), protojson wrote %d bytes: %s", text, bound, err, len(out), out)
		}
	}
}
