package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

const testSpec = `name: orders_load
table:
  name: orders
  columns:
    - {name: id, type: int64}
    - {name: note, type: string}
format: csv
kafka:
  brokers: ["127.0.0.1:1"]
  topic: orders
`

// run runs one command line through Main as the binary does and returns
// the exit code, stdout and stderr.
func run(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	m, out, errOut := testMain(env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := m.ParseFlags(ctx, args)
	if err == nil {
		err = m.Run(ctx)
	}
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	return m.Report(err), out.String(), errOut.String()
}

func TestCommandsAgainstNode(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	env := map[string]string{envAddr: n.Addr()}

	specFile := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(specFile, []byte(testSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	badFile := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(badFile, []byte(strings.Replace(testSpec, "topic: orders", `topic: ""`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		args     []string
		wantCode int
		wantOut  string // regexp on stdout
		wantErr  string // substring of stderr; "" means empty
	}{
		{[]string{"job", "list"}, 0, `^NAME\s+STATE\s+REASON\s+HEALTH\s+LAG\s+ROWS\s+TABLE\s+SOURCE\s+SINK\n$`, ""},
		{[]string{"job", "create", "-f", specFile}, 0, `^created job orders_load \(id \d+\)\n$`, ""},
		{[]string{"job", "create", "-f", specFile}, 1, `^$`, `loadnode: ALREADY_EXISTS: job "orders_load" already exists`},
		{[]string{"job", "create", "-f", "-"}, 1, `^$`, "job create: stdin: config: job spec is empty"},
		{[]string{"job", "create", "-f", badFile}, 1, `^$`, "kafka.topic: required (line 10)"},
		{[]string{"job", "alter", "orders_load", "-f", "-"}, 1, `^$`, "job alter: stdin: config: job spec is empty"},
		// The broker (127.0.0.1:1) refuses: healthy until the first retry, failing after.
		{[]string{"job", "list"}, 0, `\norders_load\s+\S+\s+\S+\s+(healthy|failing)\s+\S+\s+0\s+orders\s+kafka://orders\s+embedded\n$`, ""},
		{[]string{"job", "pause", "orders_load"}, 0, `^job orders_load: PAUSED \(USER_PAUSE`, ""},
		{[]string{"job", "show", "orders_load"}, 0, `(?s)^Job:\s+orders_load.*State:\s+PAUSED.*History:.*USER_PAUSE.*Stats:`, ""},
		{[]string{"job", "show", "orders_load", "-o", "json"}, 0, `"name": "orders_load"`, ""},
		{[]string{"job", "show", "orders_load", "-o", "yaml"}, 0, `(?s)^# job orders_load.*\n# state: PAUSED.*\nname: orders_load\n`, ""},
		{[]string{"job", "show", "nope"}, 1, `^$`, `loadnode: NOT_FOUND: job "nope" not found`},
		{[]string{"job", "resume", "orders_load"}, 0, `^job orders_load: NEED_SCHEDULE`, ""},
		{[]string{"job", "stop", "orders_load"}, 0, `^job orders_load: STOPPED`, ""},
		{[]string{"job", "resume", "orders_load"}, 1, `^$`, "loadnode: FAILED_PRECONDITION: "},
		{[]string{"table", "count", "orders"}, 0, `^0\n$`, ""},
		{[]string{"table", "count", "nope"}, 1, `^$`, `loadnode: NOT_FOUND: table "nope" not found`},
		{[]string{"table", "scan", "orders"}, 0, `^$`, ""},
		{[]string{"table", "scan", "orders", "--format", "table"}, 0, `^id\s+note\n$`, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := run(t, env, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.wantCode, errOut)
			}
			if !regexp.MustCompile(tc.wantOut).MatchString(out) {
				t.Errorf("stdout %q does not match %q", out, tc.wantOut)
			}
			if tc.wantErr == "" && errOut != "" || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q, want %q", errOut, tc.wantErr)
			}
		})
	}
}

func TestCommandNoNode(t *testing.T) {
	// A port nobody listens on: find one, then close it.
	n := startTestNode(t)
	addr := n.Addr()
	n.Close()
	start := time.Now()
	code, _, errOut := run(t, nil, "job", "list", "--addr", addr)
	if code != 1 || !strings.Contains(errOut, "loadnode: client: cannot reach node at "+addr) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to fail", d)
	}
}

func startTestNode(t *testing.T) *node.Node {
	t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// logWatch is a Stderr that reports the address of the "loadnode: serving"
// log line.
type logWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

var servingRe = regexp.MustCompile(`msg="loadnode: serving" addr=(\S+)`)

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := servingRe.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		w.sent = true
		w.addr <- string(m[1])
	}
	return len(p), nil
}

func (w *logWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestServe runs `loadnode serve` until its context ends, as SIGTERM does.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "node.yaml")
	// The file says warn and a fixed port; the flags override both.
	if err := os.WriteFile(cfgFile, []byte("listen: 127.0.0.1:1\nlog_level: warn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &logWatch{addr: make(chan string, 1)}
	m := &Main{Stdout: &bytes.Buffer{}, Stderr: logs, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.ParseFlags(ctx, []string{"serve", "--config", cfgFile, "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--log-level", "info"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	var addr string
	select {
	case addr = <-logs.addr:
	case err := <-done:
		t.Fatalf("serve returned %v; logs:\n%s", err, logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("serve not ready; logs:\n%s", logs)
	}
	if code, out, errOut := run(t, nil, "job", "list", "--addr", addr); code != 0 || !strings.HasPrefix(out, "NAME") {
		t.Fatalf("job list against serve: exit %d, %q, %q", code, out, errOut)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `msg="loadnode: stopped"`) {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--config", bad}, "bogus: unknown key"},
		{[]string{"serve", "--config", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"serve", "--listen", "nope"}, `loadnode: serve: config: listen: "nope" must be host:port`},
		{[]string{"serve", "--log-level", "loud", "--data", dir}, "log_level"},
	} {
		code, _, errOut := run(t, nil, tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}
