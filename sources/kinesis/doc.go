// Package kinesis is the AWS Kinesis Data Streams source: a Source lists a
// stream's shards as the job's partitions, resolves where each starts,
// gates child shards behind their parents, and opens Readers that follow
// the sources.Reader contract (exactly-once when the caller commits each
// Batch's Next and Checkpoints before the next Read). A Source is one job's
// source as the actors see it (their Source and Lineage): it discovers the
// job's shards (sources.Discover), resolves a user's reset by shard id
// (ResolveReset; positions spelled as Options.CanonicalPosition allows) and
// renders a position as "shard <id> position", without importing them.
//
// # Partitions
//
// A shard is the partition whose index is its id's numeric suffix:
// "shardId-000000000012" is partition 12. Kinesis never reuses a shard id
// within a stream, so an index names one shard for the job's lifetime.
// Partitions lists every shard (ListShards, paginated, no ShardFilter), or
// when the spec chooses shards, those and all their descendants.
//
// # Positions: ordinal and checkpoint
//
// Kinesis sequence numbers are sparse, so a partition's position has two
// parts, committed together:
//
//   - the ordinal (sources.Batch.Next, Record.Offset): how many records of
//     the shard the job has read, counted from 0 at the job's start in the
//     shard. It orders records and drives the INVARIANT "the Records of p
//     are exactly those in [previous Next, Next)".
//   - the Checkpoint (sources.Batch.Checkpoints; EncodeCheckpoint, JSON):
//     the shard id, its parents (ids and partition indices), its start
//     position, the sequence number of the last committed record, how
//     many user records of it were committed when it is a KPL aggregate
//     committed in part ("sub"), and whether the shard was read to its
//     end ("ended").
//
// Start positions are TRIM_HORIZON (the default), LATEST,
// AT_TIMESTAMP:<RFC3339> or a sequence number, meaning "after that record".
// A shard found after the job started (a child of a split or merge) always
// starts at TRIM_HORIZON, so none of its records is missed. A shard already
// closed when a job starts it at LATEST has nothing to read: its checkpoint
// is ended at once.
//
// LATEST is pinned by ResolveStarts: an open shard's start is stored as
// AT_TIMESTAMP of the moment the job first saw it, minus 5 s for clock skew,
// so that a new Reader opened before the shard's first record is committed
// (a restart, an expired iterator) skips nothing that arrived in between.
// kinesalite never answers AT_TIMESTAMP while no record is that new; after
// 2 s without an answer the Reader opens LATEST, which then starts at the
// same place.
//
// # Lineage
//
// After a split or merge the parent shards are closed and the children get
// the new records. Per-key order therefore needs every parent read to its
// end before a child is read. A Reader marks a checkpoint ended when the
// service reports the shard's end (GetRecords without NextShardIterator,
// possibly after empty pages) and every record of the shard was returned;
// Readable then admits a child once each parent the job tracks is ended
// (a parent the job does not track — older than the job, or not chosen —
// does not hold it back). Describe reports a partition as open, closed (by
// the service, not yet read to its end) or finished.
//
// # Iterators and their expiry
//
// A Reader opens iterators lazily on its first Read: after a committed
// record S it opens AT_SEQUENCE_NUMBER S (see trim detection), otherwise at
// the start position. It fetches a shard only when the shard's buffer is
// empty, so when an iterator expires (ExpiredIteratorException: unused for
// five minutes, or injected) it holds no fetched-but-unreturned records and
// re-acquires AFTER_SEQUENCE_NUMBER of the last record it returned, which
// by the Reader contract is the last committed one.
//
// # Throttling and failures
//
// The service allows five GetRecords per second per shard: a Reader calls
// GetRecords of a shard at most every 200 ms, for all due shards at once
// (up to 8 in flight). Throttling (ProvisionedThroughputExceeded,
// LimitExceeded, KMSThrottling) and server errors (InternalFailure, 5xx)
// back off that shard with full jitter, 100 ms doubling to 5 s, within the
// Read's MaxWait; they never fail a Reader. The SDK retries a failed
// attempt once, with no client-side retry quota, so throttling cannot turn
// into "retry quota exceeded". A missing stream or shard
// (ResourceNotFound) is a *sources.ConfigError for "kinesis.stream",
// refused credentials one for "kinesis credentials"; an endpoint that does
// not answer during a whole Read is a *sources.UnreachableError.
//
// # Trim detection (no silent loss)
//
// Records older than the stream's retention are deleted (trimmed). As far
// as consumers' public reports go, Kinesis does not fail an iterator at or
// after a trimmed sequence number: it positions it at the trim horizon, and
// GetRecords may first return empty pages (MillisBehindLatest near the retention) while it walks over the
// trimmed span. Opening AFTER_SEQUENCE_NUMBER of a committed record would
// therefore skip trimmed records silently. A Reader opens AT_SEQUENCE_NUMBER
// of the committed record S instead and checks the first record it gets:
// S itself is dropped (the same as AFTER S); a later record means S was
// trimmed, and the Read returns a *sources.OutOfRangeError for the shard
// at its next ordinal (LogStart and LogEnd -1), with the records it
// collected from other shards. A shard that ends without S, and a sequence
// number the service refuses (InvalidArgument: another stream, e.g. one
// deleted and re-created), are the same error. The job pauses; it never
// skips.
//
// The check is conservative: when retention trimmed exactly S and nothing
// after it, nothing was lost but the Reader cannot tell and stops too. On
// real Kinesis the error shows only once the iterator has walked to the
// first untrimmed record (possibly many empty pages later); until then the
// shard returns nothing. A sequence number given by the user as a start
// position is checked the same way: it must be a record of the shard that
// still exists (the Reader then reads after it); if it was trimmed the
// Read fails with OutOfRangeError at ordinal 0, and if the service refuses
// it the error is a ConfigError for "kinesis.positions.<shard id>".
//
// # KPL aggregates
//
// A record starting with the KPL magic F3 89 9A C2 is an aggregate
// (Deaggregate; kpl.go has the format): a Reader returns each of its user
// records as a sources.Record with its own ordinal, its own partition key
// (Key), the aggregate's sequence number (Seq) and its index in the
// aggregate (SubSeq). A Read may end inside an aggregate: the checkpoint's
// Sub then counts the user records of Last already returned, and a new
// Reader opens AT_SEQUENCE_NUMBER Last (trim detection as above) and skips
// those. A corrupt aggregate is one Record whose Err says why and whose
// Value is its raw bytes; the task makes it an error row.
//
// # Faults
//
// Faults (ParseFaults reads "throttle=0.2,expire=0.01,fail=0.01,seed=7,
// trim=<shard>:<seq>", the node's LOADNODE_KINESIS_FAULTS) injects
// throttling, expired iterators, lost answers and retention trimming into
// the SDK calls through a middleware, for tests and chaos runs.
//
// Tests run against kinesalite; see package kinesistest.
package kinesis
