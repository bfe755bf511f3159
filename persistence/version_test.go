package persistence

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestFormatVersion: a new store records FormatVersion; a store of a newer
// or an older version is refused with both versions named, and stays as
// it was.
func TestFormatVersion(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v, err := StoreFormatVersion(dir); err != nil || v != FormatVersion {
		t.Fatalf("new store: version %d, %v", v, err)
	}
	for _, tc := range []struct {
		v    uint32
		want string
	}{
		{FormatVersion + 1, fmt.Sprintf("format version %d, newer than this binary's version %d", FormatVersion+1, FormatVersion)},
		{MinFormatVersion - 1, fmt.Sprintf("format version %d, older than the oldest this binary reads (version %d", MinFormatVersion-1, MinFormatVersion)},
	} {
		if err := SetStoreFormatVersion(dir, tc.v); err != nil {
			t.Fatal(err)
		}
		_, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
		if !errors.Is(err, ErrFormatVersion) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("version %d: %v, want %q", tc.v, err, tc.want)
		}
		if v, err := StoreFormatVersion(dir); err != nil || v != tc.v {
			t.Fatalf("version %d after the refusal: %d, %v", tc.v, v, err)
		}
	}
}

// TestFormatVersionUpgrade: a store of an older version this binary reads
// opens, and records FormatVersion before anything is written to it, so
// that the older binary refuses it afterwards.
func TestFormatVersionUpgrade(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for v := uint32(MinFormatVersion); v < FormatVersion; v++ {
		if err := SetStoreFormatVersion(dir, v); err != nil {
			t.Fatal(err)
		}
		s, err := Open(Options{Dir: dir, OnFatal: func(error) {}})
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		s.Close()
		if got, err := StoreFormatVersion(dir); err != nil || got != FormatVersion {
			t.Fatalf("version %d after an open: %d, %v", v, got, err)
		}
	}
}
