package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestPrintVersion(t *testing.T) {
	var b bytes.Buffer
	printVersion(&b, &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/loadnode/loadnode/cmd/loadnode",
		Main:     debug.Module{Path: "github.com/loadnode/loadnode", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}})
	want := "loadnode v1.2.3\nrevision: abc123 (modified)\nrevision time: 2026-12-01T00:00:00Z\ngo: go1.26.8\nstore format: 3 (opens 1..3)\npath: github.com/loadnode/loadnode/cmd/loadnode\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// The test binary's own build information.
	m, out, _ := testMain(nil)
	if err := m.ParseFlags(context.Background(), []string{"version"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "loadnode ") || !strings.Contains(s, "\ngo: go1.") {
		t.Fatalf("version: %q", s)
	}
}
