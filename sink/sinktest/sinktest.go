// Package sinktest is the conformance suite of sink.Sink. Run checks,
// through the interface alone, what every implementation must do: commits
// are atomic and durable, stale commits are refused and write nothing, a
// batch replayed is not counted twice, progress moves only for the
// partitions a commit covers and backwards only by ResetStarts.
//
// An implementation's own tests call Run with a Harness that opens it on
// fresh storage (the embedded store: persistence/seams_test.go).
//
// Concurrency: Run runs its subtests one after the other; a few subtests
// call the sink from several goroutines, as the interface allows.
package sinktest

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Harness opens the implementation under test.
type Harness struct {
	// Open returns a sink over new, empty storage, and reopen, which
	// returns the sink as a restart of the process would find it. Where
	// the implementation can simulate power loss (the embedded store on a
	// crashable in-memory filesystem) reopen crashes it: only writes that
	// were acknowledged durable survive. A database server's sink
	// reconnects. reopen may be called repeatedly; each call ends the sink
	// returned before it, which the suite then no longer uses. The harness
	// closes what it opened (t.Cleanup). Required.
	Open func(t *testing.T) (s sink.Sink, reopen func(t *testing.T) sink.Sink)
	// Setup does what the implementation's callers do before a job first
	// loads into table (the embedded store creates the job in its metadata
	// store, which is also its table catalog). The suite calls
	// s.PrepareTable(table) after it. Nil: nothing to do.
	Setup func(t *testing.T, s sink.Sink, job uint64, table *api.TableSpec)
	// MaxErrorRowsKept is the number of error rows per job that the sinks
	// Open returns keep. Required (> 0); keep it small, the suite writes
	// a few more than that.
	MaxErrorRowsKept int
}

// Run runs the conformance suite against h, one subtest per property.
func Run(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("sinktest: Harness.Open is nil")
	}
	if h.MaxErrorRowsKept <= 0 {
		t.Fatalf("sinktest: Harness.MaxErrorRowsKept is %d, want > 0", h.MaxErrorRowsKept)
	}
	for _, c := range []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"DurableAcrossReopen", testDurable},
		{"InitStartsRefusesExisting", testInitStartsRefusesExisting},
		{"CommitRefusesWrongFrom", testRefuseWrongFrom},
		{"CommitRefusesPartitionWithoutProgress", testRefuseNoProgress},
		{"CommitRefusesOlderFence", testRefuseOlderFence},
		{"CommitRefusesMovedStats", testRefuseMovedStats},
		{"ReplayedCommitCountsOnce", testReplay},
		{"ConcurrentSameCommitOneWins", testConcurrentSameCommit},
		{"ProgressConsistentUnderCommits", testProgressConsistent},
		{"ProgressOnlyForCoveredPartitions", testCoveredPartitions},
		{"ResetStartsMovesBackwards", testResetBackwards},
		{"RebaseStartsReplacesProgressAndFences", testRebase},
		{"MultiTableCommitIsAtomic", testMultiTable},
		{"ProgressOfUnknownJob", testUnknownJob},
		{"ErrorRowsBoundedOldestFirst", testErrorRows},
		{"DropJobKeepsRows", testDropJob},
		{"JobsAreIndependent", testJobsIndependent},
		{"RowKeyWrittenTwiceKeepsLast", testOverwrite},
		{"ScanRowsAfterPagesInKeyOrder", testScanPaging},
		{"TruncateKeepsProgress", testTruncate},
		{"DropTable", testDrop},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, reopen := h.Open(t)
			c.run(t, &env{h: h, s: s, reopen: reopen})
		})
	}
	for _, c := range modelChecks {
		t.Run(c.name, func(t *testing.T) {
			s, reopen := h.Open(t)
			c.run(t, &env{h: h, s: s, reopen: reopen})
		})
	}
}

// env is one subtest's sink.
type env struct {
	h      Harness
	s      sink.Sink
	reopen func(t *testing.T) sink.Sink
}

// restart replaces the sink by what a restart finds.
func (e *env) restart(t *testing.T) {
	t.Helper()
	e.s = e.reopen(t)
}

// job is a job set up to load into its table.
type job struct {
	id     uint64
	spec   *api.TableSpec
	schema *table.Schema
}

// newTable returns the suite's table spec: DUPLICATE, two columns.
func newTable(name string) *api.TableSpec {
	return &api.TableSpec{Name: name, Model: api.TableModel_DUPLICATE, Columns: []*api.Column{
		{Name: "n", Type: api.ColumnType_INT64},
		{Name: "s", Type: api.ColumnType_STRING},
	}}
}

// setup prepares job id to load into spec.
func (e *env) setup(t *testing.T, id uint64, spec *api.TableSpec) *job {
	t.Helper()
	schema, err := table.NewSchema(spec)
	if err != nil {
		t.Fatalf("sinktest: table %s: %v", spec.GetName(), err)
	}
	if e.h.Setup != nil {
		e.h.Setup(t, e.s, id, spec)
	}
	if err := e.s.PrepareTable(spec); err != nil {
		t.Fatalf("PrepareTable(%s): %v", spec.GetName(), err)
	}
	return &job{id: id, spec: spec, schema: schema}
}

// row is the row of (job, partition, offset), encoded as the table package
// encodes it; tag varies the value for the same key.
func (j *job) row(p int32, o int64, tag string) sink.KV {
	pos := table.Pos{JobID: j.id, Partition: p, Offset: o}
	vals := []table.Value{{Int: o}, {Str: fmt.Sprintf("%s p%d o%d", tag, p, o)}}
	return sink.KV{
		Key:   table.AppendKey(nil, j.spec.GetModel(), pos, vals),
		Value: table.AppendValue(nil, j.schema, pos, vals),
	}
}

// commit returns a commit of one row per offset of every range, with the
// statistics that follow base: LoadedRows grows by the rows,
// CommittedBatches by one, StatsBase is base's CommittedBatches.
func (j *job) commit(fence uint64, base *api.JobStats, ranges ...sink.Range) *sink.Commit {
	c := &sink.Commit{JobID: j.id, Table: j.spec.GetName(), Fence: fence, Ranges: ranges}
	for _, r := range ranges {
		for o := r.From; o < r.To; o++ {
			c.Rows = append(c.Rows, j.row(r.Partition, o, "v"))
		}
	}
	c.Stats = nextStats(base, int64(len(c.Rows)))
	c.StatsBase = base.GetCommittedBatches()
	return c
}

func nextStats(base *api.JobStats, rows int64) *api.JobStats {
	return &api.JobStats{
		LoadedRows:       base.GetLoadedRows() + rows,
		ErrorRows:        base.GetErrorRows(),
		ReceivedBytes:    base.GetReceivedBytes() + 10*rows,
		CommittedBatches: base.GetCommittedBatches() + 1,
		LastCommitUnixMs: base.GetLastCommitUnixMs() + 1000,
	}
}

func errorRow(p int32, o int64) *api.ErrorRow {
	return &api.ErrorRow{Partition: p, Offset: o, Raw: fmt.Appendf(nil, "bad %d/%d", p, o), Reason: "unparsable", TimeUnixMs: 1700000000000 + o}
}

// mustCommit commits c and returns its statistics (the next base).
func (e *env) mustCommit(t *testing.T, c *sink.Commit) *api.JobStats {
	t.Helper()
	if err := e.s.Commit(c); err != nil {
		t.Fatalf("Commit(job %d, ranges %v, fence %d, base %d): %v", c.JobID, c.Ranges, c.Fence, c.StatsBase, err)
	}
	return c.Stats
}

func (e *env) mustInit(t *testing.T, j *job, positions map[int32]int64, checkpoints map[int32][]byte) {
	t.Helper()
	if err := e.s.InitStarts(j.id, positions, checkpoints); err != nil {
		t.Fatalf("InitStarts(job %d, %v): %v", j.id, positions, err)
	}
}

func (e *env) progress(t *testing.T, id uint64) *sink.Progress {
	t.Helper()
	p, err := e.s.Progress(id)
	if err != nil {
		t.Fatalf("Progress(job %d): %v", id, err)
	}
	if p == nil || p.Positions == nil || p.Checkpoints == nil || p.Stats == nil {
		t.Fatalf("Progress(job %d) = %+v: a nil part", id, p)
	}
	return p
}

// rows scans the whole table, in pages of 7 rows.
func (e *env) rows(t *testing.T, name string) []sink.KV {
	t.Helper()
	var all []sink.KV
	var after []byte
	for {
		page := scanPage(t, e.s, name, after, 7)
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = all[len(all)-1].Key
	}
}

// scanPage returns ScanRowsAfter(name, after, limit), failing t unless the
// keys are ascending, follow after, and are at most limit.
func scanPage(t *testing.T, s sink.Sink, name string, after []byte, limit int) []sink.KV {
	t.Helper()
	var page []sink.KV
	prev := after
	err := s.ScanRowsAfter(name, after, limit, func(k, v []byte) error {
		if prev != nil && bytes.Compare(k, prev) <= 0 {
			return fmt.Errorf("key %x does not follow %x", k, prev)
		}
		prev = bytes.Clone(k)
		page = append(page, sink.KV{Key: prev, Value: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		t.Fatalf("ScanRowsAfter(%s, %x, %d): %v", name, after, limit, err)
	}
	if len(page) > limit {
		t.Fatalf("ScanRowsAfter(%s, %x, %d) gave %d rows", name, after, limit, len(page))
	}
	return page
}

func (e *env) countRows(t *testing.T, name string) int64 {
	t.Helper()
	n, err := e.s.CountRows(name)
	if err != nil {
		t.Fatalf("CountRows(%s): %v", name, err)
	}
	return n
}

func (e *env) errorRows(t *testing.T, id uint64, limit int) []*api.ErrorRow {
	t.Helper()
	rows, err := e.s.ErrorRows(id, limit)
	if err != nil {
		t.Fatalf("ErrorRows(job %d, %d): %v", id, limit, err)
	}
	return rows
}

// state is everything of a job that a commit can change.
type state struct {
	progress *sink.Progress
	rows     []sink.KV
	errs     []*api.ErrorRow
}

func (e *env) state(t *testing.T, j *job) state {
	t.Helper()
	return state{
		progress: e.progress(t, j.id),
		rows:     e.rows(t, j.spec.GetName()),
		errs:     e.errorRows(t, j.id, e.h.MaxErrorRowsKept+10),
	}
}

// assertUnchanged fails t if anything of the job moved since before.
func (e *env) assertUnchanged(t *testing.T, j *job, before state, what string) {
	t.Helper()
	after := e.state(t, j)
	if d := diffProgress(before.progress, after.progress); d != "" {
		t.Errorf("%s changed the progress: %s", what, d)
	}
	if !slices.EqualFunc(before.rows, after.rows, kvEqual) {
		t.Errorf("%s changed the rows: %d rows before, %d after", what, len(before.rows), len(after.rows))
	}
	if n := e.countRows(t, j.spec.GetName()); n != int64(len(before.rows)) {
		t.Errorf("%s: CountRows = %d, want %d", what, n, len(before.rows))
	}
	if !slices.EqualFunc(before.errs, after.errs, func(a, b *api.ErrorRow) bool { return proto.Equal(a, b) }) {
		t.Errorf("%s changed the error rows: %d before, %d after", what, len(before.errs), len(after.errs))
	}
}

func kvEqual(a, b sink.KV) bool { return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) }

// diffProgress describes how b differs from a; "" when equal.
func diffProgress(a, b *sink.Progress) string {
	var d []string
	if !maps.Equal(a.Positions, b.Positions) {
		d = append(d, fmt.Sprintf("positions %v, then %v", a.Positions, b.Positions))
	}
	if !maps.EqualFunc(a.Checkpoints, b.Checkpoints, bytes.Equal) {
		d = append(d, fmt.Sprintf("checkpoints %q, then %q", a.Checkpoints, b.Checkpoints))
	}
	if !proto.Equal(a.Stats, b.Stats) {
		d = append(d, fmt.Sprintf("stats {%v}, then {%v}", a.Stats, b.Stats))
	}
	if a.Fence != b.Fence {
		d = append(d, fmt.Sprintf("fence %d, then %d", a.Fence, b.Fence))
	}
	return strings.Join(d, "; ")
}

func assertPositions(t *testing.T, p *sink.Progress, want map[int32]int64) {
	t.Helper()
	if !maps.Equal(p.Positions, want) {
		t.Errorf("positions = %v, want %v", p.Positions, want)
	}
}

func assertCheckpoints(t *testing.T, p *sink.Progress, want map[int32][]byte) {
	t.Helper()
	if !maps.EqualFunc(p.Checkpoints, want, bytes.Equal) {
		t.Errorf("checkpoints = %q, want %q", p.Checkpoints, want)
	}
}

func assertStats(t *testing.T, p *sink.Progress, want *api.JobStats) {
	t.Helper()
	if !proto.Equal(p.Stats, want) {
		t.Errorf("stats = {%v}, want {%v}", p.Stats, want)
	}
}
