package actors

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// A batch collected into the buffers of an earlier one has the same rows
// as one collected into fresh buffers, and uses those buffers: no row of
// the earlier batch shows through.
func TestCollectReusesBuffers(t *testing.T) {
	cfg, parser := csvTask(t, "bufs")
	batchOf := func(n int, note string) *sources.Batch {
		b := &sources.Batch{Next: map[int32]int64{0: int64(n)}}
		for i := range n {
			v := fmt.Sprintf("%d,%s", i, note)
			b.Records = append(b.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(v)})
			b.Bytes += int64(len(v))
		}
		return b
	}
	collectOf := func(b *sources.Batch, spare *batchBufs) *commitBatch {
		out := collect(context.Background(), cfg, fixedReader{b}, parser, nil, map[int32]int64{0: 0}, spare)
		if out.err != nil || out.commit.loaded != int64(len(b.Records)) {
			t.Fatalf("collect: %v, loaded %d, %d error rows", out.err, out.commit.loaded, len(out.commit.errorRows))
		}
		return out.commit
	}
	first := collectOf(batchOf(100, "a long note of the first batch"), nil)
	if first.bufs == nil {
		t.Fatal("a batch kept no buffers")
	}
	arena := &first.bufs.arena[:1][0]
	// A smaller batch fits in the first one's buffers.
	next := batchOf(60, "second")
	fresh := collectOf(next, nil)
	reused := collectOf(next, first.bufs)
	if &reused.bufs.arena[:1][0] != arena {
		t.Error("the second batch did not reuse the first one's arena")
	}
	if len(reused.rows) != len(fresh.rows) {
		t.Fatalf("%d rows in reused buffers, %d in fresh ones", len(reused.rows), len(fresh.rows))
	}
	for i := range fresh.rows {
		if !kvEqual(reused.rows[i], fresh.rows[i]) {
			t.Fatalf("row %d: reused %+v, fresh %+v", i, reused.rows[i], fresh.rows[i])
		}
	}
	if got := reused.rows[:cap(reused.rows)][len(reused.rows):]; len(got) > 0 && !kvEqual(got[0], sink.KV{}) {
		t.Errorf("row headers past the batch kept an earlier row: %+v", got[0])
	}
	// A bigger batch does not fit: fresh buffers.
	big := collectOf(batchOf(300, "a long note of the third and bigger batch"), fresh.bufs)
	if len(big.rows) != 300 {
		t.Fatalf("big batch: %d rows", len(big.rows))
	}
}

// csvTask is the configuration and parser of a task loading csv records
// "id,note" into table name (id INT64, note STRING).
func csvTask(t *testing.T, name string) (taskConfig, *table.Parser) {
	t.Helper()
	spec := &api.TableSpec{Name: name, Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "note", Type: api.ColumnType_STRING},
	}}
	schema, err := table.NewSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	f := table.Format{Kind: "csv", ColumnSeparator: ","}
	parser, err := table.NewParser(schema, f)
	if err != nil {
		t.Fatal(err)
	}
	return taskConfig{jobID: 1, schema: schema, format: f, settings: testSettings(Settings{})}, parser
}

func kvEqual(a, b sink.KV) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Delete == b.Delete && len(a.Named) == len(b.Named)
}

// recyclingReader returns one batch and, when it is given back, scribbles
// over its record slots as a reader filling them with its next batch
// would.
type recyclingReader struct {
	b        *sources.Batch
	recycled int
}

func (r *recyclingReader) Read(context.Context, sources.Limits) (*sources.Batch, error) {
	return r.b, nil
}
func (r *recyclingReader) Close() {}

func (r *recyclingReader) Recycle(b *sources.Batch) {
	r.recycled++
	for i := range b.Records {
		b.Records[i] = sources.Record{Partition: 9, Offset: -1, Value: []byte("9,scribbled")}
	}
	b.Records = nil
}

// collect gives a Recycler reader its batch back once, after every record
// is parsed, and the batch it returns holds nothing of the record slots.
func TestCollectRecyclesRecords(t *testing.T) {
	cfg, parser := csvTask(t, "recycled")
	batchOf := func() *sources.Batch {
		b := &sources.Batch{Next: map[int32]int64{0: 50}}
		for i := range 50 {
			v := fmt.Sprintf("%d,note %d", i, i)
			if i == 7 {
				v = "not a number,x" // an error row keeps its raw record
			}
			b.Records = append(b.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(v)})
			b.Bytes += int64(len(v))
		}
		return b
	}
	want := collect(context.Background(), cfg, fixedReader{batchOf()}, parser, nil, map[int32]int64{0: 0}, nil)
	r := &recyclingReader{b: batchOf()}
	got := collect(context.Background(), cfg, r, parser, nil, map[int32]int64{0: 0}, nil)
	if r.recycled != 1 {
		t.Fatalf("Recycle called %d times, want 1", r.recycled)
	}
	if got.err != nil || want.err != nil {
		t.Fatalf("collect: %v / %v", got.err, want.err)
	}
	g, w := got.commit, want.commit
	if g.loaded != 49 || len(g.rows) != len(w.rows) || len(g.errorRows) != 1 {
		t.Fatalf("loaded %d, %d rows (want %d), %d error rows", g.loaded, len(g.rows), len(w.rows), len(g.errorRows))
	}
	for i := range w.rows {
		if !kvEqual(g.rows[i], w.rows[i]) {
			t.Fatalf("row %d after Recycle: %+v, want %+v", i, g.rows[i], w.rows[i])
		}
	}
	if er := g.errorRows[0]; er.Offset != 7 || string(er.Raw) != "not a number,x" {
		t.Fatalf("error row after Recycle: offset %d raw %q", er.Offset, er.Raw)
	}
	if len(got.next) != 1 || got.next[0] != 50 {
		t.Fatalf("next %v", got.next)
	}
}
