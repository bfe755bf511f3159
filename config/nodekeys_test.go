package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNodeValuesReadBack: what Values writes (the --check-config printer)
// is a node config file that LoadNode reads back as the same Node, for a
// Node whose every key differs from its default. A field without a key, or
// a key that prints or decodes another field, fails here.
func TestNodeValuesReadBack(t *testing.T) {
	n := Node{
		DataDir: "/var/lib/x y", Listen: "127.0.0.1:0", MaxConcurrentTasks: 3,
		TopologyInterval: 11 * time.Second, WatermarkInterval: 12 * time.Second,
		LogLevel: "WARN", LogFormat: "json", MaxErrorRowsKept: 4, HTTP: "127.0.0.1:9",
		HTTPAllowedHosts: []string{"a.example", "b.example"}, AuthTokenFile: "/t \"q\"",
		MySQL: "127.0.0.1:9030", MySQLMaxConnections: 5,
		TLSCertFile: "/c", TLSKeyFile: "/k", MaxRecordSize: 5000, ErrorRowRawSize: 600,
		SourceRetryBase: 13 * time.Second, SourceRetryMax: 21 * time.Second, SourceRetryLimit: 7,
		AutoResumeBase: 14 * time.Second, AutoResumeMax: 15 * time.Second, AutoResumeQuiet: 16 * time.Second,
		StallAfter: 17 * time.Second, JobRestartLimit: 9, JobRestartWindow: 18 * time.Second,
		JobRestartBackoff: 19 * time.Second, JobRestartBackoffMax: 20 * time.Second,
		Cluster: DefaultCluster(),
	}
	v, dv := reflect.ValueOf(n), reflect.ValueOf(DefaultNode())
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		switch name {
		case "AuthToken", "Databases", "Alerts", "Cluster": // not a scalar key
			continue
		}
		if reflect.DeepEqual(v.Field(i).Interface(), dv.Field(i).Interface()) {
			t.Errorf("the test's %s is its default: give it another value", name)
		}
	}
	var b strings.Builder
	for _, kv := range n.Values() {
		b.WriteString(kv.Key + ": " + kv.Value + "\n")
	}
	again, err := LoadNode([]byte(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if !reflect.DeepEqual(again, n) {
		t.Fatalf("read back as\n%+v\nwant\n%+v\nfrom\n%s", again, n, b.String())
	}
}

// TestNodeKeysDeclared: every key is named once, decodes, and is
// documented; the error of an unknown key lists them all.
func TestNodeKeysDeclared(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range NodeKeys() {
		if seen[k.Name] {
			t.Errorf("key %s declared twice", k.Name)
		}
		seen[k.Name] = true
		if k.decode == nil || k.Range == "" || k.Doc == "" || k.Default == "" && k.DefaultNote == "" {
			t.Errorf("key %s lacks a decoder, a range, a doc or a default", k.Name)
		}
	}
	_, err := LoadNode([]byte("nope: 1\n"))
	for name := range seen {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("unknown-key error %v does not list %s", err, name)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		500 * time.Millisecond: "500ms", 10 * time.Second: "10s", 5 * time.Minute: "5m",
		90 * time.Second: "90s", 30 * time.Minute: "30m", 2 * time.Hour: "2h", 1500 * time.Microsecond: "1.5ms",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %s, want %s", d, got, want)
		}
	}
}
