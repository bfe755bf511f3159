package persistence

import (
	"errors"
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
		{FormatVersion + 1, "format version 2, newer than this binary's version 1"},
		{MinFormatVersion - 1, "format version 0, older than the oldest this binary reads (version 1"},
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
