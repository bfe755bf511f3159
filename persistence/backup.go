package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cockroachdb/pebble/v2"
)

// ErrBackupDir is wrapped by the refusal of a backup directory that is not
// absolute, exists and is not empty, or is not a directory.
var ErrBackupDir = errors.New("persistence: backup directory")

// Checkpoint writes a consistent copy of the open store to dir, online
// (Pebble's checkpoint: the durable state as of one instant, every
// committed batch wholly in or wholly out, its WAL flushed first). dir must
// be absolute and must not exist or be an empty directory; its files get
// mode 0600 and its directories 0700. On the store's filesystem the table
// files are hard links (they are immutable), so the copy costs little
// space until the store compacts them away. A store opened on dir is the
// node as of the checkpoint. It returns the copy's file count and bytes.
func (s *Store) Checkpoint(dir string) (files int, bytes int64, err error) {
	release, gerr := s.enter()
	if gerr != nil {
		return 0, 0, gerr
	}
	defer release()
	if !filepath.IsAbs(dir) {
		return 0, 0, fmt.Errorf("%w %q: must be an absolute path", ErrBackupDir, dir)
	}
	switch es, rerr := os.ReadDir(dir); {
	case errors.Is(rerr, fs.ErrNotExist):
	case rerr != nil:
		return 0, 0, fmt.Errorf("%w %s: %w", ErrBackupDir, dir, rerr)
	case len(es) > 0:
		return 0, 0, fmt.Errorf("%w %s: exists and is not empty (%d entries); give a new or an empty directory", ErrBackupDir, dir, len(es))
	default:
		// Pebble creates the directory itself.
		if err := os.Remove(dir); err != nil {
			return 0, 0, fmt.Errorf("%w %s: %w", ErrBackupDir, dir, err)
		}
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return 0, 0, fmt.Errorf("%w %s: %w", ErrBackupDir, parent, err)
		}
	}
	defer s.recoverFatal(&err)
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return 0, 0, fmt.Errorf("persistence: checkpoint to %s: %w", dir, err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o700)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += info.Size()
		return os.Chmod(p, 0o600)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("persistence: checkpoint to %s: permissions: %w", dir, err)
	}
	return files, bytes, nil
}

// Checkpoint is Store.Checkpoint, for the node's backup request.
func (m *Meta) Checkpoint(dir string) (files int, bytes int64, err error) { return m.s.Checkpoint(dir) }
