package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/table"
)

// longRun reports whether LOADNODE_CHAOS_LONG asks for the long run.
func longRun() bool {
	v := os.Getenv("LOADNODE_CHAOS_LONG")
	return v != "" && v != "0"
}

// seedFor returns LOADNODE_CHAOS_SEED, or a seed from the clock; it is
// logged so that a failing schedule can be replayed.
func seedFor(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("LOADNODE_CHAOS_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("LOADNODE_CHAOS_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with LOADNODE_CHAOS_SEED=%d)", seed, seed)
	return seed
}

// testLogger logs at INFO into ring, and to stderr too when
// LOADNODE_TEST_LOG is set.
func testLogger(ring *testnode.LogRing) *slog.Logger {
	var w io.Writer = ring
	if os.Getenv("LOADNODE_TEST_LOG") != "" {
		w = io.MultiWriter(ring, os.Stderr)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// chaosSpec is the spec of a chaos job: table columns w and seq (the
// record's pad is not loaded), from the beginning of topic.
func chaosSpec(name, tbl, topic string, brokers []string, concurrency int32, batchRows int64) *api.JobSpec {
	s := &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: tbl, Columns: []*api.Column{
			{Name: "w", Type: api.ColumnType_INT64},
			{Name: "seq", Type: api.ColumnType_INT64},
		}},
		Format:                  "json",
		DesiredConcurrentNumber: concurrency,
		MaxBatchIntervalMs:      100,
		MaxBatchRows:            batchRows,
		MaxBatchSize:            4 << 20,
		Kafka:                   &api.KafkaSpec{Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING"},
	}
	config.ApplyDefaults(s)
	return s
}

// waitFor polls cond until it holds or d passes.
func waitFor(d time.Duration, cond func() (bool, string)) (bool, string) {
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, s := cond()
		if ok {
			return true, s
		}
		if s != "" {
			last = s
		}
		if time.Now().After(deadline) {
			return false, last
		}
		<-tick.C
	}
}

// hold keeps the schedule at a point for d (a fault's duration, or the
// pace between faults); it returns false at once if ctx ends first.
func hold(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func ctxFor(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// showAll returns `job show` of every listed job.
func showAll(c *client.Client) (map[string]*api.JobInfo, error) {
	ctx, cancel := ctxFor(10 * time.Second)
	defer cancel()
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]*api.JobInfo{}
	for _, s := range jobs {
		info, err := c.ShowJob(ctx, s.GetName())
		if err != nil {
			return nil, err
		}
		out[s.GetName()] = info
	}
	return out, nil
}

// scanRows reads a whole table through the client.
func scanRows(c *client.Client, tbl string) ([]ledger.Row, error) {
	ctx, cancel := ctxFor(120 * time.Second)
	defer cancel()
	_, rows, err := c.Scan(ctx, tbl, 0)
	if err != nil {
		return nil, err
	}
	out := make([]ledger.Row, len(rows))
	for i, r := range rows {
		out[i] = ledger.RowFromAPI(r)
	}
	return out, nil
}

// awaitDrained waits until every job c shows has its progress at the ends
// endsOf gives it (nil: the job is skipped), and fails t unless that
// happens within `within` of faultsEnd. It returns the time from faultsEnd.
//
// diagnose, if not nil, is called at a timeout and its text logged (an
// in-process node can be asked what the client could not learn).
func awaitDrained(t *testing.T, c *client.Client, faultsEnd time.Time, within time.Duration, endsOf func(*api.JobInfo) map[int32]int64, diagnose func() string) time.Duration {
	t.Helper()
	var calls callLog
	ok, last := waitFor(time.Until(faultsEnd.Add(within)), func() (bool, string) {
		began := time.Now()
		infos, err := showAll(c)
		calls.add(began, err)
		if err != nil {
			return false, err.Error()
		}
		for _, info := range infos {
			ends := endsOf(info)
			if ends == nil {
				continue
			}
			if ok, s := drained(info, ends); !ok {
				return false, s
			}
		}
		return true, ""
	})
	drain := time.Since(faultsEnd)
	if !ok {
		// An in-process node's goroutines are this process's: where they
		// wait tells a hang from a slow drain, and the calls' record tells
		// a node that stopped answering from one that answers slowly.
		t.Logf("drain calls since the faults' end: %s", calls.String(faultsEnd))
		if diagnose != nil {
			t.Logf("at the drain timeout: %s", diagnose())
		}
		t.Logf("goroutines in loadnode and protoactor code at the drain timeout:\n%s", loadnodeGoroutines())
		t.Fatalf("jobs did not drain within %v of the faults' end: %s", within, last)
	}
	return drain
}

// callLog records the drain's calls: how many, how many failed, when the
// last one answered, the slowest, and the first error of each kind.
type callLog struct {
	n, failed   int
	lastOK      time.Time
	slowest     time.Duration
	firstErrors []string
}

func (l *callLog) add(began time.Time, err error) {
	l.n++
	if d := time.Since(began); d > l.slowest {
		l.slowest = d
	}
	if err == nil {
		l.lastOK = time.Now()
		return
	}
	l.failed++
	if len(l.firstErrors) < 5 {
		l.firstErrors = append(l.firstErrors, fmt.Sprintf("%s after %s: %v", began.Format("15:04:05.000"), time.Since(began).Round(time.Millisecond), err))
	}
}

func (l *callLog) String(since time.Time) string {
	lastOK := "never"
	if !l.lastOK.IsZero() {
		lastOK = l.lastOK.Sub(since).Round(time.Millisecond).String() + " after the faults' end"
	}
	return fmt.Sprintf("%d calls, %d failed, last answered %s, slowest %s; first errors: %s",
		l.n, l.failed, lastOK, l.slowest.Round(time.Millisecond), strings.Join(l.firstErrors, "; "))
}

// drained reports whether the job's progress equals ends on every
// partition.
func drained(info *api.JobInfo, ends map[int32]int64) (bool, string) {
	got := map[int32]int64{}
	for _, p := range info.GetPartitions() {
		got[p.GetPartition()] = p.GetCommittedOffset()
	}
	for p, end := range ends {
		if got[p] != end {
			return false, fmt.Sprintf("%s: %s (%s %q) progress %v, ends %v", info.GetSummary().GetName(), info.GetSummary().GetState(),
				info.GetSummary().GetReason(), info.GetSummary().GetReasonMessage(), got, ends)
		}
	}
	return true, ""
}

// storeView is a job as a store opened on a crash image holds it.
type storeView struct {
	name  string
	table string
	view  ledger.JobView
	rows  []ledger.Row
	last  *api.Transition
}

// readStore opens the store on fs (a crash image), reads every job's
// progress, statistics and rows, and closes it.
func readStore(fs vfs.FS, dir string) ([]storeView, error) {
	st, err := persistence.Open(persistence.Options{Dir: dir, FS: fs, OnFatal: func(error) {}})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	recs, err := st.JobRecords()
	if err != nil {
		return nil, err
	}
	var out []storeView
	for _, rec := range recs {
		js, err := st.LoadJob(rec.GetId())
		if err != nil {
			return nil, err
		}
		tspec := rec.GetSpec().GetTable()
		if tspec.GetDatabase() != "" {
			// Its rows and progress are in that database, not the image.
			continue
		}
		schema, err := table.NewSchema(tspec)
		if err != nil {
			return nil, err
		}
		if schema.Keyed() {
			// A model table: no row per position; checked at the end
			// against a model of the table (models_test.go).
			continue
		}
		sv := storeView{name: rec.GetName(), table: tspec.GetName(), last: js.Last,
			view: ledger.JobView{Name: rec.GetName(), ID: rec.GetId(), Progress: js.Progress, LoadedRows: js.Stats.GetLoadedRows()}}
		var vals []table.Value
		err = st.ScanRowsAfter(tspec.GetName(), nil, math.MaxInt, func(_, v []byte) error {
			var pos table.Pos
			var err error
			vals, pos, err = table.DecodeValue(schema, v, vals)
			if err != nil {
				return err
			}
			if pos.JobID != rec.GetId() {
				return nil
			}
			r := ledger.Row{Job: pos.JobID, Partition: pos.Partition, Offset: pos.Offset}
			if len(vals) < 2 || vals[0].Null || vals[1].Null {
				r.Bad = true
			} else {
				r.Payload = ledger.Payload{W: vals[0].Int, Seq: vals[1].Int}
			}
			sv.rows = append(sv.rows, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, sv)
	}
	return out, nil
}

// loadnodeGoroutines returns this process's goroutines grouped by stack
// (pprof's debug=1 text), only the groups with a frame in loadnode's or
// protoactor's code (a mailbox or a remote endpoint that waits is
// protoactor's).
func loadnodeGoroutines() string {
	var all bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&all, 1)
	var out strings.Builder
	for _, g := range strings.Split(all.String(), "\n\n") {
		if (strings.Contains(g, "loadnode/loadnode/") || strings.Contains(g, "protoactor-go")) && !strings.Contains(g, "loadnodeGoroutines") {
			out.WriteString(g)
			out.WriteString("\n\n")
		}
	}
	return out.String()
}

// pgStoredProgress reads what PostgreSQL at dsn stores as a job's
// progress, for a regression's log (every owner's rows: a restored or
// restarted node may use another).
func pgStoredProgress(dsn string) func(uint64) string {
	return func(id uint64) string {
		ctx, cancel := ctxFor(5 * time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err.Error()
		}
		defer c.Close(ctx)
		rows, err := c.Query(ctx, `SELECT p.owner, p.partition, p.position, j.fence, j.committed_batches
			FROM loadnode.progress p JOIN loadnode.jobs j ON j.owner = p.owner AND j.job = p.job
			WHERE p.job = $1 ORDER BY 1, 2`, int64(id))
		if err != nil {
			return err.Error()
		}
		var out []string
		for rows.Next() {
			var owner string
			var part int32
			var pos, fence, batches int64
			if err := rows.Scan(&owner, &part, &pos, &fence, &batches); err != nil {
				return err.Error()
			}
			out = append(out, fmt.Sprintf("owner %s partition %d position %d (fence %d, %d batches)", owner, part, pos, fence, batches))
		}
		if err := rows.Err(); err != nil {
			return err.Error()
		}
		if len(out) == 0 {
			return "no rows (not a PostgreSQL job)"
		}
		return strings.Join(out, "; ")
	}
}
