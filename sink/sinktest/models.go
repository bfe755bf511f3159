package sinktest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Table models: UNIQUE and AGGREGATE rows merge into the stored ones in
// source order, in the commit that moves the progress. Each check drives a
// sink with random out-of-order updates and deletes, across restarts and
// with refused replays, and compares the table with a model of the
// expected final table (key -> row) written here, apart from
// table.Schema.Merge.

// modelChecks are Run's subtests of the table models.
var modelChecks = []struct {
	name string
	run  func(t *testing.T, e *env)
}{
	{"UniqueLaterRowReplaces", testUniqueLast},
	{"UniqueSequenceAndDeletes", testUniqueSequence},
	{"UniqueHiddenSequence", testUniqueHiddenSequence},
	{"UniquePartialUpdate", testUniquePartial},
	{"UniqueFlexiblePartialUpdate", testUniqueFlexible},
	{"AggregateNeverAddsTwice", testAggregate},
}

// mrow is one incoming row of a model check: k, seq, v and s in the
// tables' column order.
type mrow struct {
	k, seq  int64
	seqNull bool
	v       int64
	vNull   bool
	s       string
	del     bool
	named   []bool // a flexible partial update's columns (sink.KV.Named)
}

func (r mrow) vals(cols int) []table.Value {
	vals := []table.Value{{Int: r.k}, {Int: r.seq, Null: r.seqNull}, {Int: r.v, Null: r.vNull}, {Str: r.s}}
	return vals[:cols]
}

// modelJob loads rows of one table from two partitions.
type modelJob struct {
	*job
	base *api.JobStats
	next map[int32]int64
	u    *table.Update
	all  []*sink.Commit
}

func (e *env) modelJob(t *testing.T, spec *api.TableSpec) *modelJob {
	t.Helper()
	j := e.setup(t, 1, spec)
	e.mustInit(t, j, map[int32]int64{0: 0, 1: 0}, nil)
	return &modelJob{job: j, next: map[int32]int64{0: 0, 1: 0}}
}

// load commits rows, rows[i] from partition parts[i], as one batch.
func (m *modelJob) load(t *testing.T, e *env, parts []int32, rows []mrow) {
	t.Helper()
	c := &sink.Commit{JobID: m.id, Table: m.spec.GetName(), Fence: 1, Update: m.u}
	from := map[int32]int64{}
	for p, o := range m.next {
		from[p] = o
	}
	for i, r := range rows {
		p := parts[i]
		pos := table.Pos{JobID: m.id, Partition: p, Offset: m.next[p]}
		m.next[p]++
		vals := r.vals(len(m.spec.GetColumns()))
		if m.schema.HiddenSequence() {
			// k, v, s, and the hidden sequence beside them.
			all := r.vals(4)
			vals = []table.Value{all[0], all[2], all[3], all[1]}
		}
		c.Rows = append(c.Rows, sink.KV{Key: table.AppendRowKey(nil, m.schema, pos, vals), Value: table.AppendValue(nil, m.schema, pos, vals), Delete: r.del, Named: r.named})
	}
	for _, p := range []int32{0, 1} {
		c.Ranges = append(c.Ranges, sink.Range{Partition: p, From: from[p], To: m.next[p]})
	}
	c.Stats = nextStats(m.base, int64(len(rows)))
	c.StatsBase = m.base.GetCommittedBatches()
	m.base = e.mustCommit(t, c)
	m.all = append(m.all, c)
}

// table reads the table as key -> rendered row.
func (m *modelJob) table(t *testing.T, e *env) map[int64]string {
	t.Helper()
	got := map[int64]string{}
	err := e.s.ScanRowsAfter(m.spec.GetName(), nil, 1<<20, func(key, value []byte) error {
		vals, _, err := table.DecodeValue(m.schema, value, nil)
		if err != nil {
			return err
		}
		if m.schema.HiddenSequence() {
			vals = []table.Value{vals[0], vals[3], vals[1], vals[2]} // as uniqueSpec's columns
		}
		if _, dup := got[vals[0].Int]; dup {
			return fmt.Errorf("key %d twice", vals[0].Int)
		}
		got[vals[0].Int] = render(vals)
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", m.spec.GetName(), err)
	}
	if n := e.countRows(t, m.spec.GetName()); n != int64(len(got)) {
		t.Errorf("CountRows = %d, the scan has %d keys", n, len(got))
	}
	return got
}

func render(vals []table.Value) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch {
		case v.Null:
			parts[i] = `\N`
		case i == 3:
			parts[i] = v.Str
		default:
			parts[i] = fmt.Sprint(v.Int)
		}
	}
	return strings.Join(parts, "|")
}

// check compares the table with want, then refuses every commit again
// (a replayed batch changes nothing), restarts and compares again.
func (m *modelJob) check(t *testing.T, e *env, want map[int64]string, what string) {
	t.Helper()
	for _, when := range []string{"", " after replays and a restart"} {
		got := m.table(t, e)
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s%s: key %d = %q, want %q", what, when, k, got[k], w)
			}
		}
		for k, g := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s%s: key %d = %q, want no row", what, when, k, g)
			}
		}
		if when != "" || t.Failed() {
			return
		}
		for _, c := range m.all {
			e.refuse(t, m.job, c, "a model commit replayed")
		}
		e.restart(t)
	}
}

func uniqueSpec(name, seq string) *api.TableSpec {
	return &api.TableSpec{Name: name, Model: api.TableModel_UNIQUE, KeyColumns: []string{"k"}, SequenceColumn: seq, Columns: []*api.Column{
		{Name: "k", Type: api.ColumnType_INT64},
		{Name: "seq", Type: api.ColumnType_INT64},
		{Name: "v", Type: api.ColumnType_INT64},
		{Name: "s", Type: api.ColumnType_STRING},
	}}
}

// randomRows returns n rows over keys 0..keys-1 with random sequences
// (some NULL), values, and deletes (with del).
func randomRows(r *rand.Rand, n, keys int, del bool) ([]int32, []mrow) {
	parts := make([]int32, n)
	rows := make([]mrow, n)
	for i := range rows {
		parts[i] = int32(r.IntN(2))
		rows[i] = mrow{k: int64(r.IntN(keys)), seq: int64(r.IntN(20)), seqNull: r.IntN(10) == 0, v: int64(r.IntN(1000)), s: fmt.Sprintf("r%d", i)}
		rows[i].del = del && r.IntN(4) == 0
	}
	return parts, rows
}

// testUniqueLast: without a sequence column a later row (or delete)
// replaces what the key holds, in source order, in a batch and across
// batches.
func testUniqueLast(t *testing.T, e *env) {
	m := e.modelJob(t, uniqueSpec("uniq_last", ""))
	r := rand.New(rand.NewPCG(1, 2))
	want := map[int64]string{}
	for range 5 {
		parts, rows := randomRows(r, 60, 15, true)
		m.load(t, e, parts, rows)
		for _, x := range rows {
			if x.del {
				delete(want, x.k)
			} else {
				want[x.k] = render(x.vals(4))
			}
		}
	}
	m.check(t, e, want, "UNIQUE")
}

// testUniqueSequence: with a sequence column a row replaces the stored one
// only when its sequence is >= (NULL the smallest); a delete honours it
// too and leaves a tombstone, so a late row older than the delete does not
// bring the key back, while a newer one does.
func testUniqueSequence(t *testing.T, e *env) {
	uniqueSequence(t, e, uniqueSpec("uniq_seq", "seq"))
}

// testUniqueHiddenSequence is testUniqueSequence with a hidden sequence
// (Doris function_column.sequence_type): the sequence is no column of the
// table (k, v, s) but a value each row carries beside them, which the
// sink stores and merges by as it does a sequence column.
func testUniqueHiddenSequence(t *testing.T, e *env) {
	uniqueSequence(t, e, &api.TableSpec{Name: "uniq_hidden_seq", Model: api.TableModel_UNIQUE, KeyColumns: []string{"k"},
		HiddenSequenceType: api.ColumnType_INT64, Columns: []*api.Column{
			{Name: "k", Type: api.ColumnType_INT64},
			{Name: "v", Type: api.ColumnType_INT64},
			{Name: "s", Type: api.ColumnType_STRING},
		}})
}

func uniqueSequence(t *testing.T, e *env, spec *api.TableSpec) {
	m := e.modelJob(t, spec)
	r := rand.New(rand.NewPCG(3, 4))
	type st struct {
		row     string
		seq     int64
		seqNull bool
		deleted bool
	}
	model := map[int64]*st{}
	older := func(x mrow, s *st) bool { // x's sequence < the stored one
		switch {
		case x.seqNull:
			return !s.seqNull
		case s.seqNull:
			return false
		}
		return x.seq < s.seq
	}
	for range 6 {
		parts, rows := randomRows(r, 60, 12, true)
		m.load(t, e, parts, rows)
		for _, x := range rows {
			if s := model[x.k]; s != nil && older(x, s) {
				continue
			}
			model[x.k] = &st{row: render(x.vals(4)), seq: x.seq, seqNull: x.seqNull, deleted: x.del}
		}
	}
	// A delete with a high sequence, then a late row below it: still gone.
	m.load(t, e, []int32{0}, []mrow{{k: 100, seq: 50, v: 1, s: "first"}})
	m.load(t, e, []int32{1}, []mrow{{k: 100, seq: 60, del: true}})
	m.load(t, e, []int32{0, 1}, []mrow{{k: 100, seq: 55, v: 2, s: "late"}, {k: 101, seq: 1, v: 3, s: "other"}})
	want := map[int64]string{101: "101|1|3|other"}
	for k, s := range model {
		if !s.deleted {
			want[k] = s.row
		}
	}
	m.check(t, e, want, "UNIQUE with a sequence column")
	m.load(t, e, []int32{1}, []mrow{{k: 100, seq: 60, v: 4, s: "newer"}})
	want[100] = "100|60|4|newer"
	m.check(t, e, want, "UNIQUE with a sequence column, after a row as new as the delete")
}

// testUniquePartial: a partial update changes only its columns of stored
// keys; a new key gets its row as loaded (the rest as the task filled
// it); with NewKeyError the commit is refused and writes nothing.
func testUniquePartial(t *testing.T, e *env) {
	m := e.modelJob(t, uniqueSpec("uniq_partial", ""))
	m.load(t, e, []int32{0, 0}, []mrow{{k: 1, seq: 1, v: 10, s: "alice"}, {k: 2, seq: 2, v: 20, s: "bob"}})
	m.u = &table.Update{Columns: []bool{true, false, true, false}}
	m.load(t, e, []int32{1, 0, 1}, []mrow{{k: 1, v: 15, seqNull: true}, {k: 3, v: 30, seqNull: true}, {k: 1, v: 16, seqNull: true}})
	m.check(t, e, map[int64]string{1: "1|1|16|alice", 2: "2|2|20|bob", 3: `3|\N|30|`}, "partial update")

	m.u = &table.Update{Columns: []bool{true, false, true, false}, NewKeyError: true}
	c := &sink.Commit{JobID: m.id, Table: m.spec.GetName(), Fence: 1, Update: m.u,
		Ranges: []sink.Range{{Partition: 0, From: m.next[0], To: m.next[0] + 2}}, Stats: nextStats(m.base, 2), StatsBase: m.base.GetCommittedBatches()}
	for i, x := range []mrow{{k: 2, v: 21}, {k: 4, v: 40}} {
		pos := table.Pos{JobID: m.id, Partition: 0, Offset: m.next[0] + int64(i)}
		vals := x.vals(4)
		c.Rows = append(c.Rows, sink.KV{Key: table.AppendRowKey(nil, m.schema, pos, vals), Value: table.AppendValue(nil, m.schema, pos, vals)})
	}
	if err := e.s.Commit(c); err == nil || !strings.Contains(err.Error(), "partial update of a key that does not exist") {
		t.Errorf("a partial update of a new key with NewKeyError: Commit = %v, want the refusal", err)
	}
	if p := e.progress(t, m.id); p.Positions[0] != m.next[0] {
		t.Errorf("the refused commit moved partition 0 to %d", p.Positions[0])
	}
	m.check(t, e, map[int64]string{1: "1|1|16|alice", 2: "2|2|20|bob", 3: `3|\N|30|`}, "after a refused partial update")
}

// testUniqueFlexible: a flexible partial update (Doris
// UPDATE_FLEXIBLE_COLUMNS) changes, per row, only the columns that row
// names (sink.KV.Named) of a stored key, also for two rows of one key in
// one batch; a new key gets its row as loaded (the parser's defaults).
func testUniqueFlexible(t *testing.T, e *env) {
	spec := uniqueSpec("uniq_flexible", "")
	spec.SkipBitmapColumn = true
	m := e.modelJob(t, spec)
	m.load(t, e, []int32{0, 0}, []mrow{{k: 1, seq: 1, v: 10, s: "alice"}, {k: 2, seq: 2, v: 20, s: "bob"}})
	m.u = &table.Update{Flexible: true}
	kv := []bool{true, false, true, false}
	ks := []bool{true, false, false, true}
	m.load(t, e, []int32{1, 0, 1, 0}, []mrow{
		{k: 1, v: 15, seqNull: true, named: kv},
		{k: 2, s: "robert", seqNull: true, vNull: true, named: ks},
		{k: 3, v: 30, seqNull: true, named: kv},
		{k: 1, s: "alicia", seqNull: true, vNull: true, named: ks},
	})
	m.check(t, e, map[int64]string{1: "1|1|15|alicia", 2: "2|2|20|robert", 3: `3|\N|30|`}, "flexible partial update")
}

// testAggregate: SUM, MIN, MAX, REPLACE and REPLACE_IF_NOT_NULL merge in
// the commit with the progress, so a replayed batch (refused) never adds
// twice: the sums show it.
func testAggregate(t *testing.T, e *env) {
	spec := &api.TableSpec{Name: "agg", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"}, Columns: []*api.Column{
		{Name: "k", Type: api.ColumnType_INT64},
		{Name: "mx", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MAX},
		{Name: "sum", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM},
		{Name: "s", Type: api.ColumnType_STRING, Aggregation: api.Aggregation_REPLACE_IF_NOT_NULL},
	}}
	m := e.modelJob(t, spec)
	r := rand.New(rand.NewPCG(5, 6))
	type agg struct {
		mx, sum       int64
		mxNull, sNull bool
		sumNull       bool
		s             string
	}
	model := map[int64]*agg{}
	for range 5 {
		parts, rows := randomRows(r, 80, 10, false)
		for i := range rows {
			rows[i].vNull = r.IntN(8) == 0
			if r.IntN(5) == 0 {
				rows[i].s = "" // becomes NULL below
			}
		}
		m.loadAgg(t, e, parts, rows)
		for _, x := range rows {
			a := model[x.k]
			if a == nil {
				a = &agg{mxNull: true, sumNull: true, sNull: true}
				model[x.k] = a
			}
			if !x.seqNull && (a.mxNull || x.seq > a.mx) {
				a.mx, a.mxNull = x.seq, false
			}
			if !x.vNull {
				a.sum += x.v
				a.sumNull = false
			}
			if x.s != "" {
				a.s, a.sNull = x.s, false
			}
		}
	}
	want := map[int64]string{}
	for k, a := range model {
		vals := []table.Value{{Int: k}, {Int: a.mx, Null: a.mxNull}, {Int: a.sum, Null: a.sumNull}, {Str: a.s, Null: a.sNull}}
		want[k] = render(vals)
	}
	m.check(t, e, want, "AGGREGATE")
}

// loadAgg is load with an empty s as NULL.
func (m *modelJob) loadAgg(t *testing.T, e *env, parts []int32, rows []mrow) {
	t.Helper()
	c := &sink.Commit{JobID: m.id, Table: m.spec.GetName(), Fence: 1}
	from := map[int32]int64{0: m.next[0], 1: m.next[1]}
	for i, r := range rows {
		p := parts[i]
		pos := table.Pos{JobID: m.id, Partition: p, Offset: m.next[p]}
		m.next[p]++
		vals := r.vals(4)
		vals[3].Null = r.s == ""
		c.Rows = append(c.Rows, sink.KV{Key: table.AppendRowKey(nil, m.schema, pos, vals), Value: table.AppendValue(nil, m.schema, pos, vals)})
	}
	for _, p := range []int32{0, 1} {
		c.Ranges = append(c.Ranges, sink.Range{Partition: p, From: from[p], To: m.next[p]})
	}
	c.Stats = nextStats(m.base, int64(len(rows)))
	c.StatsBase = m.base.GetCommittedBatches()
	m.base = e.mustCommit(t, c)
	m.all = append(m.all, c)
}
