// Package alerts delivers job events to webhook targets: each event is a
// JSON document POSTed to every target that asked for its kind, signed
// with HMAC-SHA256, retried with exponential back-off and jitter up to a
// bound of attempts.
//
// Concurrency: Send never blocks. Each target has a bounded queue and one
// goroutine that delivers its events in order; an event that finds the
// queue full (QueueSize events waiting, besides the one in flight) is
// dropped and counted. A queue's memory follows what it holds, not its
// bound: nothing is allocated for it up front. A receiver that hangs
// delays only its own target's queue (each attempt is bounded by the
// target's timeout), never the caller. Close stops every goroutine;
// events still queued are dropped.
package alerts

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadnode/loadnode/internal/backoff"
)

// Headers of a delivery.
const (
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256, keyed with the
	// target's secret, of the timestamp header's value, ".", and the body.
	HeaderSignature = "X-Loadnode-Signature"
	// HeaderTimestamp is the Unix time (seconds) the attempt was signed.
	HeaderTimestamp = "X-Loadnode-Timestamp"
	// HeaderEvent is the event's kind (paused, stalled ...).
	HeaderEvent = "X-Loadnode-Event"
	// HeaderDelivery identifies the event: the same in every attempt, so a
	// receiver can drop a repeat.
	HeaderDelivery = "X-Loadnode-Delivery"
)

// Event is the JSON body of a delivery.
type Event struct {
	Delivery string    `json:"delivery"` // as HeaderDelivery
	Event    string    `json:"event"`    // paused | stalled | failing | resumed | stopped
	Job      string    `json:"job"`      // the job's name
	JobID    uint64    `json:"job_id"`
	State    string    `json:"state"`  // the job's state (PAUSED ...)
	Reason   string    `json:"reason"` // the state's reason (USER_PAUSE ...)
	Message  string    `json:"message"`
	Time     time.Time `json:"time"` // when it happened (UTC)
}

// Target is one webhook.
type Target struct {
	Name        string   // label in metrics and logs
	URL         string   // POSTed to
	Events      []string // nil: all
	Secret      []byte   // nil: unsigned
	Timeout     time.Duration
	QueueSize   int
	MaxAttempts int
	BackoffBase time.Duration
	BackoffMax  time.Duration
}

// Options are the dispatcher's; zero values are the defaults.
type Options struct {
	Logger *slog.Logger // nil discards
	// Registerer receives the delivery counters; nil registers nothing.
	Registerer prometheus.Registerer
	// Client sends the requests; nil is a client without redirects.
	Client *http.Client
	// Seed seeds the jitter; 0 picks one (logged).
	Seed uint64
}

// Dispatcher delivers events to its targets.
type Dispatcher struct {
	targets []*target
	logger  *slog.Logger
	client  *http.Client
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	delivered, attemptsFailed, failed, dropped *prometheus.CounterVec
}

type target struct {
	Target
	rng *mrand.Rand // used by the target's goroutine only
	// ready holds a token while the queue may be non-empty.
	ready chan struct{}
	mu    struct {
		sync.Mutex
		// queue holds the waiting events, oldest first; its backing array
		// grows by append and is released when the queue empties.
		// INVARIANT: len(queue) <= max(QueueSize, 1).
		queue []Event
	}
}

// push queues e unless the queue is full.
func (t *target) push(e Event) bool {
	t.mu.Lock()
	if len(t.mu.queue) >= max(t.QueueSize, 1) {
		t.mu.Unlock()
		return false
	}
	t.mu.queue = append(t.mu.queue, e)
	t.mu.Unlock()
	select {
	case t.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest event; ok is false when the queue is empty.
func (t *target) pop() (e Event, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.mu.queue) == 0 {
		return e, false
	}
	e = t.mu.queue[0]
	t.mu.queue[0] = Event{}
	if t.mu.queue = t.mu.queue[1:]; len(t.mu.queue) == 0 {
		t.mu.queue = nil
	}
	return e, true
}

// New starts a dispatcher for targets.
func New(targets []Target, o Options) *Dispatcher {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Seed == 0 {
		o.Seed = mrand.Uint64()
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{logger: o.Logger, client: o.Client, ctx: ctx, cancel: cancel}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"target"})
	}
	d.delivered = counter("loadnode_alert_delivered_total", "Alert events delivered (answered 2xx) per webhook target.")
	d.attemptsFailed = counter("loadnode_alert_attempt_failures_total", "Failed delivery attempts (error, timeout or non-2xx answer) per webhook target.")
	d.failed = counter("loadnode_alert_failed_total", "Alert events given up after max_attempts (or a 4xx answer) per webhook target.")
	d.dropped = counter("loadnode_alert_dropped_total", "Alert events dropped because the target's queue was full.")
	if o.Registerer != nil {
		o.Registerer.MustRegister(d.delivered, d.attemptsFailed, d.failed, d.dropped)
	}
	if len(targets) > 0 {
		d.logger.Info("alerts: webhook targets", "targets", len(targets), "jitter_seed", o.Seed)
	}
	for i, t := range targets {
		tg := &target{Target: t, ready: make(chan struct{}, 1), rng: mrand.New(mrand.NewPCG(o.Seed, uint64(i)))}
		// Every series exists from the start, at 0.
		for _, c := range []*prometheus.CounterVec{d.delivered, d.attemptsFailed, d.failed, d.dropped} {
			c.WithLabelValues(t.Name)
		}
		d.targets = append(d.targets, tg)
		d.wg.Add(1)
		go d.run(tg)
	}
	return d
}

// Send queues e for every target that wants its kind. It never blocks.
func (d *Dispatcher) Send(e Event) {
	if d == nil || len(d.targets) == 0 {
		return
	}
	if e.Delivery == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		e.Delivery = hex.EncodeToString(b[:])
	}
	e.Time = e.Time.UTC()
	for _, t := range d.targets {
		if t.Events != nil && !slices.Contains(t.Events, e.Event) {
			continue
		}
		if !t.push(e) {
			d.dropped.WithLabelValues(t.Name).Inc()
			d.logger.Warn("alerts: queue full; event dropped", "target", t.Name, "event", e.Event, "job", e.JobID, "name", e.Job)
		}
	}
}

// Close stops delivering; queued events are dropped.
func (d *Dispatcher) Close() {
	if d == nil {
		return
	}
	d.cancel()
	d.wg.Wait()
}

func (d *Dispatcher) run(t *target) {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.ready:
			for e, ok := t.pop(); ok && d.ctx.Err() == nil; e, ok = t.pop() {
				d.deliver(t, e)
			}
		}
	}
}

// deliver tries e until it is delivered, the attempts are spent, or the
// dispatcher closes.
func (d *Dispatcher) deliver(t *target, e Event) {
	body, err := json.Marshal(e)
	if err != nil {
		d.failed.WithLabelValues(t.Name).Inc()
		return
	}
	for attempt := 1; ; attempt++ {
		retry, err := d.attempt(t, e, body)
		if err == nil {
			d.delivered.WithLabelValues(t.Name).Inc()
			return
		}
		d.attemptsFailed.WithLabelValues(t.Name).Inc()
		if !retry || attempt >= t.MaxAttempts {
			d.failed.WithLabelValues(t.Name).Inc()
			d.logger.Warn("alerts: event given up", "target", t.Name, "event", e.Event, "job", e.JobID, "name", e.Job, "attempts", attempt, "err", err)
			return
		}
		wait := Backoff(t.BackoffBase, t.BackoffMax, attempt, t.rng)
		d.logger.Debug("alerts: attempt failed", "target", t.Name, "event", e.Event, "attempt", attempt, "retry_in", wait, "err", err)
		timer := time.NewTimer(wait)
		select {
		case <-d.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}

// attempt POSTs body once; retry says whether a failure may be retried (a
// 4xx answer other than 408 and 429 is not).
func (d *Dispatcher) attempt(t *target, e Event, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(d.ctx, t.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "loadnode-alerts")
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderEvent, e.Event)
	req.Header.Set(HeaderDelivery, e.Delivery)
	if t.Secret != nil {
		req.Header.Set(HeaderSignature, Sign(t.Secret, ts, body))
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return true, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	retry = resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests
	return retry, fmt.Errorf("alerts: %s answered %s", t.Name, resp.Status)
}

// Backoff is the delay after failed attempt n (1-based): base doubled per
// attempt, at most limit, drawn uniformly from its upper half (jitter).
func Backoff(base, limit time.Duration, n int, rng *mrand.Rand) time.Duration {
	d := backoff.Doubling(base, n-1, limit)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rng.Int64N(int64(half)+1))
}

// Sign is the signature header's value for a body signed at timestamp ts.
func Sign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Errors of Verify.
var (
	ErrBadSignature = errors.New("alerts: signature does not match")
	ErrStale        = errors.New("alerts: timestamp outside the tolerance")
)

// Verify checks a delivery as a receiver would: the signature of ts and
// body under secret, and a timestamp within tolerance of now (a replay of
// an old delivery fails).
func Verify(secret []byte, ts, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("alerts: timestamp %q: %w", ts, err)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return ErrStale
	}
	want := Sign(secret, ts, body)
	if !strings.HasPrefix(signature, "sha256=") || !hmac.Equal([]byte(want), []byte(signature)) {
		return ErrBadSignature
	}
	return nil
}

func newRand(seed uint64) *mrand.Rand { return mrand.New(mrand.NewPCG(seed, 0)) }
