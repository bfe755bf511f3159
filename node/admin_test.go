package node_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAdminEndpoint: /healthz, /readyz, /v1/jobs and /metrics on the node's
// own mux, answering from the actors.
func TestAdminEndpoint(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "m"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	prod, _ := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("m"))
	defer prod.Close()
	recs := []*kgo.Record{{Value: []byte(`{"v":1}`)}, {Value: []byte(`{"v":2}`)}, {Value: []byte(`{"v":"x"}`)}}
	if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.WatermarkInterval = 100 * time.Millisecond
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()

	if code, body := get(t, base+"/healthz"); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, _ := get(t, base+"/readyz"); code != 200 {
		t.Fatalf("/readyz = %d after Start", code)
	}
	if code, body := get(t, base+"/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Fatalf("/debug/pprof/goroutine = %d %.80q", code, body)
	}
	spec := &api.JobSpec{Name: "metered", Format: "json", MaxErrorNumber: 5,
		Table: &api.TableSpec{Name: "mt", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}},
		Kafka: &api.KafkaSpec{Brokers: kc.ListenAddrs(), Topic: "m", DefaultOffset: "OFFSET_BEGINNING"}}
	config.ApplyDefaults(spec)
	spec.MaxBatchIntervalMs = 100
	res, err := n.System().Root.RequestFuture(n.Manager(), &api.CreateJobRequest{Spec: spec}, 5*time.Second).Result()
	if err != nil || res.(*api.JobResponse).GetError() != nil {
		t.Fatalf("create: %v %v", res, err)
	}
	deadline := time.After(20 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var metrics string
	for {
		_, metrics = get(t, base+"/metrics")
		if strings.Contains(metrics, `loadnode_job_loaded_rows_total{job="metered",table="mt"} 2`) &&
			strings.Contains(metrics, `loadnode_job_lag_records{job="metered",partition=`) &&
			strings.Contains(metrics, "loadnode_batch_commit_seconds_count") &&
			strings.Contains(metrics, `loadnode_sink_commit_seconds_count{sink="embedded"}`) {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("metrics never showed the job's rows, lag and commit latency:\n%s", metrics)
		case <-tick.C:
		}
	}
	for _, want := range []string{
		`loadnode_job_error_rows_total{job="metered"} 1`,
		`loadnode_job_state{job="metered",reason="SCHEDULED",state="RUNNING"} 1`,
		`loadnode_job_health{health="healthy",job="metered"} 1`,
		`loadnode_job_refused_commits_total{job="metered"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code, body := get(t, base+"/v1/jobs"); code != 200 || !strings.Contains(body, `"name":"metered"`) {
		t.Fatalf("/v1/jobs = %d %s", code, body)
	}
	if code, body := get(t, base+"/v1/jobs/metered"); code != 200 || !strings.Contains(body, `"loadedRows":"2"`) {
		t.Fatalf("/v1/jobs/metered = %d %s", code, body)
	}
	if code, _ := get(t, base+"/v1/jobs/nope"); code != http.StatusNotFound {
		t.Fatalf("/v1/jobs/nope = %d, want 404", code)
	}
}

// TestAdminRefusesForeignHost (issue 25, D4): a request whose Host names a
// host the endpoint does not serve (what a browser sends after DNS
// rebinding) is answered 421 on every path but /healthz, the console, /v1,
// /metrics and /debug included, and opens no console session. IP
// addresses, localhost and the names of http_allowed_hosts are served.
func TestAdminRefusesForeignHost(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.HTTPAllowedHosts = []string{"loadnode.example"}
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()
	_, port, _ := strings.Cut(n.AdminAddr(), ":")
	do := func(method, path, host string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Host = host
		if method == "POST" {
			req.Header.Set("Origin", "http://"+host)
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	paths := []string{"/ui/", "/ui", "/ui/api/session", "/ui/api/timelines/1", "/ui/static/app.js", "/v1/jobs", "/v1/jobs/x",
		"/metrics", "/readyz", "/debug/pprof/", "/debug/pprof/cmdline", "/nope"}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port,
		"localhost.evil.example", "loadnode.example.evil.example", "evilloadnode.example"} {
		for _, path := range paths {
			resp, body := do("GET", path, host)
			if resp.StatusCode != http.StatusMisdirectedRequest || !strings.Contains(body, api.Quote(host)) || !strings.Contains(body, "http_allowed_hosts") {
				t.Errorf("GET %s with Host %q: %d %q, want 421 naming the host and http_allowed_hosts", path, host, resp.StatusCode, body)
			}
			if ck := resp.Header.Get("Set-Cookie"); ck != "" {
				t.Errorf("GET %s with Host %q set a cookie: %s", path, host, ck)
			}
		}
		for _, path := range []string{"/v1/jobs/x/pause", "/ui/logout", "/ui/login"} {
			if resp, _ := do("POST", path, host); resp.StatusCode != http.StatusMisdirectedRequest {
				t.Errorf("POST %s with Host %q: %d, want 421", path, host, resp.StatusCode)
			}
		}
		if resp, body := do("GET", "/healthz", host); resp.StatusCode != 200 || !strings.Contains(body, "ok") {
			t.Errorf("/healthz with Host %q: %d %q, want 200 (load balancers)", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{n.AdminAddr(), "localhost:" + port, "LocalHost", "[::1]:" + port, "10.1.2.3", "[fe80::1]:80",
		"loadnode.example:" + port, "LOADNODE.example", "loadnode.example.:" + port} {
		if resp, body := do("GET", "/v1/jobs", host); resp.StatusCode != 200 {
			t.Errorf("/v1/jobs with Host %q: %d %q, want 200", host, resp.StatusCode, body)
		}
		if resp, _ := do("GET", "/ui/", host); resp.StatusCode != 200 || resp.Header.Get("Set-Cookie") == "" {
			t.Errorf("/ui/ with Host %q: %d, want 200 and a session", host, resp.StatusCode)
		}
	}
}
