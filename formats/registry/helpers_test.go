package registry_test

import (
	"bytes"
	"encoding/json"

	"google.golang.org/protobuf/reflect/protoreflect"
)

func protoValueInt(i int64) protoreflect.Value  { return protoreflect.ValueOfInt64(i) }
func protoValueStr(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }

func compact(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}
