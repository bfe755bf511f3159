// Package actors holds loadnode's actors: the manager (job registry), one job
// actor per job (the sole owner of that job's state), the node-wide scheduler
// (task slots) and task actors (one per partition group, children of their
// job).
//
// The actors know no source SDK, statement dialect, config format or store
// engine (internal/layering.TestSourceNeutral). They speak to seams: Source (with the
// optional Watcher and Lineage) for a job's topic or stream, Specs for the
// meaning of a spec and of an alter, metastore.Store for snapshots, the
// journal and the table catalog, and a sink.Sink per table for rows,
// progress and statistics. The node wires the implementations (Deps).
//
// Concurrency model: every piece of mutable state belongs to exactly one
// actor and is touched only inside that actor's Receive. Work an actor
// starts outside its mailbox (source reads, look-ups, commits, table reads,
// timers) belongs to the actor incarnation's lifetime (async.go): it never
// touches actor state, reports panics as *PanicError, and delivers its
// result as a message that a later incarnation drops.
//
// Invariants kept here (see docs/design.md):
//
//   - INVARIANT (durable before visible): a job actor is spawned only after
//     its create snapshot is durable in the metadata store
//     (manager.onCreatesWritten).
//   - INVARIANT (rows and progress move together): a batch is acknowledged
//     only after its sink commit returned (job.onGroupCommitted).
//   - INVARIANT (fencing): a commit whose generation is not current or whose
//     start positions differ from the job's progress is refused (job.stale),
//     and again by the sink (start positions, fence, statistics base).
//   - INVARIANT (topology follows progress): a partition's initial position
//     is durable in the sink before any task is given that partition
//     (job.onTopology).
//   - INVARIANT (no silent loss): an out-of-range offset pauses the job with
//     OFFSET_OUT_OF_RANGE; nothing advances progress past unread records.
//   - INVARIANT (cluster mode, cluster.go): a job actor runs only on the
//     member that owns the job, spawned after the create snapshot is in etcd
//     and the assignment was seen; its generations carry the ownership
//     epoch in their high bits (sink.EpochFence) and it raises the sink's
//     fence to that epoch before any task reads, so a former owner's
//     commits are refused.
//   - INVARIANT (status never waits on a sink, sinklook.go): a show or a
//     listing reads a sink off every mailbox and waits for it at most
//     showSinkWait; what it could not read is marked unavailable.
//   - INVARIANT (no mailbox waits on a sink read, sinkread.go): a resume's,
//     an auto-resume's and a move's read of the sink run off the job's
//     mailbox (other state changes deferred until it answers, at most
//     sinkReadWait), the reload after a failed commit on the commit's
//     goroutine; only a job's load at start reads in its mailbox.
package actors
