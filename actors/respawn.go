package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// Respawn after a recovery. Recovery rebuilds the registry in one pass
// and answers from it at once; the job actors are spawned respawnBatch
// at a time, one batch per message the manager sends itself, so that a
// listing or a command waits behind one batch at most, not behind all of
// them (at 100,000 jobs the whole respawn is seconds of CPU). A command
// to a job not respawned yet spawns it first (route). Once every job
// actor is back, admission begins (admission.go).

var respawnBatch = 1024 // a var: tests respawn in smaller batches

// respawnChunk asks the manager (itself) to spawn the next batch of the
// respawn of generation gen (a manager restart starts a new one).
type respawnChunk struct{ gen uint64 }

// AwaitRespawn is answered with *RespawnDone once every job actor of the
// recovery is spawned (at once if that is done).
type AwaitRespawn struct{}

// RespawnDone answers AwaitRespawn.
type RespawnDone struct{ Jobs int }

// respawn is the manager's respawn in progress.
type respawn struct {
	gen     uint64
	all     []*entry // every job of the recovery that gets an actor
	next    int      // all[:next] were spawned (or had an actor already)
	batches int      // batches begun
	started time.Time
	done    bool
	waiters []*actor.PID
}

// startRespawn begins respawning the job actors of spawn.
func (m *manager) startRespawn(ctx actor.Context, spawn []*entry) {
	gen := m.respawn.gen + 1
	waiters := m.respawn.waiters
	m.respawn = respawn{gen: gen, all: spawn, started: time.Now(), waiters: waiters}
	m.onRespawnChunk(ctx, &respawnChunk{gen: gen})
}

// onRespawnChunk spawns the next batch, and asks for the one after it.
func (m *manager) onRespawnChunk(ctx actor.Context, msg *respawnChunk) {
	r := &m.respawn
	if msg.gen != r.gen || r.done || m.stopping {
		return
	}
	if h := m.deps.Hooks.BeforeRespawnBatch; h != nil {
		h(r.batches)
	}
	r.batches++
	for n := 0; r.next < len(r.all) && n < respawnBatch; r.next++ {
		e := r.all[r.next]
		if e.pid != nil || e.summary.GetState().Final() || m.byID[e.rec.GetId()] != e {
			continue // spawned by a command meanwhile, or gone
		}
		m.spawn(ctx, e)
		n++
	}
	if r.next < len(r.all) {
		ctx.Send(ctx.Self(), &respawnChunk{gen: r.gen})
		return
	}
	r.done = true
	m.log().Info("respawned jobs", "jobs", len(r.all), "spawn", time.Since(r.started).Round(time.Millisecond))
	// Every job is back and answers; only now do they ask for admission
	// (and journal RUNNING), so that scheduling does not slow the respawn,
	// and a window at a time (admission.go).
	m.admitQueue, m.admitting, m.admitMoved, m.admitArmed = nil, map[uint64]bool{}, false, false
	for _, e := range r.all {
		if e.pid == nil || m.byID[e.rec.GetId()] != e {
			continue
		}
		if e.summary.GetState() == api.JobState_NEED_SCHEDULE {
			m.admitQueue = append(m.admitQueue, e)
		} else {
			ctx.Send(e.pid, &recoveryFinished{})
		}
	}
	m.releaseAdmissions(ctx)
	for _, w := range r.waiters {
		ctx.Send(w, &RespawnDone{Jobs: len(r.all)})
	}
	r.waiters, r.all = nil, nil
}

// awaitRespawn answers AwaitRespawn now or when the respawn is done.
func (m *manager) awaitRespawn(ctx actor.Context) {
	if m.respawn.done {
		ctx.Respond(&RespawnDone{Jobs: m.respawn.next})
		return
	}
	if s := ctx.Sender(); s != nil {
		m.respawn.waiters = append(m.respawn.waiters, s)
	}
}
