package persistence

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// ScanRowsAfter is ScanRows starting after the row key after (exclusive;
// nil starts at the first row), so that a caller can page through a large
// table with the last key of the previous page as the cursor.
func (s *Store) ScanRowsAfter(table string, after []byte, limit int, fn func(key, value []byte) error) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if _, err := s.Table(table); err != nil {
		return fmt.Errorf("persistence: scan rows: %w", err)
	}
	defer s.recoverFatal(&err)
	bp, rp := tableBlockPrefix(table), tableRowPrefix(table)
	blocks, rows, err := s.rowIters(bp, rp)
	if err != nil {
		return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
	}
	defer closeIter(blocks, &err)
	defer closeIter(rows, &err)
	start := append(append([]byte(nil), rp...), after...)
	rowValid := rows.SeekGE(start)
	if rowValid && len(after) > 0 && bytes.Equal(rows.Key(), start) {
		rowValid = rows.Next()
	}
	bs := blockScan{it: blocks, prefix: bp}
	if err := bs.seekAfter(after); err != nil {
		return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
	}
	for n := 0; (rowValid || bs.ok) && (limit <= 0 || n < limit); n++ {
		var key, value []byte
		if bs.ok && (!rowValid || bytes.Compare(bs.key, rows.Key()[len(rp):]) < 0) {
			key, value = append([]byte(nil), bs.key...), append([]byte(nil), bs.value...)
			if err := bs.next(); err != nil {
				return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
			}
		} else {
			v, err := rows.ValueAndErr()
			if err != nil {
				return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
			}
			key, value = append([]byte(nil), rows.Key()[len(rp):]...), append([]byte(nil), v...)
			rowValid = rows.Next()
		}
		if err := fn(key, value); err != nil {
			return err
		}
	}
	if err := rows.Error(); err != nil {
		return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
	}
	return nil
}

// rowIters returns iterators over a table's blocks (bp) and per-row keys
// (rp) that read the same state of the store: a write that moves rows
// from per-row keys into a block is seen by both or neither.
func (s *Store) rowIters(bp, rp []byte) (blocks, rows *pebble.Iterator, err error) {
	blocks, err = s.newIter(bp, prefixEnd(bp))
	if err != nil {
		return nil, nil, err
	}
	rows, err = blocks.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: rp, UpperBound: prefixEnd(rp)}})
	if err != nil {
		_ = blocks.Close()
		return nil, nil, err
	}
	return blocks, rows, nil
}

// blockScan reads the rows of a table's blocks in key order: ok and
// key, value are the current row (aliasing the iterator's value).
type blockScan struct {
	it         *pebble.Iterator
	prefix     []byte
	block      rowBlock
	blockKey   []byte // the current block's first row key
	prevLast   []byte // the last row key of the block before
	ok         bool
	key, value []byte
}

// seekAfter positions the scan on the first row whose key follows after
// (nil: the first row): in the block holding after, else the next one.
func (bs *blockScan) seekAfter(after []byte) error {
	var valid bool
	if len(after) == 0 {
		valid = bs.it.First()
	} else {
		seek := append(append(append([]byte(nil), bs.prefix...), after...), 0)
		if valid = bs.it.SeekLT(seek); !valid {
			if err := bs.it.Error(); err != nil {
				return err
			}
			valid = bs.it.First()
		}
	}
	if err := bs.open(valid); err != nil {
		return err
	}
	for bs.ok && len(after) > 0 && bytes.Compare(bs.key, after) <= 0 {
		if err := bs.next(); err != nil {
			return err
		}
	}
	return nil
}

// open starts the block the iterator is on (none: !valid).
func (bs *blockScan) open(valid bool) error {
	bs.ok = false
	if !valid {
		return bs.it.Error()
	}
	k := bs.it.Key()
	bs.blockKey = k[len(bs.prefix):]
	v, err := bs.it.ValueAndErr()
	if err != nil {
		return err
	}
	if bs.block, err = openRowBlock(v); err != nil {
		return fmt.Errorf("block %x: %w", bs.blockKey, err)
	}
	if bs.prevLast != nil && bytes.Compare(bs.blockKey, bs.prevLast) <= 0 {
		return fmt.Errorf("block %x: %w: it starts at or before the end of the block before (%x)", bs.blockKey, errRowBlock, bs.prevLast)
	}
	key, value, ok, err := bs.block.next()
	if err != nil {
		return fmt.Errorf("block %x: %w", bs.blockKey, err)
	}
	if !ok || !bytes.Equal(key, bs.blockKey) {
		return fmt.Errorf("block %x: %w: its first row key is %x", bs.blockKey, errRowBlock, key)
	}
	bs.key, bs.value, bs.ok = key, value, true
	return nil
}

// next moves to the next row, in this block or the next.
func (bs *blockScan) next() error {
	key, value, ok, err := bs.block.next()
	if err != nil {
		return fmt.Errorf("block %x: %w", bs.blockKey, err)
	}
	if ok {
		bs.key, bs.value = key, value
		return nil
	}
	bs.prevLast = append(bs.prevLast[:0], bs.block.last...)
	return bs.open(bs.it.Next())
}

// CreateTable stores a table's schema with pebble.Sync if the table does
// not exist. An identical stored schema is not an error; a different one
// returns an error wrapping ErrTableExists.
func (s *Store) CreateTable(spec *api.TableSpec) (created bool, err error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.leave()
	if err := validateTableName(spec.GetName()); err != nil {
		return false, fmt.Errorf("persistence: create table: %w", err)
	}
	bin, err := proto.Marshal(spec)
	if err != nil {
		return false, fmt.Errorf("persistence: create table %q: %w", spec.GetName(), err)
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	defer s.recoverFatal(&err)
	cur, found, err := s.get(tableSpecKey(spec.GetName()))
	if err != nil {
		return false, fmt.Errorf("persistence: create table %q: %w", spec.GetName(), err)
	}
	if found {
		if bytes.Equal(cur, bin) {
			return false, nil
		}
		return false, fmt.Errorf("persistence: create table %q: %w", spec.GetName(), ErrTableExists)
	}
	b := s.db.NewBatch()
	_ = b.Set(tableSpecKey(spec.GetName()), bin, nil)
	if err := s.commit(b, fmt.Sprintf("create table %q", spec.GetName())); err != nil {
		return false, err
	}
	return true, nil
}

// DeleteJob removes a job: its name index entry, snapshot, journal,
// progress, statistics and error rows, in one batch committed with
// pebble.Sync. Its table and the table's rows stay. The caller (the
// manager) allows it only for final jobs.
func (s *Store) DeleteJob(id uint64, name string) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	s.createMu.Lock()
	defer s.createMu.Unlock()
	unlock := s.jobs.lock(id)
	defer unlock()
	defer s.recoverFatal(&err)
	owner, ok, err := s.getUint64(nameKey(name))
	if err != nil {
		return fmt.Errorf("persistence: delete job %q: %w", name, err)
	}
	if !ok || owner != id {
		return fmt.Errorf("persistence: delete job %q (id %d): %w", name, id, ErrNotFound)
	}
	b := s.db.NewBatch()
	_ = b.Delete(nameKey(name), nil)
	p := jobKeyPrefix(id)
	_ = b.DeleteRange(p, prefixEnd(p), nil)
	if err := s.commit(b, fmt.Sprintf("delete job %q", name)); err != nil {
		return err
	}
	s.setHead(id, 0)
	return nil
}

// AlterJob applies a user's alter of a job in one batch committed with
// pebble.Sync: the new snapshot rec, the progress of the partitions in
// reset overwritten (a journaled user reset is the only way progress may
// move backwards), and the journal entry t, whose Seq must be the last + 1.
func (s *Store) AlterJob(rec *api.JobRecord, reset map[int32]int64, t *api.Transition) error {
	return s.AlterJobStarts(rec, reset, nil, t)
}

// AlterJobStarts is AlterJob with, for a checkpointed source, the reset
// partitions' new checkpoints, written in the same synced batch.
func (s *Store) AlterJobStarts(rec *api.JobRecord, reset map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if rec == nil || t == nil {
		return fmt.Errorf("persistence: alter job: nil record or transition")
	}
	id := rec.GetId()
	recBytes, err := proto.Marshal(rec)
	if err != nil {
		return fmt.Errorf("persistence: alter job %d: %w", id, err)
	}
	tBytes, err := proto.Marshal(t)
	if err != nil {
		return fmt.Errorf("persistence: alter job %d: %w", id, err)
	}
	unlock := s.jobs.lock(id)
	defer unlock()
	_ = s.takeUnstarted(id) // it writes progress (Store.heads.unstarted)
	defer s.recoverFatal(&err)
	old, err := s.record(id)
	if err != nil {
		return fmt.Errorf("persistence: alter job %d: %w", id, err)
	}
	if old.GetName() != rec.GetName() {
		return fmt.Errorf("persistence: alter job %d: name %q cannot change to %q", id, old.GetName(), rec.GetName())
	}
	last, err := s.lastTransition(id)
	if err != nil {
		return fmt.Errorf("persistence: alter job %d: %w", id, err)
	}
	if want := last.GetSeq() + 1; t.GetSeq() != want {
		return fmt.Errorf("persistence: alter job %d: seq %d, want %d", id, t.GetSeq(), want)
	}
	b := s.db.NewBatch()
	_ = b.Set(jobKey(id, jobRecordSuffix), recBytes, nil)
	for p, o := range reset {
		_ = b.Set(progressKey(id, p), encodeInt64(o), nil)
		if c, ok := checkpoints[p]; ok {
			_ = b.Set(checkpointKey(id, p), c, nil)
		}
	}
	_ = b.Set(journalKey(id, t.GetSeq()), tBytes, nil)
	if err := s.commit(b, fmt.Sprintf("alter job %d", id)); err != nil {
		return err
	}
	s.setHead(id, t.GetSeq())
	return nil
}

// LastTransition returns a job's newest journal entry (its current state
// and reason), or an error wrapping ErrNotFound. Recovery reads only this
// for the registry; the job actor loads the rest.
func (s *Store) LastTransition(id uint64) (t *api.Transition, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	t, err = s.lastTransition(id)
	if err != nil {
		return nil, fmt.Errorf("persistence: last transition of job %d: %w", id, err)
	}
	if t == nil {
		return nil, fmt.Errorf("persistence: last transition of job %d: %w", id, ErrNotFound)
	}
	return t, nil
}
