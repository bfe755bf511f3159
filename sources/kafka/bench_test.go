package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// BenchmarkRead reads 1M small records (4 partitions) from kfake with one
// reader per iteration, in Reads of up to 100k rows: the source's own cost,
// kfake included.
func BenchmarkRead(b *testing.B) {
	const parts, total = 4, 1_000_000
	e := newEnv(b, parts)
	recs := make([]*kgo.Record, 0, 10_000)
	for i := range total {
		recs = append(recs, &kgo.Record{Partition: int32(i % parts), Value: fmt.Appendf(nil, "%d,row-%d,%d", i, i, i*7)})
		if len(recs) == cap(recs) {
			if err := e.prod.ProduceSync(testCtx(b), recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	end, err := e.cluster.Watermarks(testCtx(b), e.topic)
	if err != nil {
		b.Fatal(err)
	}
	start := map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, err := e.cluster.NewReader(e.topic, start)
		if err != nil {
			b.Fatal(err)
		}
		pos := map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0}
		n := 0
		for pos[0] < end[0] || pos[1] < end[1] || pos[2] < end[2] || pos[3] < end[3] {
			batch, err := r.Read(testCtx(b), sources.Limits{MaxRows: 100_000, MaxBytes: 64 << 20, MaxWait: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			n += len(batch.Records)
			pos = batch.Next
		}
		r.Close()
		if n != total {
			b.Fatalf("read %d records", n)
		}
	}
	b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "records/s")
}
