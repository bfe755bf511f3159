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
	spec := &api.TableSpec{Name: "bufs", Columns: []*api.Column{
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
	cfg := taskConfig{jobID: 1, schema: schema, format: f, settings: testSettings(Settings{})}
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

func kvEqual(a, b sink.KV) bool {
	return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) && a.Delete == b.Delete && len(a.Named) == len(b.Named)
}
