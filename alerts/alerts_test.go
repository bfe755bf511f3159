package alerts

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
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

// TestQueueMemoryFollowsUse (probe 2026-12-02, D18): a queue's memory
// follows what is queued, not queue_size: two targets of the largest
// queue_size cost little at start, and a few queued events little more.
func TestQueueMemoryFollowsUse(t *testing.T) {
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
	tg.QueueSize = 100_000
	a, b := tg, tg
	b.Name = "u"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := New([]Target{a, b}, Options{Seed: 1})
	defer d.Close()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<10 {
		t.Errorf("two targets of queue_size 100000 allocated %d bytes at start, want <= 256 KiB", grew)
	}
	runtime.ReadMemStats(&before)
	for range 10 {
		d.Send(Event{Event: "stalled", Job: "j"})
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<10 {
		t.Errorf("10 events allocated %d bytes, want <= 256 KiB", grew)
	}
}

// TestFullQueueKeepsQueueSize: a target holds queue_size events waiting
// (besides the one in flight); each further one is dropped and counted,
// and the queued ones are delivered in order once the receiver answers.
func TestFullQueueKeepsQueueSize(t *testing.T) {
	const size = 50
	inFlight := make(chan struct{}, 1)
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e Event
		_ = json.NewDecoder(r.Body).Decode(&e)
		mu.Lock()
		got = append(got, e.Job)
		mu.Unlock()
		select {
		case inFlight <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	tg := testTarget(srv.URL)
	tg.Timeout = time.Minute
	tg.QueueSize = size
	d := New([]Target{tg}, Options{Seed: 1})
	defer d.Close()
	d.Send(Event{Event: "stalled", Job: "first"})
	<-inFlight // the first event is at the receiver, out of the queue
	for i := range size + 10 {
		d.Send(Event{Event: "stalled", Job: strconv.Itoa(i)})
	}
	if n := testutil.ToFloat64(d.dropped.WithLabelValues("t")); n != 10 {
		t.Fatalf("dropped = %v, want 10 (queue_size %d, one in flight)", n, size)
	}
	close(release)
	waitCounter(t, d.delivered, 1+size)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"first"}
	for i := range size {
		want = append(want, strconv.Itoa(i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("delivered %v\nwant %v", got, want)
	}
}
