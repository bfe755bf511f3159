package actors

import (
	"context"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// TestCollectLoadTime: a batch's rows take one load time in a column that
// defaults to it (Doris DEFAULT CURRENT_TIMESTAMP), the time the task
// parsed the batch, as a wall clock in the job's zone.
func TestCollectLoadTime(t *testing.T) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "d", Type: api.ColumnType_DATETIME, Precision: 6, DefaultCurrentTimestamp: true, DefaultCurrentTimestampPrecision: 6}}})
	if err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("+10:00", 10*3600)
	f := table.Format{Kind: "json", Location: zone}
	batch := &sources.Batch{Next: map[int32]int64{0: 3}}
	for i, r := range []string{`{"id":1}`, `{"id":2}`, `{"id":3}`} {
		batch.Records = append(batch.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(r)})
		batch.Bytes += int64(len(r))
	}
	cfg := taskConfig{jobID: 1, keySpace: 1, schema: schema, format: f, settings: testSettings(Settings{})}
	parser, err := table.NewParser(schema, f)
	if err != nil {
		t.Fatal(err)
	}
	wall := func(tm time.Time) int64 { return tm.Add(10 * time.Hour).UnixMicro() } // the +10:00 wall clock
	before := wall(time.Now())
	out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
	after := wall(time.Now())
	if out.err != nil {
		t.Fatal(out.err)
	}
	if len(out.commit.rows) != 3 {
		t.Fatalf("%d rows, want 3", len(out.commit.rows))
	}
	var first int64
	for i, kv := range out.commit.rows {
		vals, _, err := table.DecodeValue(schema, kv.Value, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := vals[1].Int
		if i == 0 {
			first = d
		}
		if vals[1].Null || d != first || d < before || d > after {
			t.Errorf("row %d: d = %v µs; want one time for the batch, within [%d, %d]", i, vals[1], before, after)
		}
	}
}
