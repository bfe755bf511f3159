package actors

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// fixedReader returns the same batch on every read.
type fixedReader struct{ b *sources.Batch }

func (r fixedReader) Read(context.Context, sources.Limits) (*sources.Batch, error) { return r.b, nil }
func (r fixedReader) Close()                                                       {}

// BenchmarkCollect measures batch building: parsing a batch of records into
// typed rows and encoding their keys and values (the task's hot path
// between the source and the commit).
func BenchmarkCollect(b *testing.B) {
	// The records have the shape of `loadnode bench`'s (tests/bench,
	// appendRecord): 6 columns, ~200 bytes, a long STRING last.
	for _, format := range []string{"json", "json-paths", "csv"} {
		b.Run(format, func(b *testing.B) {
			spec := &api.TableSpec{Name: "bench", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT64},
				{Name: "customer", Type: api.ColumnType_STRING},
				{Name: "amount", Type: api.ColumnType_FLOAT64},
				{Name: "paid", Type: api.ColumnType_BOOL},
				{Name: "at", Type: api.ColumnType_TIMESTAMP},
				{Name: "note", Type: api.ColumnType_STRING},
			}}
			schema, err := table.NewSchema(spec)
			if err != nil {
				b.Fatal(err)
			}
			f := table.Format{Kind: format, ColumnSeparator: ","}
			if format == "json-paths" {
				f.Kind = "json"
				f.JSONPaths = []string{"$.id", "$.customer", "$.amount", "$.paid", "$.at", "$.note"}
			}
			parser, err := table.NewParser(schema, f)
			if err != nil {
				b.Fatal(err)
			}
			const n = 1000
			batch := &sources.Batch{Next: map[int32]int64{0: n}}
			for i := range n {
				note := strings.Repeat(string(rune('a'+i%26)), 120)
				v := fmt.Sprintf(`{"id":%d,"customer":"c%05d","amount":%d.%02d,"paid":%t,"at":"2026-11-30T12:00:00Z","note":"%s"}`, i, i%99991, i%5000, i%100, i%3 != 0, note)
				if format == "csv" {
					v = fmt.Sprintf("%d,c%05d,%d.%02d,%t,2026-11-30T12:00:00Z,%s", i, i%99991, i%5000, i%100, i%3 != 0, note)
				}
				batch.Records = append(batch.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(v)})
				batch.Bytes += int64(len(v))
			}
			set := testSettings(Settings{})
			cfg := taskConfig{jobID: 1, schema: schema, format: f, settings: set}
			b.SetBytes(batch.Bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
				if out.err != nil || out.commit.loaded != n {
					b.Fatalf("collect: %v, loaded %d", out.err, out.commit.loaded)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
