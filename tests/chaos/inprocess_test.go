package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/node"
)

// inprocParams sizes TestChaosInProcess.
type inprocParams struct {
	records     int           // records produced, at least
	actorFaults int           // actor faults injected, at least
	crashClones int           // power-loss restarts
	faultTime   time.Duration // how long faults are injected
	storeCheck  int           // check the crash image of every n-th clone
}

func inprocSize() inprocParams {
	if longRun() {
		return inprocParams{records: 1_000_000, actorFaults: 500, crashClones: 1000, faultTime: 8 * time.Minute, storeCheck: 10}
	}
	return inprocParams{records: 130_000, actorFaults: 120, crashClones: 6, faultTime: 40 * time.Second, storeCheck: 1}
}

// walFault fails the WAL while armed: its syncs (a failing disk), or its
// writes with ENOSPC (a full disk).
type walFault struct {
	armed    atomic.Bool
	diskFull atomic.Bool
	hits     atomic.Int64
}

func (w *walFault) MaybeError(op errorfs.Op) error {
	if !w.armed.Load() || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt:
		if w.diskFull.Load() {
			w.hits.Add(1)
			return fmt.Errorf("chaos: disk full: %w", syscall.ENOSPC)
		}
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		if !w.diskFull.Load() {
			w.hits.Add(1)
			return errorfs.ErrInjected
		}
	}
	return nil
}

func (w *walFault) String() string { return "chaos WAL fault" }

// reuseFS makes a recycled WAL file go through the injector too: errorfs
// returns ReuseForWrite's file unwrapped, so once Pebble recycles a WAL
// its writes and syncs would never fail. Rename plus OpenReadWrite is what
// MemFS's ReuseForWrite does (the file is written from offset 0).
type reuseFS struct{ vfs.FS }

func (r reuseFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err := r.FS.Rename(oldname, newname); err != nil {
		return nil, err
	}
	return r.FS.OpenReadWrite(newname, category)
}

// inproc is an in-process node on a crashable in-memory disk, restarted on
// crash clones of that disk.
type inproc struct {
	t      *testing.T
	logger *ringLogger

	// life is held for reading by whoever uses the node (samples, faults)
	// and for writing by a restart, so that no sample spans a crash.
	life sync.RWMutex
	mem  *vfs.MemFS
	wal  *walFault
	n    *node.Node
	c    *client.Client
	gen  int
	// pgDSN, when set, is the database "chaos" of the node config (the
	// PostgreSQL variant).
	pgDSN string
	// fatals receives OnStoreFatal calls of the current node.
	fatals chan error
}

type ringLogger struct{ ring *testnode.LogRing }

func (h *inproc) start() error {
	cfg := config.DefaultNode()
	cfg.DataDir = "db"
	cfg.Listen = "127.0.0.1:0"
	cfg.TopologyInterval = 300 * time.Millisecond
	cfg.WatermarkInterval = 200 * time.Millisecond
	if h.pgDSN != "" {
		cfg.Databases = map[string]config.Database{"chaos": {Type: config.DatabasePostgres, DSN: h.pgDSN, Schema: config.DefaultDatabaseSchema}}
	}
	h.gen++
	h.wal = &walFault{}
	fatals := make(chan error, 16)
	ctx, cancel := ctxFor(60 * time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{
		Node: cfg, Logger: testLogger(h.logger.ring).With("node", h.gen),
		FS:           reuseFS{errorfs.Wrap(h.mem, h.wal)},
		OnStoreFatal: func(err error) { fatals <- err },
	})
	if err != nil {
		return fmt.Errorf("start node %d: %w", h.gen, err)
	}
	c, err := client.Dial(ctx, n.Addr(), client.WithTimeout(10*time.Second))
	if err != nil {
		n.Close()
		return fmt.Errorf("dial node %d: %w", h.gen, err)
	}
	h.n, h.c, h.fatals = n, c, fatals
	h.watchSupervision(n, h.gen)
	return nil
}

// watchSupervision logs what the node's actor system decides about its
// manager and scheduler (restart, stop) and the messages it drops for
// them, which protoactor otherwise keeps to itself: a manager stopped by
// its supervisor answers nothing, and only these lines say so.
func (h *inproc) watchSupervision(n *node.Node, gen int) {
	log := testLogger(h.logger.ring).With("node", gen, "component", "chaos-watch")
	core := map[string]bool{n.Manager().GetId(): true, n.Scheduler().GetId(): true}
	var dropped atomic.Int64
	n.System().EventStream.Subscribe(func(evt any) {
		switch e := evt.(type) {
		case *actor.SupervisorEvent:
			if core[e.Child.GetId()] {
				log.Warn("supervisor decided", "child", e.Child.GetId(), "directive", e.Directive.String(), "reason", fmt.Sprint(e.Reason))
			}
		case *actor.DeadLetterEvent:
			if e.PID != nil && core[e.PID.GetId()] && dropped.Add(1) <= 20 {
				log.Warn("dead letter", "to", e.PID.GetId(), "message", fmt.Sprintf("%T", e.Message))
			}
		}
	})
}

// diagnose asks the node's manager directly, bypassing the remote
// transport, whether it answers, and reports what the process registry
// holds for it: it tells a stopped or stuck manager from a lost reply. It
// also asks each registered job actor: a restarting manager waits for
// every one of them to terminate, and one that still answers is the one
// it waits for.
func (h *inproc) diagnose() string {
	h.life.RLock()
	defer h.life.RUnlock()
	if h.n == nil {
		return "no node running"
	}
	sys := h.n.System()
	mgr := h.n.Manager()
	_, registered := sys.ProcessRegistry.GetLocal(mgr.GetId())
	began := time.Now()
	res, err := sys.Root.RequestFuture(mgr, &api.PingRequest{}, 5*time.Second).Result()
	var jobs []string
	ids, _ := h.pids()
	for _, pid := range ids {
		res, err := sys.Root.RequestFuture(pid, &actors.InspectJob{}, time.Second).Result()
		if rt, ok := res.(*actors.JobRuntime); ok && err == nil {
			jobs = append(jobs, fmt.Sprintf("%s answers (%s, %d tasks)", pid.Id, rt.State, len(rt.Tasks)))
		} else {
			jobs = append(jobs, fmt.Sprintf("%s does not answer (%v)", pid.Id, err))
		}
	}
	return fmt.Sprintf("manager %s registered=%v; a local ping answered %v (%T) err=%v after %s; job actors: [%s]",
		mgr.GetId(), registered, res, res, err, time.Since(began).Round(time.Millisecond), strings.Join(jobs, "; "))
}

func (h *inproc) stop() {
	if h.c != nil {
		h.c.Close()
		h.c = nil
	}
	if h.n != nil {
		h.n.Close()
		h.n = nil
	}
}

// pids lists the live job and task actors of the node from its process
// registry: job actors are the manager's children, tasks their children.
func (h *inproc) pids() (jobs, tasks []*actor.PID) {
	sys := h.n.System()
	for _, shard := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, id := range shard.Keys() {
			if !strings.HasPrefix(id, api.ManagerName+"/") {
				continue
			}
			switch strings.Count(id, "/") {
			case 1:
				jobs = append(jobs, actor.NewPID(sys.Address(), id))
			case 2:
				tasks = append(tasks, actor.NewPID(sys.Address(), id))
			}
		}
	}
	slices.SortFunc(jobs, func(a, b *actor.PID) int { return strings.Compare(a.Id, b.Id) })
	slices.SortFunc(tasks, func(a, b *actor.PID) int { return strings.Compare(a.Id, b.Id) })
	return jobs, tasks
}

// producing runs a Producer in a goroutine: paced to reach `records` by
// `by`, then a trickle until stopped. Holding gate pauses it between
// rounds.
type producing struct {
	gate     sync.Mutex
	quit     chan struct{}
	done     chan error
	produced atomic.Int64
}

func startProducing(prod *ledger.Producer, records int, by time.Time) *producing {
	p := &producing{quit: make(chan struct{}), done: make(chan error, 1)}
	began := time.Now()
	span := by.Sub(began).Seconds()
	go func() {
		for {
			select {
			case <-p.quit:
				p.done <- nil
				return
			default:
			}
			produced := int(p.produced.Load())
			target := float64(records) * time.Since(began).Seconds() / span
			perWriter := max(1, 400/max(prod.Writers(), 1))
			switch {
			case produced >= records:
				perWriter = 1
				if !p.pace(50 * time.Millisecond) { // a trickle until the faults end
					return
				}
			case float64(produced) > target:
				if !p.pace(20 * time.Millisecond) { // ahead of schedule
					return
				}
				continue
			}
			p.gate.Lock()
			ctx, cancel := ctxFor(60 * time.Second)
			n, err := prod.Produce(ctx, perWriter)
			cancel()
			p.gate.Unlock()
			p.produced.Add(int64(n))
			if err != nil && (errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, context.DeadlineExceeded)) {
				// A record not acknowledged in time has an unknown fate, as
				// the ledger records it (Failed); the final check reads the
				// log back (Reconcile). How long a broker takes under load
				// must not decide the test.
				continue
			}
			if err != nil {
				p.done <- fmt.Errorf("produce: %w", err)
				return
			}
		}
	}()
	return p
}

// pace waits d between batches; it returns false, having reported the
// producer done, if the producer was told to quit meanwhile.
func (p *producing) pace(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-p.quit:
		p.done <- nil
		return false
	}
}

// stop stops the producer and returns its error, if it failed.
func (p *producing) stop() error {
	close(p.quit)
	return <-p.done
}

// chaosRun is the state shared by a chaos test's goroutines.
type chaosRun struct {
	t        *testing.T
	rng      *rand.Rand
	ledger   *ledger.Ledger
	progress *ledger.ProgressTracker
	registry *Registry
	stalls   *StallWatch
	// storedProgress, when set, reads a job's progress where its sink
	// keeps it (PostgreSQL), so that a regression says which side moved.
	storedProgress func(jobID uint64) string

	mu              sync.Mutex
	lastSeen        map[string]string // per job, the last look that did not regress
	faults          map[string]int
	restarts        int
	invariants      int
	invDetails      []string
	longestRecovery time.Duration
}

func newChaosRun(t *testing.T, seed int64) *chaosRun {
	return &chaosRun{
		t: t, rng: rand.New(rand.NewPCG(uint64(seed), uint64(seed)>>7|1)),
		ledger: ledger.New(), progress: ledger.NewProgressTracker(), registry: NewRegistry(),
		stalls: NewStallWatch(20 * time.Second), faults: map[string]int{}, lastSeen: map[string]string{},
	}
}

// observe records a look at a job's progress; on a regression it logs the
// last look that did not regress, this one, and what the sink stores.
func (r *chaosRun) observe(info *api.JobInfo, when string) {
	name := info.GetSummary().GetName()
	s := info.GetSummary()
	look := fmt.Sprintf("%s at %s: %s %s %q progress %v aborted_batches %d refused_commits %d %q",
		when, time.Now().Format("15:04:05.000"), s.GetState(), s.GetReason(), s.GetReasonMessage(),
		ledger.JobViewFromInfo(info).Progress, info.GetStats().GetAbortedBatches(), info.GetRefusedCommits(), info.GetLastRefusal())
	n := r.progress.Observe(name, ledger.JobViewFromInfo(info).Progress, when)
	r.mu.Lock()
	defer r.mu.Unlock()
	if n > 0 {
		stored := "not read"
		if r.storedProgress != nil {
			stored = r.storedProgress(s.GetId())
		}
		r.t.Logf("PROGRESS REGRESSION of %s:\n  highest seen: %s\n  now: %s\n  stored by the sink: %s", name, r.lastSeen[name], look, stored)
		return
	}
	r.lastSeen[name] = look
}

func (r *chaosRun) fault(kind string) {
	r.mu.Lock()
	r.faults[kind]++
	r.mu.Unlock()
}

func (r *chaosRun) faultCount(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, v := range r.faults {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func (r *chaosRun) violation(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invariants++
	msg := fmt.Sprintf(format, a...)
	r.t.Logf("INVARIANT VIOLATION: %s", msg)
	if len(r.invDetails) < maxDetails {
		r.invDetails = append(r.invDetails, msg)
	}
}

func (r *chaosRun) recovered(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.longestRecovery = max(r.longestRecovery, d)
}

// sample looks at every job through c: progress (regressions), the job
// registry (acknowledged jobs exist, refused ones do not) and stalls.
func (r *chaosRun) sample(c *client.Client, when string) error {
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	// The creates known before the listing is asked for: one acknowledged
	// while it is on its way may be missing from it.
	before := r.registry.Freeze()
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return err
	}
	for _, v := range before.Check(jobs) {
		r.violation("after %s: %s", when, v)
	}
	now := time.Now()
	for _, s := range jobs {
		info, err := c.ShowJob(ctx, s.GetName())
		if err != nil {
			return err
		}
		r.observe(info, when)
		r.stalls.Observe(info, now)
	}
	return nil
}

// awaitRecovery waits, after a restart, until every job that is not
// paused has been seen running with tasks (or running idle: no lag, so no
// tasks), and reports how long that took.
// Each job is latched on its own: with broker errors injected, some job is
// often between two task generations at any one instant.
func (r *chaosRun) awaitRecovery(c *client.Client, since time.Time, when string) {
	back := map[string]bool{}
	ok, last := waitFor(r.stalls.Grace, func() (bool, string) {
		infos, err := showAll(c)
		if err != nil {
			return false, err.Error()
		}
		waiting := ""
		for _, name := range sortedKeys(infos) {
			info := infos[name]
			s := info.GetSummary()
			switch {
			case back[name]:
			case s.GetState() == api.JobState_PAUSED, s.GetState() == api.JobState_STOPPED, s.GetState() == api.JobState_CANCELLED:
				back[name] = true
			case s.GetState() == api.JobState_RUNNING && info.GetRunningTasks() > 0:
				back[name] = true
			case s.GetState() == api.JobState_RUNNING && info.GetTotalLag() == 0:
				// Idle: nothing to read, so no tasks until data arrives
				// (a job with lag and no tasks keeps the test waiting).
				back[name] = true
			default:
				waiting = fmt.Sprintf("%s %s (%d tasks) %s %q", name, s.GetState(), info.GetRunningTasks(), s.GetReason(), s.GetReasonMessage())
			}
		}
		return waiting == "", waiting
	})
	if !ok {
		r.violation("after %s: a job did not run again within %s: %s", when, r.stalls.Grace, last)
	}
	r.recovered(time.Since(since))
}

// TestChaosInProcess runs an in-process node on a crashable in-memory disk
// with three jobs loading one topic into DUPLICATE tables (checked with the
// ledger), one into a UNIQUE table with a sequence column and one into an
// AGGREGATE table (checked against a model of the final table), the same
// on PostgreSQL when it is installed, while a producer writes to it, and
// injects a random schedule of faults: crashes of task, job, scheduler and
// manager actors, poison pills and stops sent to tasks and jobs from
// outside, power loss (the node restarted on a crash clone of its disk,
// whose store is checked first), a failing WAL (the node stops on the
// fatal store error and restarts on the crash image), broker errors on a
// fraction of fetches, and partitions added while producing. After the
// faults every job must drain within 30 s and every anomaly count must be 0.
func TestChaosInProcess(t *testing.T) {
	size := inprocSize()
	seed := seedFor(t)
	run := newChaosRun(t, seed)
	rng := run.rng
	ring := testnode.NewLogRing(4000)
	failed := true
	defer func() {
		if failed {
			t.Logf("last node log lines:\n%s", ring.Tail(300))
		}
	}()

	const topic = "events"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	prod, err := ledger.NewProducer(brokers, topic, run.ledger, 0, 60)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	prod.AddWriters(2, 0, 1, 2, 3)

	h := &inproc{t: t, logger: &ringLogger{ring: ring}, mem: vfs.NewCrashableMem()}
	// The PostgreSQL variant: one more job loads the topic into a private
	// PostgreSQL cluster, which the schedule crash-restarts; its node id
	// (the job state's owner there) lives on the crashable disk. Without
	// PostgreSQL the test fails, unless $LOADNODE_SKIP_POSTGRES=1.
	var pg *pgtest.Server
	if _, err := pgtest.FindBin(); testdeps.LeaveOut(t, testdeps.Postgres, err) {
		t.Logf("no PostgreSQL variant")
	} else {
		pg = pgtest.Start(t)
		h.pgDSN = pg.CreateDatabase(t)
		run.storedProgress = pgStoredProgress(h.pgDSN)
	}
	if err := h.start(); err != nil {
		t.Fatal(err)
	}
	defer func() { h.stop() }()

	specs := []*api.JobSpec{
		chaosSpec("j1", "t1", topic, brokers, 3, 500),
		chaosSpec("j2", "t2", topic, brokers, 2, 2000),
		chaosSpec("j3", "t3", topic, brokers, 1, 1000),
		// Model tables, checked against a model of the final table.
		uniqueSpec("ju", "tu", topic, brokers, 2, 700),
		aggregateSpec("ja", "ta", topic, brokers, 3, 600),
	}
	if pg != nil {
		ps := chaosSpec("jpg", "tpg", topic, brokers, 2, 1000)
		pu := uniqueSpec("jpg_u", "tpg_u", topic, brokers, 2, 800)
		pa := aggregateSpec("jpg_a", "tpg_a", topic, brokers, 2, 900)
		for _, s := range []*api.JobSpec{ps, pu, pa} {
			s.Table.Database = "chaos"
		}
		specs = append(specs, ps, pu, pa)
	}
	for _, s := range specs {
		ctx, cancel := ctxFor(10 * time.Second)
		_, err := h.c.CreateJob(ctx, s)
		cancel()
		run.registry.Created(s.GetName(), err)
		if err != nil {
			t.Fatalf("create %s: %v", s.GetName(), err)
		}
	}

	// Fetch errors: a fraction of fetches fail, some with an error the
	// reader retries by itself, some with one that fails the task.
	var fetches atomic.Int64
	fetchFaults := cluster.Fault(
		kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Count: -1, Err: kerr.UnknownServerError,
			When: func(kmsg.Request) bool { return fetches.Add(1)%97 == 0 }},
		kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Count: -1, Err: kerr.NotLeaderForPartition,
			When: func(kmsg.Request) bool { return fetches.Load()%89 == 0 }},
	)

	// The producer writes throughout, paced to reach size.records a little
	// before the faults end, then slowly until they do.
	began := time.Now()
	pl := startProducing(prod, size.records, began.Add(size.faultTime*85/100))

	// The monitor samples every job continuously (progress, registry,
	// stalls); a restart holds the node's life lock, so no sample spans it.
	stopMonitor := make(chan struct{})
	monitorDone := make(chan struct{})
	go func() {
		defer close(monitorDone)
		for {
			select {
			case <-stopMonitor:
				return
			case <-time.After(250 * time.Millisecond):
			}
			h.life.RLock()
			if h.c != nil {
				_ = run.sample(h.c, "monitor") // a crash in progress may refuse it
			}
			h.life.RUnlock()
		}
	}()

	// The schedule: actor faults evenly spread with jitter; crash clones,
	// the WAL failure, the partitions added and a create mid-run at
	// random points.
	type event struct {
		at   time.Duration
		kind string
	}
	var events []event
	jitter := func(d time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(d))) }
	step := size.faultTime / time.Duration(size.actorFaults+1)
	for i := range size.actorFaults {
		events = append(events, event{step*time.Duration(i+1) + jitter(step/2), "actor"})
	}
	cstep := size.faultTime / time.Duration(size.crashClones+1)
	for i := range size.crashClones {
		events = append(events, event{cstep*time.Duration(i+1) + jitter(cstep/3), "crash-clone"})
	}
	events = append(events,
		event{size.faultTime/4 + jitter(size.faultTime/4), "wal-failure:fsync"},
		event{size.faultTime/2 + jitter(size.faultTime/4), "wal-failure:disk-full"},
		event{size.faultTime/5 + jitter(size.faultTime/5), "add-partitions"},
		event{size.faultTime/3 + jitter(size.faultTime/3), "create-job"},
		event{jitter(size.faultTime / 3), "job-poison"},
		event{jitter(size.faultTime / 3), "job-stop"},
	)
	if pg != nil {
		events = append(events, event{size.faultTime/3 + jitter(size.faultTime/2), "postgres-crash"})
	}
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })

	var jobCrashes []time.Time
	var lastManagerCrash time.Time
	actorFault := func() {
		h.life.RLock()
		defer h.life.RUnlock()
		jobs, tasks := h.pids()
		root := h.n.System().Root
		kind := ""
		for kind == "" {
			switch x := rng.IntN(100); {
			case x < 35:
				kind = "task-crash"
			case x < 47:
				kind = "task-poison"
			case x < 59:
				kind = "task-stop"
			case x < 74:
				// Below the job actors' restart budget (10 in 30 s).
				recent := 0
				for _, at := range jobCrashes {
					if time.Since(at) < 30*time.Second {
						recent++
					}
				}
				if recent < 6 && len(jobs) > 0 {
					kind = "job-crash"
				}
			case x < 88:
				kind = "scheduler-crash"
			default:
				// Below the manager's own supervisor budget (10 in 10 s).
				if time.Since(lastManagerCrash) > 2500*time.Millisecond {
					kind = "manager-crash"
				}
			}
			if strings.HasPrefix(kind, "task-") && len(tasks) == 0 {
				kind = "scheduler-crash" // between generations: no task to hit
			}
		}
		switch kind {
		case "task-crash":
			root.Send(tasks[rng.IntN(len(tasks))], &actors.Crash{Reason: "chaos"})
		case "task-poison":
			root.Poison(tasks[rng.IntN(len(tasks))])
		case "task-stop":
			root.Stop(tasks[rng.IntN(len(tasks))])
		case "job-crash":
			jobCrashes = append(jobCrashes, time.Now())
			root.Send(jobs[rng.IntN(len(jobs))], &actors.Crash{Reason: "chaos"})
		case "scheduler-crash":
			root.Send(h.n.Scheduler(), &actors.Crash{Reason: "chaos"})
		case "manager-crash":
			lastManagerCrash = time.Now()
			root.Send(h.n.Manager(), &actors.Crash{Reason: "chaos"})
		}
		run.fault("actor: " + kind)
	}

	// jobOut stops a job actor from outside (poison pill or stop): the
	// manager sees it gone, pauses the job durably and brings it back.
	jobOut := func(kind string) {
		h.life.RLock()
		defer h.life.RUnlock()
		jobs, _ := h.pids()
		if len(jobs) == 0 {
			return
		}
		pid := jobs[rng.IntN(len(jobs))]
		if kind == "job-poison" {
			h.n.System().Root.Poison(pid)
		} else {
			h.n.System().Root.Stop(pid)
		}
		run.fault("actor: " + kind)
	}

	clones := 0
	// crashRestart restarts the node on a crash clone of its disk: the
	// node lost power. The crash image is checked as a store first.
	crashRestart := func(when string, clone *vfs.MemFS) {
		defer h.life.Unlock() // taken by the caller before the clone
		start := time.Now()
		clones++
		if clones%size.storeCheck == 0 || clones == 1 {
			views, err := readStore(clone.CrashClone(vfs.CrashCloneCfg{}), "db")
			if err != nil {
				run.violation("%s: open crash image: %v", when, err)
			}
			expected := run.ledger.Topic(topic)
			for _, v := range views {
				c := ledger.Check(expected, v.rows, v.view, ledger.CheckOptions{PartialLedger: true})
				if c.Anomalies() != 0 {
					run.violation("%s: crash image of %s: %s %v", when, v.name, c, c.Details)
				}
				run.progress.Observe(v.name, v.view.Progress, when+" (crash image)")
			}
		}
		h.stop()
		h.mem = clone
		if err := h.start(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		run.stalls.Reset()
		if err := run.sample(h.c, when); err != nil {
			run.violation("%s: sample after restart: %v", when, err)
		}
		run.awaitRecovery(h.c, start, when)
	}

	for i, ev := range events {
		if d := time.Until(began.Add(ev.at)); d > 0 {
			if !hold(t.Context(), d) { // the schedule's pace
				return
			}
		}
		switch ev.kind {
		case "actor":
			actorFault()
		case "job-poison", "job-stop":
			jobOut(ev.kind)
		case "crash-clone":
			h.life.Lock()
			clone := h.mem.CrashClone(vfs.CrashCloneCfg{})
			run.fault("power loss (crash clone)")
			crashRestart(fmt.Sprintf("crash clone %d (event %d)", clones+1, i), clone)
		case "wal-failure:fsync", "wal-failure:disk-full":
			// The WAL fails; the node must stop on the fatal store error,
			// and restart on its disk with nothing acknowledged lost. A
			// create sent meanwhile must not leave a job behind if refused.
			what := strings.TrimPrefix(ev.kind, "wal-failure:")
			h.life.Lock()
			h.wal.diskFull.Store(what == "disk-full")
			h.wal.armed.Store(true)
			name := "doomed_" + strings.ReplaceAll(what, "-", "_")
			ctx, cancel := ctxFor(10 * time.Second)
			_, cerr := h.c.CreateJob(ctx, chaosSpec(name, "t_"+name, topic, brokers, 1, 1000))
			cancel()
			t.Logf("create during the WAL failure (%s): %s (%v)", what, run.registry.Created(name, cerr), cerr)
			select {
			case err := <-h.fatals:
				t.Logf("store stopped on the WAL failure (%s): %v", what, err)
			case <-time.After(20 * time.Second):
				h.life.Unlock()
				t.Logf("at the missing fatal error: %s", h.diagnose())
				t.Logf("goroutines in loadnode and protoactor code 20 s after the WAL started failing:\n%s", loadnodeGoroutines())
				t.Fatalf("no fatal store error 20 s after the WAL started failing (%s)", what)
			}
			run.fault("wal failure: " + what + " (errorfs)")
			clone := h.mem.CrashClone(vfs.CrashCloneCfg{})
			crashRestart("wal failure: "+what, clone)
		case "add-partitions":
			adm := kadm.NewClient(mustClient(t, brokers))
			ctx, cancel := ctxFor(10 * time.Second)
			_, err := adm.CreatePartitions(ctx, 2, topic)
			cancel()
			adm.Close()
			if err != nil {
				t.Fatalf("add partitions: %v", err)
			}
			// A new client learns the partitions at once; the gate keeps
			// the old one from being closed under a round in flight.
			pl.gate.Lock()
			err = prod.Reconnect(brokers)
			prod.AddWriters(2, 4, 5)
			pl.gate.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			run.fault("partitions added")
		case "create-job":
			h.life.RLock()
			ctx, cancel := ctxFor(10 * time.Second)
			_, err := h.c.CreateJob(ctx, chaosSpec("late", "t_late", topic, brokers, 2, 1000))
			cancel()
			h.life.RUnlock()
			t.Logf("create mid-run: %s (%v)", run.registry.Created("late", err), err)
		case "postgres-crash":
			// pg_ctl stop -m immediate, then a start: the WAL recovers
			// what was committed; commits in flight are lost or done.
			if err := pg.Crash(); err != nil {
				t.Fatal(err)
			}
			run.fault("PostgreSQL crash restart")
		}
	}
	faultsEnd := time.Now()
	fetchFaults.Remove()
	run.mu.Lock()
	run.faults["broker fetch errors"] = fetchFaults.Hits()
	run.mu.Unlock()
	if err := pl.stop(); err != nil {
		t.Fatal(err)
	}
	close(stopMonitor)
	<-monitorDone
	t.Logf("faults done after %s; producer stopped with %d records acknowledged (%d failed)", faultsEnd.Sub(began).Round(time.Millisecond), run.ledger.Len(), run.ledger.Failed())

	// Drain: every job reaches the end offsets within 30 s of the faults'
	// end.
	ctx, cancel := ctxFor(30 * time.Second)
	ends, err := ledger.EndOffsets(ctx, brokers, topic)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	drain := awaitDrained(t, h.c, faultsEnd, 30*time.Second, func(*api.JobInfo) map[int32]int64 { return ends }, h.diagnose)

	run.mu.Lock()
	run.restarts = h.gen - 1 // crash clones and the WAL failure
	run.mu.Unlock()
	sum := finalCheck(t, run, h.c, brokers, topic, nil)
	sum.Name, sum.Seed, sum.Drain = "in-process", seed, drain
	report(t, run, sum)
	if sum.TotalFaults() == 0 || run.faultCount("actor: ") < size.actorFaults {
		t.Fatalf("only %d actor faults injected, want %d", run.faultCount("actor: "), size.actorFaults)
	}
	if !sum.Pass() {
		t.Fatalf("chaos found anomalies (seed %d)", seed)
	}
	failed = false
}

func mustClient(t *testing.T, brokers []string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// finalCheck reads the log back into the ledger, then checks every job
// listed by the node against it. frozen lists jobs whose loading stopped
// on purpose (data loss) and the offsets they stopped at.
func finalCheck(t *testing.T, run *chaosRun, c *client.Client, brokers []string, topic string, frozen map[string]map[int32]int64) *Summary {
	t.Helper()
	sum := &Summary{}
	topics := map[string]bool{}
	infos, err := showAll(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		topics[info.GetSpec().GetKafka().GetTopic()] = true
	}
	topics[topic] = true
	for tp := range topics {
		ctx, cancel := ctxFor(60 * time.Second)
		log, err := ledger.ReadLog(ctx, brokers, tp)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if n := run.ledger.Reconcile(tp, log); n > 0 {
			t.Logf("%s: %d records in the log whose produce was not acknowledged", tp, n)
		}
	}
	for _, cf := range run.ledger.Conflicts() {
		run.violation("ledger: %s", cf)
	}
	sum.Records = run.ledger.Len()
	for _, v := range run.registry.Check(listOf(infos)) {
		run.violation("final: %s", v)
	}
	for _, name := range sortedKeys(infos) {
		info := infos[name]
		tbl := info.GetSpec().GetTable().GetName()
		if isModelJob(info) {
			// Keyed rows are not one per position: checked against a
			// model of the table instead (models_test.go).
			n, diffs := checkModel(c, info, run.ledger.Topic(info.GetSpec().GetKafka().GetTopic()))
			t.Logf("job %s (%s, %s %s): %d rows, %d differences from the model", name, info.GetSummary().GetState(),
				info.GetSpec().GetTable().GetModel(), tbl, n, len(diffs))
			for _, d := range diffs {
				run.violation("model table %s (job %s): %s", tbl, name, d)
			}
			continue
		}
		rows, err := scanRows(c, tbl)
		if err != nil {
			t.Fatalf("scan %s: %v", tbl, err)
		}
		view := ledger.JobViewFromInfo(info)
		run.progress.Observe(name, view.Progress, "final")
		expected := run.ledger.Topic(info.GetSpec().GetKafka().GetTopic())
		cnt := ledger.Check(expected, rows, view, ledger.CheckOptions{Final: true, Frozen: frozen[name]})
		t.Logf("job %s (%s, %s): %s", name, info.GetSummary().GetState(), tbl, cnt)
		for _, d := range cnt.Details {
			t.Logf("  %s", d)
		}
		sum.Counts.Add(cnt)
	}
	sum.Checked = sum.Counts.Rows
	return sum
}

func listOf(infos map[string]*api.JobInfo) []*api.JobSummary {
	var out []*api.JobSummary
	for _, i := range infos {
		out = append(out, i.GetSummary())
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// report fills the run's counters into sum and prints the table and the
// summary line.
func report(t *testing.T, run *chaosRun, sum *Summary) {
	t.Helper()
	run.mu.Lock()
	sum.Faults = map[string]int{}
	for k, v := range run.faults {
		sum.Faults[k] = v
	}
	sum.Restarts = run.restarts
	sum.LongestRecovery = run.longestRecovery
	inv := run.invariants
	details := append([]string(nil), run.invDetails...)
	run.mu.Unlock()
	sum.Regressions = run.progress.Regressions()
	sum.Invariants = inv + run.stalls.Violations()
	for _, d := range run.progress.Details() {
		t.Logf("regression: %s", d)
	}
	for _, d := range run.stalls.Details() {
		t.Logf("stall: %s", d)
	}
	for _, d := range details {
		t.Logf("job-state: %s", d)
	}
	t.Logf("progress samples: %d", run.progress.Samples())
	t.Logf("\n%s", sum.Table())
	t.Log(sum.Line())
	addTotal(sum)
}

// totals adds up the summaries of the package's tests for the last line.
var totals struct {
	mu  sync.Mutex
	sum Summary
	n   int
}

func addTotal(s *Summary) {
	totals.mu.Lock()
	defer totals.mu.Unlock()
	totals.n++
	totals.sum.Records += s.Records
	totals.sum.Counts.Add(s.Counts)
	totals.sum.Regressions += s.Regressions
	totals.sum.Restarts += s.Restarts
	if totals.sum.Faults == nil {
		totals.sum.Faults = map[string]int{}
	}
	for k, v := range s.Faults {
		totals.sum.Faults[k] += v
	}
}
