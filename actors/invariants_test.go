package actors_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/node"
)

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("LOADNODE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// kafka starts an in-process kfake broker with topic and n records
// {"id":i,"note":"..."} produced to it.
func kafka(t *testing.T, topic string, partitions int32, n int) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); c.Close() })
	produce(t, cl, topic, 0, n, func(i int) string { return fmt.Sprintf(`{"id":%d,"note":"n%d"}`, i, i) })
	return c, cl
}

func produce(t *testing.T, cl *kgo.Client, topic string, from, n int, value func(int) string) {
	t.Helper()
	if n == 0 {
		return
	}
	recs := make([]*kgo.Record, 0, n)
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(value(i))})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func spec(name, tbl, topic string, brokers []string) *api.JobSpec {
	s := &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: tbl, Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
		}},
		Format: "json", DesiredConcurrentNumber: 2,
		MaxBatchIntervalMs: 100, MaxBatchRows: 1000, MaxBatchSize: 1 << 20,
		Kafka: &api.KafkaSpec{Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING"},
	}
	config.ApplyDefaults(s)
	return s
}

type testNode struct {
	*node.Node
	c      *client.Client
	fatals chan error
}

func startNode(t *testing.T, fs vfs.FS, dir string, hooks actors.Hooks) *testNode {
	t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir = dir
	cfg.Listen = "127.0.0.1:0"
	cfg.TopologyInterval = 200 * time.Millisecond
	cfg.WatermarkInterval = 100 * time.Millisecond
	fatals := make(chan error, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: testLogger(), FS: fs, Hooks: hooks,
		OnStoreFatal: func(err error) { fatals <- err }})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx, n.Addr())
	if err != nil {
		n.Close()
		t.Fatal(err)
	}
	tn := &testNode{Node: n, c: c, fatals: fatals}
	t.Cleanup(tn.stop)
	return tn
}

func (n *testNode) stop() {
	if n.c != nil {
		n.c.Close()
		n.c = nil
		n.Node.Close()
	}
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.After(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, last := cond()
		if ok {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("timed out waiting for %s; last: %s", what, last)
		case <-tick.C:
		}
	}
}

func (n *testNode) show(t *testing.T, name string) *api.JobInfo {
	t.Helper()
	info, err := n.c.ShowJob(ctx10(t), name)
	if err != nil {
		t.Fatalf("show %s: %v", name, err)
	}
	return info
}

func (n *testNode) waitLoaded(t *testing.T, name string, rows int64) *api.JobInfo {
	t.Helper()
	var info *api.JobInfo
	waitFor(t, 30*time.Second, fmt.Sprintf("%s loads %d rows", name, rows), func() (bool, string) {
		info = n.show(t, name)
		return info.Stats.GetLoadedRows() >= rows && info.TotalLag == 0, fmt.Sprintf("%s %s %q loaded=%d lag=%d", info.Summary.State, info.Summary.Reason, info.Summary.ReasonMessage, info.Stats.GetLoadedRows(), info.TotalLag)
	})
	return info
}

func (n *testNode) waitState(t *testing.T, name string, want api.JobState) *api.JobInfo {
	t.Helper()
	var info *api.JobInfo
	waitFor(t, 30*time.Second, fmt.Sprintf("%s in %s", name, want), func() (bool, string) {
		info = n.show(t, name)
		return info.Summary.State == want, fmt.Sprintf("%s %s %q", info.Summary.State, info.Summary.Reason, info.Summary.ReasonMessage)
	})
	return info
}

func code(err error) api.ErrorCode {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// TestDurableBeforeVisible: when the create snapshot cannot be made durable
// the client gets the error, no job actor exists, the job is not listed, and
// a restart (crash clone of the disk) shows nothing.
func TestDurableBeforeVisible(t *testing.T) {
	_, cl := kafka(t, "dbv", 1, 10)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	mem := vfs.NewCrashableMem()
	var armed sync.Mutex
	fail := false
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		armed.Lock()
		defer armed.Unlock()
		if fail && strings.HasSuffix(op.Path, ".log") && (op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileSync || op.Kind == errorfs.OpFileSyncData) {
			return errorfs.ErrInjected
		}
		return nil
	})
	n := startNode(t, errorfs.Wrap(mem, inj), "db", actors.Hooks{})

	armed.Lock()
	fail = true
	armed.Unlock()
	_, err := n.c.CreateJob(ctx10(t), spec("doomed", "doomed_rows", "dbv", brokers))
	if code(err) != api.ErrorCode_STORE_ERROR {
		t.Fatalf("create with a failing WAL: err = %v, want STORE_ERROR", err)
	}
	select {
	case <-n.fatals:
	default:
		t.Fatal("the store did not report the fatal error")
	}
	// A fresh node numbers its jobs from 1: the failed create was job 1.
	if _, ok := n.System().ProcessRegistry.GetLocal(actors.JobActorID(1)); ok {
		t.Fatal("a job actor exists for a job whose create failed")
	}
	jobs, err := n.c.ListJobs(ctx10(t))
	if err != nil || len(jobs) != 0 {
		t.Fatalf("list after failed create = %v, %v; want none", jobs, err)
	}
	if _, err := n.c.ShowJob(ctx10(t), "doomed"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("show after failed create: %v, want NOT_FOUND", err)
	}
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	n.stop()

	n2 := startNode(t, clone, "db", actors.Hooks{})
	jobs, err = n2.c.ListJobs(ctx10(t))
	if err != nil || len(jobs) != 0 {
		t.Fatalf("list after restart = %v, %v; want none", jobs, err)
	}
	// Nothing half-written remains: the name and the id are free.
	created, err := n2.c.CreateJob(ctx10(t), spec("doomed", "doomed_rows", "dbv", brokers))
	if err != nil {
		t.Fatalf("create after restart: %v", err)
	}
	if id := created.GetSummary().GetId(); id != 1 {
		t.Fatalf("created after restart as job %d, want 1 (the failed create's id)", id)
	}
	// The premise of the look-up above: a created job 1's actor is found
	// by it. (A look-up by a name nothing has would always pass.)
	if _, ok := n2.System().ProcessRegistry.GetLocal(actors.JobActorID(1)); !ok {
		t.Fatalf("created job 1 has no actor at %q", actors.JobActorID(1))
	}
	n2.waitLoaded(t, "doomed", 10)
}

// TestCreateWindowCrash is Doris #67681: the node crashes after the create
// snapshot is synced and before the job actor is spawned. Replay yields the
// job in NEED_SCHEDULE (never RUNNING), and it then loads.
func TestCreateWindowCrash(t *testing.T) {
	_, cl := kafka(t, "win", 2, 500)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	mem := vfs.NewCrashableMem()
	type window struct {
		id    uint64
		clone *vfs.MemFS
	}
	reached := make(chan window, 1)
	release := make(chan struct{})
	hooks := actors.Hooks{AfterCreateSynced: func(id uint64) {
		reached <- window{id, mem.CrashClone(vfs.CrashCloneCfg{})}
		<-release
	}}
	n := startNode(t, mem, "db", hooks)
	var once sync.Once
	endWindow := func() { once.Do(func() { close(release) }) }
	t.Cleanup(endWindow) // a failed check inside the window must not hold the node's stop
	type answer struct {
		info *api.JobInfo
		err  error
	}
	created := make(chan answer, 1)
	go func() {
		info, err := n.c.CreateJob(context.Background(), spec("window", "window_rows", "win", brokers))
		created <- answer{info, err}
	}()
	var w window
	select {
	case w = <-reached:
	case <-time.After(10 * time.Second):
		t.Fatal("create never reached the window")
	}
	if _, ok := n.System().ProcessRegistry.GetLocal(actors.JobActorID(w.id)); ok {
		t.Fatal("job actor exists inside the window")
	}
	endWindow()
	// The premise of the look-up above: once the window is over, the
	// job's actor is found by it. (A look-up by a name nothing has would
	// always pass.)
	select {
	case a := <-created:
		if a.err != nil || a.info.GetSummary().GetId() != w.id {
			t.Fatalf("create: %v, %v; want job %d", a.info.GetSummary(), a.err, w.id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("create not answered after the window")
	}
	if _, ok := n.System().ProcessRegistry.GetLocal(actors.JobActorID(w.id)); !ok {
		t.Fatalf("created job %d has no actor at %q", w.id, actors.JobActorID(w.id))
	}
	clone := w.clone
	n.stop()

	n2 := startNode(t, clone, "db", actors.Hooks{})
	info := n2.show(t, "window")
	h := info.History
	if len(h) == 0 || h[0].To != api.JobState_NEED_SCHEDULE {
		t.Fatalf("replayed history %v; want NEED_SCHEDULE first", h)
	}
	for _, tr := range h {
		if tr.Reason == api.Reason_RECOVERED {
			t.Fatalf("a job that never ran was restored from RUNNING: %v", h)
		}
	}
	n2.waitLoaded(t, "window", 500)
	if c, _ := n2.c.Count(ctx10(t), "window_rows"); c != 500 {
		t.Fatalf("count = %d, want 500", c)
	}
}

// TestReplayNeverRunning crashes a loading node (crash clone while the job
// is RUNNING) twice; each replay turns the stored RUNNING into
// NEED_SCHEDULE with reason RECOVERED, and replaying the same disk twice
// gives the same state.
func TestReplayNeverRunning(t *testing.T) {
	_, cl := kafka(t, "replay", 2, 2000)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	mem := vfs.NewCrashableMem()
	n := startNode(t, mem, "db", actors.Hooks{})
	if _, err := n.c.CreateJob(ctx10(t), spec("replay", "replay_rows", "replay", brokers)); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "replay", 2000)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	n.stop()

	// Replay, then replay the replayed disk: the same state. (Two replays
	// of clones of one disk would not show a replay that changes what it
	// replays.)
	var states [2]string
	disk := clone
	for i := range 2 {
		disk = disk.CrashClone(vfs.CrashCloneCfg{})
		var seen []*api.Transition
		var mu sync.Mutex
		hooks := actors.Hooks{AfterTransition: func(_ uint64, tr *api.Transition) {
			mu.Lock()
			seen = append(seen, tr)
			mu.Unlock()
		}}
		n := startNode(t, disk, "db", hooks)
		info := n.waitState(t, "replay", api.JobState_RUNNING)
		// RUNNING has live tasks, or is idle with nothing to read (its
		// tasks let go once the watermarks show no lag).
		if info.RunningTasks == 0 && info.TotalLag != 0 {
			t.Fatalf("RUNNING without tasks, lag %d", info.TotalLag)
		}
		mu.Lock()
		if len(seen) < 2 || seen[0].From != api.JobState_RUNNING || seen[0].To != api.JobState_NEED_SCHEDULE || seen[0].Reason != api.Reason_RECOVERED {
			t.Fatalf("replay %d transitions %v: want RUNNING->NEED_SCHEDULE (RECOVERED) first", i, seen)
		}
		mu.Unlock()
		// What was replayed: committed offsets and rows (a partition's
		// high watermark may or may not be fetched yet at RUNNING).
		committed := map[int32]int64{}
		for _, p := range info.Partitions {
			committed[p.GetPartition()] = p.GetCommittedOffset()
		}
		states[i] = fmt.Sprintf("committed=%v loaded=%d", committed, info.Stats.LoadedRows)
		n.stop()
	}
	if states[0] != states[1] {
		t.Fatalf("replays differ:\n%s\n%s", states[0], states[1])
	}
}

// TestPauseResumeStopSurviveRestart: user transitions and their reasons are
// durable; a paused job stays paused and a stopped one stopped after a
// restart, and a resumed job loads again.
func TestPauseResumeStopSurviveRestart(t *testing.T) {
	_, cl := kafka(t, "prs", 2, 100)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	dir := t.TempDir()
	n := startNode(t, nil, dir, actors.Hooks{})
	for _, name := range []string{"a", "b", "c"} {
		if _, err := n.c.CreateJob(ctx10(t), spec(name, "prs_"+name, "prs", brokers)); err != nil {
			t.Fatal(err)
		}
		n.waitLoaded(t, name, 100)
	}
	if _, err := n.c.PauseJob(ctx10(t), "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.StopJob(ctx10(t), "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.PauseJob(ctx10(t), "a"); code(err) != api.ErrorCode_FAILED_PRECONDITION {
		t.Fatalf("pause of a paused job: %v", err)
	}
	if _, err := n.c.ResumeJob(ctx10(t), "b"); code(err) != api.ErrorCode_FAILED_PRECONDITION {
		t.Fatalf("resume of a stopped job: %v", err)
	}
	n.stop()
	produce(t, cl, "prs", 100, 50, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })

	n = startNode(t, nil, dir, actors.Hooks{})
	a := n.show(t, "a")
	if a.Summary.State != api.JobState_PAUSED || a.Summary.Reason != api.Reason_USER_PAUSE {
		t.Fatalf("a after restart: %s %s", a.Summary.State, a.Summary.Reason)
	}
	b := n.show(t, "b")
	if b.Summary.State != api.JobState_STOPPED || b.Summary.Reason != api.Reason_USER_STOP {
		t.Fatalf("b after restart: %s %s", b.Summary.State, b.Summary.Reason)
	}
	n.waitLoaded(t, "c", 150)
	if got := n.show(t, "a").Stats.LoadedRows; got != 100 {
		t.Fatalf("paused job loaded %d rows after restart, want 100", got)
	}
	if _, err := n.c.ResumeJob(ctx10(t), "a"); err != nil {
		t.Fatal(err)
	}
	info := n.waitLoaded(t, "a", 150)
	var reasons []api.Reason
	for _, tr := range info.History {
		reasons = append(reasons, tr.Reason)
	}
	want := []api.Reason{api.Reason_CREATED, api.Reason_SCHEDULED, api.Reason_USER_PAUSE, api.Reason_USER_RESUME, api.Reason_SCHEDULED}
	if fmt.Sprint(reasons) != fmt.Sprint(want) {
		t.Fatalf("history of a = %v, want %v", reasons, want)
	}
	if got := n.show(t, "b").Stats.LoadedRows; got != 100 {
		t.Fatalf("stopped job loaded %d rows, want 100", got)
	}
}

// TestBadInput: every kind of bad input gets its clear answer and leaves
// other jobs untouched.
func TestBadInput(t *testing.T) {
	_, cl := kafka(t, "good", 2, 300)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	if _, err := n.c.CreateJob(ctx10(t), spec("good", "good_rows", "good", brokers)); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "good", 300)

	// Invalid specs name the field; nothing is persisted.
	bad := spec("bad", "bad_rows", "good", brokers)
	bad.Kafka.Topic = ""
	if _, err := n.c.CreateJob(ctx10(t), bad); code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "kafka.topic") {
		t.Fatalf("empty topic: %v", err)
	}
	bad = spec("bad", "bad_rows", "good", brokers)
	bad.Table.Columns[1].Type = api.ColumnType_COLUMN_TYPE_UNSPECIFIED
	if _, err := n.c.CreateJob(ctx10(t), bad); code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "columns") {
		t.Fatalf("bad column type: %v", err)
	}
	// A table that exists must match.
	bad = spec("bad", "good_rows", "good", brokers)
	bad.Table.Columns[0].Type = api.ColumnType_STRING
	if _, err := n.c.CreateJob(ctx10(t), bad); code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "table") {
		t.Fatalf("mismatched table: %v", err)
	}
	if _, err := n.c.ShowJob(ctx10(t), "bad"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("a refused spec was persisted: %v", err)
	}
	// Duplicate name.
	if _, err := n.c.CreateJob(ctx10(t), spec("good", "other_rows", "good", brokers)); code(err) != api.ErrorCode_ALREADY_EXISTS {
		t.Fatalf("duplicate: %v", err)
	}
	// Unknown job.
	for _, call := range []func() error{
		func() error { _, err := n.c.ShowJob(ctx10(t), "nope"); return err },
		func() error { _, err := n.c.PauseJob(ctx10(t), "nope"); return err },
		func() error { _, err := n.c.ResumeJob(ctx10(t), "nope"); return err },
		func() error { _, err := n.c.StopJob(ctx10(t), "nope"); return err },
	} {
		if err := call(); code(err) != api.ErrorCode_NOT_FOUND {
			t.Fatalf("unknown job: %v", err)
		}
	}
	if _, err := n.c.Count(ctx10(t), "no_such_table"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("unknown table: %v", err)
	}

	// Malformed records below the budget: error rows, the job goes on.
	_, mcl := kafka(t, "messy", 1, 0)
	mbrokers := mcl.OptValue(kgo.SeedBrokers).([]string)
	produce(t, mcl, "messy", 0, 20, func(i int) string {
		if i%10 == 3 {
			return `{"id": "not a number"}`
		}
		return fmt.Sprintf(`{"id":%d}`, i)
	})
	ms := spec("messy", "messy_rows", "messy", mbrokers)
	ms.MaxErrorNumber = 3
	if _, err := n.c.CreateJob(ctx10(t), ms); err != nil {
		t.Fatal(err)
	}
	info := n.waitLoaded(t, "messy", 18)
	if info.Stats.ErrorRows != 2 || len(info.ErrorRows) != 2 || info.Summary.State != api.JobState_RUNNING {
		t.Fatalf("below budget: state %s, error rows %d (%d shown)", info.Summary.State, info.Stats.ErrorRows, len(info.ErrorRows))
	}
	er := info.ErrorRows[0]
	if er.Offset != 3 || string(er.Raw) != `{"id": "not a number"}` || !strings.Contains(er.Reason, "id") {
		t.Fatalf("error row = %+v", er)
	}
	// Above the budget: paused with the reason, never auto-resumed.
	produce(t, mcl, "messy", 20, 5, func(int) string { return "garbage" })
	info = n.waitState(t, "messy", api.JobState_PAUSED)
	if info.Summary.Reason != api.Reason_ERROR_ROWS_EXCEEDED {
		t.Fatalf("above budget: reason %s", info.Summary.Reason)
	}
	if got := n.show(t, "good"); got.Summary.State != api.JobState_RUNNING || got.Stats.LoadedRows != 300 || got.Stats.ErrorRows != 0 {
		t.Fatalf("the good job was disturbed: %s loaded=%d errors=%d", got.Summary.State, got.Stats.LoadedRows, got.Stats.ErrorRows)
	}
	produce(t, cl, "good", 300, 10, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	n.waitLoaded(t, "good", 310)
}

// TestConcurrentCreates: concurrent creates through a node each get their
// own answer: distinct names all succeed on one shared new table, and of
// several creates of one name exactly one does. That they are written
// together (fewer CreateJobs calls than creates) is counted by
// TestCreatesWrittenTogether, which can wrap the metastore.
func TestConcurrentCreates(t *testing.T) {
	_, cl := kafka(t, "many", 1, 0)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	var wg sync.WaitGroup
	errs := make([]error, 40)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("job%02d", i)
			if i >= 30 {
				name = "same" // ten creates of one name
			}
			_, errs[i] = n.c.CreateJob(ctx10(t), spec(name, "shared", "many", brokers))
		}()
	}
	wg.Wait()
	same := 0
	for i, err := range errs {
		switch {
		case i < 30 && err != nil:
			t.Fatalf("create job%02d: %v", i, err)
		case i >= 30 && err == nil:
			same++
		case i >= 30 && code(err) != api.ErrorCode_ALREADY_EXISTS:
			t.Fatalf("duplicate create: %v, want ALREADY_EXISTS", err)
		}
	}
	if same != 1 {
		t.Fatalf("%d creates of one name succeeded, want 1", same)
	}
	jobs, err := n.c.ListJobs(ctx10(t))
	if err != nil || len(jobs) != 31 {
		t.Fatalf("list = %d jobs, %v; want 31", len(jobs), err)
	}
}

// TestExecStatements: Doris statements map onto the same operations as the
// YAML spec; unsupported clauses are refused by name and change nothing.
func TestExecStatements(t *testing.T) {
	_, cl := kafka(t, "sqltopic", 2, 200)
	broker := cl.OptValue(kgo.SeedBrokers).([]string)[0]
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	exec := func(stmt string) (*api.ExecResponse, error) { return dorisexec.Exec(ctx10(t), n.c, stmt) }

	// A database qualifier names a database of the node config (which
	// names none here): refused by field, nothing created.
	if _, err := exec("CREATE TABLE example_db.orders (id BIGINT, note VARCHAR(64))"); code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "table.database") {
		t.Fatalf("CREATE TABLE in a database the node does not have: %v, want INVALID_ARGUMENT naming table.database", err)
	}
	if _, err := exec("CREATE TABLE orders (id BIGINT, note VARCHAR(64)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 4 PROPERTIES (\"replication_num\" = \"1\");"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec("CREATE TABLE orders (id BIGINT, note VARCHAR(64))"); code(err) != api.ErrorCode_ALREADY_EXISTS {
		t.Fatalf("second CREATE TABLE: %v", err)
	}
	if _, err := exec("CREATE TABLE IF NOT EXISTS orders (id BIGINT, note VARCHAR(64))"); err != nil {
		t.Fatalf("IF NOT EXISTS: %v", err)
	}
	// A clause the table cannot take (ORDER BY: a sequence column, on a
	// DUPLICATE table) is refused by name; nothing is created.
	_, err := exec(`CREATE ROUTINE LOAD bad ON orders ORDER BY id
		PROPERTIES ("format" = "json") FROM KAFKA ("kafka_broker_list" = "` + broker + `", "kafka_topic" = "sqltopic")`)
	if code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "ORDER BY") {
		t.Fatalf("ORDER BY clause: %v", err)
	}
	if _, err := n.c.ShowJob(ctx10(t), "bad"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("a refused statement created a job: %v", err)
	}
	res, err := exec(`CREATE ROUTINE LOAD orders_load ON orders
		COLUMNS(id, note)
		PROPERTIES ("desired_concurrent_number" = "2", "max_batch_interval" = "1", "format" = "json",
		            "jsonpaths" = "[\"$.id\",\"$.note\"]")
		FROM KAFKA ("kafka_broker_list" = "` + broker + `", "kafka_topic" = "sqltopic",
		            "property.kafka_default_offsets" = "OFFSET_BEGINNING")`)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetJob().GetSummary().GetName() != "orders_load" {
		t.Fatalf("create answer: %v", res)
	}
	n.waitLoaded(t, "orders_load", 200)
	if res, err := exec("PAUSE ROUTINE LOAD FOR example_db.orders_load"); err != nil || res.GetJob().GetSummary().GetState() != api.JobState_PAUSED {
		t.Fatalf("PAUSE: %v, %v", res, err)
	}
	res, err = exec("SHOW ROUTINE LOAD")
	if err != nil || len(res.GetJobs()) != 1 || res.GetJobs()[0].GetReason() != api.Reason_USER_PAUSE {
		t.Fatalf("SHOW: %v, %v", res, err)
	}
	if res, err := exec("SHOW ROUTINE LOAD FOR orders_load"); err != nil || res.GetJob().GetStats().GetLoadedRows() != 200 {
		t.Fatalf("SHOW FOR: %v, %v", res, err)
	}
	// While PAUSED: ALTER with new offsets resets progress (journaled).
	if _, err := exec(`ALTER ROUTINE LOAD FOR orders_load PROPERTIES ("max_batch_rows" = "5000")
		FROM KAFKA ("kafka_partitions" = "0", "kafka_offsets" = "OFFSET_BEGINNING")`); err != nil {
		t.Fatalf("ALTER: %v", err)
	}
	info := n.show(t, "orders_load")
	if info.Spec.MaxBatchRows != 5000 || info.History[len(info.History)-1].Reason != api.Reason_USER_ALTER {
		t.Fatalf("after ALTER: max_batch_rows %d, last %v", info.Spec.MaxBatchRows, info.History[len(info.History)-1])
	}
	if _, err := exec("RESUME ROUTINE LOAD FOR orders_load"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec("STOP ROUTINE LOAD FOR orders_load"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(`ALTER ROUTINE LOAD FOR orders_load PROPERTIES ("max_batch_rows" = "5000")`); code(err) != api.ErrorCode_FAILED_PRECONDITION {
		t.Fatalf("ALTER of a stopped job: %v", err)
	}
	if _, err := exec(`CREATE ROUTINE LOAD other ON missing_table FROM KAFKA ("kafka_broker_list" = "` + broker + `", "kafka_topic" = "sqltopic")`); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("load into a missing table: %v", err)
	}
}

// TestDeleteJob: only final jobs can be deleted; the table stays and the
// name is free again.
func TestDeleteJob(t *testing.T) {
	_, cl := kafka(t, "del", 1, 50)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	if _, err := n.c.CreateJob(ctx10(t), spec("gone", "del_rows", "del", brokers)); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "gone", 50)
	if _, err := n.c.DeleteJob(ctx10(t), "gone"); code(err) != api.ErrorCode_FAILED_PRECONDITION {
		t.Fatalf("delete of a running job: %v", err)
	}
	if _, err := n.c.StopJob(ctx10(t), "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.DeleteJob(ctx10(t), "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.ShowJob(ctx10(t), "gone"); code(err) != api.ErrorCode_NOT_FOUND {
		t.Fatalf("show after delete: %v", err)
	}
	if c, err := n.c.Count(ctx10(t), "del_rows"); err != nil || c != 50 {
		t.Fatalf("table after delete: %d, %v", c, err)
	}
	if _, err := n.c.CreateJob(ctx10(t), spec("gone", "del_rows", "del", brokers)); err != nil {
		t.Fatalf("the name is not free after delete: %v", err)
	}
}

// TestAlterJob: limits change on a running job; offsets move only while
// PAUSED, journaled with old and new positions, and the reset is the only
// way progress goes backwards — the records are then loaded again.
func TestAlterJob(t *testing.T) {
	_, cl := kafka(t, "alt", 1, 100)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	sp := spec("alt", "alt_rows", "alt", brokers)
	if _, err := n.c.CreateJob(ctx10(t), sp); err != nil {
		t.Fatal(err)
	}
	n.waitLoaded(t, "alt", 100)

	next := proto.Clone(sp).(*api.JobSpec)
	next.MaxBatchRows = 7
	next.MaxErrorNumber = 3
	if _, err := n.c.AlterJob(ctx10(t), "alt", next, nil); err != nil {
		t.Fatal(err)
	}
	bad := proto.Clone(sp).(*api.JobSpec)
	bad.Kafka.Topic = "other"
	if _, err := n.c.AlterJob(ctx10(t), "alt", bad, nil); code(err) != api.ErrorCode_FAILED_PRECONDITION || !strings.Contains(err.Error(), "RUNNING") {
		t.Fatalf("alter of a RUNNING job's topic: %v, want FAILED_PRECONDITION naming RUNNING", err)
	}
	if _, err := n.c.AlterJob(ctx10(t), "alt", nil, map[int32]string{0: "OFFSET_BEGINNING"}); code(err) != api.ErrorCode_FAILED_PRECONDITION {
		t.Fatalf("offset reset while RUNNING: %v", err)
	}
	produce(t, cl, "alt", 100, 20, func(i int) string { return fmt.Sprintf(`{"id":%d}`, i) })
	info := n.waitLoaded(t, "alt", 120)
	if info.Spec.MaxBatchRows != 7 || info.Stats.CommittedBatches < 4 {
		t.Fatalf("new limits not in effect: max_batch_rows %d, batches %d", info.Spec.MaxBatchRows, info.Stats.CommittedBatches)
	}
	if _, err := n.c.PauseJob(ctx10(t), "alt"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.c.AlterJob(ctx10(t), "alt", nil, map[int32]string{0: "90"}); err != nil {
		t.Fatal(err)
	}
	info = n.show(t, "alt")
	last := info.History[len(info.History)-1]
	if last.Reason != api.Reason_USER_ALTER || !strings.Contains(last.Message, "partition 0 offset 120->90") {
		t.Fatalf("reset not journaled with old and new positions: %v", last)
	}
	if info.Partitions[0].CommittedOffset != 90 {
		t.Fatalf("progress after reset = %d, want 90", info.Partitions[0].CommittedOffset)
	}
	if _, err := n.c.ResumeJob(ctx10(t), "alt"); err != nil {
		t.Fatal(err)
	}
	info = n.waitLoaded(t, "alt", 150) // 30 records loaded again, as asked
	if info.Partitions[0].CommittedOffset != 120 {
		t.Fatalf("progress = %d, want 120", info.Partitions[0].CommittedOffset)
	}
}

// TestExecWhere: a Doris COLUMNS mapping with a temporary and an
// expression, and a WHERE filter; filtered rows are unselected rows, not
// error rows, and the loaded rows are the ones the filter keeps.
func TestExecWhere(t *testing.T) {
	_, cl := kafka(t, "wheretopic", 1, 200)
	broker := cl.OptValue(kgo.SeedBrokers).([]string)[0]
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	exec := func(stmt string) (*api.ExecResponse, error) { return dorisexec.Exec(ctx10(t), n.c, stmt) }
	if _, err := exec("CREATE TABLE evens (id INT NOT NULL, note VARCHAR(8), flag BOOLEAN DEFAULT 'true')"); err != nil {
		t.Fatal(err)
	}
	if _, err := exec(`CREATE ROUTINE LOAD evens_load ON evens
		COLUMNS(id, n, note = upper(n)),
		WHERE id % 2 = 0
		PROPERTIES ("format" = "json", "jsonpaths" = "[\"$.id\",\"$.note\"]", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "` + broker + `", "kafka_topic" = "wheretopic",
		            "property.kafka_default_offsets" = "OFFSET_BEGINNING")`); err != nil {
		t.Fatal(err)
	}
	info := n.waitLoaded(t, "evens_load", 100)
	if st := info.GetStats(); st.GetLoadedRows() != 100 || st.GetUnselectedRows() != 100 || st.GetErrorRows() != 0 {
		t.Fatalf("stats %v: want 100 loaded, 100 unselected, no error rows", st)
	}
	_, rows, err := n.c.Scan(ctx10(t), "evens", 0)
	if err != nil || len(rows) != 100 {
		t.Fatalf("scan: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		id := r.GetValues()[0].GetInt64()
		if id%2 != 0 || r.GetValues()[1].GetString_() != fmt.Sprintf("N%d", id) || !r.GetValues()[2].GetBool() {
			t.Fatalf("row %v", r)
		}
	}
}
