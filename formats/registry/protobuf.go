package registry

import (
	"context"
	"fmt"

	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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

func (d *protoDecoder) AppendJSON(dst, raw []byte) ([]byte, error) {
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
	msg := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(body, msg); err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: record does not decode as %s (schema id %d): %v", md.FullName(), id, err)}
	}
	out, err := marshalJSON.MarshalAppend(dst, msg)
	if err != nil {
		return dst, &table.ParseError{Reason: fmt.Sprintf("protobuf: %s (schema id %d): %v", md.FullName(), id, err)}
	}
	return out, nil
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
	if err := r.references(s.References, srcs, 0); err != nil {
		if _, ok := err.(*table.UnavailableError); ok {
			return nil, err // not cached: the next record tries again
		}
		return nil, r.setErr(e, err)
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
	return ps, nil
}

func (r *Registry) setErr(e *entry, err error) error {
	r.mu.Lock()
	e.err = err
	r.mu.Unlock()
	return err
}

// references adds the referenced schemas, by their import names, to srcs.
func (r *Registry) references(refs []sr.SchemaReference, srcs map[string]string, depth int) error {
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
		srcs[ref.Name] = s.Schema.Schema
		if err := r.references(s.References, srcs, depth+1); err != nil {
			return err
		}
	}
	return nil
}
