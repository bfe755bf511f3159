package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/alerts"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestStalledAlert: through a real `loadnode serve`, a job whose broker
// stops answering fetches (metadata and offsets still answer, so the lag
// is known and grows) turns stalled after stall_after, and the webhook
// receives a signed `stalled` event; once fetches are answered again the
// job loads every record exactly once and the receiver gets `recovered`.
func TestStalledAlert(t *testing.T) {
	secret := "stall-secret-0123456789"
	rc := &receiver{t: t, secret: []byte(secret), got: make(chan alerts.Event, 64)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg := writeNodeConfig(t, fmt.Sprintf(`watermark_interval: 300ms
stall_after: 2s
alerts:
  webhooks:
    - url: %s/hook
      name: ops
      secret_env: TEST_STALL_SECRET
      events: [stalled, recovered, failing]
`, srv.URL))
	b := testnode.StartBroker(t, 1, "clicks")
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true, Args: []string{"--config", cfg}, Env: []string{"TEST_STALL_SECRET=" + secret}})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec := jsonSpec("clicks_load", "clicks", "clicks", b.Addrs())
	spec.DesiredConcurrentNumber = 1
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	value := func(i int) string { return fmt.Sprintf(`{"id":%d,"note":"n%d"}`, i, i) }
	for i := range 5 {
		produceValues(t, b, "clicks", value(i))
	}
	loaded := func(want int64) {
		t.Helper()
		waitFor(t, 60*time.Second, fmt.Sprintf("%d rows loaded", want), func() (bool, string) {
			info, err := c.ShowJob(ctx, "clicks_load")
			if err != nil {
				return false, err.Error()
			}
			return info.GetStats().GetLoadedRows() == want && info.GetTotalLag() == 0,
				fmt.Sprintf("%s %s loaded %d lag %d", info.GetSummary().GetState(), info.GetHealth(), info.GetStats().GetLoadedRows(), info.GetTotalLag())
		})
	}
	began := time.Now()
	loaded(5)
	t.Logf("%v: 5 rows loaded", time.Since(began).Round(time.Millisecond))

	// The broker stops answering fetches: each is read and never
	// answered (the client times out and retries). Records produced after
	// the first swallowed fetch cannot reach the job.
	var stall atomic.Bool
	stall.Store(true)
	swallowed := make(chan struct{}, 1)
	b.Cluster().ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		if !stall.Load() {
			return nil, nil, false
		}
		b.Cluster().KeepControl()
		select {
		case swallowed <- struct{}{}:
		default:
		}
		return nil, nil, true
	})
	select {
	case <-swallowed:
	case <-ctx.Done():
		t.Fatal("no fetch reached the broker after the control was set")
	}
	for i := 5; i < 15; i++ {
		produceValues(t, b, "clicks", value(i))
	}
	e := rc.await(t, "clicks_load", "stalled")
	t.Logf("%v: stalled", time.Since(began).Round(time.Millisecond))
	if e.State != "RUNNING" && e.State != "NEED_SCHEDULE" || !strings.Contains(e.Message, "no progress since") || !strings.Contains(e.Message, "lag 10") {
		t.Errorf("stalled event %+v", e)
	}
	info, err := c.ShowJob(ctx, "clicks_load")
	if err != nil {
		t.Fatal(err)
	}
	if info.GetHealth() != "stalled" || info.GetStats().GetLoadedRows() != 5 {
		t.Errorf("while stalled: health %s, loaded %d (want stalled, 5)", info.GetHealth(), info.GetStats().GetLoadedRows())
	}

	// Fetches are answered again: the job catches up and recovers.
	stall.Store(false)
	e = rc.await(t, "clicks_load", "recovered")
	t.Logf("%v: recovered", time.Since(began).Round(time.Millisecond))
	if !strings.Contains(e.Message, "after stalled") {
		t.Errorf("recovered event %+v", e)
	}
	loaded(15)
	t.Logf("%v: 15 rows loaded", time.Since(began).Round(time.Millisecond))
	rows := scanAll(t, c, "clicks")
	if len(rows) != 15 {
		t.Fatalf("table has %d rows, want 15", len(rows))
	}
	t.Logf("%v: scanned", time.Since(began).Round(time.Millisecond))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, ev := range rc.events {
		if ev.Event == "failing" {
			t.Errorf("a stalled broker was reported failing: %+v", ev)
		}
	}
}
