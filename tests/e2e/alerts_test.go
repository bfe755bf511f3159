package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadnode/loadnode/alerts"
	"github.com/loadnode/loadnode/internal/testnode"
)

// receiver is a webhook target that verifies and records what it gets.
type receiver struct {
	t      *testing.T
	secret []byte
	mu     sync.Mutex
	events []alerts.Event
	got    chan alerts.Event
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := alerts.Verify(rc.secret, r.Header.Get(alerts.HeaderTimestamp), r.Header.Get(alerts.HeaderSignature), body, time.Now(), 5*time.Minute); err != nil {
		rc.t.Errorf("a delivery does not verify: %v (%s)", err, body)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e alerts.Event
	if err := json.Unmarshal(body, &e); err != nil {
		rc.t.Errorf("a delivery is not an event: %v (%s)", err, body)
	}
	rc.mu.Lock()
	rc.events = append(rc.events, e)
	rc.mu.Unlock()
	rc.got <- e
}

// await waits for an event of kind ev for job.
func (rc *receiver) await(t *testing.T, job, ev string) alerts.Event {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-rc.got:
			if e.Job == job && e.Event == ev {
				return e
			}
		case <-deadline:
			rc.mu.Lock()
			defer rc.mu.Unlock()
			t.Fatalf("no %s event for %s; got %+v", ev, job, rc.events)
		}
	}
}

// TestAlertsWebhooks: through a real node, pause, resume, stop and failing
// events reach a receiver signed and verifiable; a receiver that answers
// 500 and then 200 gets the event again; a receiver that hangs delays no
// job (its queue overflows and the drops are counted), and /metrics counts
// the failed attempts.
func TestAlertsWebhooks(t *testing.T) {
	secret := "alert-secret-0123456789"
	good := &receiver{t: t, secret: []byte(secret), got: make(chan alerts.Event, 64)}
	goodSrv := httptest.NewServer(good)
	defer goodSrv.Close()
	var flakyCalls atomic.Int32
	flakyOK := make(chan alerts.Event, 8)
	flakySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := alerts.Verify([]byte(secret), r.Header.Get(alerts.HeaderTimestamp), r.Header.Get(alerts.HeaderSignature), body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("flaky: %v", err)
		}
		if flakyCalls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var e alerts.Event
		_ = json.Unmarshal(body, &e)
		flakyOK <- e
	}))
	defer flakySrv.Close()
	release := make(chan struct{})
	hangSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hangSrv.Close()
	defer close(release)

	secretFile := filepath.Join(t.TempDir(), "alert.secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeNodeConfig(t, fmt.Sprintf(`source_retry_base: 200ms
source_retry_limit: 1000
watermark_interval: 500ms
alerts:
  webhooks:
    - url: %s/hook
      name: good
      secret_file: %s
    - url: %s/hook
      name: flaky
      events: [paused]
      secret_env: TEST_ALERT_SECRET
      backoff_base: 100ms
      backoff_max: 1s
    - url: %s/hook
      name: hang
      secret: %s
      timeout: 1m
      queue_size: 1
`, goodSrv.URL, secretFile, flakySrv.URL, hangSrv.URL, secret))
	b := testnode.StartBroker(t, 1, "orders")
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true, Args: []string{"--config", cfg}, Env: []string{"TEST_ALERT_SECRET=" + secret}})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, jsonSpec("orders_load", "orders", "orders", b.Addrs())); err != nil {
		t.Fatal(err)
	}
	// Pause and resume answer at once although "hang" holds its
	// deliveries for a minute.
	began := time.Now()
	for range 3 {
		if _, err := c.PauseJob(ctx, "orders_load"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ResumeJob(ctx, "orders_load"); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("3 pauses and resumes took %s with a hanging receiver", took)
	}
	e := good.await(t, "orders_load", "paused")
	if e.State != "PAUSED" || e.Reason != "USER_PAUSE" || e.JobID == 0 || e.Time.IsZero() || e.Delivery == "" {
		t.Errorf("paused event %+v", e)
	}
	if e := good.await(t, "orders_load", "resumed"); e.State != "NEED_SCHEDULE" || e.Reason != "USER_RESUME" {
		t.Errorf("resumed event %+v", e)
	}
	// The flaky receiver's first answer was a 500: it got the event again.
	select {
	case e := <-flakyOK:
		if e.Event != "paused" || e.Job != "orders_load" {
			t.Errorf("flaky got %+v", e)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the flaky receiver never got its retry (%d calls)", flakyCalls.Load())
	}
	if _, err := c.StopJob(ctx, "orders_load"); err != nil {
		t.Fatal(err)
	}
	if e := good.await(t, "orders_load", "stopped"); e.State != "STOPPED" || e.Reason != "USER_STOP" {
		t.Errorf("stopped event %+v", e)
	}
	// A job whose broker refuses connections is failing.
	if _, err := c.CreateJob(ctx, jsonSpec("orders_unreachable", "t_bad", "gone", []string{refusedAddr(t)})); err != nil {
		t.Fatal(err)
	}
	if e := good.await(t, "orders_unreachable", "failing"); e.State != "NEED_SCHEDULE" || !strings.Contains(e.Message, "source error") {
		t.Errorf("failing event %+v", e)
	}
	waitFor(t, 30*time.Second, "alert counters", func() (bool, string) {
		m := httpGet(t, "http://"+p.AdminAddr()+"/metrics")
		return strings.Contains(m, `loadnode_alert_attempt_failures_total{target="flaky"} 1`) &&
			regexp.MustCompile(`loadnode_alert_delivered_total\{target="flaky"\} 3\b`).MatchString(m) &&
			!strings.Contains(m, `loadnode_alert_dropped_total{target="hang"} 0`) &&
			strings.Contains(m, `loadnode_alert_dropped_total{target="good"} 0`), grepLines(m, "loadnode_alert_")
	})
	if !strings.Contains(p.Log(), "secret is written in the config file") {
		t.Error("no warning about the inline secret")
	}
}
