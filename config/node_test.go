package config

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultNode(t *testing.T) {
	n := DefaultNode()
	want := Node{
		DataDir:             "./loadnode-data",
		Listen:              "127.0.0.1:7070",
		MaxConcurrentTasks:  64,
		TopologyInterval:    10 * time.Second,
		WatermarkInterval:   5 * time.Second,
		LogLevel:            "info",
		LogFormat:           "text",
		MaxErrorRowsKept:    1000,
		MySQLMaxConnections: 256,

		MaxRecordSize:        16 << 20,
		ErrorRowRawSize:      1024,
		SourceRetryBase:      500 * time.Millisecond,
		SourceRetryMax:       30 * time.Second,
		SourceRetryLimit:     8,
		AutoResumeBase:       10 * time.Second,
		AutoResumeMax:        5 * time.Minute,
		AutoResumeQuiet:      30 * time.Minute,
		StallAfter:           time.Minute,
		JobRestartLimit:      10,
		JobRestartWindow:     30 * time.Second,
		JobRestartBackoff:    100 * time.Millisecond,
		JobRestartBackoffMax: 10 * time.Second,
		Cluster:              Cluster{Lease: 10 * time.Second, Prefix: "/loadnode/", RequestTimeout: 5 * time.Second},
	}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("got %+v, want %+v", n, want)
	}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	if n.SlogLevel() != slog.LevelInfo {
		t.Fatal(n.SlogLevel())
	}
}

func TestNodeValidate(t *testing.T) {
	cases := []struct {
		name  string
		mut   func(n *Node)
		field string
	}{
		{"data dir", func(n *Node) { n.DataDir = "" }, "data_dir"},
		{"listen empty", func(n *Node) { n.Listen = "" }, "listen"},
		{"listen no port", func(n *Node) { n.Listen = "127.0.0.1" }, "listen"},
		{"listen bad port", func(n *Node) { n.Listen = "127.0.0.1:70000" }, "listen"},
		{"listen port name", func(n *Node) { n.Listen = "127.0.0.1:http" }, "listen"},
		{"listen port 0", func(n *Node) { n.Listen = "127.0.0.1:0" }, ""},
		{"listen any host", func(n *Node) { n.Listen = ":7070" }, "listen"},
		{"listen any host with token and TLS", func(n *Node) {
			n.Listen, n.AuthTokenFile, n.TLSCertFile, n.TLSKeyFile = ":7070", "/t", "/c", "/k"
		}, ""},
		{"cert without key", func(n *Node) { n.TLSCertFile = "/c" }, "tls_key_file"},
		{"key without cert", func(n *Node) { n.TLSKeyFile = "/k" }, "tls_cert_file"},
		{"listen ipv6", func(n *Node) { n.Listen = "[::1]:7070" }, ""},
		{"tasks", func(n *Node) { n.MaxConcurrentTasks = 0 }, "max_concurrent_tasks"},
		{"topology", func(n *Node) { n.TopologyInterval = 0 }, "topology_interval"},
		{"watermark", func(n *Node) { n.WatermarkInterval = -time.Second }, "watermark_interval"},
		{"log level", func(n *Node) { n.LogLevel = "trace" }, "log_level"},
		{"log level case", func(n *Node) { n.LogLevel = "WARN" }, ""},
		{"log format", func(n *Node) { n.LogFormat = "xml" }, "log_format"},
		{"log format json", func(n *Node) { n.LogFormat = "json" }, ""},
		{"error rows", func(n *Node) { n.MaxErrorRowsKept = 0 }, "max_error_rows_kept"},
		{"record size zero", func(n *Node) { n.MaxRecordSize = 0 }, "max_record_size"},
		{"record size 1 byte", func(n *Node) { n.MaxRecordSize = 1 }, ""},
		{"record size 1GiB", func(n *Node) { n.MaxRecordSize = 1 << 30 }, ""},
		{"record size over 1GiB", func(n *Node) { n.MaxRecordSize = 1<<30 + 1 }, "max_record_size"},
		{"raw size zero", func(n *Node) { n.ErrorRowRawSize = 0 }, "error_row_raw_size"},
		{"raw size negative", func(n *Node) { n.ErrorRowRawSize = -1 }, "error_row_raw_size"},
		{"raw size 1MiB", func(n *Node) { n.ErrorRowRawSize = 1 << 20 }, ""},
		{"raw size over 1MiB", func(n *Node) { n.ErrorRowRawSize = 1<<20 + 1 }, "error_row_raw_size"},
		{"retry base zero", func(n *Node) { n.SourceRetryBase = 0 }, "source_retry_base"},
		{"retry base at cap", func(n *Node) { n.SourceRetryBase = 30 * time.Second }, ""},
		{"retry base over cap", func(n *Node) { n.SourceRetryBase = 31 * time.Second }, "source_retry_base"},
		{"retry limit zero", func(n *Node) { n.SourceRetryLimit = 0 }, "source_retry_limit"},
		{"retry max zero", func(n *Node) { n.SourceRetryMax = 0 }, "source_retry_max"},
		{"retry max below base", func(n *Node) { n.SourceRetryMax = n.SourceRetryBase - 1 }, "source_retry_base"},
		{"retry max equal base", func(n *Node) { n.SourceRetryMax = n.SourceRetryBase }, ""},
		{"retry limit one", func(n *Node) { n.SourceRetryLimit = 1 }, ""},
		{"resume base zero", func(n *Node) { n.AutoResumeBase = 0 }, "auto_resume_base"},
		{"resume max below base", func(n *Node) { n.AutoResumeMax = 9 * time.Second }, "auto_resume_max"},
		{"resume max equal base", func(n *Node) { n.AutoResumeMax = n.AutoResumeBase }, ""},
		{"resume base above max", func(n *Node) { n.AutoResumeBase = 10 * time.Minute }, "auto_resume_max"},
		{"resume quiet zero", func(n *Node) { n.AutoResumeQuiet = 0 }, "auto_resume_quiet"},
		{"stall zero", func(n *Node) { n.StallAfter = 0 }, "stall_after"},
		{"stall negative", func(n *Node) { n.StallAfter = -time.Second }, "stall_after"},
		{"restart limit zero", func(n *Node) { n.JobRestartLimit = 0 }, "job_restart_limit"},
		{"restart window zero", func(n *Node) { n.JobRestartWindow = 0 }, "job_restart_window"},
		{"restart backoff zero", func(n *Node) { n.JobRestartBackoff = 0 }, "job_restart_backoff"},
		{"restart backoff max below", func(n *Node) { n.JobRestartBackoffMax = 50 * time.Millisecond }, "job_restart_backoff_max"},
		{"restart backoff max equal", func(n *Node) { n.JobRestartBackoffMax = n.JobRestartBackoff }, ""},
		{"cluster", func(n *Node) { n.Cluster.Name, n.Cluster.Etcd = "n1", []string{"127.0.0.1:2379"} }, ""},
		{"cluster without name", func(n *Node) { n.Cluster.Etcd = []string{"127.0.0.1:2379"} }, "cluster.name"},
		{"cluster bad name", func(n *Node) { n.Cluster.Name, n.Cluster.Etcd = "a b", []string{"127.0.0.1:2379"} }, "cluster.name"},
		{"cluster without etcd", func(n *Node) { n.Cluster.Name = "n1" }, "cluster.etcd"},
		{"cluster bad endpoint", func(n *Node) { n.Cluster.Name, n.Cluster.Etcd = "n1", []string{"127.0.0.1"} }, "cluster.etcd[0]"},
		{"cluster lease short", func(n *Node) {
			n.Cluster.Name, n.Cluster.Etcd, n.Cluster.Lease = "n1", []string{"h:1"}, time.Second
		}, "cluster.lease"},
		{"cluster lease fraction", func(n *Node) {
			n.Cluster.Name, n.Cluster.Etcd, n.Cluster.Lease = "n1", []string{"h:1"}, 2500*time.Millisecond
		}, "cluster.lease"},
		{"cluster prefix", func(n *Node) { n.Cluster.Name, n.Cluster.Etcd, n.Cluster.Prefix = "n1", []string{"h:1"}, "x" }, "cluster.prefix"},
		{"cluster cap negative", func(n *Node) {
			n.Cluster.Name, n.Cluster.Etcd, n.Cluster.MaxJobsPerNode = "n1", []string{"h:1"}, -1
		}, "cluster.max_jobs_per_node"},
		{"cluster user without password", func(n *Node) {
			n.Cluster.Name, n.Cluster.Etcd, n.Cluster.User = "n1", []string{"h:1"}, "u"
		}, "cluster.password_file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := DefaultNode()
			tc.mut(&n)
			checkField(t, n.Validate(), tc.field)
		})
	}
}

func TestLoadNode(t *testing.T) {
	n, err := LoadNode([]byte(`
data_dir: /var/lib/loadnode
listen: 0.0.0.0:7171
max_concurrent_tasks: 256
topology_interval: 30s
watermark_interval: 500ms
log_level: debug
max_error_rows_kept: 50
http: 127.0.0.1:9090
auth_token_file: /etc/loadnode/token
tls_cert_file: /etc/loadnode/cert.pem
tls_key_file: /etc/loadnode/key.pem
max_record_size: 4MiB
error_row_raw_size: 512
source_retry_base: 250ms
source_retry_max: 20s
source_retry_limit: 3
auto_resume_base: 5s
auto_resume_max: 2m
auto_resume_quiet: 1h
stall_after: 90s
job_restart_limit: 4
job_restart_window: 1m
job_restart_backoff: 50ms
job_restart_backoff_max: 5s
cluster:
  name: n1
  etcd: ["10.0.0.5:2379", "10.0.0.6:2379"]
  lease: 4s
  max_jobs_per_node: 500
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Node{DataDir: "/var/lib/loadnode", Listen: "0.0.0.0:7171", MaxConcurrentTasks: 256,
		TopologyInterval: 30 * time.Second, WatermarkInterval: 500 * time.Millisecond, LogLevel: "debug", LogFormat: "text",
		MaxErrorRowsKept: 50, HTTP: "127.0.0.1:9090", AuthTokenFile: "/etc/loadnode/token", MySQLMaxConnections: 256,
		TLSCertFile: "/etc/loadnode/cert.pem", TLSKeyFile: "/etc/loadnode/key.pem",
		MaxRecordSize: 4 << 20, ErrorRowRawSize: 512, SourceRetryBase: 250 * time.Millisecond, SourceRetryMax: 20 * time.Second, SourceRetryLimit: 3,
		AutoResumeBase: 5 * time.Second, AutoResumeMax: 2 * time.Minute, AutoResumeQuiet: time.Hour, StallAfter: 90 * time.Second,
		JobRestartLimit: 4, JobRestartWindow: time.Minute, JobRestartBackoff: 50 * time.Millisecond, JobRestartBackoffMax: 5 * time.Second,
		Cluster: Cluster{Name: "n1", Etcd: []string{"10.0.0.5:2379", "10.0.0.6:2379"}, Lease: 4 * time.Second,
			Prefix: "/loadnode/", MaxJobsPerNode: 500, RequestTimeout: 5 * time.Second}}
	if !reflect.DeepEqual(n, want) {
		t.Fatalf("got %+v, want %+v", n, want)
	}
	if n.SlogLevel() != slog.LevelDebug {
		t.Fatal(n.SlogLevel())
	}
	if err := n.Validate(); err != nil {
		t.Fatalf("0.0.0.0 with a token file and TLS: %v", err)
	}
	// The file alone may bind 0.0.0.0 without a token (it may come from
	// $LOADNODE_AUTH_TOKEN); Validate, after the environment, refuses.
	n, err = LoadNode([]byte("listen: 0.0.0.0:7171\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Validate(); err == nil {
		t.Fatal("0.0.0.0 without a token or TLS is valid")
	}
	n.AuthToken = "from-the-environment"
	n.TLSCertFile, n.TLSKeyFile = "/c", "/k"
	if err := n.Validate(); err != nil {
		t.Fatalf("0.0.0.0 with $LOADNODE_AUTH_TOKEN and TLS: %v", err)
	}

	for _, empty := range []string{"", "# only a comment\n", "~\n"} {
		n, err := LoadNode([]byte(empty))
		if err != nil || !reflect.DeepEqual(n, DefaultNode()) {
			t.Fatalf("LoadNode(%q) = %+v, %v", empty, n, err)
		}
	}
	n, err = LoadNode([]byte("log_level: warn\nlisten:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := DefaultNode(); n.LogLevel != "warn" || n.Listen != want.Listen || n.DataDir != want.DataDir {
		t.Fatalf("partial file: %+v", n)
	}
}

// TestLoadNodeSizes: the node's byte sizes read as the job spec's
// max_batch_size does: bytes, or an integer and a unit.
func TestLoadNodeSizes(t *testing.T) {
	for _, tc := range []struct {
		yaml      string
		record    int
		errorRows int
	}{
		{"max_record_size: 16777216\n", 16 << 20, 1024},
		{"max_record_size: 16MiB\n", 16 << 20, 1024},
		{"max_record_size: 10 mb\n", 10_000_000, 1024},
		{"max_record_size: \"2048\"\n", 2048, 1024},
		{"max_record_size: 1GiB\n", 1 << 30, 1024},
		{"max_record_size: 1B\n", 1, 1024},
		{"error_row_raw_size: 4KiB\n", 16 << 20, 4096},
		{"error_row_raw_size: 1MiB\nmax_record_size: 1KB\n", 1000, 1 << 20},
	} {
		n, err := LoadNode([]byte(tc.yaml))
		if err != nil {
			t.Errorf("%q: %v", tc.yaml, err)
			continue
		}
		if n.MaxRecordSize != tc.record || n.ErrorRowRawSize != tc.errorRows {
			t.Errorf("%q: max_record_size %d, error_row_raw_size %d; want %d, %d", tc.yaml, n.MaxRecordSize, n.ErrorRowRawSize, tc.record, tc.errorRows)
		}
	}
}

func TestLoadNodeErrors(t *testing.T) {
	cases := []struct {
		name, yaml, field string
		line              int
		msg               string
	}{
		{"unknown key", "listen: 127.0.0.1:1\nlisten_addr: x\n", "listen_addr", 2, "unknown key"},
		{"duplicate key", "listen: a:1\nlisten: b:2\n", "listen", 2, "duplicate"},
		{"duration int", "topology_interval: 10\n", "topology_interval", 1, "duration"},
		{"duration no unit", "watermark_interval: \"10\"\n", "watermark_interval", 1, "duration"},
		{"duration zero", "watermark_interval: 0s\n", "watermark_interval", 1, "> 0"},
		{"int not int", "max_concurrent_tasks: many\n", "max_concurrent_tasks", 1, "integer"},
		{"int zero", "max_concurrent_tasks: 0\n", "max_concurrent_tasks", 1, ">= 1"},
		{"bad listen", "listen: nowhere\n", "listen", 1, "host:port"},
		{"bad level", "log_level: loud\n", "log_level", 1, "debug, info"},
		{"cert without key", "tls_cert_file: /c\n", "tls_key_file", 0, "required when tls_cert_file"},
		{"token file list", "auth_token_file: [a]\n", "auth_token_file", 1, "string"},
		{"not mapping", "[a]\n", "", 1, "mapping"},
		{"string list", "data_dir: [a]\n", "data_dir", 1, "string"},
		{"record size zero", "max_record_size: 0\n", "max_record_size", 1, "between 1B (1) and 1GiB"},
		{"record size big", "max_record_size: 2GiB\n", "max_record_size", 1, "out of range"},
		{"record size overflow", "max_record_size: 9223372036854775807GiB\n", "max_record_size", 1, "between 1B and 1GiB"},
		{"record size unit", "max_record_size: 16M\n", "max_record_size", 1, "units"},
		{"record size fraction", "max_record_size: 1.5MiB\n", "max_record_size", 1, "units"},
		{"record size negative", "max_record_size: -1\n", "max_record_size", 1, "out of range"},
		{"record size list", "max_record_size: [1]\n", "max_record_size", 1, "number of bytes"},
		{"raw size zero", "error_row_raw_size: 0\n", "error_row_raw_size", 1, "out of range"},
		{"raw size big", "error_row_raw_size: 2MiB\n", "error_row_raw_size", 1, "between 1B (1) and 1MiB (1048576)"},
		{"retry base int", "source_retry_base: 500\n", "source_retry_base", 1, "duration"},
		{"retry base zero", "source_retry_base: 0s\n", "source_retry_base", 1, "> 0"},
		{"retry base over cap", "source_retry_base: 1m\n", "source_retry_base", 1, "<= 30s"},
		{"retry limit zero", "source_retry_limit: 0\n", "source_retry_limit", 1, ">= 1"},
		{"retry max zero", "source_retry_max: 0s\n", "source_retry_max", 1, "> 0"},
		{"retry base over max", "source_retry_max: 1s\nsource_retry_base: 2s\n", "source_retry_base", 2, "<= 1s (the back-off cap, source_retry_max)"},
		{"retry limit text", "source_retry_limit: eight\n", "source_retry_limit", 1, "integer"},
		{"resume base zero", "auto_resume_base: 0s\n", "auto_resume_base", 1, "> 0"},
		{"resume max below base", "auto_resume_base: 1m\nauto_resume_max: 30s\n", "auto_resume_max", 2, ">= auto_resume_base (1m0s)"},
		{"resume base above default max", "auto_resume_base: 10m\n", "auto_resume_max", 0, ">= auto_resume_base (10m0s)"},
		{"resume max no unit", "auto_resume_max: 300\n", "auto_resume_max", 1, "duration"},
		{"resume quiet negative", "auto_resume_quiet: -1m\n", "auto_resume_quiet", 1, "> 0"},
		{"stall zero", "stall_after: 0s\n", "stall_after", 1, "> 0"},
		{"restart limit zero", "job_restart_limit: 0\n", "job_restart_limit", 1, ">= 1"},
		{"restart window zero", "job_restart_window: 0s\n", "job_restart_window", 1, "> 0"},
		{"restart backoff zero", "job_restart_backoff: 0s\n", "job_restart_backoff", 1, "> 0"},
		{"restart backoff max below", "job_restart_backoff: 1s\njob_restart_backoff_max: 500ms\n", "job_restart_backoff_max", 2, ">= job_restart_backoff (1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := LoadNode([]byte(tc.yaml))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want *FieldError, got %v", err)
			}
			if fe.Field != tc.field || fe.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got field %q line %d error %q; want %q line %d containing %q", fe.Field, fe.Line, err, tc.field, tc.line, tc.msg)
			}
			if !reflect.DeepEqual(n, Node{}) {
				t.Fatalf("config returned with error: %+v", n)
			}
		})
	}
	if _, err := LoadNode([]byte("listen: [\n")); err == nil || !strings.HasPrefix(err.Error(), "config: ") {
		t.Fatalf("syntax error: %v", err)
	}
}

// TestNodeExposure: an address beyond loopback (listen, http or mysql)
// needs a token and TLS, and the error names what is missing.
func TestNodeExposure(t *testing.T) {
	for _, tc := range []struct {
		listen, http, mysql string
		token, cert         bool
		field, want1, want2 string
	}{
		{listen: "127.0.0.1:7070"},
		{listen: "[::1]:7070", http: "localhost:0"},
		{listen: "127.0.0.1:7070", token: true, cert: true},
		{listen: "0.0.0.0:7070", field: "listen", want1: "a token", want2: "TLS"},
		{listen: ":7070", token: true, field: "listen", want1: "TLS (tls_cert_file"},
		{listen: "10.1.2.3:7070", cert: true, field: "listen", want1: "a token (auth_token_file"},
		{listen: "0.0.0.0:7070", token: true, cert: true},
		{listen: "127.0.0.1:7070", http: "0.0.0.0:9090", field: "http", want1: "a token", want2: "TLS"},
		{listen: "127.0.0.1:7070", http: ":9090", token: true, cert: true},
		{listen: "myhost.example:7070", token: true, field: "listen", want1: "TLS"},
		{listen: "127.0.0.1:7070", mysql: "127.0.0.1:9030"},
		{listen: "127.0.0.1:7070", mysql: "0.0.0.0:9030", field: "mysql", want1: "a token", want2: "TLS"},
		{listen: "127.0.0.1:7070", mysql: ":9030", token: true, field: "mysql", want1: "TLS"},
		{listen: "127.0.0.1:7070", mysql: ":9030", token: true, cert: true},
	} {
		n := DefaultNode()
		n.Listen, n.HTTP, n.MySQL = tc.listen, tc.http, tc.mysql
		if tc.token {
			n.AuthTokenFile = "/run/secrets/token"
		}
		if tc.cert {
			n.TLSCertFile, n.TLSKeyFile = "/c.pem", "/k.pem"
		}
		err := n.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.want1) || !strings.Contains(err.Error(), tc.want2) || !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("%+v: got %v", tc, err)
		}
		if tc.want2 == "" && strings.Contains(err.Error(), "and TLS") {
			t.Errorf("%+v: names TLS, which is there: %v", tc, err)
		}
	}
}

func TestNodeHTTPAddress(t *testing.T) {
	for addr, ok := range map[string]bool{
		"": true, "127.0.0.1:9090": true, "[::1]:9090": true, "localhost:0": true,
		"0.0.0.0:9090": false, "10.1.2.3:9090": false, ":9090": false, "127.0.0.1": false, "127.0.0.1:x": false,
	} {
		n := DefaultNode()
		n.HTTP = addr
		err := n.Validate()
		if (err == nil) != ok {
			t.Errorf("http %q: err = %v, want ok=%v", addr, err, ok)
		}
	}
}

// TestNodeHTTPAllowedHosts (issue 25, D4): http_allowed_hosts lists the host
// names, beyond IP addresses and localhost, by which the admin endpoint may
// be reached; each is a DNS name without a port, and the list is bounded.
func TestNodeHTTPAllowedHosts(t *testing.T) {
	n, err := LoadNode([]byte("http: 127.0.0.1:9090\nhttp_allowed_hosts: [loadnode.example, Node-1.internal, metrics_lb.corp.]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"loadnode.example", "Node-1.internal", "metrics_lb.corp."}; !reflect.DeepEqual(n.HTTPAllowedHosts, want) {
		t.Fatalf("http_allowed_hosts = %q, want %q", n.HTTPAllowedHosts, want)
	}
	if n, err := LoadNode([]byte("http_allowed_hosts: a.example, b.example\n")); err != nil || len(n.HTTPAllowedHosts) != 2 {
		t.Fatalf("comma list: %q %v", n.HTTPAllowedHosts, err)
	}
	if n, err := LoadNode(nil); err != nil || len(n.HTTPAllowedHosts) != 0 {
		t.Fatalf("default: %q %v", n.HTTPAllowedHosts, err)
	}
	long := strings.Repeat("a", 64)
	many := strings.TrimSuffix(strings.Repeat("h.example,", MaxHTTPAllowedHosts+1), ",")
	for _, tc := range []struct{ yaml, field, msg string }{
		{"http_allowed_hosts: [evil.example:8080]\n", "http_allowed_hosts[0]", "without a port"},
		{"http_allowed_hosts: [ok.example, 'http://x.example']\n", "http_allowed_hosts[1]", "is a URL"},
		{"http_allowed_hosts: ['*.example']\n", "http_allowed_hosts[0]", "wildcards"},
		{"http_allowed_hosts: ['']\n", "http_allowed_hosts[0]", "empty"},
		{"http_allowed_hosts: a.example,,b.example\n", "http_allowed_hosts[1]", "empty"},
		{"http_allowed_hosts: [10.0.0.5]\n", "http_allowed_hosts[0]", "IP address"},
		{"http_allowed_hosts: ['[::1]']\n", "http_allowed_hosts[0]", "IP address"},
		{"http_allowed_hosts: [" + long + ".example]\n", "http_allowed_hosts[0]", "63"},
		{"http_allowed_hosts: [" + strings.Repeat("abcdefghi.", 26) + "example]\n", "http_allowed_hosts[0]", "253"},
		{"http_allowed_hosts: [a..example]\n", "http_allowed_hosts[0]", "empty label"},
		{"http_allowed_hosts: [-a.example]\n", "http_allowed_hosts[0]", "'-'"},
		{"http_allowed_hosts: ['a b.example']\n", "http_allowed_hosts[0]", "host name"},
		{"http_allowed_hosts: {a: b}\n", "http_allowed_hosts", "list"},
		{"http_allowed_hosts: " + many + "\n", "http_allowed_hosts", "at most 64"},
	} {
		_, err := LoadNode([]byte(tc.yaml))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q: got %v, want field %s and %q", tc.yaml, err, tc.field, tc.msg)
		}
	}
	// Validate checks a list set in Go too.
	n = DefaultNode()
	n.HTTPAllowedHosts = []string{"ok.example", "bad.example:1"}
	if err := n.Validate(); err == nil || !strings.Contains(err.Error(), "http_allowed_hosts[1]") {
		t.Fatalf("Validate: %v", err)
	}
}
