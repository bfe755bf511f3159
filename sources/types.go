package sources

import (
	"context"
	"fmt"
	"time"
)

// Record is one data record read from a source. Control records (Kafka
// transaction markers) are never returned as Records; they only advance
// Batch.Next.
type Record struct {
	Partition int32
	// Offset is the record's position in its partition: the Kafka offset,
	// or for Kinesis the record's ordinal in its shard as counted by the
	// job (0, 1, 2, ... from the job's first position in the shard).
	Offset int64
	// Seq is the source's own identifier of the record where it is not
	// Offset (the Kinesis sequence number); empty for Kafka. The user
	// records of one KPL aggregate share the aggregate's Seq.
	Seq       string
	Key       []byte
	Value     []byte
	Timestamp time.Time
	// SubSeq is the record's index in its KPL aggregate (the KCL's
	// subsequence number): Seq and SubSeq together name a user record.
	// 0 for a record that was not aggregated.
	SubSeq int64
	// Err, when not nil, says the source could not decode the record (a
	// corrupt KPL aggregate): Value holds its raw bytes and the task makes
	// it an error row with Err as its reason, whatever the job's format.
	Err error
	// Headers are the Kafka record headers in order; nil when none.
	Headers []Header
}

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

// Size is the record's payload size in bytes (key + value), the unit of
// Limits.MaxBytes and Batch.Bytes.
func (r *Record) Size() int64 { return int64(len(r.Key) + len(r.Value)) }

// Batch is what one Read returns.
type Batch struct {
	// Records in offset order within each partition; partitions interleave.
	Records []Record
	// Next is the position (next offset to read) after this batch for EVERY
	// partition the Reader reads, including partitions without records in
	// this batch (their position is then unchanged, or advanced past
	// control records).
	//
	// INVARIANT: for every partition p, the Records of p are exactly the
	// data records in [previous Next[p], Next[p]).
	Next map[int32]int64
	// Bytes is the sum of Record.Size over Records.
	Bytes int64
	// Topic is the Kafka topic every record of the batch is from (a
	// Reader reads one); empty for Kinesis. It is here rather than in
	// each Record, which every batch holds by the thousand.
	Topic string
	// Checkpoints holds, for a source whose position is more than an
	// offset (Kinesis: the shard, its parents, the last sequence number,
	// whether the shard's end was reached), the new opaque checkpoint of
	// every partition whose checkpoint changed in this batch. It is
	// committed with Next in the same synced write and handed back to the
	// next Reader. Nil for Kafka.
	//
	// A partition may appear here with Next unchanged (a shard's end
	// reached without new records): the batch must still be committed.
	Checkpoints map[int32][]byte
	// BehindMs is, where the source reports it (Kinesis
	// MillisBehindLatest), how far each partition's read position is
	// behind the newest record, in milliseconds.
	BehindMs map[int32]int64
}

// Limits bound one Read. A zero MaxRows or MaxBytes means no limit of that
// kind.
type Limits struct {
	// MaxRows is the most data records a Read returns.
	MaxRows int
	// MaxBytes bounds the sum of record sizes (key + value). A Read stops
	// before a record that would exceed it, except that it always returns
	// at least one record when one is available, so that a record larger
	// than MaxBytes still makes progress.
	MaxBytes int64
	// MaxWait is how long a Read waits for MaxRows / MaxBytes to be reached
	// before it returns what it has. Zero or less: return what is already
	// buffered without waiting.
	//
	// A Reader may return before MaxWait when it is caught up: nothing is
	// buffered and every partition's position is at its known end (the
	// Kafka high watermark), provided the batch is not empty and holds at
	// least a quarter of MaxRows or of MaxBytes, or half of MaxWait has
	// passed. The last batch of a backlog then need not wait out MaxWait,
	// and a trickle still gathers for half of it. An empty Read always
	// waits the whole MaxWait (callers tell "no data" from "no broker" by
	// it). The Kafka reader does this; the Kinesis reader does not.
	MaxWait time.Duration
}

// Reader reads a fixed set of partitions from given start positions. It is
// not safe for concurrent use: one goroutine at a time.
type Reader interface {
	// Read blocks until a limit is reached (rows or bytes), MaxWait has
	// elapsed or ctx is done, and returns what it has, possibly nothing
	// (Next then equals the previous positions). The returned Batch is
	// never nil and always consistent with its Next, even when the error
	// is not nil: a caller may commit it before acting on the error.
	//
	// After a Read whose Batch the caller does not commit, or after any
	// error, the caller must Close the Reader and open a new one from its
	// committed positions.
	Read(ctx context.Context, lim Limits) (*Batch, error)
	// Close releases the Reader's connections and buffers. It is
	// idempotent.
	Close()
}

// A Recycler is a Reader that takes back the Records of a Batch it
// returned once the caller is done with them (every record parsed, no
// pointer into the slice kept; the records' Key and Value bytes are not
// the slice's and may still be held) and reuses their slots in a later
// Read instead of allocating new ones: a batch of 20,000 records holds
// about 3 MiB of slots. The caller calls Recycle at most once per Batch,
// from the goroutine that reads, and must not touch b.Records after it.
type Recycler interface {
	Recycle(b *Batch)
}

// Start is where a partition begins for a job: the first offset to read and,
// for a checkpointed source, the opaque checkpoint a Reader starts from.
type Start struct {
	Offset     int64
	Checkpoint []byte
}

// PartitionState describes one partition of a checkpointed source for
// `job show`.
type PartitionState struct {
	// ID is the source's name of the partition (a Kinesis shard id).
	ID string
	// State is "open", "closed" (the source closed it, the job has not
	// read it to its end) or "finished" (read and committed to its end).
	State string
	// Parents are the partitions that must be finished before this one is
	// read.
	Parents []int32
	// Seq is the last committed sequence number, or the starting position
	// when nothing was committed yet.
	Seq string
}

// OutOfRangeError says the data a job needs is no longer in the source
// (deleted by retention) or its position is beyond the end of the partition.
// The job must pause; it must never skip.
type OutOfRangeError struct {
	Partition int32
	// Offset is the position the job needs next for Partition.
	Offset int64
	// LogStart and LogEnd are the partition's bounds when the error was
	// found, -1 when they could not be listed.
	LogStart, LogEnd int64
	// Shard and Position name the partition and the position in the
	// source's own terms where offsets are not its positions (Kinesis: the
	// shard id and the last committed sequence number or start position).
	Shard, Position string
}

func (e *OutOfRangeError) Error() string {
	if e.Shard != "" {
		return fmt.Sprintf("sources: data loss: shard %s: position %s (record %d of the shard) is no longer in the stream (trimmed by retention)",
			e.Shard, e.Position, e.Offset)
	}
	return fmt.Sprintf("sources: partition %d: offset %d is out of range [%d, %d]",
		e.Partition, e.Offset, e.LogStart, e.LogEnd)
}

// ConfigError is a failure that retrying cannot fix: a bad property, failed
// authentication or authorization, an unknown topic or partition.
type ConfigError struct {
	// Field names the spec field at fault when it is known, for example
	// "kafka.properties.sasl.mechanism" or "kafka.topic"; empty otherwise.
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("sources: configuration: %s: %v", e.Field, e.Err)
	}
	return fmt.Sprintf("sources: configuration: %v", e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Permanent reports that retrying cannot fix the failure: a job actor that
// fails with it is stopped, not restarted (supervisor.PermanentError).
func (e *ConfigError) Permanent() bool { return true }

// UnreachableError is a transient failure to reach the source: brokers down,
// network partition, a leader election that did not settle.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return fmt.Sprintf("sources: unreachable: %v", e.Err) }

func (e *UnreachableError) Unwrap() error { return e.Err }

// Reset is a user's request to move a PAUSED job's positions: offsets by
// partition (a number, OFFSET_BEGINNING, OFFSET_END) or positions by the
// source's own partition names (Kinesis shard ids: TRIM_HORIZON, LATEST,
// AT_TIMESTAMP:<RFC3339>, a sequence number). Each source accepts the kind
// that fits it and refuses the other with a ConfigError naming the field.
type Reset struct {
	Offsets   map[int32]string
	Positions map[string]string
}

// Empty reports whether the reset moves nothing.
func (r Reset) Empty() bool { return len(r.Offsets) == 0 && len(r.Positions) == 0 }
