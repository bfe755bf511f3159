package node_test

import "google.golang.org/protobuf/reflect/protoreflect"

func protoreflectString(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }
