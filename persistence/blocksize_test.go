package persistence

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// BenchmarkPointGet is what the table block size costs a point read: a
// row (a one-row scan at a cursor, which decodes its row block) and a job's state (LoadJob: its record, journal head, progress,
// statistics) read from a store on disk whose rows went to table files,
// with the block cache cold (the store just reopened; the OS page cache
// warm) or warm. 4k is Pebble's default block size, 32k tableBlockSize.
func BenchmarkPointGet(b *testing.B) {
	for _, size := range []int{4 << 10, tableBlockSize} {
		dir := b.TempDir()
		tune := func(o *pebble.Options) {
			for i := range o.Levels {
				o.Levels[i].BlockSize = size
			}
		}
		const jobs, rows, batch = 200, 200_000, 20_000
		s, err := Open(Options{Dir: dir, FS: vfs.Default, tune: tune})
		if err != nil {
			b.Fatal(err)
		}
		for id := uint64(1); id <= jobs; id++ {
			rec := testRecord(id, fmt.Sprintf("job%d", id))
			if err := s.CreateJob(rec, createdTransition(), rec.Spec.Table); err != nil {
				b.Fatal(err)
			}
			if err := s.InitProgress(id, map[int32]int64{0: 0}); err != nil {
				b.Fatal(err)
			}
		}
		value := make([]byte, 200)
		for from := int64(0); from < rows; from += batch {
			c := &Commit{JobID: 1, Table: testRecord(1, "job1").Spec.Table.Name, Ranges: []Range{{Partition: 0, From: from, To: from + batch}},
				Stats: &api.JobStats{LoadedRows: from + batch, CommittedBatches: from/batch + 1}, StatsBase: from / batch}
			for o := from; o < from+batch; o++ {
				for i := range value {
					value[i] = byte(o >> (i % 8))
				}
				c.Rows = append(c.Rows, KV{Key: rowKey(1, 0, o), Value: append([]byte(nil), value...)})
			}
			if err := s.CommitBatch(c); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(); err != nil { // flushes the memtables to table files
			b.Fatal(err)
		}
		name := testRecord(1, "job1").Spec.Table.Name
		rng := rand.New(rand.NewPCG(1, 2))
		read := func(b *testing.B, s *Store) {
			// A row is read by a one-row scan at a cursor (rows are
			// stored in row blocks: the read decodes its block up to it).
			var after []byte
			if o := rng.Int64N(rows); o > 0 {
				after = rowKey(1, 0, o-1)
			}
			got := 0
			if err := s.ScanRowsAfter(name, after, 1, func(k, v []byte) error { got++; return nil }); err != nil || got != 1 {
				b.Fatalf("read row: %d rows, %v", got, err)
			}
			if _, err := s.LoadJob(1 + rng.Uint64N(jobs)); err != nil {
				b.Fatal(err)
			}
		}
		for _, cold := range []bool{true, false} {
			name := fmt.Sprintf("block=%dk/cache=warm", size>>10)
			if cold {
				name = fmt.Sprintf("block=%dk/cache=cold", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				s, err := Open(Options{Dir: dir, FS: vfs.Default, tune: tune})
				if err != nil {
					b.Fatal(err)
				}
				defer func() { _ = s.Close() }()
				for b.Loop() {
					if cold {
						b.StopTimer()
						_ = s.Close()
						if s, err = Open(Options{Dir: dir, FS: vfs.Default, tune: tune}); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
					}
					read(b, s)
				}
			})
		}
	}
}
