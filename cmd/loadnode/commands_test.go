package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCommandTable: every row's usage line names its positional arguments
// in order; -h prints that line; a group's "missing command" message, its
// usage and the program's usage name every command of the table.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range commands {
		if seen[s.path()] {
			t.Errorf("%s: two rows", s.path())
		}
		seen[s.path()] = true
		if (s.bind == nil) == (s.pass == nil) {
			t.Errorf("%s: a row has either bind or pass", s.path())
		}
		at := 0
		for _, a := range s.args {
			i := strings.Index(s.usage[at:], a)
			if i < 0 {
				t.Errorf("%s: usage %q does not name its argument %s (in order)", s.path(), s.usage, a)
				break
			}
			at += i + len(a)
		}
		if !strings.Contains(mainUsage(), "  loadnode "+s.synopsis(len("  loadnode "))) {
			t.Errorf("%s: not in the program's usage", s.path())
		}
		if s.pass != nil {
			continue
		}
		m, out, _ := testMain(nil)
		args := append(strings.Fields(s.path()), "-h")
		if err := m.ParseFlags(context.Background(), args); !errors.Is(err, errHelp) {
			t.Errorf("%s -h: %v", s.path(), err)
		}
		if want := "Usage: loadnode " + s.synopsis(len("Usage: loadnode ")); !strings.HasPrefix(out.String(), want) {
			t.Errorf("%s -h printed %q, want it to start with %q", s.path(), out, want)
		}
	}
	for _, g := range []string{"job", "table", "cluster"} {
		rows := group(g)
		if len(rows) == 0 {
			t.Fatalf("no rows of group %s", g)
		}
		m, out, errOut := testMain(nil)
		m.Report(m.ParseFlags(context.Background(), []string{g}))
		m.ParseFlags(context.Background(), []string{g, "-h"})
		for _, s := range rows {
			if !strings.Contains(errOut.String(), s.name) {
				t.Errorf("%q does not name the command %s", errOut, s.name)
			}
			if want := fmt.Sprintf("\n  %s %s", s.name, s.usage); !strings.Contains(out.String(), strings.TrimSpace(want)) || s.about == "" ||
				!strings.Contains(out.String(), s.about) {
				t.Errorf("%s -h lacks %s and what it does:\n%s", g, s.path(), out)
			}
		}
		if want := fmt.Sprintf("%s: missing command (%s)", g, strings.Join(groupNames(rows), ", ")); !strings.Contains(errOut.String(), want) {
			t.Errorf("%s: stderr %q, want %q", g, errOut, want)
		}
	}
}
