package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
)

func testMain(env map[string]string) (*Main, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}, &out, &errOut
}

func TestParseFlags(t *testing.T) {
	def := connFlags{addr: "127.0.0.1:7070", timeout: 10 * time.Second}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want command
	}{
		{"serve defaults", []string{"serve"}, nil, serveCmd{}},
		{"serve flags", []string{"serve", "--config", "n.yaml", "--data", "/d", "--listen", "0.0.0.0:0", "--log-level", "debug"}, nil,
			serveCmd{configFile: "n.yaml", dataDir: "/d", listen: "0.0.0.0:0", logLevel: "debug"}},
		{"serve single dash and =", []string{"serve", "-data=/x"}, nil, serveCmd{dataDir: "/x"}},
		{"job create", []string{"job", "create", "-f", "spec.yaml"}, nil, jobCreateCmd{conn: def, file: "spec.yaml"}},
		{"job create stdin", []string{"job", "create", "-f", "-"}, nil, jobCreateCmd{conn: def, file: "-"}},
		{"job list", []string{"job", "list"}, nil, jobListCmd{conn: def}},
		{"job list addr and timeout", []string{"job", "list", "--addr", "h:1", "--timeout", "3s"}, nil, jobListCmd{conn: connFlags{addr: "h:1", timeout: 3 * time.Second}}},
		{"env sets the default addr", []string{"job", "list"}, map[string]string{"LOADNODE_ADDR": "e:9"}, jobListCmd{conn: connFlags{addr: "e:9", timeout: 10 * time.Second}}},
		{"flag beats env", []string{"job", "list", "--addr", "f:1"}, map[string]string{"LOADNODE_ADDR": "e:9"}, jobListCmd{conn: connFlags{addr: "f:1", timeout: 10 * time.Second}}},
		{"job list sorted and filtered", []string{"job", "list", "--sort", "lag", "--desc", "--filter", "eu", "--limit", "5"}, nil,
			jobListCmd{conn: def, sort: "lag", desc: true, filter: "eu", limit: 5}},
		{"job show", []string{"job", "show", "orders"}, nil, jobShowCmd{conn: def, name: "orders", output: "text"}},
		{"job show flag after name", []string{"job", "show", "orders", "-o", "json"}, nil, jobShowCmd{conn: def, name: "orders", output: "json"}},
		{"job show flag before name", []string{"job", "show", "-o", "yaml", "orders"}, nil, jobShowCmd{conn: def, name: "orders", output: "yaml"}},
		{"job show -- name", []string{"job", "show", "--", "-odd"}, nil, jobShowCmd{conn: def, name: "-odd", output: "text"}},
		{"job pause", []string{"job", "pause", "j"}, nil, jobActionCmd{conn: def, action: "pause", name: "j"}},
		{"job resume", []string{"job", "resume", "j"}, nil, jobActionCmd{conn: def, action: "resume", name: "j"}},
		{"job stop", []string{"job", "stop", "j", "--timeout", "1m"}, nil, jobActionCmd{conn: connFlags{addr: def.addr, timeout: time.Minute}, action: "stop", name: "j"}},
		{"table count", []string{"table", "count", "t"}, nil, tableCountCmd{conn: def, table: "t"}},
		{"table scan defaults", []string{"table", "scan", "t"}, nil, tableScanCmd{conn: def, table: "t", limit: 1000, format: "jsonl"}},
		{"table scan flags", []string{"table", "scan", "--limit", "0", "t", "--format", "table"}, nil, tableScanCmd{conn: def, table: "t", limit: 0, format: "table"}},
		{"dev passes everything", []string{"dev", "--kafka", "x", "-h"}, nil, devCmd{args: []string{"--kafka", "x", "-h"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, _ := testMain(tc.env)
			if err := m.ParseFlags(context.Background(), tc.args); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.cmd, tc.want) {
				t.Fatalf("got %#v\nwant %#v", m.cmd, tc.want)
			}
		})
	}
}

func TestParseFlagsErrors(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string // in stderr
		wantOut  string // in stdout
	}{
		{nil, exitUsage, "loadnode: no command given", ""},
		{[]string{"bogus"}, exitUsage, `loadnode: unknown command "bogus"`, ""},
		{[]string{"help"}, exitOK, "", "Usage:\n  loadnode serve"},
		{[]string{"-h"}, exitOK, "", "Usage:\n  loadnode serve"},
		{[]string{"help", "job"}, exitOK, "", "Usage: loadnode job COMMAND"},
		{[]string{"help", "table", "scan"}, exitOK, "", "Usage: loadnode table scan NAME"},
		{[]string{"help", "bogus"}, exitUsage, `unknown command "bogus"`, ""},
		{[]string{"serve", "-h"}, exitOK, "", "-listen HOST:PORT"},
		{[]string{"serve", "extra"}, exitUsage, `loadnode: serve: unexpected argument "extra"`, ""},
		{[]string{"job"}, exitUsage, "job: missing command", ""},
		{[]string{"job", "bogus"}, exitUsage, `job: unknown command "bogus"`, ""},
		{[]string{"job", "create"}, exitUsage, "job create: -f SPEC.yaml is required", ""},
		{[]string{"job", "create", "-f", "a", "b"}, exitUsage, `job create: unexpected argument "b"`, ""},
		{[]string{"job", "show"}, exitUsage, "loadnode: job show: missing NAME", ""},
		{[]string{"job", "show", "-h"}, exitOK, "", "Usage: loadnode job show NAME [-o text|json|yaml]"},
		{[]string{"job", "show", "a", "b"}, exitUsage, `job show: unexpected argument "b"`, ""},
		{[]string{"job", "show", "a", "-o", "xml"}, exitUsage, `job show: -o "xml" must be text, json or yaml`, ""},
		{[]string{"job", "show", "a", "--bogus"}, exitUsage, "job show: flag provided but not defined: -bogus", ""},
		{[]string{"job", "pause"}, exitUsage, "job pause: missing NAME", ""},
		{[]string{"job", "list", "--timeout", "0s"}, exitUsage, "job list: --timeout must be > 0", ""},
		{[]string{"job", "list", "--timeout", "soon"}, exitUsage, "job list: invalid value", ""},
		{[]string{"job", "list", "--addr", ""}, exitUsage, "job list: --addr is empty", ""},
		{[]string{"table"}, exitUsage, "table: missing command", ""},
		{[]string{"table", "count"}, exitUsage, "table count: missing NAME", ""},
		{[]string{"table", "scan", "t", "--limit", "-1"}, exitUsage, "table scan: --limit -1 must be >= 0", ""},
		{[]string{"table", "scan", "t", "--format", "csv"}, exitUsage, `table scan: --format "csv" must be jsonl or table`, ""},
		{[]string{"table", "scan", "-h"}, exitOK, "", "-format format"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			m, out, errOut := testMain(nil)
			err := m.ParseFlags(context.Background(), tc.args)
			if err == nil {
				t.Fatalf("parsed into %#v", m.cmd)
			}
			code := m.Report(err)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", code, tc.wantCode, err)
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.wantErr)
			}
			if tc.wantErr == "" && errOut.Len() > 0 {
				t.Errorf("stderr %q, want none", errOut)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout %q, want it to contain %q", out, tc.wantOut)
			}
			if tc.wantOut == "" && out.Len() > 0 {
				t.Errorf("stdout %q, want none", out)
			}
		})
	}
}

func TestReport(t *testing.T) {
	for _, tc := range []struct {
		err      error
		wantCode int
		want     string
	}{
		{nil, exitOK, ""},
		{errHelp, exitOK, ""},
		{&client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "kafka.topic", Message: "config: kafka.topic: required"}, exitError, "loadnode: INVALID_ARGUMENT: kafka.topic: required\n"},
		{&client.Error{Code: api.ErrorCode_NOT_FOUND, Field: "name", Message: `job "x" not found`}, exitError, "loadnode: NOT_FOUND: job \"x\" not found\n"},
		{errors.New("client: no answer from node at h:1 within 10s"), exitError, "loadnode: client: no answer from node at h:1 within 10s\n"},
		{usagef("job: missing command"), exitUsage, "loadnode: job: missing command\nRun 'loadnode help' for usage.\n"},
	} {
		m, _, errOut := testMain(nil)
		if code := m.Report(tc.err); code != tc.wantCode {
			t.Errorf("Report(%v) = %d, want %d", tc.err, code, tc.wantCode)
		}
		if errOut.String() != tc.want {
			t.Errorf("Report(%v) printed %q, want %q", tc.err, errOut, tc.want)
		}
	}
}

// TestServeCheckConfigLists: what --check-config prints of the lists
// (http_allowed_hosts, cluster.etcd) is YAML that reads back as the same
// lists.
func TestServeCheckConfigLists(t *testing.T) {
	file := t.TempDir() + "/node.yaml"
	if err := os.WriteFile(file, []byte("http: 127.0.0.1:9001\nhttp_allowed_hosts: [loadnode.example, b.example]\n"+
		"cluster:\n  name: c1\n  etcd: [127.0.0.1:2379, 'etcd-2.example:2379']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, out, _ := testMain(nil)
	if err := m.ParseFlags(context.Background(), []string{"serve", "--config", file, "--check-config"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	again, err := config.LoadNode(out.Bytes())
	if err != nil {
		t.Fatalf("check-config output does not read back: %v\n%s", err, out)
	}
	if want := []string{"127.0.0.1:2379", "etcd-2.example:2379"}; !slices.Equal(again.Cluster.Etcd, want) {
		t.Errorf("cluster.etcd reads back as %q, want %q\n%s", again.Cluster.Etcd, want, out)
	}
	if want := []string{"loadnode.example", "b.example"}; !slices.Equal(again.HTTPAllowedHosts, want) {
		t.Errorf("http_allowed_hosts reads back as %q, want %q\n%s", again.HTTPAllowedHosts, want, out)
	}
}

// TestServeCheckConfig: the file, then LOADNODE_* variables, then flags;
// --check-config prints the result and starts nothing.
func TestServeCheckConfig(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/node.yaml"
	if err := os.WriteFile(file, []byte("listen: 127.0.0.1:7001\nhttp: 127.0.0.1:9001\nmax_concurrent_tasks: 8\nmax_record_size: 4MiB\njob_restart_backoff_max: 20s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, out, _ := testMain(map[string]string{"LOADNODE_LISTEN": "127.0.0.1:7002", "LOADNODE_HTTP": "127.0.0.1:9002"})
	if err := m.ParseFlags(context.Background(), []string{"serve", "--config", file, "--http", "127.0.0.1:9003", "--check-config"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`listen: "127.0.0.1:7002"`, `http: "127.0.0.1:9003"`, "max_concurrent_tasks: 8",
		"max_record_size: 4194304\n", "error_row_raw_size: 1024\n", "source_retry_base: 500ms\n", "source_retry_max: 30s\n", "source_retry_limit: 8\n",
		"auto_resume_base: 10s\n", "auto_resume_max: 5m0s\n", "auto_resume_quiet: 30m0s\n", "stall_after: 1m0s\n",
		"job_restart_limit: 10\n", "job_restart_window: 30s\n", "job_restart_backoff: 100ms\n", "job_restart_backoff_max: 20s\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check-config output lacks %s:\n%s", want, out.String())
		}
	}
	// What --check-config prints is a node config file that reads back as
	// the same configuration.
	printed := out.String()
	again, err := config.LoadNode([]byte(printed))
	if err != nil {
		t.Fatalf("check-config output does not read back: %v\n%s", err, printed)
	}
	if again.MaxRecordSize != 4<<20 || again.JobRestartBackoffMax != 20*time.Second || again.MaxConcurrentTasks != 8 {
		t.Fatalf("check-config output reads back as %+v", again)
	}
	m, _, _ = testMain(nil)
	if err := m.ParseFlags(context.Background(), []string{"serve", "--http", "0.0.0.0:80", "--check-config"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "http") {
		t.Fatalf("non-loopback http: %v", err)
	}
}
