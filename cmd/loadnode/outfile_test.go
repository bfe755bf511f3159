package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceFile (issue 25, D3 and D12): the target keeps its old content
// until a complete new file replaces it; every failure removes the
// temporary file and names what failed; a planted FILE.tmp is never
// followed.
func TestReplaceFile(t *testing.T) {
	const old, fresh = "PREVIOUS GOOD EXPORT\n", "id,note\n1,a\n2,b\n"
	errMidStream := errors.New("read t after 1 rows: INTERNAL: injected")
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir, path string) // before the call
		write   func(w io.Writer) error
		wantErr []string // substrings of the error; none: success
		check   func(t *testing.T, dir, path string)
	}{{
		name:  "complete export replaces the file",
		write: func(w io.Writer) error { _, err := io.WriteString(w, fresh); return err },
		check: func(t *testing.T, dir, path string) {
			if got := readString(t, path); got != fresh {
				t.Errorf("file = %q, want %q", got, fresh)
			}
			if fi, err := os.Stat(path); err != nil {
				t.Error(err)
			} else if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode())
			}
		},
	}, {
		name: "export fails mid-stream",
		write: func(w io.Writer) error {
			if _, err := io.WriteString(w, "id,note\n1,a\n"); err != nil {
				return err
			}
			return errMidStream
		},
		wantErr: []string{errMidStream.Error(), "left as it was"},
		check: func(t *testing.T, dir, path string) {
			if got := readString(t, path); got != old {
				t.Errorf("file = %q after a failed export, want the old content %q", got, old)
			}
		},
	}, {
		name: "rename fails: the target is a directory",
		setup: func(t *testing.T, dir, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		},
		write:   func(w io.Writer) error { _, err := io.WriteString(w, fresh); return err },
		wantErr: []string{"rename ", "out.csv", "left as it was"},
		check: func(t *testing.T, dir, path string) {
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				t.Errorf("the directory target: %v, %v", fi, err)
			}
		},
	}, {
		name: "a planted FILE.tmp symlink is not followed",
		setup: func(t *testing.T, dir, path string) {
			victim := filepath.Join(dir, "victim.txt")
			if err := os.WriteFile(victim, []byte("VICTIM\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, path+".tmp"); err != nil {
				t.Fatal(err)
			}
		},
		write: func(w io.Writer) error { _, err := io.WriteString(w, fresh); return err },
		check: func(t *testing.T, dir, path string) {
			if got := readString(t, filepath.Join(dir, "victim.txt")); got != "VICTIM\n" {
				t.Errorf("the symlink's target was written: %q", got)
			}
			if dst, err := os.Readlink(path + ".tmp"); err != nil || dst != filepath.Join(dir, "victim.txt") {
				t.Errorf("the planted symlink was touched: %q, %v", dst, err)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("the target is not a regular file: %v", err)
			} else if got := readString(t, path); got != fresh {
				t.Errorf("the target = %q, want %q", got, fresh)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, dir, path)
			}
			before := dirNames(t, dir)
			err := replaceFile(path, tc.write)
			if len(tc.wantErr) == 0 && err != nil {
				t.Fatalf("replaceFile: %v", err)
			}
			if len(tc.wantErr) > 0 && err == nil {
				t.Fatalf("replaceFile succeeded, want an error with %q", tc.wantErr)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if after := dirNames(t, dir); after != before {
				t.Errorf("directory holds %s, want %s (a temporary file left behind?)", after, before)
			}
			tc.check(t, dir, path)
		})
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirNames lists dir's entries, sorted, as one string.
func dirNames(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}
