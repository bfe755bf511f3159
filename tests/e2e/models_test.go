package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestModelsKill: a UNIQUE table with a sequence column (WITH MERGE,
// DELETE ON) and an AGGREGATE table (SUM, MAX) load the same topic of
// out-of-order updates and deletes through the binary, which is killed
// with SIGKILL mid-load in every phase and restarted; each final table
// must equal a model of it (key -> row) computed from the records in
// source order, and each job's loaded-rows statistic the record count: a
// batch merged twice would show in the sums. On the embedded store and on
// PostgreSQL.
func TestModelsKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("embedded", func(t *testing.T) { testModelsKill(t, "", nil) })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testModelsKill(t, "analytics", pgNode(t, pg.CreateDatabase(t)))
	})
}

// modelRecord is one produced record.
type modelRecord struct{ k, seq, v, del int64 }

func testModelsKill(t *testing.T, database string, args []string) {
	const (
		topic  = "cdc"
		parts  = 3
		keys   = 200
		phase  = 4000
		phases = 3
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	b := testnode.StartBroker(t, parts, topic)
	var produced []modelRecord
	produceModel := func(n int) {
		t.Helper()
		recs := make([]modelRecord, n)
		for i := range recs {
			recs[i] = modelRecord{k: int64(r.IntN(keys)), seq: int64(r.IntN(50)), v: int64(r.IntN(1000)) - 300}
			if r.IntN(5) == 0 {
				recs[i].del = 1
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var perr error
		for _, x := range recs {
			wg.Add(1)
			// Keyed by k: one key's records are in one partition, in order.
			rec := &kgo.Record{Topic: topic, Key: []byte(strconv.FormatInt(x.k, 10)),
				Value: fmt.Appendf(nil, `{"k":%d,"seq":%d,"v":%d,"del":%d}`, x.k, x.seq, x.v, x.del)}
			b.Client().Produce(ctx, rec, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					perr = err
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if perr != nil {
			t.Fatal(perr)
		}
		produced = append(produced, recs...)
	}

	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	unique := jsonSpec("cdc_unique", "cdc_u", topic, b.Addrs())
	unique.Table = &api.TableSpec{Name: "cdc_u", Database: database, Model: api.TableModel_UNIQUE, KeyColumns: []string{"k"}, SequenceColumn: "seq",
		Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64}, {Name: "seq", Type: api.ColumnType_INT64},
			{Name: "v", Type: api.ColumnType_INT64}, {Name: "del", Type: api.ColumnType_INT32}}}
	unique.MergeType, unique.DeleteOn = api.MergeType_MERGE, "del = 1"
	unique.DesiredConcurrentNumber = parts
	agg := jsonSpec("cdc_agg", "cdc_a", topic, b.Addrs())
	agg.Table = &api.TableSpec{Name: "cdc_a", Database: database, Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"},
		Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64},
			{Name: "mx", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MAX},
			{Name: "total", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM},
			{Name: "n", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM}}}
	agg.Jsonpaths = []string{"$.k", "$.seq", "$.v"}
	agg.ColumnsMapping = []string{"k", "seq", "v", "mx = seq", "total = v", "n = 1"}
	agg.DesiredConcurrentNumber = parts
	for _, s := range []*api.JobSpec{unique, agg} {
		createJob(t, c, s)
	}

	loaded := func(name string, n int64) {
		t.Helper()
		waitFor(t, 120*time.Second, fmt.Sprintf("%s: %d loaded rows", name, n), func() (bool, string) {
			info := showJob(t, c, name)
			return info.GetStats().GetLoadedRows() >= n, fmt.Sprintf("loaded %d, state %s (%s: %s)",
				info.GetStats().GetLoadedRows(), info.GetSummary().GetState(), info.GetSummary().GetReason(), info.GetSummary().GetReasonMessage())
		})
	}
	produceModel(phase)
	for ph := 1; ph <= phases; ph++ {
		loaded("cdc_unique", int64((ph-1)*phase+phase/4))
		p.MustKill(t)
		c.Close()
		if ph < phases {
			produceModel(phase)
		}
		p.MustRestart(t)
		c = p.Client(t)
	}
	for _, name := range []string{"cdc_unique", "cdc_agg"} {
		waitDrained(t, c, b, name, topic, 180*time.Second)
		if n := showJob(t, c, name).GetStats().GetLoadedRows(); n != int64(len(produced)) {
			t.Errorf("%s: loaded_rows = %d, want %d (records)", name, n, len(produced))
		}
	}

	// The models: per key, in source order (one key is one partition).
	type urow struct {
		seq, v, del int64
		deleted     bool
	}
	wantU := map[int64]*urow{}
	type arow struct{ mx, total, n int64 }
	wantA := map[int64]*arow{}
	for _, x := range produced {
		if s := wantU[x.k]; s == nil || x.seq >= s.seq {
			wantU[x.k] = &urow{seq: x.seq, v: x.v, del: x.del, deleted: x.del == 1}
		}
		a := wantA[x.k]
		if a == nil {
			a = &arow{mx: x.seq}
			wantA[x.k] = a
		}
		a.mx = max(a.mx, x.seq)
		a.total += x.v
		a.n++
	}
	gotU := tableByKey(t, c, "cdc_u")
	live := 0
	for k, w := range wantU {
		if w.deleted {
			if g, ok := gotU[k]; ok {
				t.Errorf("UNIQUE key %d = %v, want deleted (seq %d)", k, g, w.seq)
			}
			continue
		}
		live++
		if g := gotU[k]; fmt.Sprint(g) != fmt.Sprint([]int64{k, w.seq, w.v, w.del}) {
			t.Errorf("UNIQUE key %d = %v, want %v", k, g, []int64{k, w.seq, w.v, w.del})
		}
	}
	if len(gotU) != live {
		t.Errorf("UNIQUE table has %d keys, want %d", len(gotU), live)
	}
	gotA := tableByKey(t, c, "cdc_a")
	for k, w := range wantA {
		if g := gotA[k]; fmt.Sprint(g) != fmt.Sprint([]int64{k, w.mx, w.total, w.n}) {
			t.Errorf("AGGREGATE key %d = %v, want %v", k, g, []int64{k, w.mx, w.total, w.n})
		}
	}
	if len(gotA) != len(wantA) {
		t.Errorf("AGGREGATE table has %d keys, want %d", len(gotA), len(wantA))
	}
	t.Logf("%d records, %d kills: UNIQUE %d live keys of %d, AGGREGATE %d keys", len(produced), phases, live, len(wantU), len(wantA))
}

// tableByKey reads an all-integer table as its first column -> the row.
func tableByKey(t *testing.T, c *client.Client, name string) map[int64][]int64 {
	t.Helper()
	out := map[int64][]int64{}
	for _, row := range scanAll(t, c, name) {
		var vals []int64
		for _, v := range row.GetValues() {
			n, err := strconv.ParseInt(renderInt(v), 10, 64)
			if err != nil {
				t.Fatalf("table %s: %v: %v", name, row, err)
			}
			vals = append(vals, n)
		}
		out[vals[0]] = vals
	}
	return out
}

func renderInt(v *api.Value) string {
	switch x := v.GetKind().(type) {
	case *api.Value_Int64:
		return strconv.FormatInt(x.Int64, 10)
	}
	return fmt.Sprint(v)
}
