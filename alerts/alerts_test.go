package alerts

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func testTarget(url string) Target {
	return Target{Name: "t", URL: url, Secret: []byte("s3cret"), Timeout: 2 * time.Second, QueueSize: 4, MaxAttempts: 4,
		BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
}

// TestDeliverSignedWithRetries: a receiver that answers 500 twice and then
// 200 gets three attempts of one event, each signed verifiably, with one
// delivery id.
func TestDeliverSignedWithRetries(t *testing.T) {
	var calls atomic.Int32
	got := make(chan Event, 1)
	ids := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify([]byte("s3cret"), r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), body, time.Now(), time.Minute); err != nil {
			t.Errorf("attempt %d: %v", calls.Load()+1, err)
		}
		if err := Verify([]byte("other"), r.Header.Get(HeaderTimestamp), r.Header.Get(HeaderSignature), body, time.Now(), time.Minute); err == nil {
			t.Error("a wrong secret verified")
		}
		ids <- r.Header.Get(HeaderDelivery)
		if calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var e Event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Error(err)
		}
		got <- e
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	d := New([]Target{testTarget(srv.URL)}, Options{Registerer: reg, Seed: 1})
	defer d.Close()
	d.Send(Event{Event: "paused", Job: "orders", JobID: 7, State: "PAUSED", Reason: "USER_PAUSE", Time: time.Now()})
	select {
	case e := <-got:
		if e.Job != "orders" || e.JobID != 7 || e.Event != "paused" || e.Reason != "USER_PAUSE" || e.Delivery == "" {
			t.Fatalf("event %+v", e)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no delivery")
	}
	first := <-ids
	for range 2 {
		if id := <-ids; id != first {
			t.Errorf("delivery id changed between attempts: %s, %s", first, id)
		}
	}
	if n := testutil.ToFloat64(d.attemptsFailed.WithLabelValues("t")); n != 2 {
		t.Errorf("failed attempts = %v, want 2", n)
	}
	waitCounter(t, d.delivered, 1)
}

// TestHangingReceiverNeverBlocks: Send returns at once while the receiver
// hangs; what overflows the queue is dropped and counted.
func TestHangingReceiverNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	tg := testTarget(srv.URL)
	tg.Timeout = time.Minute
	d := New([]Target{tg}, Options{Seed: 1})
	defer d.Close()
	began := time.Now()
	for range 100 {
		d.Send(Event{Event: "stalled", Job: "j"})
	}
	if took := time.Since(began); took > time.Second {
		t.Fatalf("100 sends took %s", took)
	}
	// One in flight at most, QueueSize queued: the rest dropped.
	if n := testutil.ToFloat64(d.dropped.WithLabelValues("t")); n < 100-1-4 {
		t.Errorf("dropped = %v, want >= %d", n, 100-1-4)
	}
}

// TestEventsFilter: a target gets only the events it asked for.
func TestEventsFilter(t *testing.T) {
	got := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get(HeaderEvent) }))
	defer srv.Close()
	tg := testTarget(srv.URL)
	tg.Events = []string{"stopped"}
	d := New([]Target{tg}, Options{Seed: 1})
	defer d.Close()
	d.Send(Event{Event: "paused"})
	d.Send(Event{Event: "stopped"})
	if e := <-got; e != "stopped" {
		t.Fatalf("got %s", e)
	}
}

func TestBackoff(t *testing.T) {
	d := New(nil, Options{Seed: 3})
	defer d.Close()
	rng := newRand(5)
	for n, hi := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		b := Backoff(100, 1000, n+1, rng)
		if b < hi/2 || b > hi {
			t.Errorf("Backoff(n=%d) = %d, want in [%d, %d]", n+1, b, hi/2, hi)
		}
	}
}

func waitCounter(t *testing.T, c *prometheus.CounterVec, want float64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for testutil.ToFloat64(c.WithLabelValues("t")) < want {
		if time.Now().After(deadline) {
			t.Fatalf("counter = %v, want %v", testutil.ToFloat64(c.WithLabelValues("t")), want)
		}
		<-tick.C
	}
}
