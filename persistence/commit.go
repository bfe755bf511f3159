package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/cockroachdb/pebble/v2"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
	"google.golang.org/protobuf/proto"
)

// KV, Range and Commit are the sink's types (the Store is a sink).
type (
	KV     = sink.KV
	Range  = sink.Range
	Commit = sink.Commit
)

// CommitBatch is the fenced commit of one batch. It checks that every
// Range.From equals the stored progress of its partition (a partition with no
// stored progress is stale too) and that To >= From; on a mismatch it writes
// nothing and returns an error wrapping ErrStaleCommit that names the
// partition, the stored and the given position; so it does when Stats are
// given and the stored statistics' CommittedBatches is not StatsBase.
// Otherwise the rows, the new
// progress (Range.To) of each range, the stats and the error rows go into one
// batch committed with pebble.Sync; CommitBatch returns only after that
// commit.
//
// INVARIANT: rows and progress move together, and progress only moves from
// the stored value forward.
func (s *Store) CommitBatch(c *Commit) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if err := validateCommit(c); err != nil {
		return err
	}
	unlock := s.jobs.lock(c.JobID)
	defer unlock()
	defer s.recoverFatal(&err)

	for _, r := range c.Ranges {
		v, ok, err := s.get(progressKey(c.JobID, r.Partition))
		if err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
		if !ok {
			return fmt.Errorf("persistence: commit job %d partition %d: no stored progress, commit from %d: %w",
				c.JobID, r.Partition, r.From, ErrStaleCommit)
		}
		stored, err := decodeInt64(v)
		if err != nil {
			return fmt.Errorf("persistence: commit job %d partition %d: %w", c.JobID, r.Partition, err)
		}
		if stored != r.From {
			return fmt.Errorf("persistence: commit job %d partition %d: stored progress %d, commit from %d: %w",
				c.JobID, r.Partition, stored, r.From, ErrStaleCommit)
		}
	}
	if fence, _, err := s.getUint64(jobKey(c.JobID, jobFenceSuffix)); err != nil {
		return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
	} else if c.Fence < fence {
		return fmt.Errorf("persistence: commit job %d: fence %d is older than the stored %d: %w",
			c.JobID, c.Fence, fence, ErrStaleCommit)
	}
	if c.Stats != nil {
		var stored api.JobStats
		if _, err := s.getProto(jobKey(c.JobID, jobStatsSuffix), &stored); err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
		if stored.CommittedBatches != c.StatsBase {
			return fmt.Errorf("persistence: commit job %d: stored statistics have %d committed batches, commit based on %d: %w",
				c.JobID, stored.CommittedBatches, c.StatsBase, ErrStaleCommit)
		}
	}
	var keyed *table.Schema // a UNIQUE or AGGREGATE table: rows merge (models.go)
	if len(c.Rows) > 0 {
		if v, ok, err := s.get(tableSpecKey(c.Table)); err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		} else if !ok {
			return fmt.Errorf("persistence: commit job %d: table %q: %w", c.JobID, c.Table, ErrNotFound)
		} else if keyed, err = keyedSchema(v, c.Update); err != nil {
			return fmt.Errorf("persistence: commit job %d: table %q: %w", c.JobID, c.Table, err)
		}
	}

	for _, m := range c.More {
		if len(m.Rows) == 0 {
			continue
		}
		if v, ok, err := s.get(tableSpecKey(m.Table)); err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		} else if !ok {
			return fmt.Errorf("persistence: commit job %d: table %q: %w", c.JobID, m.Table, ErrNotFound)
		} else if k, err := keyedSchema(v, nil); err != nil || k != nil {
			return fmt.Errorf("persistence: commit job %d: table %q: rows of a multi-table commit go to DUPLICATE tables only (%v)", c.JobID, m.Table, err)
		}
	}

	if s.afterCommitCheck != nil {
		s.afterCommitCheck()
	}

	b := s.db.NewBatchWithSize(commitBatchSize(c), pebble.WithMaxRetainedSizeBytes(maxRetainedBatchBytes))
	if keyed != nil {
		defer s.models.lock(c.Table)()
		if err := s.mergeRows(b, c, keyed); err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
	}
	if err := s.writeDuplicateRows(b, c, keyed == nil); err != nil {
		_ = b.Close()
		return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
	}
	for _, r := range c.Ranges {
		_ = b.Set(progressKey(c.JobID, r.Partition), encodeInt64(r.To), nil)
		if r.Checkpoint != nil {
			_ = b.Set(checkpointKey(c.JobID, r.Partition), r.Checkpoint, nil)
		}
	}
	_ = b.Set(jobKey(c.JobID, jobFenceSuffix), encodeUint64(c.Fence), nil)
	if c.Stats != nil {
		v, err := proto.Marshal(c.Stats)
		if err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: commit job %d: marshal stats: %w", c.JobID, err)
		}
		_ = b.Set(jobKey(c.JobID, jobStatsSuffix), v, nil)
	}
	if len(c.ErrorRows) > 0 {
		if err := s.appendErrorRows(b, c.JobID, c.ErrorRows); err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
	}
	return s.commit(b, fmt.Sprintf("commit job %d", c.JobID))
}

// maxRetainedBatchBytes bounds the buffer a closed commit batch hands back
// to Pebble's batch pool (Pebble's default keeps none over 1 MiB). A batch
// of max_batch_rows rows is a few MiB: with the default every commit
// allocated, and first touched, a fresh buffer of that size. A larger batch
// (max_batch_size allows hundreds of MiB) is still left to the GC.
const maxRetainedBatchBytes = 16 << 20

// commitBatchSize is the batch size CommitBatch needs for c's rows (each
// row: its table's row prefix, the key and value, and Pebble's record
// header of a kind byte and two varint lengths), with room for the
// progress, statistics and error-row records.
func commitBatchSize(c *Commit) int {
	size := 256 + 64*len(c.Ranges)
	rows := func(table string, kvs []KV) {
		per := len(tableRowPrefix(table)) + 1 + 2*binary.MaxVarintLen32
		for _, kv := range kvs {
			size += per + len(kv.Key) + len(kv.Value)
		}
	}
	rows(c.Table, c.Rows)
	for _, m := range c.More {
		rows(m.Table, m.Rows)
	}
	for _, r := range c.ErrorRows {
		size += 64 + proto.Size(r)
	}
	// Rounded up to a power of two, so that the pooled buffer of one
	// commit is big enough for the next of about the same size.
	return 1 << bits.Len(uint(size-1))
}

// writeDuplicateRows adds the rows of c's DUPLICATE tables to b as row
// blocks (rowblock.go): c.Table's when own, then c.More's, the rows of one
// table written together (a later row of a key wins).
func (s *Store) writeDuplicateRows(b *pebble.Batch, c *Commit, own bool) error {
	type tableRows struct {
		name    string
		sources [][]KV
	}
	var tables []tableRows
	add := func(name string, rows []KV) {
		if len(rows) == 0 {
			return
		}
		for i := range tables {
			if tables[i].name == name {
				tables[i].sources = append(tables[i].sources, rows)
				return
			}
		}
		tables = append(tables, tableRows{name: name, sources: [][]KV{rows}})
	}
	if own {
		add(c.Table, c.Rows)
	}
	for _, m := range c.More {
		add(m.Table, m.Rows)
	}
	for _, t := range tables {
		if err := s.writeRowBlocks(b, t.name, t.sources...); err != nil {
			return err
		}
	}
	return nil
}

func validateCommit(c *Commit) error {
	if c == nil {
		return errors.New("persistence: commit: nil commit")
	}
	if len(c.Ranges) == 0 {
		return fmt.Errorf("persistence: commit job %d: no ranges", c.JobID)
	}
	seen := make(map[int32]struct{}, len(c.Ranges))
	for _, r := range c.Ranges {
		if _, dup := seen[r.Partition]; dup {
			return fmt.Errorf("persistence: commit job %d: partition %d listed twice", c.JobID, r.Partition)
		}
		seen[r.Partition] = struct{}{}
		if r.To < r.From {
			return fmt.Errorf("persistence: commit job %d partition %d: range [%d, %d) ends before it starts",
				c.JobID, r.Partition, r.From, r.To)
		}
	}
	if len(c.Rows) > 0 {
		if err := validateTableName(c.Table); err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
	}
	for _, m := range c.More {
		if err := validateTableName(m.Table); err != nil {
			return fmt.Errorf("persistence: commit job %d: %w", c.JobID, err)
		}
	}
	for i, er := range c.ErrorRows {
		if er == nil {
			return fmt.Errorf("persistence: commit job %d: error row %d is nil", c.JobID, i)
		}
	}
	return nil
}

// appendErrorRows adds rows to b with the next sequence numbers and deletes,
// in b, every stored row that falls out of the newest s.maxErrs.
// REQUIRES: the job's lock is held.
func (s *Store) appendErrorRows(b *pebble.Batch, id uint64, rows []*api.ErrorRow) error {
	w := errWindow{first: 1, next: 1}
	if v, ok, err := s.get(jobKey(id, jobErrWinSuffix)); err != nil {
		return err
	} else if ok {
		if w, err = decodeErrWindow(v); err != nil {
			return err
		}
	}
	next := w.next + uint64(len(rows))
	// Keep seqs >= cutoff.
	cutoff := uint64(1)
	if next > s.maxErrs+1 {
		cutoff = next - s.maxErrs
	}
	for seq := w.first; seq < min(cutoff, w.next); seq++ {
		_ = b.Delete(errorRowKey(id, seq), nil)
	}
	for i, r := range rows {
		seq := w.next + uint64(i)
		if seq < cutoff {
			continue
		}
		v, err := proto.Marshal(r)
		if err != nil {
			return fmt.Errorf("marshal error row: %w", err)
		}
		_ = b.Set(errorRowKey(id, seq), v, nil)
	}
	nw := errWindow{first: max(w.first, cutoff), next: next}
	_ = b.Set(jobKey(id, jobErrWinSuffix), nw.encode(), nil)
	return nil
}

// ErrorRows returns a job's newest limit error rows (all kept rows if limit
// <= 0), oldest first, or an error wrapping ErrNotFound.
func (s *Store) ErrorRows(id uint64, limit int) (rows []*api.ErrorRow, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	if _, err := s.record(id); err != nil {
		return nil, fmt.Errorf("persistence: error rows of job %d: %w", id, err)
	}
	lower := jobSubPrefix(id, jobErrorSuffix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, fmt.Errorf("persistence: error rows of job %d: %w", id, err)
	}
	defer closeIter(it, &err)
	for valid := it.Last(); valid && (limit <= 0 || len(rows) < limit); valid = it.Prev() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, fmt.Errorf("persistence: error rows of job %d: %w", id, err)
		}
		r := &api.ErrorRow{}
		if err := proto.Unmarshal(v, r); err != nil {
			return nil, fmt.Errorf("persistence: error rows of job %d: corrupt row: %w", id, err)
		}
		rows = append(rows, r)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: error rows of job %d: %w", id, err)
	}
	slices.Reverse(rows)
	return rows, nil
}
