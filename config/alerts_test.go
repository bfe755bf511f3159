package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestAlertsConfig(t *testing.T) {
	n, err := LoadNode([]byte(`
alerts:
  webhooks:
    - url: https://ops.example.com/hook
      events: [paused, failing]
      secret_env: ALERT_SECRET
    - url: http://127.0.0.1:9000/x
      name: local
      events: stopped, resumed
      timeout: 2s
      backoff_base: 100ms
`))
	if err != nil {
		t.Fatal(err)
	}
	w := n.Alerts.Webhooks
	if len(w) != 2 || w[0].TargetName() != "ops.example.com" || w[1].TargetName() != "local" {
		t.Fatalf("webhooks %+v", w)
	}
	if !w[0].WantsEvent("paused") || w[0].WantsEvent("stopped") || !w[1].WantsEvent("resumed") {
		t.Errorf("events %v / %v", w[0].Events, w[1].Events)
	}
	if w[0].Timeout != 5*time.Second || w[0].QueueSize != 1000 || w[0].MaxAttempts != 8 || w[1].Timeout != 2*time.Second || w[1].BackoffBase != 100*time.Millisecond || w[1].BackoffMax != time.Minute {
		t.Errorf("defaults %+v / %+v", w[0], w[1])
	}
	t.Setenv("ALERT_SECRET", " s3cret \n")
	if s, inline, err := w[0].ReadSecret("alerts.webhooks[0]"); err != nil || s != "s3cret" || inline {
		t.Errorf("secret %q %v %v", s, inline, err)
	}
	for _, c := range []struct{ yaml, field string }{
		{"alerts:\n  webhooks:\n    - events: [paused]\n", "alerts.webhooks[0].url"},
		{"alerts:\n  webhooks:\n    - url: ftp://x/y\n", "alerts.webhooks[0].url"},
		{"alerts:\n  webhooks:\n    - url: http://x/y\n      events: [paused, exploded]\n", "alerts.webhooks[0].events[1]"},
		{"alerts:\n  webhooks:\n    - url: http://x/y\n      secret: a\n      secret_file: /f\n", "alerts.webhooks[0]"},
		{"alerts:\n  webhooks:\n    - url: http://x/y\n      timeout: 0s\n", "alerts.webhooks[0].timeout"},
		{"alerts:\n  webhooks:\n    - url: http://x/y\n      backoff_base: 2m\n", "alerts.webhooks[0].backoff_max"},
		{"alerts:\n  webhooks:\n    - url: http://x/y\n      colour: red\n", "alerts.webhooks[0].colour"},
		{"alerts:\n  hooks: []\n", "alerts.hooks"},
	} {
		_, err := LoadNode([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%q: err %v, want one naming %s", c.yaml, err, c.field)
		}
	}
}

// TestAlertQueueBound (probe 2026-12-02, D18): queue_size is bounded at
// 100000 events per target, with an error naming the field and the bound.
func TestAlertQueueBound(t *testing.T) {
	for _, c := range []struct {
		size int
		ok   bool
	}{{1, true}, {100_000, true}, {0, false}, {100_001, false}, {1_000_000, false}} {
		_, err := LoadNode(fmt.Appendf(nil, "alerts:\n  webhooks:\n    - url: http://x/y\n      queue_size: %d\n", c.size))
		switch {
		case c.ok && err != nil:
			t.Errorf("queue_size %d: %v", c.size, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "alerts.webhooks[0].queue_size") || !strings.Contains(err.Error(), "must be 1..100000")):
			t.Errorf("queue_size %d: err %v, want one naming alerts.webhooks[0].queue_size and 1..100000", c.size, err)
		}
	}
}
