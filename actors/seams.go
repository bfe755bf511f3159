package actors

import (
	"context"
	"errors"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Source is one job's view of its source (a Kafka topic, a Kinesis
// stream). The source owns its spec section's meaning (which partitions,
// where they start, what a reset means); the job actor sees opaque
// partitions, positions and checkpoints. Its methods that take a context
// block on the network and are called from goroutines, never from Receive.
type Source interface {
	// Discover returns the partitions the job reads now (sorted) and, for
	// each of them not in known, where it starts. A job's first look has
	// known empty; partitions found later start where the source's spec
	// says new partitions start. The job persists these starts before any
	// task reads them.
	Discover(ctx context.Context, known map[int32]bool) (parts []int32, starts map[int32]sources.Start, err error)
	// Watermarks returns the latest position per partition (empty where the
	// source has no such notion, as Kinesis).
	Watermarks(ctx context.Context) (map[int32]int64, error)
	// NewReader reads the given partitions from the given starts.
	NewReader(start map[int32]sources.Start) (sources.Reader, error)
	// ResolveReset turns a user's position reset into new starts for the
	// partitions it names. cur are the job's current starts. A reset that
	// does not fit the source (an unknown partition or shard, a malformed
	// position) is a *sources.ConfigError naming the field.
	ResolveReset(ctx context.Context, reset sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error)
	// Render names a partition and a position in the source's terms for
	// `job show` and the journal ("partition 3 offset", "120"; "shard
	// shardId-000000000001 position", "4959...").
	Render(p int32, s sources.Start) (partition, position string)
	// Close releases the source.
	Close()
}

// Watcher is implemented by a source that can tell a job when its
// watermarks or partitions change. An idle job (nothing to read, no tasks)
// of such a source runs no timers and makes no look-ups of its own: 100,000
// idle jobs on one topic cost one look-up per refresh, not 100,000.
type Watcher interface {
	// Watch calls fn with the watermarks of every partition soon after it
	// is called and then whenever they change, until stop is called; or
	// with a nil marks and a *sources.ConfigError when a look-up fails in a
	// way retrying cannot fix (authentication, authorization). Transient
	// failures call nobody. fn must not block; it may run on any goroutine.
	Watch(fn func(marks map[int32]int64, err error)) (stop func())
}

// Lineage is implemented by a source whose partitions are read in an order
// (Kinesis: a child shard only after its parents were read to their end).
// Its methods are pure functions of the checkpoints and cached metadata and
// may be called from Receive.
type Lineage interface {
	// Readable returns, of parts, the partitions a task may read now.
	Readable(parts []int32, checkpoints map[int32][]byte) []int32
	// Describe describes one partition for `job show`.
	Describe(p int32, checkpoint []byte) sources.PartitionState
}

// Specs is what the actors need to know of job specs: defaults and
// validation of a create, the meaning of an alter, and how a listing names
// a job's source. The node wires config's rules and each source family's
// checks behind it; the actors know no field of a source section.
//
// An error naming a spec field implements `SpecField() string`; the actors
// answer it as INVALID_ARGUMENT for that field.
type Specs interface {
	// Prepare applies the defaults to a create's spec in place and
	// validates it: the table, the format and the source section.
	Prepare(spec *api.JobSpec) error
	// Alter returns cur changed by req (its whole spec, or the fields of
	// its update mask), the changes to journal ("max_batch_rows 10->20"),
	// and whether the source must be reopened (new client settings). A
	// field that may not change is an error naming it.
	Alter(cur *api.JobSpec, req *api.AlterJobRequest) (next *api.JobSpec, changes []string, reopen bool, err error)
	// Rebases reports whether next (an alter's result) reads another
	// stream than cur (a new Kafka topic): the job's progress does not
	// apply to it and the alter replaces it, only while PAUSED.
	Rebases(cur, next *api.JobSpec) bool
	// PausedOnly names the fields next (an alter's result) changes from
	// cur that only a PAUSED job's alter may change (how records map onto
	// rows: Doris's COLUMNS, WHERE, ...); none: any state will do.
	PausedOnly(cur, next *api.JobSpec) []string
	// SourceName names the job's source in listings ("kafka://orders").
	SourceName(spec *api.JobSpec) string
}

// fielder is an error that names the spec field at fault.
type fielder interface{ SpecField() string }

// Publisher is implemented by a source that publishes what a job commits
// outside loadnode: its positions to a Kafka consumer group
// (kafka.commit_group) and its error rows to a dead-letter topic
// (error_topic). Publishing is best effort and asynchronous: its methods
// never block and never fail the load, and nothing published is read back
// as the job's state. A source that publishes nothing for a job may still
// implement it (PublishStatus then returns nil).
type Publisher interface {
	// Resume is called once, when the job opens the source: total of the
	// job's error rows are committed and done of them (oldest first) are
	// known to be on the dead-letter topic. stored returns the job's newest
	// n stored error rows, oldest first, from the sink (it may be called
	// from any goroutine), so that rows committed before a restart and not
	// yet produced are produced (again, possibly: at least once).
	Resume(total, done int64, stored func(n int) ([]*api.ErrorRow, error))
	// Published is called from Receive after each durable commit, with the
	// job's positions after it (every partition; the job's own map: copy
	// what you keep, modify nothing) and the commit's error rows as dead
	// letters; the first of them is the job's error row number first
	// (0-based, in commit order).
	Published(positions map[int32]int64, first int64, letters []DeadLetter)
	// DeadLettersDone is how many of the job's error rows, oldest first,
	// are known to be on the dead-letter topic; the job commits it with
	// its next batch's statistics (JobStats.dead_letters_done).
	DeadLettersDone() int64
	// PublishStatus reports the publishing since the source was opened,
	// for `job show` and /metrics; nil when the job publishes nothing.
	PublishStatus() *api.PublishStatus
}

// DeadLetter is an error row as a Publisher gets it: the stored row and,
// while the task still has them, the record's key and whole value (the
// row's Raw is cut to error_row_raw_size).
type DeadLetter struct {
	Row   *api.ErrorRow
	Key   []byte
	Value []byte
}

// newSource opens the job's source for spec and, for a Publisher, tells
// it where the job's dead letters stand.
func (j *job) newSource(spec *api.JobSpec) (Source, error) {
	src, err := j.deps.Sources(spec)
	if err != nil {
		return src, err
	}
	if pub, ok := src.(Publisher); ok {
		sk, id := j.sink, j.id
		pub.Resume(j.stats.GetErrorRows(), j.stats.GetDeadLettersDone(), func(n int) ([]*api.ErrorRow, error) {
			if sk == nil {
				return nil, errors.New("actors: the job has no sink open")
			}
			return sk.ErrorRows(id, n)
		})
	}
	return src, nil
}
