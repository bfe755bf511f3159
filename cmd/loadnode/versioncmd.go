package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/loadnode/loadnode/persistence"
)

// versionCmd is `loadnode version`: the module version, the VCS revision
// (and whether the tree was modified) and the Go version the binary was
// built with, from its build information.
type versionCmd struct{}

// versionCommands is the row of `version` in the command table.
var versionCommands = []subcommand{{name: "version", about: "print the build's versions",
	note: "module version, VCS revision, Go version",
	more: "Prints the module version, the VCS revision and time, and the Go version of this binary.",
	bind: bind[versionCmd](nil, nil),
}}

func (versionCmd) run(_ context.Context, m *Main) error {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("version: the binary carries no build information")
	}
	printVersion(m.Stdout, bi)
	return nil
}

// printVersion prints "loadnode VERSION", then the revision, its time, a
// modified tree and the Go version, one a line; unknown ones are left out.
func printVersion(w io.Writer, bi *debug.BuildInfo) {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(w, "loadnode %s\n", v)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if r := settings["vcs.revision"]; r != "" {
		if settings["vcs.modified"] == "true" {
			r += " (modified)"
		}
		fmt.Fprintf(w, "revision: %s\n", r)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(w, "revision time: %s\n", t)
	}
	fmt.Fprintf(w, "go: %s\n", bi.GoVersion)
	fmt.Fprintf(w, "store format: %d (opens %d..%d)\n", persistence.FormatVersion, persistence.MinFormatVersion, persistence.FormatVersion)
	if p := bi.Path; p != "" {
		fmt.Fprintf(w, "path: %s\n", p)
	}
}
