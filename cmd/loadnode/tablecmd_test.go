package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTableExportFile (issue 25, D3 and D12): `table export -o FILE`
// against a node. A failed export (an unknown table, a FILE that cannot be
// replaced) fails the command, names what failed and leaves FILE and its
// directory as they were; a planted FILE.tmp symlink is not followed.
func TestTableExportFile(t *testing.T) {
	n := startTestNode(t)
	defer n.Close()
	env := map[string]string{envAddr: n.Addr()}
	specFile := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(specFile, []byte(testSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, env, "job", "create", "-f", specFile); code != 0 {
		t.Fatalf("job create: exit %d: %s", code, errOut)
	}
	const good = "PREVIOUS GOOD EXPORT\n"
	dir := t.TempDir()
	report := filepath.Join(dir, "report.csv")
	if err := os.WriteFile(report, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	asDir := filepath.Join(dir, "exp")
	if err := os.Mkdir(asDir, 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("VICTIM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.csv")
	if err := os.Symlink(victim, out+".tmp"); err != nil {
		t.Fatal(err)
	}
	entries := dirNames(t, dir)

	// An unknown table: the command fails and the good file stays.
	code, _, errOut := run(t, env, "table", "export", "no_such_table", "--format", "csv", "-o", report)
	t.Logf("export of an unknown table: exit %d, stderr %q", code, errOut)
	if code != 1 || !strings.Contains(errOut, `NOT_FOUND: table "no_such_table" not found`) || !strings.Contains(errOut, report+" left as it was") {
		t.Errorf("export of an unknown table: exit %d, stderr %q", code, errOut)
	}
	if got := readString(t, report); got != good {
		t.Errorf("a failed export replaced %s with %q", report, got)
	}

	// FILE is a directory: the rename fails, and so does the command.
	code, _, errOut = run(t, env, "table", "export", "orders", "--format", "csv", "-o", asDir)
	t.Logf("export onto a directory: exit %d, stderr %q", code, errOut)
	if code != 1 || !strings.Contains(errOut, "rename ") || !strings.Contains(errOut, asDir+": ") {
		t.Errorf("export onto a directory: exit %d, stderr %q", code, errOut)
	}
	if fi, err := os.Stat(asDir); err != nil || !fi.IsDir() {
		t.Errorf("export onto a directory: %v, %v", fi, err)
	}
	if got := dirNames(t, dir); got != entries {
		t.Errorf("after the failed exports the directory holds %s, want %s", got, entries)
	}

	// A planted FILE.tmp symlink: neither it nor its target is touched.
	code, _, errOut = run(t, env, "table", "export", "orders", "--format", "csv", "-o", out)
	if code != 0 || !strings.Contains(errOut, "exported 0 rows of orders to "+out) {
		t.Fatalf("export: exit %d, stderr %q", code, errOut)
	}
	if got := readString(t, victim); got != "VICTIM\n" {
		t.Errorf("the export followed %s.tmp and wrote %s: %q", out, victim, got)
	}
	if fi, err := os.Lstat(out); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file: %v", out, err)
	} else if got := readString(t, out); got != "id,note\n" {
		t.Errorf("%s = %q, want the export", out, got)
	}
	if dst, err := os.Readlink(out + ".tmp"); err != nil || dst != victim {
		t.Errorf("the planted symlink was touched: %q, %v", dst, err)
	}

	// A complete export replaces the old file.
	if code, _, errOut := run(t, env, "table", "export", "orders", "--format", "csv", "-o", report); code != 0 {
		t.Fatalf("export: exit %d, stderr %q", code, errOut)
	}
	if got := readString(t, report); got != "id,note\n" {
		t.Errorf("%s = %q after the export", report, got)
	}
}
