package sink

// Fences in cluster mode. A job's owner commits with
// EpochFence(epoch, local): the ownership epoch (an etcd revision, which
// only grows) in the high bits, a per-owner counter of task generations in
// the low bits. Any commit of a later owner is therefore newer than every
// commit of an earlier one, whatever their local counters, and a sink that
// refuses a fence older than the stored one refuses a former owner (a
// zombie) as soon as the new owner has raised the fence (Fencer) or
// committed once.

// EpochShift is the bit position of the epoch in a fence. Epochs must stay
// below 1<<(63-EpochShift) (about 10^12 etcd revisions) so that fences fit
// a signed 64-bit column.
const EpochShift = 23

// MaxLocal is the largest local generation within one epoch (about 8.4
// million task generations per job and owner).
const MaxLocal = 1<<EpochShift - 1

// EpochFence combines an epoch and a local generation.
func EpochFence(epoch, local uint64) uint64 { return epoch<<EpochShift | (local & MaxLocal) }

// FenceEpoch is the epoch part of a fence.
func FenceEpoch(f uint64) uint64 { return f >> EpochShift }

// FenceLocal is the local part of a fence.
func FenceLocal(f uint64) uint64 { return f & MaxLocal }

// Fencer is implemented by a sink that can raise a job's stored fence
// without a commit. A new owner raises it to EpochFence(epoch, 0) before
// its first task reads, so that from then on every commit of a former
// owner is refused (ErrStaleCommit), even before the new owner commits.
type Fencer interface {
	// RaiseFence sets the job's stored fence to fence if it is lower; a
	// job without stored state is left alone.
	RaiseFence(job, fence uint64) error
}

// Claimer is implemented by a sink that can take over many jobs at once
// (a cluster member given a lost member's jobs). ClaimJobs raises each
// job's fence as RaiseFence does and then reads each job's progress, in
// one transaction: the progress it returns is final, since no former
// owner can commit after the raise. A job without stored state is left
// alone and gets empty progress, as Progress gives it.
type Claimer interface {
	ClaimJobs(fences map[uint64]uint64) (map[uint64]*Progress, error)
}
