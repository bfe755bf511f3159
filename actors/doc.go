// Package actors holds loadnode's actors: the manager (job registry), one job
// actor per job (the sole owner of that job's state), the node-wide scheduler
// (task slots) and task actors (one per partition group, children of their
// job).
//
// Concurrency model: every piece of mutable state belongs to exactly one
// actor and is touched only inside that actor's Receive. Goroutines that
// actors start (source reads, topology look-ups, table reads) never touch
// actor state: they send a message to their actor, recover their own panics
// and end when their context is cancelled.
//
// Invariants kept here (see DESIGN.md):
//
//   - INVARIANT (durable before visible): a job actor is spawned only after
//     its create snapshot is synced (manager.create).
//   - INVARIANT (rows and progress move together): a batch is acknowledged
//     only after Store.CommitBatch returned (job.commit).
//   - INVARIANT (fencing): a commit whose generation is not current or whose
//     start positions differ from the job's progress is refused (job.commit,
//     and again inside Store.CommitBatch).
//   - INVARIANT (topology follows progress): a partition's initial position
//     is persisted before any task is given that partition (job.onTopology).
//   - INVARIANT (no silent loss): an out-of-range offset pauses the job with
//     OFFSET_OUT_OF_RANGE; nothing advances progress past unread records.
package actors
