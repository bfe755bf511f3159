package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/loadnode/loadnode/api"
)

// TestBackgroundErrors (issue 12, defect 1): a flush or compaction that
// fails for want of space fails the store once (OnFatal, ErrDiskFull);
// other background errors, which Pebble retries in a loop, are logged at
// most once per backgroundLogEvery.
func TestBackgroundErrors(t *testing.T) {
	var log bytes.Buffer
	var fatals []error
	s, err := Open(Options{Dir: "db", FS: vfs.NewMem(), Logger: slog.New(slog.NewTextHandler(&log, nil)),
		OnFatal: func(err error) { fatals = append(fatals, err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 100 {
		s.onBackgroundError(fmt.Errorf("flush: %w", syscall.EIO))
	}
	if n := strings.Count(log.String(), "background error"); n != 1 {
		t.Errorf("100 background errors logged %d lines, want 1:\n%s", n, log.String())
	}
	if len(fatals) != 0 || s.Failed() != nil {
		t.Fatalf("a transient background error failed the store: %v", fatals)
	}
	for range 50 {
		s.onBackgroundError(fmt.Errorf("write 000006.sst: %w", syscall.ENOSPC))
	}
	if len(fatals) != 1 || !errors.Is(fatals[0], ErrDiskFull) || !errors.Is(s.Failed(), ErrStoreFailed) {
		t.Fatalf("full disk: OnFatal got %v, Failed %v", fatals, s.Failed())
	}
	if n := strings.Count(log.String(), "the disk is full"); n != 1 {
		t.Errorf("the full disk was logged %d times, want 1", n)
	}
	if got := FatalAdvice(fatals[0], "/data"); !strings.Contains(got, "free space") {
		t.Errorf("advice for a full disk: %q", got)
	}
	if got := FatalAdvice(fmt.Errorf("x: %w", pebble.ErrCorruption), "/data"); !strings.Contains(got, "will not repair") {
		t.Errorf("advice for corruption: %q", got)
	}
}

// largeCommitChild, set in the environment, makes
// TestDiskFullLargeCommitExits run the store itself (in a child process,
// since the default OnFatal exits).
const largeCommitChild = "LOADNODE_TEST_LARGE_COMMIT_CHILD"

// TestDiskFullLargeCommitExits (issue 25, D10): a batch larger than half a
// memtable makes Pebble rotate its write-ahead log inside the commit; when
// the disk is full there, Pebble panicked with its mutex released and the
// process died of "sync: unlock of unlocked mutex" (exit status 2, no
// message). The store must stop the process as for any full disk: status
// 70 and FatalAdvice's message. The child process commits such a batch
// (1 MiB memtables, a 2 MiB batch) while every write fails with ENOSPC.
func TestDiskFullLargeCommitExits(t *testing.T) {
	if os.Getenv(largeCommitChild) == "1" {
		largeCommitOnFullDisk(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFullLargeCommitExits$", "-test.count=1")
	cmd.Env = append(os.Environ(), largeCommitChild+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitCodeStoreFailed {
		t.Fatalf("child: %v, want exit status %d; its output:\n%s", err, exitCodeStoreFailed, out)
	}
	if !strings.Contains(string(out), "the disk holding "+testDir+" is full: free space, then restart") {
		t.Errorf("the child's last words do not say to free space:\n%s", out)
	}
}

// largeCommitOnFullDisk commits a large batch onto a disk that refuses
// every write with ENOSPC; the default OnFatal ends the process.
func largeCommitOnFullDisk(t *testing.T) {
	full := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileWrite || op.Kind == errorfs.OpFileWriteAt {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})}
	s, err := Open(Options{
		Dir: testDir, FS: errorfs.Wrap(vfs.NewMem(), full),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)),
		tune:   func(o *pebble.Options) { o.MemTableSize = 1 << 20 },
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := mustCreate(t, s, 1, "a")
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	const rows = 2048
	c := &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Ranges: []Range{{Partition: 0, From: 0, To: rows}},
		Stats: &api.JobStats{LoadedRows: rows, CommittedBatches: 1}}
	for o := range int64(rows) {
		c.Rows = append(c.Rows, KV{Key: rowKey(rec.Id, 0, o), Value: bytes.Repeat([]byte{'v'}, 1<<10)})
	}
	full.On()
	err = s.CommitBatch(c)
	t.Fatalf("CommitBatch on a full disk returned (%v); the process should have exited", err)
}

// TestFullFSScope (issue 25, D10): only writes refused for want of space
// in the data directory fail the store; a checkpoint's files elsewhere and
// other errors pass through untouched, and the error reaches the caller
// unchanged.
func TestFullFSScope(t *testing.T) {
	enospc := fmt.Errorf("injected: %w", syscall.ENOSPC)
	write := func(f vfs.File) error { _, err := f.Write([]byte("x")); return err }
	sync := func(f vfs.File) error { return f.Sync() }
	// Pebble ignores a failed preallocation (the writes may still fit).
	prealloc := func(f vfs.File) error { return f.Preallocate(0, 64<<20) }
	cases := []struct {
		name, path string
		kind       errorfs.OpKind
		call       func(vfs.File) error
		err        error
		full, wal  bool
	}{
		{"data file write, full", "db/000004.log", errorfs.OpFileWrite, write, enospc, true, false},
		{"data file sync, quota", "db/000005.sst", errorfs.OpFileSync, sync, fmt.Errorf("w: %w", syscall.EDQUOT), true, false},
		{"log write, other error", "db/000004.log", errorfs.OpFileWrite, write, errorfs.ErrInjected, false, true},
		{"log sync, other error", "db/000004.log", errorfs.OpFileSync, sync, errorfs.ErrInjected, false, true},
		{"table write, other error", "db/000005.sst", errorfs.OpFileWrite, write, errorfs.ErrInjected, false, false},
		{"data file preallocate, full", "db/000004.log", errorfs.OpFilePreallocate, prealloc, enospc, false, false},
		{"checkpoint file write, full", "backup/000004.sst", errorfs.OpFileWrite, write, enospc, false, false},
		{"checkpoint inside the data dir, full", "db/backup/000004.sst", errorfs.OpFileWrite, write, enospc, false, false},
		{"checkpoint log write, other error", "backup/000004.log", errorfs.OpFileWrite, write, errorfs.ErrInjected, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
				if op.Kind == tc.kind {
					return tc.err
				}
				return nil
			})
			mem := vfs.NewMem()
			if err := mem.MkdirAll(filepath.Dir(tc.path), 0o700); err != nil {
				t.Fatal(err)
			}
			var got, wal []error
			fs := newFullFS(errorfs.Wrap(mem, inj), "db/", func(err error) { got = append(got, err) }, func(err error) { wal = append(wal, err) })
			f, err := fs.Create(tc.path, vfs.WriteCategoryUnspecified)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := tc.call(f); err != tc.err {
				t.Errorf("got %v, want the error unchanged: %v", err, tc.err)
			}
			if tc.full != (len(got) == 1) || len(got) > 1 {
				t.Fatalf("onFull called %d times (%v), want full=%v", len(got), got, tc.full)
			}
			if tc.full && !strings.Contains(got[0].Error(), tc.path) {
				t.Errorf("onFull(%v) does not name the file %s", got[0], tc.path)
			}
			if tc.wal != (len(wal) == 1) || len(wal) > 1 {
				t.Fatalf("onWAL called %d times (%v), want wal=%v", len(wal), wal, tc.wal)
			}
			if tc.wal && !strings.Contains(wal[0].Error(), tc.path) {
				t.Errorf("onWAL(%v) does not name the file %s", wal[0], tc.path)
			}
		})
	}
}
