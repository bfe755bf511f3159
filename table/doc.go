// Package table owns a target table's schema, the parsing of source records
// (csv, json) into typed rows, and the encoding of rows as they are stored in
// Pebble (keys and values).
//
// Concurrency: everything here is a pure function or an immutable value, safe
// for concurrent use once built, except Parser, which reuses buffers and
// belongs to one goroutine (one per task).
//
// Storage layout: a row's key comes from the table model (AppendKey); for
// DUPLICATE it is the source position (job id, partition, offset), encoded so
// that keys sort numerically. A row's value (AppendValue) is versioned by a
// leading format byte and carries the row's source position and its cells.
package table
