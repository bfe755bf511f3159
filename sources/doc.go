// Package sources holds the small interface between a task actor and the SDK
// of a stream source (Kafka, Kinesis): a Reader that reads a fixed
// set of partitions from given positions in bounded batches, the Batch it
// returns, and the typed errors a job actor or a supervisor branches on with
// errors.As.
//
// Positions. A position is the next offset to read. Batch.Next holds the
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
