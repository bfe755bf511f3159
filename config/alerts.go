package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Alerts is the node's alerting (`alerts:`): webhook targets that receive
// job events as signed JSON. See docs/operations.md "Alerts" for the payload and the
// signature.
type Alerts struct {
	// Webhooks are the targets. Default none (no alerts).
	Webhooks []Webhook `yaml:"webhooks"`
}

// Webhook is one alert target.
type Webhook struct {
	// URL is where events are POSTed (http or https). Required.
	URL string `yaml:"url"`
	// Name labels the target in /metrics and logs. Default the URL's
	// host:port.
	Name string `yaml:"name"`
	// Events are the events sent: a subset of paused, stalled, failing,
	// resumed, stopped, recovered. Default all of them.
	Events []string `yaml:"events"`
	// SecretFile is a file holding the HMAC-SHA256 secret (trimmed of
	// surrounding white space). SecretEnv names an environment variable
	// holding it instead; Secret is the secret inline (allowed, with a
	// warning at start: the config file then holds a secret). At most one
	// of the three; default none (events are sent unsigned, with a
	// warning).
	SecretFile string `yaml:"secret_file"`
	SecretEnv  string `yaml:"secret_env"`
	Secret     string `yaml:"secret"`
	// Timeout bounds one delivery attempt. Default 5s; > 0 and <= 1m.
	Timeout time.Duration `yaml:"timeout"`
	// QueueSize bounds the events waiting for this target; an event that
	// finds the queue full is dropped and counted
	// (loadnode_alert_dropped_total). The queue's memory follows the
	// events it holds, not this bound. Default 1000; 1..MaxAlertQueue.
	QueueSize int `yaml:"queue_size"`
	// MaxAttempts is how many times an event is tried before it is given
	// up (counted in loadnode_alert_failed_total). Default 8; 1..100.
	MaxAttempts int `yaml:"max_attempts"`
	// BackoffBase is the delay before the second attempt; it doubles per
	// attempt up to BackoffMax, each delay drawn with jitter from its upper
	// half. Default 500ms; > 0.
	BackoffBase time.Duration `yaml:"backoff_base"`
	// BackoffMax caps the delay between attempts. Default 1m;
	// >= BackoffBase.
	BackoffMax time.Duration `yaml:"backoff_max"`
}

// MaxAlertQueue bounds a webhook's queue_size: the events one target
// may hold in memory while its receiver does not answer.
const MaxAlertQueue = 100_000

// AlertEvents lists every event a webhook may ask for.
var AlertEvents = []string{"paused", "stalled", "failing", "resumed", "stopped", "recovered"}

var (
	alertsKeys  = []string{"webhooks"}
	webhookKeys = []string{"url", "name", "events", "secret_file", "secret_env", "secret", "timeout", "queue_size", "max_attempts", "backoff_base", "backoff_max"}
)

// defaultWebhook is a webhook with every default but URL and Events.
func defaultWebhook() Webhook {
	return Webhook{Timeout: 5 * time.Second, QueueSize: 1000, MaxAttempts: 8, BackoffBase: 500 * time.Millisecond, BackoffMax: time.Minute}
}

func (d *decoder) alerts(v *yaml.Node) (Alerts, error) {
	var a Alerts
	if isNull(v) {
		return a, nil
	}
	err := d.mapping(v, "alerts", alertsKeys, func(key string, kv *yaml.Node) error {
		if isNull(kv) {
			return nil
		}
		if kv.Kind != yaml.SequenceNode {
			return errAt(kv, "alerts.webhooks", "must be a list of targets (url, events, secret_file ...)")
		}
		for i, e := range kv.Content {
			e = resolve(e)
			field := fmt.Sprintf("alerts.webhooks[%d]", i)
			d.lines[field] = e.Line
			w := defaultWebhook()
			if e.Kind != yaml.MappingNode {
				return errAt(e, field, "must be a mapping with url")
			}
			err := d.mapping(e, field, webhookKeys, func(key string, wv *yaml.Node) error {
				var err error
				f := field + "." + key
				switch key {
				case "url":
					w.URL, err = str(wv, f)
				case "name":
					w.Name, err = str(wv, f)
				case "events":
					var items []item
					if items, err = d.list(wv, f); err == nil {
						w.Events = []string{}
						for _, it := range items {
							w.Events = append(w.Events, it.text)
						}
					}
				case "secret_file":
					w.SecretFile, err = str(wv, f)
				case "secret_env":
					w.SecretEnv, err = str(wv, f)
				case "secret":
					w.Secret, err = str(wv, f)
				case "timeout":
					w.Timeout, err = duration(wv, f)
				case "queue_size":
					w.QueueSize, err = nodeInt(wv, f)
				case "max_attempts":
					w.MaxAttempts, err = nodeInt(wv, f)
				case "backoff_base":
					w.BackoffBase, err = duration(wv, f)
				case "backoff_max":
					w.BackoffMax, err = duration(wv, f)
				}
				return err
			})
			if err != nil {
				return err
			}
			a.Webhooks = append(a.Webhooks, w)
		}
		return nil
	})
	return a, err
}

// validateAlerts checks every webhook.
func (n Node) validateAlerts() error {
	for i, w := range n.Alerts.Webhooks {
		field := fmt.Sprintf("alerts.webhooks[%d]", i)
		if w.URL == "" {
			return fieldErr(field+".url", "required")
		}
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fieldErr(field+".url", "%q must be an http:// or https:// URL", w.URL)
		}
		for j, e := range w.Events {
			if !contains(AlertEvents, e) {
				return fieldErr(fmt.Sprintf("%s.events[%d]", field, j), "%q is not an event (%s)", e, strings.Join(AlertEvents, ", "))
			}
		}
		set := 0
		for _, s := range []string{w.SecretFile, w.SecretEnv, w.Secret} {
			if s != "" {
				set++
			}
		}
		if set > 1 {
			return fieldErr(field, "secret_file, secret_env and secret are exclusive: give one")
		}
		if w.Timeout <= 0 || w.Timeout > time.Minute {
			return fieldErr(field+".timeout", "%s must be > 0 and <= 1m", w.Timeout)
		}
		if w.QueueSize < 1 || w.QueueSize > MaxAlertQueue {
			return fieldErr(field+".queue_size", "%d must be 1..%d (events held in memory per target)", w.QueueSize, MaxAlertQueue)
		}
		if w.MaxAttempts < 1 || w.MaxAttempts > 100 {
			return fieldErr(field+".max_attempts", "%d must be 1..100", w.MaxAttempts)
		}
		if w.BackoffBase <= 0 {
			return fieldErr(field+".backoff_base", "%s must be > 0", w.BackoffBase)
		}
		if w.BackoffMax < w.BackoffBase {
			return fieldErr(field+".backoff_max", "%s must be >= backoff_base (%s)", w.BackoffMax, w.BackoffBase)
		}
	}
	return nil
}

// TargetName is the webhook's name in metrics and logs: Name, or the URL's
// host:port.
func (w Webhook) TargetName() string {
	if w.Name != "" {
		return w.Name
	}
	if u, err := url.Parse(w.URL); err == nil {
		return u.Host
	}
	return w.URL
}

// WantsEvent reports whether the webhook receives event e.
func (w Webhook) WantsEvent(e string) bool {
	return w.Events == nil || contains(w.Events, e)
}

// ReadSecret returns the webhook's HMAC secret ("" for none) and whether it
// was written inline in the config file (the caller warns). field names the
// webhook in errors (alerts.webhooks[i]).
func (w Webhook) ReadSecret(field string) (secret string, inline bool, err error) {
	switch {
	case w.Secret != "":
		return w.Secret, true, nil
	case w.SecretEnv != "":
		s := strings.TrimSpace(os.Getenv(w.SecretEnv))
		if s == "" {
			return "", false, fieldErr(field+".secret_env", "$%s is empty or unset", w.SecretEnv)
		}
		return s, false, nil
	case w.SecretFile != "":
		b, err := os.ReadFile(w.SecretFile)
		if err != nil {
			return "", false, fieldErr(field+".secret_file", "%v", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", false, fieldErr(field+".secret_file", "%s is empty", w.SecretFile)
		}
		return s, false, nil
	}
	return "", false, nil
}
