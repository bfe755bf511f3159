package actors

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/supervisor"
)

// Store is what the actors need of the durable store.
type Store interface {
	LastJobID() (uint64, error)
	CreateJobs(jobs []persistence.NewJob) []error
	Table(name string) (*api.TableSpec, error)
	CreateTable(spec *api.TableSpec) (created bool, err error)
	LoadAllJobs(fn func(st *persistence.JobState) error) error
	LoadJob(id uint64) (*persistence.JobState, error)
	Journal(id uint64) ([]*api.Transition, error)
	ShowData(id uint64, maxTransitions, maxErrorRows int) ([]*api.Transition, []*api.ErrorRow, error)
	AppendTransition(id uint64, t *api.Transition) error
	AppendTransitions(ts []persistence.JobTransition) error
	InitStarts(id uint64, positions map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) error
	CommitBatch(c *persistence.Commit) error
	ErrorRows(id uint64, limit int) ([]*api.ErrorRow, error)
	DeleteJob(id uint64, name string) error
	AlterJobStarts(rec *api.JobRecord, reset map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) error
	CountRows(table string) (int64, error)
	ScanRowsAfter(table string, after []byte, limit int, fn func(key, value []byte) error) error
}

var _ Store = (*persistence.Store)(nil)

// Source is one job's view of its source (a Kafka topic or a Kinesis
// stream). Its methods block on the network and are called from goroutines,
// never from Receive.
type Source interface {
	// Partitions lists the source's partitions (sorted): Kafka partitions,
	// or Kinesis shard indices.
	Partitions(ctx context.Context) ([]int32, error)
	// ResolveStarts turns start specs into concrete starts. For Kafka a spec
	// is an offset (a number, OFFSET_BEGINNING, OFFSET_END); a Kinesis
	// source is given "" and uses its spec's positions. initial is true for
	// a job's first look at its topology, false for partitions discovered
	// later (which a Kinesis source reads from their beginning).
	ResolveStarts(ctx context.Context, want map[int32]string, initial bool) (map[int32]sources.Start, error)
	// Watermarks returns the latest position per partition (empty where the
	// source has no such notion, as Kinesis).
	Watermarks(ctx context.Context) (map[int32]int64, error)
	// NewReader reads the given partitions from the given starts.
	NewReader(start map[int32]sources.Start) (sources.Reader, error)
	// Close releases the source.
	Close()
}

// Watcher is implemented by a source that can tell a job when its
// watermarks or partitions change. An idle job (nothing to read, no tasks)
// of such a source runs no timers and makes no look-ups of its own: 100,000
// idle jobs on one topic cost one look-up per refresh, not 100,000.
type Watcher interface {
	// Watch calls fn with the watermarks of every partition soon after it
	// is called and then whenever they change, until stop is called. fn
	// must not block; it may run on any goroutine.
	Watch(fn func(marks map[int32]int64)) (stop func())
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

// SourceFactory opens the source of a job spec. It is called inside a job
// actor's Receive and must not block on the network.
type SourceFactory func(spec *api.JobSpec) (Source, error)

// Hooks are test and crash points. Each may be nil. They run inside the
// actor that reaches the point, so they may block it.
type Hooks struct {
	// AfterCreateSynced runs after a create snapshot is synced and before
	// the job actor is spawned.
	AfterCreateSynced func(jobID uint64)
	// AfterCommit runs after a batch is committed and before it is
	// acknowledged to its task.
	AfterCommit func(jobID uint64)
	// AfterTransition runs after a transition is journaled and before the
	// job acts on it.
	AfterTransition func(jobID uint64, t *api.Transition)
}

// Settings are the node-wide knobs the actors use.
type Settings struct {
	// MaxConcurrentTasks is the number of task slots on the node. Default 64.
	MaxConcurrentTasks int
	// TopologyInterval is how often a running job looks for new
	// partitions. Default 10s.
	TopologyInterval time.Duration
	// WatermarkInterval is how often a running job refreshes its cached
	// high watermarks (lag). Default 5s.
	WatermarkInterval time.Duration
	// MaxRecordBytes: a larger record becomes an error row. Default 16 MiB.
	MaxRecordBytes int
	// ErrorRowRawBytes bounds the raw bytes kept per error row. Default 1 KiB.
	ErrorRowRawBytes int
	// SourceRetryBase is the first back-off after a transient source error;
	// it doubles per consecutive error up to 30s. Default 500ms.
	SourceRetryBase time.Duration
	// SourceRetryLimit is how many consecutive transient source errors a
	// job rides out before it pauses with SOURCE_UNREACHABLE (and is then
	// auto-resumed). Default 8 (about 90 s with the default base).
	SourceRetryLimit int
	// AutoResumeBase and AutoResumeMax shape the auto-resume back-off of a
	// job paused for a transient reason: min(base * 2^n, max), where n is
	// the number of auto-resumes within AutoResumeQuiet. Defaults 10s, 300s
	// and 30m (as Doris: the counter resets after a quiet period).
	AutoResumeBase  time.Duration
	AutoResumeMax   time.Duration
	AutoResumeQuiet time.Duration
	// StallAfter: a RUNNING job with lag above zero whose progress has not
	// moved for this long is reported "stalled". Default 60s.
	StallAfter time.Duration
	// JobSupervision is the restart budget and back-off of job actors.
	// Zero fields take supervisor.DefaultPolicy (10 restarts in 30s,
	// 100ms doubling to 10s, 20% jitter).
	JobSupervision supervisor.Policy
}

func (s *Settings) applyDefaults() {
	if s.MaxConcurrentTasks <= 0 {
		s.MaxConcurrentTasks = 64
	}
	if s.TopologyInterval <= 0 {
		s.TopologyInterval = 10 * time.Second
	}
	if s.WatermarkInterval <= 0 {
		s.WatermarkInterval = 5 * time.Second
	}
	if s.MaxRecordBytes <= 0 {
		s.MaxRecordBytes = 16 << 20
	}
	if s.ErrorRowRawBytes <= 0 {
		s.ErrorRowRawBytes = 1024
	}
	if s.SourceRetryBase <= 0 {
		s.SourceRetryBase = 500 * time.Millisecond
	}
	if s.SourceRetryLimit <= 0 {
		s.SourceRetryLimit = 8
	}
	if s.AutoResumeBase <= 0 {
		s.AutoResumeBase = 10 * time.Second
	}
	if s.AutoResumeMax <= 0 {
		s.AutoResumeMax = 300 * time.Second
	}
	if s.StallAfter <= 0 {
		s.StallAfter = time.Minute
	}
	if s.AutoResumeQuiet <= 0 {
		s.AutoResumeQuiet = 30 * time.Minute
	}
}

// Observer receives measurements from the actors (for metrics). Its
// methods are called inside actors and must not block.
type Observer interface {
	// CommitDone reports one synced batch commit of a job.
	CommitDone(job string, rows int, d time.Duration)
}

// Deps is what every actor of a node shares. It is immutable once the
// manager is spawned, except for the generation counter, which is atomic.
type Deps struct {
	Store    Store
	Sources  SourceFactory
	Logger   *slog.Logger
	Settings Settings
	Hooks    Hooks
	// Observer receives measurements; nil means none.
	Observer Observer
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	gen atomic.Uint64
}

func (d *Deps) init() {
	d.Settings.applyDefaults()
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	// Generations start from the wall clock so that a restarted job actor
	// (or node) never reuses a generation a stale task may still carry.
	d.gen.CompareAndSwap(0, uint64(time.Now().UnixNano()))
}

// nextGeneration returns a node-wide, strictly increasing task generation.
func (d *Deps) nextGeneration() uint64 { return d.gen.Add(1) }

func (d *Deps) nowMs() int64 { return d.Now().UnixMilli() }
