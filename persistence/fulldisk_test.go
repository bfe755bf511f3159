package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
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
