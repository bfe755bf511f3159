package persistence

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDataDirPrivate (issue 12, defect 3): a new data dir is 0700 and every
// file the store writes in it 0600, even under a permissive umask.
func TestDataDirPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, 1, "private")
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
}

func checkModes(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := filePerm
		if fi.IsDir() {
			want = dirPerm
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s is %v, want %v", path, got, want)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("only %d entries under %s", n, dir)
	}
}

// TestWideDataDirWarns: an existing data dir others can read is reported
// at WARN, and the files an older node left world-readable are narrowed.
func TestWideDataDirWarns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, e := range must(os.ReadDir(dir)) {
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	s, err = Open(Options{Dir: dir, OnFatal: func(error) {}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "OPEN TO OTHER USERS") {
		t.Errorf("no warning about the 0755 data dir:\n%s", log.String())
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	checkModes(t, dir)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestLockHeldSaysSo (issue 12, defect 9): a store opened on a data dir
// another process holds says another loadnode holds its lock, not
// "resource temporarily unavailable" alone. The other process is this test
// binary run again (a lock is per process).
func TestLockHeldSaysSo(t *testing.T) {
	if dir := os.Getenv("PERSISTENCE_LOCK_HELPER"); dir != "" {
		_, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
		fmt.Printf("open: %v\n", err)
		return
	}
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHeldSaysSo$")
	cmd.Env = append(os.Environ(), "PERSISTENCE_LOCK_HELPER="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "open: persistence: another loadnode holds the lock on "+dir) {
		t.Fatalf("second open:\n%s", out)
	}
}
