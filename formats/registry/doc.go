// Package registry decodes avro and protobuf records written in the
// Confluent schema registry's wire format (magic byte 0, a 4-byte
// big-endian schema id, for protobuf the message indexes) into the JSON
// text the table package parses (table.Decoder).
//
// Schemas are fetched from the registry with franz-go's pkg/sr, once per
// id, and kept compiled in a cache shared by every job of the node that
// names the same registry (Registries), bounded at 4096 entries and 32 MiB
// of schema text (a protobuf schema's with its references); past either,
// entries are evicted and fetched again when a record names them. A
// registry answer over 4 MiB is not read further, and a protobuf schema
// whose text with its references is over 4 MiB is not compiled: every
// record naming it is an error row naming the limit (the refusal is
// cached, the text is not). A registry answering 404 for
// an id makes the record an error row (*table.ParseError); one that does
// not answer (connection refused, a timeout, a 5xx, refused credentials)
// makes the whole batch wait (*table.UnavailableError), so that the job
// backs off and pauses with SCHEMA_REGISTRY_UNREACHABLE, auto-resumed.
// An unknown id is remembered for unknownTTL, so that a run of records
// naming it costs one request.
//
// Avro is decoded with github.com/hamba/avro/v2 into generic values, then
// written as JSON by the writer schema (unions unwrapped, logical types as
// their natural text: timestamps and dates as "YYYY-MM-DD hh:mm:ss.ffffff"
// UTC, decimals exactly). Protobuf schemas (.proto text, with their
// references) are compiled with github.com/bufbuild/protocompile, records
// decoded into dynamicpb messages and written with protojson (proto field
// names, unpopulated fields as their zero value, 64-bit integers as
// strings, bytes as base64, enums by name).
//
// A record's JSON is bounded by the limit its caller gives (a task gives
// the node's max_record_size): avro is transcoded with the size checked
// before each value; a protobuf record's JSON size is bounded from its
// wire bytes before it is decoded. A record over the limit is a
// *table.ParseError (an error row) naming it. Schema text nesting deeper
// than 1000 levels (brackets outside strings and comments) is refused
// before hamba/avro or protocompile reads it.
//
// Concurrency: a Registry and its Decoders are safe for concurrent use;
// the cache is guarded by a mutex and a schema is fetched by one caller at
// a time per id.
package registry
