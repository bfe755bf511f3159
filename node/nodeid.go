package node

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

// nodeIDFile is the file in the data directory holding the node's id.
const nodeIDFile = "node-id"

// nodeID returns the node's stable id: the content of dataDir/node-id on
// fsys (the store's filesystem), made once (32 random hex digits, 0600
// through the store's private FS, synced with its directory) when absent.
// It owns the node's job state in shared databases
// (postgres.Options.Owner) unless the database's config names an owner.
func nodeID(fsys vfs.FS, dataDir string) (string, error) {
	path := fsys.PathJoin(dataDir, nodeIDFile)
	if f, err := fsys.Open(path); err == nil {
		b, err := io.ReadAll(io.LimitReader(f, 1024))
		f.Close()
		if err != nil {
			return "", fmt.Errorf("node: read node id: %w", err)
		}
		id := strings.TrimSpace(string(b))
		if id == "" || len(id) > 200 {
			return "", fmt.Errorf("node: %s: not a node id (%d bytes); remove it to make a new one, which starts this node's jobs in shared databases over", path, len(id))
		}
		return id, nil
	} else if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "does not exist") {
		return "", fmt.Errorf("node: read node id: %w", err)
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("node: make node id: %w", err)
	}
	id := hex.EncodeToString(r[:])
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", fmt.Errorf("node: write node id: %w", err)
	}
	_, err = f.Write([]byte(id + "\n"))
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
		if d, err = fsys.OpenDir(dataDir); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("node: write node id: %w", err)
	}
	return id, nil
}
