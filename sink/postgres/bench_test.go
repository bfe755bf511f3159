package postgres

import (
	"fmt"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// BenchmarkCommit commits batches of 20,000 rows (an int64 and a 40-byte
// text) spread over 1 or 8 partitions (a job's batch interleaves its
// partitions' rows in runs of 500); b.N is the number of batches.
func BenchmarkCommit(b *testing.B) {
	for _, parts := range []int32{1, 8} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) { benchCommit(b, parts) })
	}
}

func benchCommit(b *testing.B, parts int32) {
	const batch, run = 20000, 500
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
	starts := map[int32]int64{}
	for p := range parts {
		starts[p] = 0
	}
	if err := s.InitStarts(1, starts, nil); err != nil {
		b.Fatal(err)
	}
	per := int64(batch / int(parts))
	commits := make([]*sink.Commit, b.N)
	bytes := 0
	for i := range b.N {
		c := &sink.Commit{JobID: 1, Table: "bench", Fence: 1}
		from := int64(i) * per
		for o := int64(0); o < per; o += run {
			for p := range parts {
				c.Rows = append(c.Rows, benchRows(sc, 1, p, from+o, int(min(run, per-o)))...)
			}
		}
		for p := range parts {
			c.Ranges = append(c.Ranges, sink.Range{Partition: p, From: from, To: from + per})
		}
		for _, kv := range c.Rows {
			bytes += len(kv.Value)
		}
		commits[i] = c
	}
	stats := &api.JobStats{}
	b.SetBytes(int64(bytes / b.N))
	b.ResetTimer()
	for i := range b.N {
		next := &api.JobStats{LoadedRows: stats.LoadedRows + int64(len(commits[i].Rows)), CommittedBatches: stats.CommittedBatches + 1}
		commits[i].Stats, commits[i].StatsBase = next, stats.CommittedBatches
		if err := s.Commit(commits[i]); err != nil {
			b.Fatal(err)
		}
		stats = next
	}
	b.ReportMetric(float64(stats.LoadedRows)/b.Elapsed().Seconds(), "rows/s")
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
