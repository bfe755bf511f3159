package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCloseWaitsForCallsInFlight: Close while a recovery scan holds an
// iterator (a node whose recovery outlived Start's wait, then closed)
// waits for the scan, refuses new calls meanwhile, stops the scan early
// with ErrClosed, and neither panics nor loses anything. Before the gate,
// Pebble was closed under the live iterator and panicked inside its file
// cache ("element has outstanding references"), hiding the error that led
// to the Close.
func TestCloseWaitsForCallsInFlight(t *testing.T) {
	mem := vfs.NewMem()
	s, err := Open(Options{Dir: testDir, FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000 // more than one early-stop check (every 1024 jobs)
	jobs := make([]NewJob, n)
	for i := range jobs {
		rec := testRecord(uint64(i+1), fmt.Sprintf("j%d", i+1))
		jobs[i] = NewJob{Record: rec, First: createdTransition(), NewTable: rec.Spec.Table}
	}
	for i, err := range s.CreateJobs(jobs) {
		if err != nil {
			t.Fatalf("job %d: %v", i+1, err)
		}
	}
	// The scan must read table files (the file cache is what panicked).
	if err := s.db.Flush(); err != nil {
		t.Fatal(err)
	}

	inside, release := make(chan struct{}), make(chan struct{})
	scanned := make(chan error, 1)
	seen := 0
	go func() {
		scanned <- s.LoadAllJobs(func(*JobState) error {
			if seen++; seen == 1 {
				close(inside)
				<-release
			}
			return nil
		})
	}()
	<-inside
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !s.closingDown() {
		select {
		case <-deadline:
			t.Fatal("Close did not begin")
		case <-tick.C:
		}
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned while a scan held an iterator: %v", err)
	default:
	}
	if _, err := s.LastJobID(); !errors.Is(err, ErrClosed) {
		t.Errorf("LastJobID while closing = %v, want ErrClosed", err)
	}
	close(release)
	if err := <-scanned; !errors.Is(err, ErrClosed) {
		t.Errorf("the scan Close waited for = %v, want ErrClosed (stopped early)", err)
	}
	if seen >= n {
		t.Errorf("the scan read all %d jobs; it should stop early once Close waits", seen)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Nothing was lost.
	s2 := openStore(t, mem, Options{})
	got := 0
	if err := s2.LoadAllJobs(func(*JobState) error { got++; return nil }); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("after reopening: %d jobs, want %d", got, n)
	}
}

// A clean Close flushes the memtables: the next Open replays no record
// from the write-ahead log.
func TestCloseFlushesMemtables(t *testing.T) {
	fs := vfs.NewMem()
	s := openStore(t, fs, Options{})
	for id := uint64(1); id <= 200; id++ {
		mustCreate(t, s, id, fmt.Sprintf("j%d", id))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s = openStore(t, fs, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if last, err := s.LastJobID(); err != nil || last != 200 {
		t.Fatalf("after the reopen: last job id %d (%v), want 200", last, err)
	}
	replays := regexp.MustCompile(`replayed (\d+) keys`).FindAllStringSubmatch(logs.String(), -1)
	if len(replays) == 0 {
		t.Fatalf("no WAL replay line in the reopen's log:\n%s", logs.String())
	}
	for _, m := range replays {
		if m[1] != "0" {
			t.Fatalf("the reopen after a clean Close replayed %s keys from the WAL; want 0 (the memtables flushed)", m[1])
		}
	}
}
