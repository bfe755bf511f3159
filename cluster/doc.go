// Package cluster is loadnode's cluster mode on etcd: membership under a
// lease, a leader that assigns jobs to live members, and each member's view
// of which jobs it owns, with the epoch that fences their commits.
//
// # Membership
//
// A Member holds a concurrency.Session (a lease of Config.Lease TTL, kept
// alive by the etcd client) and registers members/<name> = {addr, node id,
// incarnation} under it (join.go). Start returns only once it has:
//
//   - the member proves the members' shared token: auth/verifier holds an
//     HMAC-SHA256 keyed by the token (never the token), written by the
//     first member; a member whose token gives another verifier is refused
//     (ErrCredential). With no member live, a starting member replaces it
//     (rotation: stop every member, start them all with the new token);
//   - the record is written only if absent. A record of this name left by
//     this node's former process (same node id, killed without revoking
//     its lease) is revoked; another node's is waited for: its lease runs
//     out (a process that died) and the member joins, or its holder shows
//     it is live (the lease is renewed, or outlives its TTL) and the start
//     is refused (ErrNameHeld), naming the holder. The wait ends with the
//     start's ctx.
//
// When the session ends (the member was frozen or partitioned past its
// lease, or etcd was unreachable that long), or its record is deleted or
// replaced behind its back, the member releases every job it owned at
// once (Handler.ReleaseAll: its job actors stop; any commit they still
// attempt is fenced anyway), then joins again (retrying while another
// process holds the name) and takes work again. It never relies on
// Proto.Actor Cluster's etcd provider, which does not rejoin after a
// lease loss.
//
// # Leadership and assignment
//
// Every member campaigns in a concurrency.Election; the leader reads the
// live members, the jobs (rec/ and their heads: final jobs need no owner)
// and the current assignments, and writes assign/<id20> = owner name for
// the jobs whose owner must change:
//
//   - a job with no owner, or whose owner is not live, goes to the live
//     member with the fewest jobs (below Config.MaxJobsPerNode, if set);
//   - a member above ceil(jobs/members) gives up only its excess (bounded
//     movement when a member joins);
//   - assignments of deleted and final jobs are removed.
//
// Every leader write is a transaction guarded by the leader's own election
// key (its CreateRevision), so a deposed leader's late write is refused.
// The leader recomputes on any change of members, jobs or assignments
// (debounced) and every Lease/2, from a view it reads once and then keeps
// current from its watches' events (a change costs the leader that
// change, not a read of every head and assignment); what it writes goes
// into the view at once, and an older event cannot undo it.
//
// # Epochs and the fence
//
// A job's epoch is the ModRevision of its assign key: the etcd revision of
// the write that gave the job to its current owner, which only grows. The
// owner spawns the job actor only after it has seen the assignment in its
// watch, and the actor's fences are sink.EpochFence(epoch, local): the epoch in the
// high bits, so every commit of a new owner is newer than every commit of
// any former owner (see sink/fence.go).
//
// # etcd unreachable
//
// No member makes an ownership decision without etcd: the leader's writes
// fail, and members act only on what their watch delivers. Members keep
// loading until their session's lease runs out client-side, then release
// their jobs; when etcd answers again they start new sessions, the leader
// reassigns, and work resumes without a restart. The fence, not lease
// timing, is what keeps commits safe.
//
// # Keys
//
// The members' keys (members/, auth/verifier, leader/, assign/) are under
// the metadata store's prefix, spelled by etcdmeta.Keys; the layout, with
// every key's value and writer, is in package etcdmeta's doc ("Key
// layout").
//
// # Concurrency
//
// A Member runs its own goroutines (session, watch, campaign, leader
// loop); Handler methods are called from the watch goroutine, one at a
// time, in order. Owner and Self are safe from any goroutine.
package cluster
