package node

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// nodeIDFile is the file in the data directory holding the node's id.
const nodeIDFile = "node-id"

// nodeID returns the node's stable id: the content of dataDir/node-id,
// made once (32 random hex digits, 0600) when absent. It owns the node's
// job state in shared databases (postgres.Options.Owner) unless the
// database's config names an owner.
func nodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, nodeIDFile)
	if b, err := os.ReadFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		if id == "" || len(id) > 200 {
			return "", fmt.Errorf("node: %s: not a node id (%d bytes); remove it to make a new one, which starts this node's jobs in shared databases over", path, len(id))
		}
		return id, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("node: read node id: %w", err)
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("node: make node id: %w", err)
	}
	id := hex.EncodeToString(r[:])
	// Written aside and linked in: two starts racing keep one id.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("node: write node id: %w", err)
	}
	defer os.Remove(tmp)
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if errors.Is(err, fs.ErrExist) {
		return nodeID(dataDir)
	}
	if err != nil {
		return "", fmt.Errorf("node: write node id: %w", err)
	}
	return id, nil
}
