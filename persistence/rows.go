package persistence

import (
	"fmt"
)

// CountRows returns the number of rows stored in a table, or an error
// wrapping ErrNotFound. It reads every per-row key and every block's
// header: O(rows) for rows stored one per key, O(blocks) for the others.
func (s *Store) CountRows(table string) (n int64, err error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	if _, err := s.Table(table); err != nil {
		return 0, fmt.Errorf("persistence: count rows: %w", err)
	}
	defer s.recoverFatal(&err)
	bp, rp := tableBlockPrefix(table), tableRowPrefix(table)
	it, ri, err := s.rowIters(bp, rp)
	if err != nil {
		return 0, fmt.Errorf("persistence: count rows of %q: %w", table, err)
	}
	defer closeIter(it, &err)
	defer closeIter(ri, &err)
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return 0, fmt.Errorf("persistence: count rows of %q: %w", table, err)
		}
		b, err := openRowBlock(v)
		if err != nil {
			return 0, fmt.Errorf("persistence: count rows of %q: block %x: %w", table, it.Key()[len(bp):], err)
		}
		n += int64(b.count)
	}
	if err := it.Error(); err != nil {
		return 0, fmt.Errorf("persistence: count rows of %q: %w", table, err)
	}
	for valid := ri.First(); valid; valid = ri.Next() {
		n++
	}
	if err := ri.Error(); err != nil {
		return 0, fmt.Errorf("persistence: count rows of %q: %w", table, err)
	}
	return n, nil
}

// ScanRows calls fn with the first limit rows of a table (all rows if limit
// <= 0) in row-key order; key is the row key as given to CommitBatch. fn may
// keep key and value. An error from fn stops the scan and is returned as is.
// An unknown table gives an error wrapping ErrNotFound.
func (s *Store) ScanRows(table string, limit int, fn func(key, value []byte) error) error {
	return s.ScanRowsAfter(table, nil, limit, fn)
}

// TruncateTable deletes every row of a table in one synced batch, or
// returns an error wrapping ErrNotFound. Progress and statistics stay.
func (s *Store) TruncateTable(table string) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if _, err := s.Table(table); err != nil {
		return fmt.Errorf("persistence: truncate table: %w", err)
	}
	defer s.recoverFatal(&err)
	defer s.models.lock(table)() // not between a merge's read and its write
	p := tableRowPrefix(table)
	b := s.db.NewBatch()
	_ = b.DeleteRange(p, prefixEnd(p), nil)
	bp := tableBlockPrefix(table)
	_ = b.DeleteRange(bp, prefixEnd(bp), nil)
	tp := tableTombPrefix(table)
	_ = b.DeleteRange(tp, prefixEnd(tp), nil)
	return s.commit(b, fmt.Sprintf("truncate table %q", table))
}
