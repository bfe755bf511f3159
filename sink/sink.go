// Package sink defines where a job's rows go: the Sink interface that the
// job actors commit batches to, the types of a commit, and the errors a
// caller branches on. Implementations live in the packages named for what
// they wrap (persistence: the embedded Pebble store; sink/postgres: a
// PostgreSQL database); sinktest holds the conformance suite every
// implementation passes.
//
// A Sink owns, per job, the authoritative progress: the next position of
// every partition, the partitions' opaque source checkpoints, the job's
// statistics and its fence (the newest task generation or ownership epoch
// that committed). A job recovers its positions from its sink, never from
// the metadata store.
//
// Concurrency: a Sink is safe for concurrent use by many jobs. Each job has
// one writer (its job actor); the sink's own checks make a stale writer
// harmless, never its callers' discipline.
package sink

import (
	"errors"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// ErrStaleCommit is wrapped by every refusal of a commit that does not
// continue the stored state: a range that does not start at the stored
// progress, a fence older than the stored one, statistics that moved.
var ErrStaleCommit = errors.New("sink: stale commit")

// ErrSuperseded is wrapped by every refusal of a write from a former
// incarnation of a job's owner: another process with the same owner (a
// node started on a restored backup or a copied data directory, or the
// same node started again) has claimed the owner's job state in the
// database since this sink did. Nothing was written, and retrying cannot
// help: the writer stops loading into that database. A refused write's
// error wraps ErrStaleCommit too, so that a caller that knows only that
// error reloads instead of going on.
var ErrSuperseded = errors.New("sink: superseded by a later incarnation of the owner")

// ErrUnavailable is wrapped by errors of a sink that could not reach its
// database (connection refused or lost, the server shutting down or
// restarting): transient, and the outcome of a commit is unknown (read
// Progress once the database answers).
var ErrUnavailable = errors.New("sink: database unavailable")

// ErrTableChanged is wrapped by errors of a sink whose table is no longer
// the one it prepared (dropped, or a column dropped or changed in the
// database under a running job). Not transient: a person decides.
var ErrTableChanged = errors.New("sink: table changed under the job")

// ErrRefused is wrapped by errors of a sink whose database answered a
// request with a refusal retrying cannot fix: a privilege the role lacks,
// a read-only role or server, a statement timeout, a failed login, an
// object the database does not have. Not transient: a person decides
// (the error names the cause).
var ErrRefused = errors.New("sink: refused by the database")

// ErrProgressExists is wrapped by InitStarts when a partition already has
// progress.
var ErrProgressExists = errors.New("sink: progress exists")

// KV is one table row: Key is the table-model row key, Value the encoded row.
// Both are opaque to the sink, but for keyed tables (UNIQUE, AGGREGATE:
// table.Schema.Keyed), whose rows the sink merges with table.Schema.Merge.
type KV struct {
	Key, Value []byte
	// Delete (UNIQUE tables) deletes the key instead of upserting it.
	Delete bool
	// Named, with Commit.Update.Flexible (Doris UPDATE_FLEXIBLE_COLUMNS),
	// marks the table columns the row names: a stored key keeps the
	// others (table.Schema.Merge). nil otherwise.
	Named []bool
}

// Range is the source range a batch covers on one partition: [From, To),
// where To is the next position to read.
type Range struct {
	Partition int32
	From, To  int64
	// Checkpoint, when not nil, is the partition's new opaque source
	// checkpoint (Kinesis: shard, last sequence number, end reached),
	// written with the progress in the same commit.
	Checkpoint []byte
}

// Commit is one batch of a job: its rows, the partitions it covers and the
// job's new statistics.
type Commit struct {
	JobID uint64
	Table string
	// Fence is the committing task's generation (or, in a cluster, the
	// owner's epoch). A commit whose Fence is older than the newest the
	// sink stored for the job is stale; a successful commit stores it.
	Fence uint64
	// Rows are written to Table; a key written twice keeps the last value.
	// In a keyed table (UNIQUE, AGGREGATE) they merge, in order, into the
	// stored rows (table.Schema.Merge) in the same atomic commit.
	Rows []KV
	// Update is how the rows change a keyed table beyond whole rows
	// (partial columns, the load's sequence column); nil: whole rows.
	Update *table.Update
	// Ranges are exactly the partitions this batch covers; at least one.
	Ranges []Range
	// Stats are the job's new absolute statistics; nil leaves them as stored.
	Stats *api.JobStats
	// StatsBase is the CommittedBatches of the statistics Stats were
	// computed from. The stored statistics must still have it: per-partition
	// progress fences the rows, this fences the job-wide statistics (a job
	// whose memory is behind the sink, or a second incarnation, must not
	// overwrite counts it never saw).
	StatsBase int64
	// ErrorRows are appended to the job's error rows; the sink keeps a
	// bounded number of the newest.
	ErrorRows []*api.ErrorRow
	// Encoded, when not nil, are Rows already encoded by this sink's
	// Encoder: one per run of Rows, in order, together exactly all of
	// Rows (a group commit has one per batch). The sink may send them
	// instead of encoding Rows; Rows stay what is committed, and a sink
	// ignores encodings it cannot use (another table's, an older table).
	Encoded []Encoding
	// More are rows for other tables than Table (a multi-table job: each
	// record names its table), written in the same atomic commit. Their
	// tables are DUPLICATE tables: a key written twice keeps the last value.
	More []TableRows
}

// TableRows are rows of one table.
type TableRows struct {
	Table string
	Rows  []KV
}

// Progress is a job's authoritative position in its sink (positions,
// checkpoints, statistics, fence). The record is api.SinkProgress, which
// the metadata store shares (metastore.JobState) without importing the sink.
type Progress = api.SinkProgress

// Sink is a database a job loads into.
type Sink interface {
	// PrepareTable makes the sink able to hold rows of spec: a database
	// sink creates the table or checks that its columns are compatible;
	// the embedded store, whose catalog is the metadata store, checks
	// nothing more.
	PrepareTable(spec *api.TableSpec) error
	// InitStarts persists the initial positions (and checkpoints) of
	// partitions that have none, durably, before any task reads them. If
	// one already has progress nothing is written and the error wraps
	// ErrProgressExists.
	InitStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) error
	// Commit makes c durable atomically (rows, ranges' progress and
	// checkpoints, statistics, error rows, fence) or not at all. It
	// returns an error wrapping ErrStaleCommit, writing nothing, when a
	// range's From is not the stored progress of its partition (or the
	// partition has none), when c.Fence is older than the stored fence, or
	// when c.Stats is set and the stored statistics' CommittedBatches is
	// not c.StatsBase. After an error that is not a refusal (a lost
	// connection during the commit), the caller reads Progress to learn
	// where it stands.
	Commit(c *Commit) error
	// ResetStarts moves partitions' progress (and checkpoints) to the
	// given values, backwards too: a user's journaled reset, the only way
	// progress may regress.
	ResetStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) error
	// RebaseStarts replaces the job's whole progress, atomically and
	// durably: afterwards exactly the partitions of positions have
	// progress (and the checkpoints given); every other partition's
	// progress and checkpoint are gone. It raises the stored fence to
	// fence in the same step, so that no commit of an older generation
	// (a batch of the job's former source still in flight) can land after
	// it. It is refused with an error wrapping ErrStaleCommit, writing
	// nothing, when the stored fence is newer than fence. Applying it
	// twice gives the same state. A journaled user alter that moves a job
	// to another stream (a new Kafka topic) is its only caller.
	RebaseStarts(job, fence uint64, positions map[int32]int64, checkpoints map[int32][]byte) error
	// Progress returns the job's stored progress as of one commit (never
	// half of a concurrent one); an unknown job has none (empty maps,
	// zero statistics).
	Progress(job uint64) (*Progress, error)
	// ErrorRows returns the job's newest limit error rows, oldest first.
	ErrorRows(job uint64, limit int) ([]*api.ErrorRow, error)
	// DropJob removes the job's progress, statistics and error rows; its
	// table's rows stay.
	DropJob(job uint64) error
	// CountRows counts the rows of a table.
	CountRows(table string) (int64, error)
	// ScanRowsAfter calls fn for up to limit rows of table whose keys
	// follow after (nil: from the start), in key order.
	ScanRowsAfter(table string, after []byte, limit int, fn func(key, value []byte) error) error
}

// RowChecker is implemented by a sink that refuses some rows their table's
// schema admits (PostgreSQL: text with a NUL byte). A task asks it of every
// parsed row before encoding it; an error makes the row an error row, with
// the error as its reason, before the batch reaches Commit.
type RowChecker interface {
	CheckRow(s *table.Schema, vals []table.Value) error
}

// Encoder is implemented by a sink that encodes rows for its database
// ahead of Commit (PostgreSQL: the binary COPY stream). A task encodes its
// batch as it parses it, while the job's previous commit is in flight, so
// that the job's serial commit path sends bytes instead of building them.
type Encoder interface {
	// EncodeBatch starts the encoding of one batch of rows of table, or
	// returns nil when the sink does not encode that table's rows ahead
	// (a keyed table, a table it does not know yet). rows and bytes are
	// the batch's records and their bytes, to size the encoding.
	EncodeBatch(table string, rows, bytes int) Encoding
}

// Encoding is one batch's rows as its sink will send them, built row by
// row by one goroutine, then sealed and handed to Commit.Encoded.
type Encoding interface {
	// Add appends the next row of the batch: the row of Commit.Rows with
	// storage key key (the encoding may keep key; it must not change).
	// vals have passed the sink's RowChecker, and are not kept. After an
	// error the encoding is unusable: drop it (Commit encodes Rows itself).
	Add(key []byte, pos table.Pos, vals []table.Value) error
	// Seal ends the batch; nothing is added after.
	Seal()
	// Rows is the number of rows added.
	Rows() int
}

// Describer is implemented by a sink that says, for people, where a
// table's rows are: "postgres analytics public.orders". A sink without it
// is the node's embedded store.
type Describer interface {
	Describe(table string) string
}

// TableCreator is implemented by a sink whose tables exist outside
// loadnode's catalog (a database server): CreateTable creates the table or
// checks that the existing one can hold the spec's rows, before the
// catalog records it, so that an incompatible table refuses the create
// (the error names the column and both types). PrepareTable does the same
// again when a job starts loading.
type TableCreator interface {
	CreateTable(spec *api.TableSpec) error
}

// Dropper is implemented by a sink that can drop a table (Doris DROP
// TABLE): its rows, and in a database server the table itself, go in one
// step. The caller removes the table from the catalog after, and drops a
// table only while no job loads into it. Dropping a table that is not
// there is not an error.
type Dropper interface {
	DropTable(table string) error
}

// Truncater is implemented by a sink that can empty a table (Doris TRUNCATE
// TABLE): every row of the table goes in one atomic step; progress, error
// rows and statistics stay, so the jobs loading into it go on from where
// they were. A commit is wholly before or wholly after the truncate.
type Truncater interface {
	TruncateTable(table string) error
}

// Inserter is implemented by a sink that can add rows outside a job (Doris
// INSERT INTO ... VALUES): the rows are written in one atomic, durable
// step, merged into a UNIQUE or AGGREGATE table as a commit's rows are; no
// job's progress moves.
type Inserter interface {
	InsertRows(table string, rows []KV) error
}
