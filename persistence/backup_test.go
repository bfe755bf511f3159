package persistence

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// backupOf opens a store in a new directory, gives it a node id unless
// noID, and writes a backup of it; it returns the backup's directory and
// the node's id as the node has it after the backup.
func backupOf(t *testing.T, noID bool) (backup, id string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !noID {
		if _, err := s.NodeID(); err != nil {
			t.Fatal(err)
		}
	}
	backup = filepath.Join(t.TempDir(), "backup")
	if _, _, err := s.Checkpoint(backup); err != nil {
		t.Fatal(err)
	}
	if id, err = s.NodeID(); err != nil {
		t.Fatal(err)
	}
	return backup, id
}

// TestBackupHoldsNodeID: a backup holds the node's id (made by the backup
// when the node had none, so that the original and the copy agree) and a
// manifest naming the backup format, the id and the store's format
// version; a store opens on it, and its node id is the original's.
func TestBackupHoldsNodeID(t *testing.T) {
	for _, noID := range []bool{false, true} {
		backup, id := backupOf(t, noID)
		got, ok, err := readNodeID(vfs.Default, backup)
		if err != nil || !ok || got != id {
			t.Fatalf("node had an id: %v; backup's %s: %q, %v, %v; want %q", !noID, NodeIDFile, got, ok, err, id)
		}
		m, ok, err := ReadBackupManifest(vfs.Default, backup)
		if err != nil || !ok {
			t.Fatalf("manifest: %v, %v", ok, err)
		}
		if m.Format != BackupFormat || m.NodeID != id || m.StoreFormat != FormatVersion || m.Taken.IsZero() {
			t.Fatalf("manifest %+v; want format %d, node %s, store format %d, a time", m, BackupFormat, id, FormatVersion)
		}
		for _, name := range []string{NodeIDFile, BackupManifestFile} {
			if fi, err := os.Stat(filepath.Join(backup, name)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("%s: %v, %v; want mode 0600", name, fi, err)
			}
		}
		s, err := Open(Options{Dir: backup, OnFatal: func(error) {}})
		if err != nil {
			t.Fatalf("open the backup: %v", err)
		}
		if got, err := s.NodeID(); err != nil || got != id {
			t.Fatalf("restored node id %q, %v; want %q", got, err, id)
		}
		s.Close()
	}
}

// TestRestoreRefusesBadBackup: a backup whose node id is missing or is not
// the manifest's, or whose manifest is of a newer backup format or does
// not parse, is refused before the store is opened, naming the problem;
// put right, it opens.
func TestRestoreRefusesBadBackup(t *testing.T) {
	manifest := func(t *testing.T, backup string, edit func(m map[string]any)) {
		t.Helper()
		path := filepath.Join(backup, BackupManifestFile)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if b, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, backup string)
		want  string
	}{
		{"node id missing", func(t *testing.T, backup string) {
			if err := os.Remove(filepath.Join(backup, NodeIDFile)); err != nil {
				t.Fatal(err)
			}
		}, "node-id file is missing"},
		{"another node id", func(t *testing.T, backup string) {
			if err := os.WriteFile(filepath.Join(backup, NodeIDFile), []byte("someone-else\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "node-id file says someone-else"},
		{"newer backup format", func(t *testing.T, backup string) {
			manifest(t, backup, func(m map[string]any) { m["backup_format"] = BackupFormat + 1 })
		}, "backup format 2, newer than this binary's 1"},
		{"no backup format", func(t *testing.T, backup string) {
			manifest(t, backup, func(m map[string]any) { delete(m, "backup_format") })
		}, "backup format 0: not a loadnode backup manifest"},
		{"no node id in the manifest", func(t *testing.T, backup string) {
			manifest(t, backup, func(m map[string]any) { m["node_id"] = "" })
		}, "no node id"},
		{"not JSON", func(t *testing.T, backup string) {
			if err := os.WriteFile(filepath.Join(backup, BackupManifestFile), []byte("MANIFEST-000001\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "not a loadnode backup manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backup, id := backupOf(t, false)
			saved, err := os.ReadFile(filepath.Join(backup, BackupManifestFile))
			if err != nil {
				t.Fatal(err)
			}
			tc.spoil(t, backup)
			_, err = Open(Options{Dir: backup, OnFatal: func(error) {}})
			if !errors.Is(err, ErrBackupFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("open: %v; want ErrBackupFormat saying %q", err, tc.want)
			}
			// Put right: the backup's id and manifest.
			if err := os.WriteFile(filepath.Join(backup, NodeIDFile), []byte(id+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(backup, BackupManifestFile), saved, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: backup, OnFatal: func(error) {}})
			if err != nil {
				t.Fatalf("open after the repair: %v", err)
			}
			s.Close()
		})
	}
}
