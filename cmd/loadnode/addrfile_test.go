package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAddrFile: `serve --addr-file` on port 0 writes the addresses it
// bound once the node answers, and removes the file at shutdown.
func TestServeAddrFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "addrs.json")
	logs := &logWatch{addr: make(chan string, 1)}
	m := &Main{Stdout: &bytes.Buffer{}, Stderr: logs, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.ParseFlags(ctx, []string{"serve", "--data", filepath.Join(dir, "data"),
		"--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--addr-file", file}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	var got boundAddrs
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("addr file %q: %v", b, err)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned %v; logs:\n%s", err, logs.String())
		case <-deadline:
			t.Fatalf("no addr file; logs:\n%s", logs.String())
		case <-tick.C:
		}
	}
	if got.PID != os.Getpid() || strings.HasSuffix(got.Addr, ":0") || strings.HasSuffix(got.HTTP, ":0") ||
		!strings.HasPrefix(got.Addr, "127.0.0.1:") || !strings.HasPrefix(got.HTTP, "127.0.0.1:") {
		t.Fatalf("addr file %+v", got)
	}
	if !strings.Contains(logs.String(), "addr="+got.Addr) {
		t.Errorf("the serving log line names another address than %s:\n%s", got.Addr, logs.String())
	}
	if code, out, errOut := run(t, nil, "job", "list", "--addr", got.Addr); code != 0 || !strings.HasPrefix(out, "NAME") {
		t.Fatalf("job list against %s: exit %d, %q, %q", got.Addr, code, out, errOut)
	}
	resp, err := http.Get("http://" + got.HTTP + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Fatalf("/healthz at %s: %d %q", got.HTTP, resp.StatusCode, body)
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
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("addr file still there after shutdown: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".addrs.json.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestServeAddrFileUnwritable: a file that cannot be written fails serve
// (a harness waiting on it would otherwise wait forever) and closes the node.
func TestServeAddrFileUnwritable(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := run(t, nil, "serve", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0",
		"--addr-file", filepath.Join(dir, "missing", "addrs.json"))
	if code != 1 || !strings.Contains(errOut, "serve: --addr-file: ") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
