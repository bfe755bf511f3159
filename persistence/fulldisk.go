package persistence

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
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
		cause := fmt.Errorf("%w (%s): %w", ErrDiskFull, s.dir, err)
		s.failed.CompareAndSwap(nil, &cause)
		s.fatalOne.Do(func() {
			s.log.Error("persistence: the disk is full; loading stops: free space in "+s.dir+" and restart (nothing acknowledged is lost)", "err", err)
			s.onFatal(cause)
		})
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
