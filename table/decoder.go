package table

import (
	"fmt"
	"strings"
)

// Binary formats. A record of format avro or protobuf is decoded by a
// Decoder into one JSON object, which the parser then reads exactly as a
// json record: jsonpaths, json_root, the json conversion rules, strict_mode,
// NULL and DEFAULT rules, columns_mapping and where all apply unchanged.
// Decoders live outside this package (formats/registry): they fetch schemas
// from a schema registry, and this package does no I/O.

// Decoder turns one binary record into JSON text. It must be safe for
// concurrent use: the parsers of a job's tasks share it (and its schema
// cache).
type Decoder interface {
	// AppendJSON appends the decoded record, one JSON object, to dst and
	// returns it. A record that does not decode (a bad header, a schema id
	// the registry does not know, bytes that do not match the schema) is a
	// *ParseError; a registry that cannot be reached now is an
	// *UnavailableError (the record is neither loaded nor an error row).
	//
	// It appends at most limit bytes (> 0): a record whose JSON would be
	// longer is a *ParseError naming the limit, found without writing
	// much more than limit bytes (a few bytes of a binary record can
	// stand for a large JSON text: an array of empty items, fields left
	// out and written as their zero values).
	AppendJSON(dst, raw []byte, limit int) ([]byte, error)
}

// UnavailableError says a record could not be decoded now because what
// decoding needs (its schema registry) did not answer: the batch must be
// retried later, never turned into error rows.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("table: schema registry unreachable: %v", e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// binaryFormat reports whether kind is a format read through a Decoder.
func binaryFormat(kind string) bool {
	switch strings.ToLower(kind) {
	case "avro", "protobuf":
		return true
	}
	return false
}
