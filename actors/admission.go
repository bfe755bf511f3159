package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// Paced admission after a recovery. A respawned NEED_SCHEDULE job asks the
// scheduler for admission only when the manager tells it to
// (*recoveryFinished), and the manager tells admitWindow jobs at a time:
// the next one when a job reports that it got past admission (a state
// other than NEED_SCHEDULE, or a retried failure), or when it stops. At a
// restart of 100,000 jobs, telling them all at once made 100,000 jobs
// resolve their topology and journal RUNNING together, and a listing
// waited behind them for the CPU. If no job got past admission within
// admitStall, the window is released anyway (a window of jobs that never
// report must not hold the rest back). Jobs keep NEED_SCHEDULE until they
// are admitted, as recovery restores them.

const (
	admitWindow = 512
	admitStall  = 2 * time.Second
)

// admissionPacing is the manager's paced admission: admitQueue are the
// respawned NEED_SCHEDULE jobs not yet told to ask for it, admitting those
// told and not yet past it.
type admissionPacing struct {
	admitQueue []*entry
	admitting  map[uint64]bool
	admitMoved bool // a job got past admission since the last admitTick
	admitArmed bool // an admitTick is on its way
}

// admitTick is the manager's timer while jobs wait for admission.
type admitTick struct{}

// releaseAdmissions tells queued jobs to ask for admission until the
// window is full; while jobs wait, a tick watches for a stalled window.
func (m *manager) releaseAdmissions(ctx actor.Context) {
	for len(m.admitQueue) > 0 && len(m.admitting) < admitWindow {
		e := m.admitQueue[0]
		m.admitQueue[0] = nil
		m.admitQueue = m.admitQueue[1:]
		if e.pid == nil || e.summary.GetState().Final() {
			continue
		}
		m.admitting[e.rec.GetId()] = true
		ctx.Send(e.pid, &recoveryFinished{})
	}
	if len(m.admitQueue) == 0 {
		m.admitQueue = nil
	}
	if (len(m.admitQueue) > 0 || len(m.admitting) > 0) && !m.admitArmed && m.life != nil {
		m.admitArmed = true
		m.life.after(admitStall, &admitTick{})
	}
}

// admissionReport counts a job past admission when its report shows it.
func (m *manager) admissionReport(ctx actor.Context, msg *jobStateChanged) {
	id := msg.summary.GetId()
	if !m.admitting[id] {
		return
	}
	if msg.summary.GetState() == api.JobState_NEED_SCHEDULE && (msg.status == nil || msg.status.retries == 0) {
		return
	}
	delete(m.admitting, id)
	m.admitMoved = true
	m.releaseAdmissions(ctx)
}

// onAdmitTick releases a window in which no job got past admission.
func (m *manager) onAdmitTick(ctx actor.Context) {
	m.admitArmed = false
	if !m.admitMoved {
		m.admitting = map[uint64]bool{}
	}
	m.admitMoved = false
	m.releaseAdmissions(ctx)
}
