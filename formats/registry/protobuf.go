package registry

import (
	"context"
	"fmt"

	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/loadnode/loadnode/table"
)

// protoSchema is a compiled .proto schema: its file's descriptor.
type protoSchema struct {
	file protoreflect.FileDescriptor
}

type protoDecoder struct{ r *Registry }

var _ table.Decoder = (*protoDecoder)(nil)

// maxIndexes bounds the message indexes of a header (nesting depth).
const maxIndexes = 64

var marshalJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func (d *protoDecoder) AppendJSON(dst, raw []byte, limit int) ([]byte, error) {
	id, rest, err := header(raw)
	if err != nil {
		return dst, err
	}
	var h sr.ConfluentHeader
	index, body, err := h.DecodeIndex(rest, maxIndexes)
	if err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: bad message indexes after schema id %d: %v", id, err)}
	}
	e, err := d.r.lookup(id)
	if err != nil {
		return dst, err
	}
	ps, err := d.r.compileProto(id, e)
	if err != nil {
		return dst, err
	}
	md, err := messageAt(ps.file, index)
	if err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: schema id %d: %v", id, err)}
	}
	// protojson writes the record in one call, and a few bytes may
	// decode into a large message: the JSON's size is bounded first.
	if bound, err := jsonBound(body, md, int64(limit), 0); err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: record does not decode as %s (schema id %d): %v", md.FullName(), id, err)}
	} else if bound > int64(limit) {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: %s (schema id %d): %v", md.FullName(), id, tooLarge(limit))}
	}
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(body, msg); err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: record does not decode as %s (schema id %d): %v", md.FullName(), id, err)}
	}
	start := len(dst)
	out, err := marshalJSON.MarshalAppend(dst, msg)
	if err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: %s (schema id %d): %v", md.FullName(), id, err)}
	}
	if len(out)-start > limit {
		return dst[:start], &table.ParseError{Reason: fmt.Sprintf("protobuf: %s (schema id %d): %v", md.FullName(), id, tooLarge(limit))}
	}
	return out, nil
}

// jsonBound is at least the size of the message md encoded as b once
// unmarshalled and written by marshalJSON, counted from the wire bytes
// (before anything is decoded); it stops counting once over limit. Bytes
// that do not decode, or a message nested deeper than maxDepth, are an
// error saying so (not "over the limit": a small record that is only
// malformed must not be blamed on max_record_size). Every field of every message
// is counted (marshalJSON writes the ones left out as their zero values).
// Well-known types that protojson writes in their own form (Timestamp,
// Duration, wrappers, Struct, FieldMask) are no larger so; an Any is
// counted as the message it holds.
func jsonBound(b []byte, md protoreflect.MessageDescriptor, limit int64, depth int) (int64, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("the message nests deeper than %d levels", maxDepth)
	}
	fields := md.Fields()
	n := int64(2) // {}
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		n += int64(len(fd.Name())) + 6 + zeroBound(fd) // "name":, a comma, protojson's random spaces
	}
	var typeURL string
	var anyValue []byte
	for len(b) > 0 && n <= limit {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return 0, fmt.Errorf("field tag: %w", protowire.ParseError(k))
		}
		b = b[k:]
		fd := fields.ByNumber(num)
		var v []byte
		switch typ {
		case protowire.BytesType:
			v, k = protowire.ConsumeBytes(b)
		case protowire.StartGroupType:
			v, k = protowire.ConsumeGroup(num, b)
		default:
			k = protowire.ConsumeFieldValue(num, typ, b)
		}
		if k < 0 {
			return 0, fmt.Errorf("field %d: %w", num, protowire.ParseError(k))
		}
		b = b[k:]
		if fd == nil {
			continue // unknown: not written
		}
		if md.FullName() == "google.protobuf.Any" {
			switch num {
			case 1:
				typeURL = string(v)
			case 2:
				anyValue = v
			}
		}
		switch {
		case typ != protowire.BytesType && typ != protowire.StartGroupType:
			n += 34 // a number, quoted when 64-bit; "-Infinity"; true; an enum's number
			if fd.Kind() == protoreflect.EnumKind {
				n += enumBound(fd)
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			m, err := jsonBound(v, fd.Message(), limit-n, depth+1)
			if err != nil {
				return 0, err
			}
			n += 2 + m
		case fd.Kind() == protoreflect.StringKind:
			n += 2 + quotedLen(string(v))
		case fd.Kind() == protoreflect.BytesKind:
			n += 2 + 4*((int64(len(v))+2)/3) + 2 // base64, quoted
		default: // packed scalars: at most one per byte
			n += int64(len(v)) * (34 + enumBound(fd))
		}
	}
	if typeURL != "" && n <= limit {
		m, err := anyBound(typeURL, anyValue, limit-n, depth)
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// anyBound bounds the message an Any holds, as protojson writes it when
// it can resolve its type.
func anyBound(typeURL string, value []byte, limit int64, depth int) (int64, error) {
	var types protoregistry.MessageTypeResolver = protoregistry.GlobalTypes
	if marshalJSON.Resolver != nil {
		types = marshalJSON.Resolver
	}
	mt, err := types.FindMessageByURL(typeURL)
	if err != nil {
		return 0, nil // protojson fails on it
	}
	return jsonBound(value, mt.Descriptor(), limit, depth+1)
}

// enumBound is at least the size of an enum value of fd written by name.
func enumBound(fd protoreflect.FieldDescriptor) int64 {
	if fd.Kind() != protoreflect.EnumKind {
		return 0
	}
	longest := 0
	vals := fd.Enum().Values()
	for i := 0; i < vals.Len(); i++ {
		longest = max(longest, len(vals.Get(i).Name()))
	}
	return int64(longest) + 2
}

// quotedLen is at least the size of s as a JSON string.
func quotedLen(s string) int64 {
	n := int64(len(s)) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20:
			n += 5 // \u00XX
		case c == '"' || c == '\\':
			n++
		}
	}
	return n
}

// zeroBound is at least the size of what protojson writes for an
// unpopulated field: null, [], {}, or its default (a proto3 zero value).
func zeroBound(fd protoreflect.FieldDescriptor) int64 {
	switch {
	case fd.IsList() || fd.IsMap():
		return 2
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		return 4
	case fd.Kind() == protoreflect.StringKind:
		return quotedLen(fd.Default().String())
	case fd.Kind() == protoreflect.BytesKind:
		return 4*((int64(len(fd.Default().Bytes()))+2)/3) + 2
	}
	return 34 + enumBound(fd)
}

// messageAt follows the message indexes (the first into the file's
// messages, each next into the nested messages).
func messageAt(fd protoreflect.FileDescriptor, index []int) (protoreflect.MessageDescriptor, error) {
	msgs := fd.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range index {
		if i < 0 || i >= msgs.Len() {
			return nil, fmt.Errorf("message index %v names no message of %s", index, fd.Path())
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, fmt.Errorf("%s has no message", fd.Path())
	}
	return md, nil
}

// compileProto compiles e's .proto text (fetching its references) once.
func (r *Registry) compileProto(id int, e *entry) (*protoSchema, error) {
	r.mu.Lock()
	ps, cerr := e.proto, e.err
	s := e.schema
	r.mu.Unlock()
	if ps != nil || cerr != nil {
		return ps, cerr
	}
	if s.Type != sr.TypeProtobuf {
		return nil, r.setErr(e, &table.ParseError{Reason: fmt.Sprintf("schema id %d is a %s schema, not protobuf", id, s.Type)})
	}
	const main = "loadnode-schema.proto"
	srcs := map[string]string{main: s.Schema}
	total := len(s.Schema)
	if err := r.references(s.References, srcs, 0, &total); err != nil {
		switch err.(type) {
		case *table.UnavailableError:
			return nil, err // not cached: the next record tries again
		case *table.ParseError:
			return nil, r.setErr(e, err)
		}
		return nil, r.setErr(e, &table.ParseError{Reason: fmt.Sprintf("protobuf schema id %d: %v", id, err)})
	}
	for name, src := range srcs {
		if err := checkNesting(src, maxDepth, true); err != nil {
			return nil, r.setErr(e, &table.ParseError{Reason: fmt.Sprintf("protobuf schema id %d: %s: %v", id, name, err)})
		}
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(srcs)})}
	files, err := c.Compile(context.Background(), main)
	if err != nil {
		return nil, r.setErr(e, &table.ParseError{Reason: fmt.Sprintf("protobuf schema id %d does not compile: %v", id, err)})
	}
	ps = &protoSchema{file: files[0]}
	r.mu.Lock()
	e.proto = ps
	r.mu.Unlock()
	r.resize(id, e, total) // the references' text is kept compiled too
	return ps, nil
}

func (r *Registry) setErr(e *entry, err error) error {
	r.mu.Lock()
	e.err = err
	r.mu.Unlock()
	return err
}

// errTextTooLarge: a schema's text with its references is over
// MaxAnswerBytes.
var errTextTooLarge = fmt.Errorf("its text with its references is over the limit of %d bytes", MaxAnswerBytes)

// references adds the referenced schemas, by their import names, to srcs,
// and their text's size to total; past MaxAnswerBytes it stops with
// errTextTooLarge.
func (r *Registry) references(refs []sr.SchemaReference, srcs map[string]string, depth int, total *int) error {
	if depth > 16 {
		return &table.ParseError{Reason: "protobuf: schema references nest deeper than 16"}
	}
	for _, ref := range refs {
		if _, ok := srcs[ref.Name]; ok {
			continue
		}
		s, err := r.subjectSchema(ref.Subject, ref.Version)
		if err != nil {
			return err
		}
		if *total += len(s.Schema.Schema); *total > MaxAnswerBytes {
			return errTextTooLarge
		}
		srcs[ref.Name] = s.Schema.Schema
		if err := r.references(s.References, srcs, depth+1, total); err != nil {
			return err
		}
	}
	return nil
}
