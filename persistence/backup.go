package persistence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrBackupDir is wrapped by the refusal of a backup directory that is not
// absolute, exists and is not empty, or is not a directory.
var ErrBackupDir = errors.New("persistence: backup directory")

// BackupFormat is the backup layout this binary writes, and the newest it
// restores: a Pebble checkpoint of the store, the node's id (NodeIDFile)
// and the manifest (BackupManifestFile), written last.
const BackupFormat = 1

// BackupManifestFile is the manifest of a backup, in the backup's
// directory. Its presence marks a complete backup; a store opened on a
// directory that has one is a restore, checked by Open (checkRestore).
const BackupManifestFile = "backup.json"

// ErrBackupFormat is wrapped by the refusal to open a directory whose
// backup manifest this binary cannot restore: a newer backup format, a
// manifest that does not parse, or a node id missing or not the backup's.
var ErrBackupFormat = errors.New("persistence: cannot restore backup")

// BackupManifest describes a backup (BackupManifestFile, JSON).
type BackupManifest struct {
	// Format is the backup layout, BackupFormat when written.
	Format int `json:"backup_format"`
	// NodeID is the id of the node the backup is of; the backup's
	// NodeIDFile holds it too.
	NodeID string `json:"node_id"`
	// StoreFormat is the store's format version at the checkpoint (the
	// store in the backup records it as well, and Open checks that one).
	StoreFormat uint32 `json:"store_format"`
	// Taken is when the checkpoint was taken, in UTC.
	Taken time.Time `json:"taken"`
}

// Checkpoint writes a backup of the open store to dir, online: a Pebble
// checkpoint (the durable state as of one instant, every committed batch
// wholly in or wholly out, its WAL flushed first), the node's id (made
// first if the node has none yet: the copy and the original are one node
// to a shared database) and, last, the manifest. dir must be absolute and
// must not exist or be an empty directory; its files get mode 0600 and
// its directories 0700. On the store's filesystem the table files are
// hard links (they are immutable), so the copy costs little space until
// the store compacts them away. A store opened on dir is the node as of
// the checkpoint. A failed backup removes dir. It returns the copy's file
// count and bytes.
func (s *Store) Checkpoint(dir string) (files int, bytes int64, err error) {
	if err := s.enter(); err != nil {
		return 0, 0, err
	}
	defer s.leave()
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
	id, err := s.NodeID()
	if err != nil {
		return 0, 0, err
	}
	defer s.recoverFatal(&err)
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return 0, 0, fmt.Errorf("persistence: checkpoint to %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			// dir is the checkpoint's: it did not exist, or was empty.
			_ = os.RemoveAll(dir)
		}
	}()
	if err := writeFileSync(s.fs, dir, NodeIDFile, []byte(id+"\n")); err != nil {
		return 0, 0, fmt.Errorf("persistence: backup to %s: node id: %w", dir, err)
	}
	m, err := json.MarshalIndent(BackupManifest{Format: BackupFormat, NodeID: id, StoreFormat: s.format, Taken: time.Now().UTC()}, "", "  ")
	if err == nil {
		err = writeFileSync(s.fs, dir, BackupManifestFile, append(m, '\n'))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("persistence: backup to %s: manifest: %w", dir, err)
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

// ReadBackupManifest reads dir's backup manifest; ok is false when dir has
// none (a data directory that was never restored from a backup).
func ReadBackupManifest(fsys vfs.FS, dir string) (m *BackupManifest, ok bool, err error) {
	path := fsys.PathJoin(dir, BackupManifestFile)
	f, err := fsys.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "does not exist") {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("%w: %s: %w", ErrBackupFormat, path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %w", ErrBackupFormat, path, err)
	}
	if len(b) > maxManifestBytes {
		return nil, false, fmt.Errorf("%w: %s: over %d bytes, not a loadnode backup manifest", ErrBackupFormat, path, maxManifestBytes)
	}
	m = &BackupManifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, false, fmt.Errorf("%w: %s: not a loadnode backup manifest: %w", ErrBackupFormat, path, err)
	}
	switch {
	case m.Format > BackupFormat:
		return nil, false, fmt.Errorf("%w: %s: backup format %d, newer than this binary's %d: restore it with the loadnode release that wrote it (or a newer one)",
			ErrBackupFormat, path, m.Format, BackupFormat)
	case m.Format < 1:
		return nil, false, fmt.Errorf("%w: %s: backup format %d: not a loadnode backup manifest", ErrBackupFormat, path, m.Format)
	case m.NodeID == "" || len(m.NodeID) > maxNodeIDBytes:
		return nil, false, fmt.Errorf("%w: %s: no node id (%d bytes)", ErrBackupFormat, path, len(m.NodeID))
	}
	return m, true, nil
}

// maxManifestBytes bounds a backup manifest read from disk.
const maxManifestBytes = 64 << 10

// checkRestore refuses to open dir when it is a backup (it has a
// manifest) that this binary cannot restore, or whose node id is missing
// or is not the backup's: a node started on it would make a new id and
// start every job that loads into a shared database over from its spec's
// offsets.
func checkRestore(fsys vfs.FS, dir string) error {
	m, ok, err := ReadBackupManifest(fsys, dir)
	if err != nil || !ok {
		return err
	}
	id, ok, err := readNodeID(fsys, dir)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %s is a backup of node %s: %w", ErrBackupFormat, dir, m.NodeID, err)
	case !ok:
		return fmt.Errorf("%w: %s is a backup of node %s, but its %s file is missing: copy the backup whole (a node without it would get a new id, "+
			"and every job loading into PostgreSQL would start over from its spec's offsets)", ErrBackupFormat, dir, m.NodeID, NodeIDFile)
	case id != m.NodeID:
		return fmt.Errorf("%w: %s is a backup of node %s, but its %s file says %s: copy the backup whole, or remove %s to give the node this id on purpose",
			ErrBackupFormat, dir, m.NodeID, NodeIDFile, id, BackupManifestFile)
	}
	return nil
}

// Checkpoint is Store.Checkpoint, for the node's backup request.
func (m *Meta) Checkpoint(dir string) (files int, bytes int64, err error) { return m.s.Checkpoint(dir) }
