package persistence

import (
	"bytes"
	"fmt"
)

// ScanRowsAfter is ScanRows starting after the row key after (exclusive;
// nil starts at the first row), so that a caller can page through a large
// table with the last key of the previous page as the cursor.
func (s *Store) ScanRowsAfter(table string, after []byte, limit int, fn func(key, value []byte) error) (err error) {
	if err := s.usable(); err != nil {
		return err
	}
	if _, err := s.Table(table); err != nil {
		return fmt.Errorf("persistence: scan rows: %w", err)
	}
	defer s.recoverFatal(&err)
	lower := tableRowPrefix(table)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
	}
	defer closeIter(it, &err)
	start := append(append([]byte(nil), lower...), after...)
	valid := it.SeekGE(start)
	if valid && len(after) > 0 && bytes.Equal(it.Key(), start) {
		valid = it.Next()
	}
	for n := 0; valid && (limit <= 0 || n < limit); valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
		}
		key := append([]byte(nil), it.Key()[len(lower):]...)
		if err := fn(key, append([]byte(nil), v...)); err != nil {
			return err
		}
		n++
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("persistence: scan rows of %q: %w", table, err)
	}
	return nil
}
