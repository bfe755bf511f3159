package persistence

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// NodeIDFile is the file in the data directory holding the node's id. A
// backup holds it too (Checkpoint): the id owns the node's job state in
// shared databases, so a node restored without it would start those jobs
// over.
const NodeIDFile = "node-id"

// maxNodeIDBytes bounds a node id read from disk.
const maxNodeIDBytes = 200

// NodeID returns the node's stable id: the content of dir/node-id on fsys
// (the store's filesystem), made once (32 random hex digits, 0600 through
// the store's private FS, synced with its directory) when absent. It owns
// the node's job state in shared databases (postgres.Options.Owner) unless
// the database's config names an owner.
func NodeID(fsys vfs.FS, dir string) (string, error) {
	id, ok, err := readNodeID(fsys, dir)
	if err != nil || ok {
		return id, err
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("persistence: make node id: %w", err)
	}
	id = hex.EncodeToString(r[:])
	if err := writeFileSync(fsys, dir, NodeIDFile, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("persistence: write node id: %w", err)
	}
	return id, nil
}

// NodeID is NodeID on the store's data directory; concurrent first calls
// make one id.
func (s *Store) NodeID() (string, error) {
	s.nodeIDMu.Lock()
	defer s.nodeIDMu.Unlock()
	return NodeID(s.fs, s.dir)
}

// readNodeID reads dir/node-id; ok is false when there is none.
func readNodeID(fsys vfs.FS, dir string) (id string, ok bool, err error) {
	path := fsys.PathJoin(dir, NodeIDFile)
	f, err := fsys.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "does not exist") {
			return "", false, nil
		}
		return "", false, fmt.Errorf("persistence: read node id: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxNodeIDBytes+1))
	f.Close()
	if err != nil {
		return "", false, fmt.Errorf("persistence: read node id: %w", err)
	}
	id = strings.TrimSpace(string(b))
	if id == "" || len(id) > maxNodeIDBytes {
		return "", false, fmt.Errorf("persistence: %s: not a node id (%d bytes); remove it to make a new one, which starts this node's jobs in shared databases over", path, len(id))
	}
	return id, true, nil
}

// writeFileSync writes dir/name atomically and durably: name.tmp, synced,
// renamed over name, and the directory synced.
func writeFileSync(fsys vfs.FS, dir, name string, data []byte) error {
	path := fsys.PathJoin(dir, name)
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err == nil {
		var d vfs.File
		if d, err = fsys.OpenDir(dir); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	return err
}
