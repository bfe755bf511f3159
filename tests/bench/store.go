package bench

import (
	"fmt"
	"os"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/table"
)

// encodedRows are n benchmark records parsed and encoded once, outside the
// measured time, as the store ceiling writes them.
type encodedRows struct {
	rows  []persistence.KV
	bytes int64 // source record bytes
}

// encodeRows parses n json records (the same values as the topics hold) and
// encodes them as job 1, partition 0, offsets 0..n-1.
func encodeRows(n, size int) (*encodedRows, error) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "store_ceiling", Columns: benchColumns()})
	if err != nil {
		return nil, fmt.Errorf("bench: schema: %w", err)
	}
	p, err := table.NewParser(schema, table.Format{Kind: "json"})
	if err != nil {
		return nil, fmt.Errorf("bench: parser: %w", err)
	}
	out := &encodedRows{rows: make([]persistence.KV, 0, n)}
	var vals []table.Value
	var buf []byte
	for i := range n {
		buf = appendRecord(buf[:0], "json", i, size)
		out.bytes += int64(len(buf))
		if vals, err = p.Parse(buf, vals); err != nil {
			return nil, fmt.Errorf("bench: parse record %d: %w", i, err)
		}
		pos := table.Pos{JobID: 1, Partition: 0, Offset: int64(i)}
		out.rows = append(out.rows, persistence.KV{
			Key:   table.AppendKey(nil, schema.Model(), pos, vals),
			Value: table.AppendValue(nil, schema, pos, vals),
		})
	}
	return out, nil
}

// storeRun writes rows to a fresh Pebble store in synced batches of
// batchRows, with progress and statistics, as a job commits them, with no
// source and no actors.
func storeRun(rows *encodedRows, batchRows int) (sample, error) {
	dir, err := tempDir("store")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(dir)
	st, err := persistence.Open(persistence.Options{Dir: dir})
	if err != nil {
		return sample{}, fmt.Errorf("bench: open store: %w", err)
	}
	defer st.Close()
	spec := &api.TableSpec{Name: "store_ceiling", Columns: benchColumns()}
	rec := &api.JobRecord{Id: 1, Name: "store_ceiling", CreatedUnixMs: time.Now().UnixMilli(),
		Spec: &api.JobSpec{Name: "store_ceiling", Table: spec}}
	first := &api.Transition{Seq: 1, TimeUnixMs: time.Now().UnixMilli(), To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED}
	if err := st.CreateJob(rec, first, spec); err != nil {
		return sample{}, fmt.Errorf("bench: store create job: %w", err)
	}
	if err := st.InitProgress(1, map[int32]int64{0: 0}); err != nil {
		return sample{}, fmt.Errorf("bench: store init progress: %w", err)
	}
	n := len(rows.rows)
	stats := &api.JobStats{}
	m := startMeter(0)
	for from := 0; from < n; from += batchRows {
		to := min(from+batchRows, n)
		base := stats.CommittedBatches
		stats = &api.JobStats{
			LoadedRows: int64(to), ReceivedBytes: rows.bytes * int64(to) / int64(n),
			CommittedBatches: base + 1, LastCommitUnixMs: time.Now().UnixMilli(),
		}
		if err := st.CommitBatch(&persistence.Commit{
			JobID: 1, Table: "store_ceiling", Rows: rows.rows[from:to],
			Ranges: []persistence.Range{{Partition: 0, From: int64(from), To: int64(to)}},
			Stats:  stats, StatsBase: base,
		}); err != nil {
			return sample{}, fmt.Errorf("bench: store commit: %w", err)
		}
	}
	s := m.stop(int64(n), rows.bytes)
	s.batches = stats.CommittedBatches
	return s, nil
}
