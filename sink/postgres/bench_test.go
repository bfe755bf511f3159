package postgres

import (
	"fmt"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// BenchmarkCommit commits batches of 5,000 rows (an int64 and a 40-byte
// text) of one partition; b.N is the number of batches.
func BenchmarkCommit(b *testing.B) {
	const batch = 5000
	s, _ := open(b, false)
	spec := &api.TableSpec{Name: "bench", Model: api.TableModel_DUPLICATE, Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64}, {Name: "note", Type: api.ColumnType_STRING}}}
	sc, err := table.NewSchema(spec)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.PrepareTable(spec); err != nil {
		b.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		b.Fatal(err)
	}
	batches := make([][]sink.KV, b.N)
	bytes := 0
	for i := range b.N {
		batches[i] = benchRows(sc, 1, 0, int64(i*batch), batch)
		for _, kv := range batches[i] {
			bytes += len(kv.Value)
		}
	}
	stats := &api.JobStats{}
	b.SetBytes(int64(bytes / b.N))
	b.ResetTimer()
	for i := range b.N {
		next := &api.JobStats{LoadedRows: stats.LoadedRows + batch, CommittedBatches: stats.CommittedBatches + 1}
		c := &sink.Commit{JobID: 1, Table: "bench", Fence: 1, Rows: batches[i], StatsBase: stats.CommittedBatches, Stats: next,
			Ranges: []sink.Range{{Partition: 0, From: int64(i * batch), To: int64((i + 1) * batch)}}}
		if err := s.Commit(c); err != nil {
			b.Fatal(err)
		}
		stats = next
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
}

func benchRows(sc *table.Schema, job uint64, p int32, from int64, n int) []sink.KV {
	kvs := make([]sink.KV, n)
	for i := range n {
		pos := table.Pos{JobID: job, Partition: p, Offset: from + int64(i)}
		vals := []table.Value{{Int: from + int64(i)}, {Str: fmt.Sprintf("record %034d", from+int64(i))}}
		kvs[i] = sink.KV{Key: table.AppendKey(nil, api.TableModel_DUPLICATE, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)}
	}
	return kvs
}
