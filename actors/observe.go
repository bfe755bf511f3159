package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// What a job tells the node's Observer besides commit latencies: a sample
// of itself every watermark_interval and at every transition (the console's
// charts), and the events an operator may be alerted to (paused, resumed,
// stopped, failing, stalled). The job re-judges its health verdict at the
// same points, so that listings carry it (JobSummary.health).

// Alert events, as JobEvent.Event.
const (
	EventPaused  = "paused"  // the job entered PAUSED (any reason)
	EventResumed = "resumed" // PAUSED -> NEED_SCHEDULE (user or auto-resume)
	EventStopped = "stopped" // the job entered STOPPED or CANCELLED
	// EventFailing: the verdict became "failing" (retrying a source, sink
	// or task failure).
	EventFailing = "failing"
	// EventStalled: the verdict became "stalled": RUNNING or
	// NEED_SCHEDULE with lag above zero and no progress (commit) for the
	// node's stall_after.
	EventStalled = "stalled"
	// EventRecovered: the verdict went from failing or stalled back to
	// healthy or lagging (the job commits again).
	EventRecovered = "recovered"
)

// Events lists every alert event.
var Events = []string{EventPaused, EventStalled, EventFailing, EventResumed, EventStopped, EventRecovered}

// JobSample is one look at a live job.
type JobSample struct {
	ID         uint64
	Name       string
	AtMs       int64
	State      api.JobState
	Reason     api.Reason
	Health     string
	RowsPerSec float64
	// TotalLag is -1 when unknown; Lag is per partition (-1 unknown). For
	// a checkpointed source (Kinesis) Lag holds MillisBehindLatest.
	TotalLag int64
	Lag      map[int32]int64
	Loaded   int64
	Sink     string
}

// JobEvent is a change of a job an operator may be alerted to.
type JobEvent struct {
	ID      uint64
	Name    string
	Event   string // one of Events
	State   api.JobState
	Reason  api.Reason
	Message string
	AtMs    int64
}

// judge re-judges the job's health verdict and reports a sample to the
// observer. A new verdict is sent to the manager (listings) when notify is
// set, and becoming failing or stalled is an event.
func (j *job) judge(ctx actor.Context, notify bool) {
	if j.rec == nil || j.state.Final() || j.tornDown {
		return
	}
	v := j.view()
	v.lean = true
	info := shape(v)
	h := info.GetHealth()
	prev := j.health
	j.health = h
	o := j.deps.Observer
	if h != prev {
		if notify {
			j.notify(ctx)
		}
		if h == EventFailing || h == EventStalled {
			msg := j.message
			if h == EventStalled {
				msg = fmt.Sprintf("lag %d and no progress since %s (stall_after %s)", info.GetTotalLag(),
					time.UnixMilli(info.GetLastProgressUnixMs()).UTC().Format(time.RFC3339), j.deps.Settings.StallAfter)
			}
			j.log().Warn("job health", "health", h, "message", msg)
			j.event(h, msg)
		} else if (prev == EventFailing || prev == EventStalled) && (h == "healthy" || h == "lagging") {
			msg := fmt.Sprintf("%s again after %s", h, prev)
			j.log().Info("job health", "health", h, "message", msg)
			j.event(EventRecovered, msg)
		}
	}
	if o == nil {
		return
	}
	s := &JobSample{ID: j.id, Name: j.rec.GetName(), AtMs: j.deps.nowMs(), State: j.state, Reason: j.reason, Health: h,
		RowsPerSec: info.GetRowsPerSecond(), TotalLag: info.GetTotalLag(), Lag: make(map[int32]int64, len(info.GetPartitions())),
		Loaded: j.stats.GetLoadedRows(), Sink: info.GetSink()}
	for _, p := range info.GetPartitions() {
		if p.GetShardId() != "" || p.GetMillisBehind() != 0 {
			s.Lag[p.GetPartition()] = p.GetMillisBehind()
		} else {
			s.Lag[p.GetPartition()] = p.GetLag()
		}
	}
	o.JobSampled(s)
}

// event reports an alert event of the job to the observer.
func (j *job) event(name, message string) {
	if o := j.deps.Observer; o != nil {
		o.JobEvent(&JobEvent{ID: j.id, Name: j.rec.GetName(), Event: name, State: j.state, Reason: j.reason,
			Message: api.Clip(message, api.MaxMessageBytes), AtMs: j.deps.nowMs()})
	}
}

// transitionEvent is the alert event of a transition from leaving to
// t.To, "" for none.
func transitionEvent(leaving api.JobState, t *api.Transition) string {
	switch {
	case t.GetTo().Final() && !leaving.Final():
		return EventStopped
	case t.GetTo() == api.JobState_PAUSED && leaving != api.JobState_PAUSED:
		return EventPaused
	case leaving == api.JobState_PAUSED && t.GetTo() == api.JobState_NEED_SCHEDULE:
		return EventResumed
	}
	return ""
}
