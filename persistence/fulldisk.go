package persistence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrDiskFull is wrapped by the fatal error of a store whose disk is full
// (or whose quota is spent): Pebble failed to write a flush or a compaction
// for want of space, and retrying in the background would only spin.
var ErrDiskFull = errors.New("persistence: no space left on the data directory's disk")

// backgroundLogEvery bounds how often a background error (other than a full
// disk, which is fatal) is logged: Pebble retries failed flushes and
// compactions in a loop, which logged ~20 lines a second.
const backgroundLogEvery = 10 * time.Second

// bgErrors rate-limits background error lines.
type bgErrors struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// isDiskFull reports whether err is a write refused for want of space.
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// onBackgroundError is Pebble's EventListener.BackgroundError: a flush or
// compaction failed. A full disk fails the store (OnFatal: by default the
// process exits 70 with a message saying to free space): loading stops
// explicitly instead of stalling behind a memtable that can never be
// flushed. Other background errors are retried by Pebble and logged here
// at most once per backgroundLogEvery, with the count of lines held back.
//
// It runs on a Pebble goroutine: it never panics (unlike Store.fatal).
func (s *Store) onBackgroundError(err error) {
	if isDiskFull(err) {
		s.diskFull(err)
		return
	}
	s.bg.mu.Lock()
	now := time.Now()
	if !s.bg.last.IsZero() && now.Sub(s.bg.last) < backgroundLogEvery {
		s.bg.suppressed++
		s.bg.mu.Unlock()
		return
	}
	n := s.bg.suppressed
	s.bg.last, s.bg.suppressed = now, 0
	s.bg.mu.Unlock()
	s.log.Error("persistence: background error (Pebble retries it)", "err", err, "suppressed", n, "component", "pebble")
}

// diskFull fails the store for want of space: it records ErrDiskFull,
// logs once and calls OnFatal once (by default the process exits 70 with
// FatalAdvice's message to free space). It never panics: it runs on Pebble
// goroutines and inside Pebble's own calls (fullFS).
func (s *Store) diskFull(err error) {
	cause := fmt.Errorf("%w (%s): %w", ErrDiskFull, s.dir, err)
	s.failed.CompareAndSwap(nil, &cause)
	s.fatalOne.Do(func() {
		s.log.Error("persistence: the disk is full; loading stops: free space in "+s.dir+" and restart (nothing acknowledged is lost)", "err", err)
		s.onFatal(cause)
	})
}

// walFailed fails the store on a failed write-ahead log file (fullFS): it
// records the cause, logs once and calls OnFatal once (by default the
// process exits 70). It never panics, for the reason diskFull does not.
func (s *Store) walFailed(err error) {
	cause := fmt.Errorf("persistence: write-ahead log failed: %w", err)
	s.failed.CompareAndSwap(nil, &cause)
	s.fatalOne.Do(func() {
		s.log.Error("persistence: fatal store error, the process must stop: "+cause.Error(), "err", err)
		s.onFatal(cause)
	})
}

// fullFS is the filesystem Pebble is given: a write to the data directory
// that is refused for want of space (ENOSPC, EDQUOT: a write, a sync, a
// close, a create, a rename or link into it) fails the store
// (Store.diskFull) before Pebble sees the error, on the goroutine that hit
// it. Pebble must not be the first to see it: when it rotates the
// write-ahead log for a batch larger than half a memtable, a failed write
// of the old log or creation of the new one makes it panic with its own
// mutex released, and its deferred unlock turns that panic into a fatal
// runtime error ("sync: unlock of unlocked mutex", exit status 2) that no
// recover can catch. With the default OnFatal the process has exited
// (status 70) before the write returns; an OnFatal that returns (tests)
// lets the error go on to Pebble unchanged.
//
// Only files directly in the data directory count: Pebble keeps all of its
// files there, while a checkpoint (Checkpoint) writes elsewhere through the
// same filesystem, and a backup onto a full disk fails the backup, not the
// node.
//
// Any other failure to create, write, sync or close a write-ahead log file
// is fatal the same way (onWAL, Store.walFailed): Pebble cannot go on after
// one either, and it does not always stop cleanly. A commit that finds the
// log writer already failed panics holding Pebble's commit mutex (every
// later commit then blocks for good), and a log rotation that finds it
// failed (a memtable switch, the flush at Close) panics the way described
// above. The store must have failed before either happens, so that no
// later call, Close's flush included, reaches Pebble.
type fullFS struct {
	vfs.FS
	dir    string // filepath.Clean of the data directory
	onFull func(err error)
	onWAL  func(err error)
}

var _ vfs.FS = fullFS{}

func newFullFS(inner vfs.FS, dir string, onFull, onWAL func(error)) fullFS {
	return fullFS{FS: inner, dir: filepath.Clean(dir), onFull: onFull, onWAL: onWAL}
}

// isWAL reports whether name is one of Pebble's write-ahead log files.
func isWAL(name string) bool { return strings.HasSuffix(name, ".log") }

func (f fullFS) Unwrap() vfs.FS { return f.FS }

// inDir reports whether name is a file directly in the data directory.
func (f fullFS) inDir(name string) bool { return filepath.Dir(filepath.Clean(name)) == f.dir }

// check passes err through, failing the store first if it is a full disk
// or a failure of a write-ahead log file.
func (f fullFS) check(op, name string, err error) error {
	if err == nil {
		return nil
	}
	full := isDiskFull(err)
	if !full && (f.onWAL == nil || !isWAL(name)) {
		return err
	}
	cause := err
	var pathErr *fs.PathError
	var linkErr *os.LinkError
	if !errors.As(err, &pathErr) && !errors.As(err, &linkErr) {
		cause = fmt.Errorf("%s %s: %w", op, name, err) // name the file
	}
	if full {
		f.onFull(cause)
	} else {
		f.onWAL(cause)
	}
	return err
}

func (f fullFS) file(op, name string, file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return file, f.check(op, name, err)
	}
	return fullFile{File: file, name: name, fs: f}, nil
}

func (f fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if !f.inDir(name) {
		return file, err
	}
	return f.file("create", name, file, err)
}

func (f fullFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	if !f.inDir(name) {
		return file, err
	}
	return f.file("open", name, file, err)
}

func (f fullFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(oldname, newname, c)
	if !f.inDir(newname) {
		return file, err
	}
	return f.file("reuse", newname, file, err)
}

// OpenDir wraps the data directory itself: Pebble syncs it after creating
// or renaming files in it.
func (f fullFS) OpenDir(name string) (vfs.File, error) {
	file, err := f.FS.OpenDir(name)
	if filepath.Clean(name) != f.dir {
		return file, err
	}
	return f.file("open", name, file, err)
}

func (f fullFS) Link(oldname, newname string) error {
	err := f.FS.Link(oldname, newname)
	if !f.inDir(newname) {
		return err
	}
	return f.check("link", newname, err)
}

func (f fullFS) Rename(oldname, newname string) error {
	err := f.FS.Rename(oldname, newname)
	if !f.inDir(newname) {
		return err
	}
	return f.check("rename", newname, err)
}

// fullFile is a file of the data directory (fullFS). Preallocate is not
// checked: Pebble ignores its errors, rightly, since reserving a WAL's
// 64 MiB ahead fails with ENOSPC on a disk that still has room for the
// writes themselves.
type fullFile struct {
	vfs.File
	name string
	fs   fullFS
}

func (f fullFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.fs.check("write", f.name, err)
}

func (f fullFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	return n, f.fs.check("write", f.name, err)
}

func (f fullFile) Sync() error { return f.fs.check("sync", f.name, f.File.Sync()) }

func (f fullFile) SyncData() error { return f.fs.check("sync", f.name, f.File.SyncData()) }

func (f fullFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.fs.check("sync", f.name, err)
}

func (f fullFile) Close() error { return f.fs.check("close", f.name, f.File.Close()) }

// eventListener is the listener the Store gives Pebble.
func (s *Store) eventListener() *pebble.EventListener {
	return &pebble.EventListener{BackgroundError: s.onBackgroundError, DataCorruption: s.onDataCorruption}
}

// onDataCorruption is Pebble's report of a corrupt file (a table block's
// checksum): fatal, as Pebble's default handler makes it, but marked as
// corruption so that FatalAdvice does not say a restart repairs it.
func (s *Store) onDataCorruption(info pebble.DataCorruptionInfo) {
	s.fatal(fmt.Errorf("%s: %w", info.String(), pebble.ErrCorruption))
}

// FatalAdvice says what an operator should do about a fatal store error
// (the process stops on one): free space for a full disk, restore or move
// aside a corrupt store (a restart does not repair it), and otherwise
// restart, which recovers the last durable state.
func FatalAdvice(err error, dir string) string {
	switch {
	case errors.Is(err, ErrDiskFull) || isDiskFull(err):
		return "the disk holding " + dir + " is full: free space, then restart (nothing acknowledged is lost)"
	case errors.Is(err, pebble.ErrCorruption) || pebble.IsCorruptionError(err):
		return "the store in " + dir + " is corrupt and a restart will not repair it: restore " + dir + " from a backup, or move it aside and recreate the jobs"
	default:
		return "restart the node: it recovers the last durable state in " + dir
	}
}
