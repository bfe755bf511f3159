package actors

import (
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/supervisor"
)

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
	// BeforeRespawnBatch runs in the manager before it spawns the batch-th
	// (from 0) batch of job actors after a recovery (respawn.go).
	BeforeRespawnBatch func(batch int)
	// SinkReadWait, if > 0, replaces sinkReadWait, the bound of a read of
	// the sink a command waits for (sinkread.go).
	SinkReadWait time.Duration
}

// Settings are the node-wide knobs the actors use. They arrive validated
// and complete (the node maps its config onto them; every default lives in
// config.DefaultNode): the actors re-default nothing.
type Settings struct {
	// MaxConcurrentTasks is the number of task slots on the node.
	MaxConcurrentTasks int
	// TopologyInterval is how often a running job looks for new partitions.
	TopologyInterval time.Duration
	// WatermarkInterval is how often a running job refreshes its cached
	// high watermarks (lag).
	WatermarkInterval time.Duration
	// MaxRecordBytes: a larger record becomes an error row, and so does
	// one whose parsing would make a larger value (an expression's result,
	// an avro or protobuf record decoded to JSON: table.Format.MaxValueBytes).
	MaxRecordBytes int
	// ErrorRowRawBytes bounds the raw bytes kept per error row.
	ErrorRowRawBytes int
	// SourceRetryBase is the first back-off after a transient source error;
	// it doubles per consecutive error up to SourceRetryMax.
	SourceRetryBase time.Duration
	SourceRetryMax  time.Duration
	// SourceRetryLimit is how many consecutive transient source errors a
	// job rides out before it pauses with SOURCE_UNREACHABLE (and is then
	// auto-resumed).
	SourceRetryLimit int
	// AutoResumeBase and AutoResumeMax shape the auto-resume back-off of a
	// job paused for a transient reason: min(base * 2^n, max), where n is
	// the number of auto-resumes within AutoResumeQuiet (as Doris: the
	// counter resets after a quiet period).
	AutoResumeBase  time.Duration
	AutoResumeMax   time.Duration
	AutoResumeQuiet time.Duration
	// StallAfter: a RUNNING job with lag above zero whose progress has not
	// moved for this long is reported "stalled".
	StallAfter time.Duration
	// JobSupervision is the restart budget and back-off of job actors.
	JobSupervision supervisor.Policy
}

// Validate reports the first setting that is missing or out of range.
func (s Settings) Validate() error {
	var errs []error
	positive := func(name string, ok bool) {
		if !ok {
			errs = append(errs, fmt.Errorf("actors: setting %s must be > 0", name))
		}
	}
	positive("MaxConcurrentTasks", s.MaxConcurrentTasks > 0)
	positive("TopologyInterval", s.TopologyInterval > 0)
	positive("WatermarkInterval", s.WatermarkInterval > 0)
	positive("MaxRecordBytes", s.MaxRecordBytes > 0)
	positive("ErrorRowRawBytes", s.ErrorRowRawBytes > 0)
	positive("SourceRetryBase", s.SourceRetryBase > 0)
	positive("SourceRetryMax", s.SourceRetryMax > 0)
	positive("SourceRetryLimit", s.SourceRetryLimit > 0)
	positive("AutoResumeBase", s.AutoResumeBase > 0)
	positive("AutoResumeMax", s.AutoResumeMax >= s.AutoResumeBase && s.AutoResumeMax > 0)
	positive("AutoResumeQuiet", s.AutoResumeQuiet > 0)
	positive("StallAfter", s.StallAfter > 0)
	positive("JobSupervision.MaxRestarts", s.JobSupervision.MaxRestarts > 0)
	positive("JobSupervision.Window", s.JobSupervision.Window > 0)
	positive("JobSupervision.InitialBackoff", s.JobSupervision.InitialBackoff > 0)
	positive("JobSupervision.MaxBackoff", s.JobSupervision.MaxBackoff > 0)
	return errors.Join(errs...)
}

// Observer receives measurements from the actors (for metrics). Its
// methods are called inside actors and must not block.
type Observer interface {
	// CommitDone reports one synced batch commit of a job.
	CommitDone(job string, rows int, d time.Duration)
	// JobSampled reports a look at a live job: every watermark_interval
	// (not while an idle job watches its source) and at every transition.
	JobSampled(s *JobSample)
	// JobEvent reports an alert event of a job (see Events).
	JobEvent(e *JobEvent)
	// JobDeleted reports that a job was deleted: what is kept of it goes.
	JobDeleted(id uint64)
}

// SourceFactory opens the source of a job spec. It is called inside a job
// actor's Receive and must not block on the network.
type SourceFactory func(spec *api.JobSpec) (Source, error)

// SinkFactory returns the sink that holds a table's rows and its jobs'
// progress. It is called inside Receive and must not block on the network.
type SinkFactory func(table *api.TableSpec) (sink.Sink, error)

// Deps is what every actor of a node shares. It is immutable once the
// manager is spawned, except for the generation counter, which is atomic,
// and the board of committed positions (committed.go).
type Deps struct {
	// Meta holds job snapshots, the journal and the table catalog.
	Meta metastore.Store
	// Sinks gives a table's sink.
	Sinks SinkFactory
	// Sources opens a job's source.
	Sources SourceFactory
	// Specs applies spec defaults, validation and alters.
	Specs Specs
	// Decoders gives the decoder of a job's avro or protobuf records;
	// nil: no binary formats (their records do not parse).
	Decoders DecoderFactory
	Logger   *slog.Logger
	Settings Settings
	Hooks    Hooks
	// Observer receives measurements; nil means none.
	Observer Observer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Cluster is the node's cluster membership; nil on a single node.
	Cluster Cluster

	gen atomic.Uint64
	// committed holds the live jobs' published committed positions
	// (committed.go); safe for concurrent use.
	committed committedBoard
}

// check reports what is missing from d; it fills only the optional parts
// (a discarding logger, the wall clock).
func (d *Deps) check() error {
	if d.Meta == nil || d.Sinks == nil || d.Sources == nil || d.Specs == nil {
		return errors.New("actors: Deps needs Meta, Sinks, Sources and Specs")
	}
	if err := d.Settings.Validate(); err != nil {
		return err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	// Generations start from the wall clock so that a restarted job actor
	// (or node) never reuses a generation a stale task may still carry;
	// observeFence lifts them above any fence a sink stored.
	d.gen.CompareAndSwap(0, uint64(time.Now().UnixNano()))
	return nil
}

// nextGeneration returns a node-wide, strictly increasing task generation.
func (d *Deps) nextGeneration() uint64 { return d.gen.Add(1) }

// observeFence makes every later generation newer than fence (a sink's
// stored fence, written by this node before a clock step back, or by
// another node).
func (d *Deps) observeFence(fence uint64) {
	for {
		cur := d.gen.Load()
		if cur >= fence || d.gen.CompareAndSwap(cur, fence) {
			return
		}
	}
}

func (d *Deps) nowMs() int64 { return d.Now().UnixMilli() }
