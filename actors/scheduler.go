package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
)

// SchedulerName is the scheduler's well-known actor name.
const SchedulerName = "scheduler"

// JobReady is sent by a job actor, after it has started and loaded its
// durable snapshot, when it is in NEED_SCHEDULE. The scheduler answers with
// *JobAdmitted.
type JobReady struct {
	JobID uint64
}

// JobAdmitted tells a job actor it may start its tasks.
type JobAdmitted struct{}

// SlotRequest asks for a task slot for one batch. The scheduler answers the
// sender (a task actor) with *SlotGrant when a slot is free.
type SlotRequest struct {
	JobID uint64
}

// SlotGrant gives the receiving task one slot until it sends *SlotRelease
// or stops.
type SlotGrant struct{}

// SlotRelease returns the sender's slot.
type SlotRelease struct{}

// SchedulerStats asks for the scheduler's counters; it answers
// *SchedulerStatsReply.
type SchedulerStats struct{}

// SchedulerStatsReply is the scheduler's view of its slots.
type SchedulerStatsReply struct {
	Slots, InUse, Waiting int
	Grants                uint64
}

// scheduler hands out task slots under a node-wide limit, fairly between
// jobs: waiting requests are queued per job and jobs are served round-robin,
// so a job with many tasks cannot starve a job with one.
type scheduler struct {
	slots  int
	logger *slog.Logger

	holders map[string]*actor.PID   // task PID id -> PID, one slot each
	waiting map[uint64][]*actor.PID // job -> FIFO of waiting tasks
	order   []uint64                // round-robin order of jobs with waiters
	queued  map[string]uint64       // task PID id -> job, for waiters
	watched map[string]struct{}     // task PIDs we watch
	grants  uint64
}

// NewSchedulerProps returns the props of a scheduler with the given number
// of slots (Settings.MaxConcurrentTasks, validated by the caller: at least
// one) and logger (nil discards).
func NewSchedulerProps(slots int, logger *slog.Logger) *actor.Props {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return actor.PropsFromProducer(func() actor.Actor {
		return &scheduler{
			slots:   slots,
			logger:  logger,
			holders: map[string]*actor.PID{},
			waiting: map[uint64][]*actor.PID{},
			queued:  map[string]uint64{},
			watched: map[string]struct{}{},
		}
	}, actor.WithDispatcher(mailboxes))
}

func (s *scheduler) Receive(ctx actor.Context) {
	crashOn(ctx.Message())
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		s.logger.Debug("scheduler started", "slots", s.slots)
	case *JobReady:
		// Admission is immediate: slots, not jobs, are the scarce resource.
		ctx.Respond(&JobAdmitted{})
	case *SlotRequest:
		task := ctx.Sender()
		if task == nil {
			return
		}
		s.watch(ctx, task)
		if _, ok := s.holders[task.Id]; ok {
			// Already holds a slot: grant again (idempotent).
			ctx.Send(task, &SlotGrant{})
			return
		}
		if _, ok := s.queued[task.Id]; ok {
			return
		}
		if len(s.waiting[msg.JobID]) == 0 {
			s.order = append(s.order, msg.JobID)
		}
		s.waiting[msg.JobID] = append(s.waiting[msg.JobID], task)
		s.queued[task.Id] = msg.JobID
		s.grant(ctx)
	case *SlotRelease:
		if task := ctx.Sender(); task != nil {
			delete(s.holders, task.Id)
			s.grant(ctx)
		}
	case *actor.Terminated:
		s.forget(msg.Who)
		s.grant(ctx)
	case *SchedulerStats:
		ctx.Respond(&SchedulerStatsReply{Slots: s.slots, InUse: len(s.holders), Waiting: len(s.queued), Grants: s.grants})
	}
}

func (s *scheduler) watch(ctx actor.Context, task *actor.PID) {
	if _, ok := s.watched[task.Id]; ok {
		return
	}
	s.watched[task.Id] = struct{}{}
	ctx.Watch(task)
}

// forget drops a stopped task's slot and queued request.
func (s *scheduler) forget(task *actor.PID) {
	delete(s.holders, task.Id)
	delete(s.watched, task.Id)
	if job, ok := s.queued[task.Id]; ok {
		delete(s.queued, task.Id)
		q := s.waiting[job]
		for i, p := range q {
			if p.Id == task.Id {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(s.waiting, job)
			s.removeFromOrder(job)
		} else {
			s.waiting[job] = q
		}
	}
}

func (s *scheduler) removeFromOrder(job uint64) {
	for i, j := range s.order {
		if j == job {
			s.order = append(s.order[:i], s.order[i+1:]...)
			return
		}
	}
}

// grant hands free slots to waiting tasks, one job at a time in
// round-robin order.
func (s *scheduler) grant(ctx actor.Context) {
	for len(s.holders) < s.slots && len(s.order) > 0 {
		job := s.order[0]
		s.order = s.order[1:]
		q := s.waiting[job]
		task := q[0]
		q = q[1:]
		delete(s.queued, task.Id)
		if len(q) == 0 {
			delete(s.waiting, job)
		} else {
			s.waiting[job] = q
			s.order = append(s.order, job)
		}
		s.holders[task.Id] = task
		s.grants++
		ctx.Send(task, &SlotGrant{})
	}
}
