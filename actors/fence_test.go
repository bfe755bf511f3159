package actors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// quietSource is a Source whose readers never return data, so a test can
// drive commits by hand.
type quietSource struct {
	parts []int32
}

func (s *quietSource) Partitions(context.Context) ([]int32, error) { return s.parts, nil }
func (s *quietSource) ResolveStarts(_ context.Context, want map[int32]string, _ bool) (map[int32]sources.Start, error) {
	out := map[int32]sources.Start{}
	for p := range want {
		out[p] = sources.Start{}
	}
	return out, nil
}
func (s *quietSource) Watermarks(context.Context) (map[int32]int64, error) { return nil, nil }
func (s *quietSource) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	return quietReader{}, nil
}
func (s *quietSource) Close() {}

type quietReader struct{}

func (quietReader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	<-ctx.Done()
	return &sources.Batch{}, ctx.Err()
}
func (quietReader) Close() {}

func testSpec(name string) *api.JobSpec {
	return &api.JobSpec{
		Name:   name,
		Table:  &api.TableSpec{Name: "t_" + name, Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}},
		Format: "csv", ColumnSeparator: ",", DesiredConcurrentNumber: 1,
		MaxBatchIntervalMs: 1000, MaxBatchRows: 1000, MaxBatchSize: 1 << 20,
		Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Topic: "t", DefaultOffset: "OFFSET_BEGINNING"},
	}
}

type harness struct {
	t      *testing.T
	system *actor.ActorSystem
	store  *persistence.Store
	mgr    *actor.PID
	deps   *Deps
	sch    *actor.PID
}

func newHarness(t *testing.T, fs vfs.FS) *harness {
	t.Helper()
	return newHarnessWith(t, fs, &quietSource{parts: []int32{0, 1}}, Settings{})
}

func newHarnessWith(t *testing.T, fs vfs.FS, src testSource, set Settings) *harness {
	t.Helper()
	return newHarnessStore(t, fs, src, set, nil)
}

// newHarnessStore is newHarnessWith whose actors see the store through
// wrap (nil: the store itself).
func newHarnessStore(t *testing.T, fs vfs.FS, src testSource, set Settings, wrap func(*persistence.Store) sink.Sink) *harness {
	t.Helper()
	return newHarnessSources(t, fs, func(*api.JobSpec) (Source, error) { return adapt(src), nil }, set, wrap)
}

// newHarnessSources is newHarnessStore whose jobs open their sources with
// open.
func newHarnessSources(t *testing.T, fs vfs.FS, open SourceFactory, set Settings, wrap func(*persistence.Store) sink.Sink) *harness {
	t.Helper()
	return newHarnessOpts(t, fs, open, set, harnessOpts{sink: wrap})
}

// harnessOpts are the optional parts of a harness's Deps; zero values keep
// the store's own faces, the wall clock and the test logger.
type harnessOpts struct {
	// sink wraps the store's sink face.
	sink func(*persistence.Store) sink.Sink
	// sinks, if set, is the factory of the actors' sinks, given the sink
	// (wrapped) it should hand out.
	sinks func(sink.Sink) SinkFactory
	// meta wraps the store's metastore face (a write counter, faults).
	meta func(metastore.Store) metastore.Store
	// now is the actors' clock.
	now func() time.Time
	// logs, if set, also receives every log record.
	logs slog.Handler
	// observer, if set, receives samples and events.
	observer Observer
	// cluster makes the actors run in cluster mode.
	cluster Cluster
	// hooks are the actors' test points.
	hooks Hooks
	// slots, if set, sees every message the scheduler receives.
	slots actor.ReceiverMiddleware
	// managerProps, if set, configures the manager's props before it is
	// spawned (its supervisor).
	managerProps func(*actor.Props)
}

// newHarnessOpts is newHarnessSources with the optional Deps of o.
func newHarnessOpts(t *testing.T, fs vfs.FS, open SourceFactory, set Settings, o harnessOpts) *harness {
	t.Helper()
	wrap := o.sink
	st, err := persistence.Open(persistence.Options{Dir: "db", FS: fs, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	var sk sink.Sink = st.Sink()
	if wrap != nil {
		sk = wrap(st)
	}
	level := slog.LevelWarn
	if os.Getenv("LOADNODE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	var handler slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	if o.logs != nil {
		handler = teeHandler{handler, o.logs}
	}
	logger := slog.New(handler)
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	var meta metastore.Store = st.Meta()
	if o.meta != nil {
		meta = o.meta(meta)
	}
	sinks := SinkFactory(func(*api.TableSpec) (sink.Sink, error) { return sk, nil })
	if o.sinks != nil {
		sinks = o.sinks(sk)
	}
	deps := &Deps{Meta: meta, Sinks: sinks,
		Specs: testSpecs{}, Logger: logger, Settings: testSettings(set), Sources: open, Now: o.now, Observer: o.observer, Cluster: o.cluster, Hooks: o.hooks}
	schProps := NewSchedulerProps(4, logger)
	if o.slots != nil {
		schProps.Configure(actor.WithReceiverMiddleware(o.slots))
	}
	sch, _ := system.Root.SpawnNamed(schProps, SchedulerName)
	props, err := NewManagerProps(deps, sch)
	if err != nil {
		t.Fatal(err)
	}
	if o.managerProps != nil {
		o.managerProps(props)
	}
	mgr, _ := system.Root.SpawnNamed(props, api.ManagerName)
	h := &harness{t: t, system: system, store: st, mgr: mgr, deps: deps, sch: sch}
	t.Cleanup(func() {
		_ = system.Root.StopFuture(mgr).Wait()
		system.Shutdown()
		st.Close()
	})
	return h
}

// teeHandler sends each record to both handlers (each by its own level).
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	for _, h := range []slog.Handler{t.a, t.b} {
		if h.Enabled(ctx, r.Level) {
			if err := h.Handle(ctx, r.Clone()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t.a.WithAttrs(as), t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t.a.WithGroup(name), t.b.WithGroup(name)}
}

func (h *harness) ask(pid *actor.PID, msg any) any {
	h.t.Helper()
	res, err := h.system.Root.RequestFuture(pid, msg, 5*time.Second).Result()
	if err != nil {
		h.t.Fatalf("ask %T: %v", msg, err)
	}
	if c, ok := msg.(*api.CreateJobRequest); ok && pid.Equal(h.mgr) {
		// The manager answers a create, then spawns the job's actor in
		// the same message (onCreatesWritten): a request through the
		// manager finds the actor, one sent straight to the job's PID
		// may come first. One more request through the manager is
		// answered after the spawn.
		h.ask(h.mgr, &api.ShowJobRequest{Name: c.GetSpec().GetName()})
	}
	return res
}

// create creates a job from testSpec(name) and returns its id and the PID
// of its actor.
func (h *harness) create(name string) (uint64, *actor.PID) {
	h.t.Helper()
	resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: testSpec(name)}).(*api.JobResponse)
	if resp.Error != nil {
		h.t.Fatal(resp.Error)
	}
	id := resp.Job.Summary.Id
	return id, h.jobPID(id)
}

func (h *harness) jobPID(id uint64) *actor.PID {
	return actor.NewPID(h.system.Address(), h.mgr.Id+"/"+jobActorName(id))
}

func (h *harness) waitState(pid *actor.PID, want api.JobState) *JobRuntime {
	h.t.Helper()
	var in *JobRuntime
	poll(h.t, 10*time.Second, func() (bool, string) {
		in = h.ask(pid, &InspectJob{}).(*JobRuntime)
		return in.State == want, fmt.Sprintf("job state %s, want %s", in.State, want)
	})
	return in
}

// poll calls cond every 10ms until it holds, and fails the test with
// cond's last description if d passes first.
func poll(t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, what := cond()
		if ok {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("timed out: %s", what)
		case <-tick.C:
		}
	}
}

// holds checks cond every 10ms for all of d and fails the test as soon as
// it does not hold: "nothing happens" observed, not slept through.
func holds(t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	window := time.After(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if ok, what := cond(); !ok {
			t.Fatal(what)
		}
		select {
		case <-window:
			return
		case <-tick.C:
		}
	}
}

func oneRow(t *testing.T, schema *table.Schema, pos table.Pos, v int64) persistence.KV {
	vals := []table.Value{{Int: v}}
	return persistence.KV{Key: table.AppendKey(nil, schema.Spec().GetModel(), pos, vals), Value: table.AppendValue(nil, schema, pos, vals)}
}

// TestStaleTaskFencing: a commit with an old generation or with start
// positions that differ from the job's progress is refused and changes
// nothing; a current one is accepted.
func TestStaleTaskFencing(t *testing.T) {
	h := newHarness(t, vfs.NewMem())
	id, pid := h.create("fence")
	in := h.waitState(pid, api.JobState_RUNNING)
	if in.Progress[0] != 0 || in.Progress[1] != 0 {
		t.Fatalf("initial progress %v", in.Progress)
	}
	schema, _ := table.NewSchema(testSpec("fence").Table)
	row := func(p int32, off int64) persistence.KV {
		return oneRow(t, schema, table.Pos{JobID: id, Partition: p, Offset: off}, off)
	}

	cases := []struct {
		name string
		c    *commitBatch
	}{
		{"old generation", &commitBatch{generation: in.Generation - 1, ranges: []persistence.Range{{Partition: 0, From: 0, To: 1}}, rows: []persistence.KV{row(0, 0)}, loaded: 1}},
		{"future start", &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 5, To: 6}}, rows: []persistence.KV{row(0, 5)}, loaded: 1}},
		{"unknown partition", &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 7, From: 0, To: 1}}, rows: []persistence.KV{row(7, 0)}, loaded: 1}},
		{"backwards range", &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 0, To: -1}}, loaded: 0}},
	}
	for _, tc := range cases {
		res := h.ask(pid, tc.c).(*commitResult)
		if !errors.Is(res.err, ErrStaleCommit) {
			t.Fatalf("%s: got %v, want ErrStaleCommit", tc.name, res.err)
		}
	}
	assertUnchanged := func(wantRows int64, wantProgress map[int32]int64) {
		t.Helper()
		n, err := h.store.CountRows("t_fence")
		if err != nil || n != wantRows {
			t.Fatalf("rows = %d, %v; want %d", n, err, wantRows)
		}
		st, err := h.store.LoadJob(id)
		if err != nil {
			t.Fatal(err)
		}
		for p, o := range wantProgress {
			if st.Progress[p] != o {
				t.Fatalf("progress[%d] = %d, want %d", p, st.Progress[p], o)
			}
		}
		if st.Stats.LoadedRows != wantRows {
			t.Fatalf("loaded_rows = %d, want %d", st.Stats.LoadedRows, wantRows)
		}
	}
	assertUnchanged(0, map[int32]int64{0: 0, 1: 0})

	// The current generation at the stored position commits.
	good := &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 0, To: 2}}, rows: []persistence.KV{row(0, 0), row(0, 1)}, loaded: 2}
	if res := h.ask(pid, good).(*commitResult); res.err != nil {
		t.Fatalf("current commit refused: %v", res.err)
	}
	assertUnchanged(2, map[int32]int64{0: 2, 1: 0})
	// The same batch again is now stale: progress never regresses.
	if res := h.ask(pid, good).(*commitResult); !errors.Is(res.err, ErrStaleCommit) {
		t.Fatalf("replayed commit: %v", res.err)
	}
	assertUnchanged(2, map[int32]int64{0: 2, 1: 0})

	// After a pause and resume the old generation is refused too.
	h.ask(h.mgr, &api.PauseJobRequest{Name: "fence"})
	h.ask(h.mgr, &api.ResumeJobRequest{Name: "fence"})
	in2 := h.waitState(pid, api.JobState_RUNNING)
	if in2.Generation == in.Generation {
		t.Fatal("generation did not change across pause/resume")
	}
	stale := &commitBatch{generation: in.Generation, ranges: []persistence.Range{{Partition: 0, From: 2, To: 3}}, rows: []persistence.KV{row(0, 2)}, loaded: 1}
	if res := h.ask(pid, stale).(*commitResult); !errors.Is(res.err, ErrStaleCommit) {
		t.Fatalf("pre-pause generation: %v", res.err)
	}
	assertUnchanged(2, map[int32]int64{0: 2, 1: 0})
}
