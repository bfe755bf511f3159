package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// FormatVersion is the store format this binary writes: the key layout of
// doc.go and the encodings of its values. A store records the version
// that wrote it (m/format_version); a binary opens a store of a version
// from MinFormatVersion to FormatVersion and refuses any other, naming
// both versions. A change of the layout that an older binary would
// misread raises FormatVersion (and, with a migration on open, keeps
// MinFormatVersion).
//
// Version 1 is the layout of every release before the key existed: a
// store without the key is version 1, and gets the key on its first open.
// Version 2 stores a DUPLICATE table's rows in row blocks (rowblock.go),
// which a version-1 binary would not see; it reads a version-1 store as
// it is (rows one per key are read beside the blocks) and records
// version 2 on opening it, so that the older binary then refuses it.
// Version 3 may compress a row block's rows (rowBlockV2), which a
// version-2 binary would refuse to decode; it reads versions 1 and 2 as
// they are and records version 3 on opening them.
const (
	FormatVersion    = 3
	MinFormatVersion = 1
)

// formatVersionKey holds the store's format version, a big-endian uint32.
const formatVersionKey = "m/format_version"

// ErrFormatVersion is wrapped by the refusal of a store whose format
// version this binary does not read.
var ErrFormatVersion = errors.New("persistence: unsupported store format version")

// checkFormatVersion reads the store's format version, refuses one this
// binary does not read, and records FormatVersion in a store that has no
// version yet (new, or written before the key existed).
// REQUIRES: the caller has deferred s.recoverFatal.
func (s *Store) checkFormatVersion() error {
	v, ok, err := s.get([]byte(formatVersionKey))
	if err != nil {
		return fmt.Errorf("persistence: read the format version: %w", err)
	}
	if !ok {
		b := s.db.NewBatch()
		_ = b.Set([]byte(formatVersionKey), binary.BigEndian.AppendUint32(nil, FormatVersion), nil)
		s.format = FormatVersion
		return s.commit(b, "record the format version")
	}
	if len(v) != 4 {
		return fmt.Errorf("%w: the format version of the store in %s is %d bytes, not 4", ErrFormatVersion, s.dir, len(v))
	}
	switch got := binary.BigEndian.Uint32(v); {
	case got > FormatVersion:
		return fmt.Errorf("%w: the store in %s has format version %d, newer than this binary's version %d: "+
			"it was written by a newer loadnode; run that release (or a newer one) on it, see docs/backups.md, \"Upgrades\"", ErrFormatVersion, s.dir, got, FormatVersion)
	case got < MinFormatVersion:
		return fmt.Errorf("%w: the store in %s has format version %d, older than the oldest this binary reads (version %d; it writes %d): "+
			"open it with an intermediate release first, see docs/backups.md, \"Upgrades\"", ErrFormatVersion, s.dir, got, MinFormatVersion, FormatVersion)
	case got < FormatVersion:
		// Readable as it is: record the version this binary writes
		// before it writes anything.
		b := s.db.NewBatch()
		_ = b.Set([]byte(formatVersionKey), binary.BigEndian.AppendUint32(nil, FormatVersion), nil)
		if err := s.commit(b, "record the format version"); err != nil {
			return err
		}
		s.log.Info("persistence: store format upgraded", "from", got, "to", FormatVersion)
		s.format = FormatVersion
	default:
		s.format = got
	}
	return nil
}

// StoreFormatVersion returns the format version recorded in the store in
// dir (1 when it has none) without checking it or opening the store for
// loadnode; the store must not be open elsewhere.
func StoreFormatVersion(dir string) (uint32, error) {
	db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("persistence: open %s: %w", dir, err)
	}
	defer db.Close()
	v, closer, err := db.Get([]byte(formatVersionKey))
	if errors.Is(err, pebble.ErrNotFound) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("persistence: read the format version of %s: %w", dir, err)
	}
	defer closer.Close()
	if len(v) != 4 {
		return 0, fmt.Errorf("%w: %d bytes", ErrFormatVersion, len(v))
	}
	return binary.BigEndian.Uint32(v), nil
}

// SetStoreFormatVersion records version v in the store in dir, which must
// not be open. It exists for tests (a store of a newer version) and for a
// person who downgrades a store by hand after reading the release notes;
// loadnode never calls it.
func SetStoreFormatVersion(dir string, v uint32) error {
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		return fmt.Errorf("persistence: open %s: %w", dir, err)
	}
	if err := db.Set([]byte(formatVersionKey), binary.BigEndian.AppendUint32(nil, v), pebble.Sync); err != nil {
		db.Close()
		return fmt.Errorf("persistence: set the format version of %s: %w", dir, err)
	}
	return db.Close()
}
