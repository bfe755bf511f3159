package actors

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
)

// The presentation of a job (`job show`), written once: a live job actor
// and the manager (for a job without an actor, from its stores) both fill
// a jobView and present it.

// showTransitions and showErrorRows bound the history and error rows `job
// show` returns (the newest).
const (
	showTransitions = 200
	showErrorRows   = 20
)

// presentation is what a job actor keeps for shows and listings (show.go,
// listing.go, observe.go).
type presentation struct {
	health         string // the last verdict judged (judge)
	runningSinceMs int64  // when the job last entered RUNNING
	rowsWindow     []rateSample
	reported       *jobStatus // the last listing status sent to the manager
	// look is the newest read of the sink for a show (sinklook.go).
	look *sinkLook
}

// jobView is what a job's presentation is made of.
type jobView struct {
	rec         *api.JobRecord
	summary     *api.JobSummary
	progress    map[int32]int64
	checkpoints map[int32][]byte
	marks       map[int32]int64 // high watermarks; nil when unknown
	behind      map[int32]int64 // MillisBehindLatest; nil when unknown
	stats       *api.JobStats
	lineage     Lineage // nil without a live source
	meta        metastore.Store
	sink        sink.Sink // nil when the job has none open

	// Live jobs only.
	live       bool
	tasks      int
	taskInfos  []*api.TaskInfo // the current tasks, by index (not for lean looks)
	lastMs     int64           // last progress: last commit or entering RUNNING
	rowsPerSec float64
	now        time.Time
	stallAfter time.Duration
	retries    int // consecutive failures being retried
	refusals   refusals
	// lean: for a look that is not kept (judge), the spec and the
	// statistics are not copied.
	lean bool
}

// present assembles a JobInfo from v plus the journal (metadata store);
// the error rows are the sink's, read off the mailbox (sinklook.go).
func present(v jobView) (*api.JobInfo, error) {
	info := shape(v)
	hist, err := history(v.meta, v.rec.GetId())
	if err != nil {
		return nil, err
	}
	info.History = hist
	return info, nil
}

// history is the newest of job id's journal as a show presents it.
func history(meta metastore.Store, id uint64) ([]*api.Transition, error) {
	hist, err := meta.History(id, showTransitions)
	if err != nil {
		return nil, fmt.Errorf("actors: job %d: journal: %w", id, err)
	}
	// Transitions stored before their text was bounded are cut here too:
	// what is shown stays small.
	for i, t := range hist {
		if len(t.GetMessage()) > api.MaxMessageBytes || len(t.GetStateMessage()) > api.MaxMessageBytes {
			t = proto.Clone(t).(*api.Transition)
			t.Message = api.Clip(t.Message, api.MaxMessageBytes)
			t.StateMessage = api.Clip(t.StateMessage, api.MaxMessageBytes)
			hist[i] = t
		}
	}
	return hist, nil
}

// shape is the part of a job's presentation that reads no store: its
// summary, positions, lag, statistics and, for a live job, its rates and
// health verdict.
func shape(v jobView) *api.JobInfo {
	info := presentCore(v)
	info.Summary, info.CreatedUnixMs = v.summary, v.rec.GetCreatedUnixMs()
	info.ErrorWindowSize = errorWindowSize(v.rec.GetSpec())
	if v.lean {
		info.Stats = v.stats // read, never kept: no copy
	} else {
		info.Spec, info.Stats = api.RedactSpec(v.rec.GetSpec()), proto.Clone(v.stats).(*api.JobStats)
	}
	if v.live {
		info.RunningTasks = int32(v.tasks)
		info.Tasks = v.taskInfos
		info.LastProgressUnixMs = v.lastMs
		info.RowsPerSecond = v.rowsPerSec
		info.Retries = int32(v.retries)
		info.RefusedCommits, info.LastRefusal = v.refusals.commits, v.refusals.last
		info.Health = health(info, v.now, v.stallAfter, v.rec.GetSpec().GetMaxBatchRows())
		if info.Summary != nil {
			info.Summary.Health = info.Health // a live job's summary is built for this look (job.summary)
		}
	}
	return info
}

// presentCore is the part of a job's presentation that reads nothing and
// needs no clock: its sink, partitions and lag (a listing's status is made
// of it too).
func presentCore(v jobView) *api.JobInfo {
	info := &api.JobInfo{}
	info.Sink = "embedded"
	if d, ok := v.sink.(sink.Describer); ok {
		info.Sink = d.Describe(v.rec.GetSpec().GetTable().GetName())
	}
	parts := make([]int32, 0, len(v.progress))
	for p := range v.progress {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	for _, p := range parts {
		pi := &api.PartitionInfo{Partition: p, CommittedOffset: v.progress[p], HighWatermark: -1, Lag: -1}
		if hw, ok := v.marks[p]; ok {
			pi.HighWatermark = hw
			pi.Lag = max(hw-v.progress[p], 0)
		}
		if pi.Lag < 0 || info.TotalLag < 0 {
			info.TotalLag = -1
		} else {
			info.TotalLag += pi.Lag
		}
		info.Partitions = append(info.Partitions, pi)
	}
	if len(parts) == 0 {
		info.TotalLag = -1
	}
	addShardInfo(info, v.checkpoints, v.behind, v.lineage)
	return info
}

// view is the live job's jobView.
func (j *job) view() jobView {
	lin, _ := j.src.(Lineage)
	now := j.deps.Now()
	return jobView{
		rec: j.rec, summary: j.summary(), progress: j.progress, checkpoints: j.checkpoints,
		marks: j.marks, behind: j.behind, stats: j.stats, lineage: lin, meta: j.deps.Meta, sink: j.sink,
		live: true, tasks: len(j.tasks), lastMs: max(j.stats.GetLastCommitUnixMs(), j.runningSinceMs),
		rowsPerSec: j.rowsPerSecond(), now: now, stallAfter: j.deps.Settings.StallAfter, retries: j.retries,
		refusals: j.refusals,
	}
}

// currentTasks copies the current tasks' descriptions, by index.
func (j *job) currentTasks() []*api.TaskInfo {
	idx := slices.Sorted(maps.Keys(j.taskInfos))
	out := make([]*api.TaskInfo, 0, len(idx))
	for _, i := range idx {
		out = append(out, proto.Clone(j.taskInfos[i]).(*api.TaskInfo))
	}
	return out
}

// show answers a show of the live job (REQUIRES: in the actor): what the
// actor holds, and its newest error rows, read from its sink off the
// mailbox (a read in flight for the same commits is shared) and waited
// for at most showSinkWait.
//
// INVARIANT (status never waits on a sink): nothing here calls the sink.
func (j *job) show(ctx actor.Context) {
	v := j.view()
	v.taskInfos = j.currentTasks()
	info, err := present(v)
	if err != nil {
		ctx.Respond(&api.JobResponse{Error: &api.Error{Code: api.ErrorCode_INTERNAL, Message: err.Error()}})
		return
	}
	if pub, ok := j.src.(Publisher); ok {
		info.Publish = pub.PublishStatus()
	}
	to := ctx.Sender()
	if to == nil {
		return
	}
	if j.sink == nil {
		info.ErrorRowsUnavailable = "the job has no sink open (see its state)"
		ctx.Respond(&api.JobResponse{Job: info})
		return
	}
	key := lookKey{batches: j.stats.GetCommittedBatches(), errorRows: j.stats.GetErrorRows()}
	if !j.look.serves(key, true, false) {
		j.look = startLook(j.sink, j.id, key, true, false)
	}
	lk := j.look
	answerShow(j.life, to, lk, func(answered bool) *api.JobResponse {
		lk.fillErrorRows(info, answered)
		return &api.JobResponse{Job: info}
	})
}

// health is a job's verdict at a glance.
func health(info *api.JobInfo, now time.Time, stallAfter time.Duration, batchRows int64) string {
	s := info.GetSummary()
	if h := stateHealth(s.GetState(), s.GetReason()); h != "" {
		return h
	}
	if info.GetRetries() > 0 {
		// Retrying a source, sink or task failure (NEED_SCHEDULE with
		// "source error (retry N in Ts)"): not healthy, whatever the lag.
		return "failing"
	}
	lag := info.GetTotalLag()
	for _, p := range info.GetPartitions() {
		// A checkpointed source's lag is in time: count a partition more
		// than a second behind as one batch of lag, for the verdict.
		if p.GetMillisBehind() > 1000 {
			lag = max(lag, 0) + max(batchRows, 1) + 1
		}
	}
	if lag > 0 && now.Sub(time.UnixMilli(info.GetLastProgressUnixMs())) > stallAfter {
		return "stalled"
	}
	if lag > max(batchRows, 1) {
		return "lagging"
	}
	return "healthy"
}

// stateHealth is the verdict that a job's state alone decides (a job that
// is not loading), "" for NEED_SCHEDULE and RUNNING.
func stateHealth(state api.JobState, reason api.Reason) string {
	switch state {
	case api.JobState_STOPPED:
		return "stopped"
	case api.JobState_CANCELLED:
		return "failed"
	case api.JobState_PAUSED:
		switch reason {
		case api.Reason_ERROR_ROWS_EXCEEDED, api.Reason_OFFSET_OUT_OF_RANGE, api.Reason_SOURCE_CONFIG_ERROR:
			return "failed" // error-row budget, data loss, configuration: a person must act
		}
		return "paused"
	}
	return ""
}

// errorWindowSize is the number of rows of a job's error-row window
// (Doris: max_batch_rows * 10).
func errorWindowSize(spec *api.JobSpec) int64 {
	return max(spec.GetMaxBatchRows(), 1) * 10
}

// addShardInfo fills the Kinesis fields of info's partitions from the job's
// checkpoints, as the source describes them; without the source (a final
// job) only the position is known. MillisBehindLatest is the lag of a
// checkpointed source: its total is the largest of the partitions'.
func addShardInfo(info *api.JobInfo, cks map[int32][]byte, behind map[int32]int64, lin Lineage) {
	if len(cks) == 0 {
		return
	}
	info.TotalLag = -1
	for _, pi := range info.Partitions {
		ck, ok := cks[pi.Partition]
		if !ok {
			continue
		}
		pi.MillisBehind = -1
		if ms, ok := behind[pi.Partition]; ok {
			pi.MillisBehind = ms
		}
		if lin == nil {
			continue
		}
		d := lin.Describe(pi.Partition, ck)
		pi.ShardId, pi.ShardState, pi.Sequence, pi.Parents = d.ID, d.State, d.Seq, d.Parents
		if d.State == "finished" {
			pi.MillisBehind = 0
		}
	}
}
