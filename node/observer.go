package node

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/alerts"
	"github.com/loadnode/loadnode/config"
)

// observer is the node's actors.Observer: commit latencies go to the admin
// endpoint's metrics, samples to the console's timelines, events to the
// alert webhooks. Each part is nil when it is off.
type observer struct {
	admin     *admin
	timelines *timelines
	alerts    *alerts.Dispatcher
}

var _ actors.Observer = (*observer)(nil)

func (o *observer) CommitDone(job string, rows int, d time.Duration) {
	if o.admin != nil {
		o.admin.CommitDone(job, rows, d)
	}
}

func (o *observer) JobSampled(s *actors.JobSample) {
	if o.timelines != nil {
		o.timelines.add(s)
	}
}

func (o *observer) JobEvent(e *actors.JobEvent) {
	o.alerts.Send(alerts.Event{Event: e.Event, Job: e.Name, JobID: e.ID, State: e.State.String(), Reason: e.Reason.String(),
		Message: e.Message, Time: time.UnixMilli(e.AtMs)})
}

func (o *observer) JobDeleted(id uint64) {
	if o.timelines != nil {
		o.timelines.drop(id)
	}
}

// startAlerts starts the dispatcher of the config's webhooks (nil when
// there are none), reading their secrets; reg receives its counters.
func startAlerts(cfg config.Alerts, logger *slog.Logger, reg prometheus.Registerer) (*alerts.Dispatcher, error) {
	if len(cfg.Webhooks) == 0 {
		return nil, nil
	}
	targets := make([]alerts.Target, 0, len(cfg.Webhooks))
	for i, w := range cfg.Webhooks {
		field := fmt.Sprintf("alerts.webhooks[%d]", i)
		secret, inline, err := w.ReadSecret(field)
		if err != nil {
			return nil, fmt.Errorf("node: %w", err)
		}
		switch {
		case inline:
			logger.Warn("alerts: the webhook's secret is written in the config file; prefer secret_file or secret_env", "target", w.TargetName())
		case secret == "":
			logger.Warn("alerts: the webhook has no secret: its events are sent unsigned", "target", w.TargetName())
		}
		t := alerts.Target{Name: w.TargetName(), URL: w.URL, Events: w.Events, Timeout: w.Timeout, QueueSize: w.QueueSize,
			MaxAttempts: w.MaxAttempts, BackoffBase: w.BackoffBase, BackoffMax: w.BackoffMax}
		if secret != "" {
			t.Secret = []byte(secret)
		}
		targets = append(targets, t)
	}
	return alerts.New(targets, alerts.Options{Logger: logger, Registerer: reg}), nil
}
