// Package sources holds what the actors share with the stream sources
// without importing an SDK; the sources themselves are sources/kafka
// (franz-go) and sources/kinesis (aws-sdk-go-v2). It holds the Reader a task
// actor reads a fixed set of partitions (Kafka partitions, Kinesis shards)
// with, from given positions in bounded batches (Limits), the Batch it
// returns, Start, Reset and PartitionState, and the typed errors a job actor
// or a supervisor branches on with errors.As.
//
// Positions. A position is the next offset to read (for Kinesis, the
// record's ordinal in its shard, with an opaque checkpoint beside it in
// Batch.Checkpoints, committed in the same write). Batch.Next holds the
// source's position after a read for every partition the Reader reads, taken
// from what the consumer actually consumed (control records and aborted
// transactional records advance it too), never guessed as "last data record
// + 1". A job commits Batch.Next together with Batch.Records, and the next
// Read continues exactly there: records are neither skipped nor repeated
// across Read calls.
//
// Discovery. Discover serves a source whose partitions come from one
// look-up and their starts from another (a Starter: Kinesis, test
// sources): it resolves only the partitions a job does not know yet, as
// the spec says at the job's first look and from their beginning later.
//
// Concurrency. A Reader is used by one goroutine at a time (its task actor).
// Implementations may run their own background goroutines (SDK fetch loops);
// those never call back into the caller.
package sources
