package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// benchCmd is `loadnode bench ARGS`: it runs the benchmark harness, the
// command loadnode-bench (cmd/loadnode-bench), with ARGS and --binary set
// to this executable. The harness is a command of its own so that this
// binary links no test code (internal/layering.TestReleaseBinaryHasNoTestCode).
type benchCmd struct {
	args []string
}

// benchCommands is the row of `bench` in the command table: its arguments
// go to loadnode-bench as they are.
var benchCommands = []subcommand{{name: "bench", usage: "[--quick] [--json] [--scenarios LIST] ...",
	about: "run the benchmark (loadnode-bench)",
	note:  "runs the separate command loadnode-bench: make loadnode-bench; loadnode bench -h",
	pass:  func(args []string) command { return benchCmd{args: args} },
}}

// benchName is the benchmark command's name.
const benchName = "loadnode-bench"

// findBench is loadnode-bench beside the executable exe, else on PATH.
func findBench(exe string) (string, error) {
	if exe != "" {
		p := filepath.Join(filepath.Dir(exe), benchName)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(benchName); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("bench: the benchmark is the command %s, found neither beside %s nor on PATH: build it with `make %s` (or `go build ./cmd/%s`), then run `loadnode bench ...` or `%s --binary ./loadnode ...`; see BENCHMARKS.md",
		benchName, exe, benchName, benchName, benchName)
}

func (c benchCmd) run(ctx context.Context, m *Main) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	bin, err := findBench(exe)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--binary", exe}, c.args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = m.Stdin, m.Stdout, m.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("bench: %s exited with status %d", benchName, ee.ExitCode())
		}
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}
