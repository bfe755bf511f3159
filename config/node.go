package config

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/remoteauth"
)

// Node is the configuration of a node (`loadnode serve`), read from a YAML
// file by LoadNode. Every default is in DefaultNode.
type Node struct {
	// DataDir holds the node's Pebble store. Default "./loadnode-data".
	DataDir string `yaml:"data_dir"`
	// Listen is the host:port of the remote (client) endpoint. An empty host
	// listens on every interface; port 0 picks a free port. Default
	// "127.0.0.1:7070".
	Listen string `yaml:"listen"`
	// MaxConcurrentTasks is the number of node-wide task slots (tasks that may
	// run at once across all jobs). Default 64; >= 1.
	MaxConcurrentTasks int `yaml:"max_concurrent_tasks"`
	// TopologyInterval is how often a job looks for new partitions. Default
	// 10s; > 0.
	TopologyInterval time.Duration `yaml:"topology_interval"`
	// WatermarkInterval is how often high-watermarks are refreshed to compute
	// lag. Default 5s; > 0.
	WatermarkInterval time.Duration `yaml:"watermark_interval"`
	// LogLevel is one of debug, info, warn, error (case-insensitive).
	// Default info.
	LogLevel string `yaml:"log_level"`
	// LogFormat is how log records are written to stderr: text (key=value,
	// slog's TextHandler) or json (one JSON object a line). Default text.
	LogFormat string `yaml:"log_format"`
	// MaxErrorRowsKept is how many error rows are kept per job (the newest).
	// Default 1000; >= 1.
	MaxErrorRowsKept int `yaml:"max_error_rows_kept"`
	// HTTP is the admin endpoint (/metrics, /healthz, /readyz, /v1/jobs),
	// HOST:PORT. Default "" (off). Like Listen, a host that is not loopback
	// requires a token and TLS.
	HTTP string `yaml:"http"`
	// HTTPAllowedHosts are the host names, beyond IP addresses and
	// localhost, by which the admin endpoint may be reached: a request whose
	// Host header names another host is answered 421 (a page of another
	// site reaching a loopback node by DNS rebinding names its own host).
	// The host of HTTP, when it is a name, is allowed too. Each is a DNS
	// name without a port (any port is allowed), matched in any case.
	// Default none; at most MaxHTTPAllowedHosts.
	HTTPAllowedHosts []string `yaml:"http_allowed_hosts"`
	// AuthTokenFile is a file holding the token that every client command
	// and every HTTP request but /healthz must present ("Authorization:
	// Bearer TOKEN"). Its content is trimmed of surrounding white space and
	// must be at least MinTokenLen printable ASCII characters without
	// spaces. Default "" (no token). $LOADNODE_AUTH_TOKEN (AuthToken)
	// overrides it. Required, with TLS, when Listen or HTTP is not a loopback
	// address; honoured on loopback too when set.
	AuthTokenFile string `yaml:"auth_token_file"`
	// AuthToken is the token itself. It is never read from a config file or
	// a flag (process listings would show it): `loadnode serve` sets it from
	// $LOADNODE_AUTH_TOKEN, and a program embedding a node may set it. When
	// set, it overrides AuthTokenFile.
	AuthToken string `yaml:"-"`
	// TLSCertFile and TLSKeyFile are a PEM certificate (chain) and its
	// private key; when set, both endpoints serve TLS only. Default "" (no
	// TLS). Both or neither. Required, with a token, when Listen or HTTP is
	// not a loopback address.
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`

	// MaxRecordSize is the largest record (its value) a task loads, in
	// bytes; a larger one becomes an error row. Default 16 MiB; 1 B..1 GiB.
	// In a file, bytes or a size such as 16MiB.
	MaxRecordSize int `yaml:"max_record_size"`
	// ErrorRowRawSize is how many bytes of a bad record an error row keeps
	// (the rest is cut). Default 1 KiB; 1 B..1 MiB. In a file, bytes or a
	// size such as 1KiB.
	ErrorRowRawSize int `yaml:"error_row_raw_size"`
	// SourceRetryBase is a job's first back-off after a transient source
	// error; it doubles per consecutive error up to 30s. Default 500ms;
	// > 0 and <= 30s.
	SourceRetryBase time.Duration `yaml:"source_retry_base"`
	// SourceRetryLimit is how many consecutive transient source errors a job
	// rides out before it pauses with SOURCE_UNREACHABLE (and is then
	// auto-resumed). Default 8 errors (about 90s with the default base);
	// >= 1.
	SourceRetryLimit int `yaml:"source_retry_limit"`
	// AutoResumeBase is the first delay before a job paused for a transient
	// reason is resumed; the delay doubles per auto-resume within
	// AutoResumeQuiet, up to AutoResumeMax. Default 10s; > 0.
	AutoResumeBase time.Duration `yaml:"auto_resume_base"`
	// AutoResumeMax caps the auto-resume delay. Default 300s (5m);
	// >= AutoResumeBase.
	AutoResumeMax time.Duration `yaml:"auto_resume_max"`
	// AutoResumeQuiet is how long a job must go without an auto-resume for
	// its delay to start again from AutoResumeBase. Default 30m; > 0.
	AutoResumeQuiet time.Duration `yaml:"auto_resume_quiet"`
	// StallAfter: a RUNNING job with lag above zero whose progress has not
	// moved for this long is reported "stalled". Default 60s (1m); > 0.
	StallAfter time.Duration `yaml:"stall_after"`
	// JobRestartLimit is how many times a failed job actor is restarted
	// within JobRestartWindow before it is stopped (and the job paused).
	// Default 10 restarts; >= 1.
	JobRestartLimit int `yaml:"job_restart_limit"`
	// JobRestartWindow is the window over which job actor restarts are
	// counted. Default 30s; > 0.
	JobRestartWindow time.Duration `yaml:"job_restart_window"`
	// JobRestartBackoff is the delay before a job actor's first restart; it
	// doubles per restart within the window, up to JobRestartBackoffMax.
	// Default 100ms; > 0.
	JobRestartBackoff time.Duration `yaml:"job_restart_backoff"`
	// JobRestartBackoffMax caps the restart delay. Default 10s;
	// >= JobRestartBackoff.
	JobRestartBackoffMax time.Duration `yaml:"job_restart_backoff_max"`

	// Databases are the databases jobs may load into, by name (a job's
	// table.database). Default none: every table is in the embedded store.
	Databases map[string]Database `yaml:"databases"`

	// Alerts are the webhook targets of job events (paused, stalled,
	// failing, resumed, stopped). Default none. See config/alerts.go.
	Alerts Alerts `yaml:"alerts"`

	// Cluster makes the node a member of a cluster on etcd (see Cluster).
	// Default: absent, a single node.
	Cluster Cluster `yaml:"cluster"`
}

// Ranges of the node's byte sizes.
const (
	minMaxRecordSize   = 1
	maxMaxRecordSize   = 1 << 30 // 1 GiB
	minErrorRowRawSize = 1
	maxErrorRowRawSize = 1 << 20 // 1 MiB
	// maxSourceRetryBase is the cap of the source retry back-off; a larger
	// base would be cut to it.
	maxSourceRetryBase = 30 * time.Second
)

// MaxHTTPAllowedHosts bounds http_allowed_hosts.
const MaxHTTPAllowedHosts = 64

// DefaultNode returns the node configuration with every default set.
func DefaultNode() Node {
	return Node{
		DataDir:            "./loadnode-data",
		Listen:             "127.0.0.1:7070",
		MaxConcurrentTasks: 64,
		TopologyInterval:   10 * time.Second,
		WatermarkInterval:  5 * time.Second,
		LogLevel:           "info",
		LogFormat:          "text",
		MaxErrorRowsKept:   1000,

		MaxRecordSize:        16 << 20,
		ErrorRowRawSize:      1 << 10,
		SourceRetryBase:      500 * time.Millisecond,
		SourceRetryLimit:     8,
		AutoResumeBase:       10 * time.Second,
		AutoResumeMax:        300 * time.Second,
		AutoResumeQuiet:      30 * time.Minute,
		StallAfter:           60 * time.Second,
		JobRestartLimit:      10,
		JobRestartWindow:     30 * time.Second,
		JobRestartBackoff:    100 * time.Millisecond,
		JobRestartBackoffMax: 10 * time.Second,
		Cluster:              DefaultCluster(),
	}
}

var nodeKeys = []string{"data_dir", "listen", "max_concurrent_tasks", "topology_interval", "watermark_interval", "log_level", "log_format", "max_error_rows_kept", "http", "http_allowed_hosts", "auth_token_file", "tls_cert_file", "tls_key_file",
	"max_record_size", "error_row_raw_size", "source_retry_base", "source_retry_limit", "auto_resume_base", "auto_resume_max", "auto_resume_quiet", "stall_after",
	"job_restart_limit", "job_restart_window", "job_restart_backoff", "job_restart_backoff_max", "databases", "alerts", "cluster"}

// LoadNode reads a node config file strictly (unknown and duplicate keys are
// errors) over DefaultNode: absent or null keys keep their default. Durations
// are Go duration strings ("10s", "500ms"); a bare number is an error. An
// empty file gives the defaults. Every field is validated; on error the
// returned Node is the zero value. The rule that a non-loopback address
// needs a token and TLS is left to Validate, which the caller runs once the
// environment and flags are applied (the token may come from
// $LOADNODE_AUTH_TOKEN).
func LoadNode(data []byte) (Node, error) {
	n := DefaultNode()
	root, err := parseDocument(data)
	if err != nil {
		return Node{}, err
	}
	if root == nil {
		return n, nil
	}
	d := &decoder{lines: make(map[string]int)}
	err = d.mapping(root, "", nodeKeys, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "data_dir":
			n.DataDir, err = str(v, key)
		case "listen":
			n.Listen, err = str(v, key)
		case "http":
			n.HTTP, err = str(v, key)
		case "http_allowed_hosts":
			var items []item
			if items, err = d.list(v, key); err == nil {
				n.HTTPAllowedHosts = nil
				for _, it := range items {
					n.HTTPAllowedHosts = append(n.HTTPAllowedHosts, it.text)
				}
			}
		case "auth_token_file":
			n.AuthTokenFile, err = str(v, key)
		case "tls_cert_file":
			n.TLSCertFile, err = str(v, key)
		case "tls_key_file":
			n.TLSKeyFile, err = str(v, key)
		case "log_level":
			n.LogLevel, err = str(v, key)
		case "log_format":
			n.LogFormat, err = str(v, key)
		case "max_concurrent_tasks":
			n.MaxConcurrentTasks, err = nodeInt(v, key)
		case "max_error_rows_kept":
			n.MaxErrorRowsKept, err = nodeInt(v, key)
		case "topology_interval":
			n.TopologyInterval, err = duration(v, key)
		case "watermark_interval":
			n.WatermarkInterval, err = duration(v, key)
		case "max_record_size":
			n.MaxRecordSize, err = nodeSize(v, key, minMaxRecordSize, maxMaxRecordSize)
		case "error_row_raw_size":
			n.ErrorRowRawSize, err = nodeSize(v, key, minErrorRowRawSize, maxErrorRowRawSize)
		case "source_retry_base":
			n.SourceRetryBase, err = duration(v, key)
		case "source_retry_limit":
			n.SourceRetryLimit, err = nodeInt(v, key)
		case "auto_resume_base":
			n.AutoResumeBase, err = duration(v, key)
		case "auto_resume_max":
			n.AutoResumeMax, err = duration(v, key)
		case "auto_resume_quiet":
			n.AutoResumeQuiet, err = duration(v, key)
		case "stall_after":
			n.StallAfter, err = duration(v, key)
		case "job_restart_limit":
			n.JobRestartLimit, err = nodeInt(v, key)
		case "job_restart_window":
			n.JobRestartWindow, err = duration(v, key)
		case "job_restart_backoff":
			n.JobRestartBackoff, err = duration(v, key)
		case "job_restart_backoff_max":
			n.JobRestartBackoffMax, err = duration(v, key)
		case "databases":
			n.Databases, err = d.databases(v)
		case "alerts":
			n.Alerts, err = d.alerts(v)
		case "cluster":
			n.Cluster, err = d.cluster(v)
		}
		return err
	})
	if err != nil {
		return Node{}, err
	}
	if err := n.validateFields(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Line = d.line(fe.Field)
		}
		return Node{}, err
	}
	return n, nil
}

func nodeInt(v *yaml.Node, field string) (int, error) {
	i, err := integer(v, field)
	if err != nil {
		return 0, err
	}
	if i != int64(int(i)) {
		return 0, errAt(v, field, "%d out of range", i)
	}
	return int(i), nil
}

// nodeSize reads a byte size between lo and hi (which fit an int).
func nodeSize(v *yaml.Node, field string, lo, hi int64) (int, error) {
	b, err := byteSize(v, field, lo, hi)
	return int(b), err
}

func duration(v *yaml.Node, field string) (time.Duration, error) {
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		return 0, errAt(v, field, "must be a duration with a unit, such as 10s")
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		return 0, errAt(v, field, "%q must be a duration with a unit, such as 10s", v.Value)
	}
	return d, nil
}

// Validate checks every field, then that an endpoint bound beyond this
// machine has a token and TLS, and returns a *FieldError for the first
// problem. It does not read the token, certificate or key files (Token and
// LoadTLS do).
func (n Node) Validate() error {
	if err := n.validateFields(); err != nil {
		return err
	}
	return n.validateExposure()
}

func (n Node) validateFields() error {
	if n.DataDir == "" {
		return fieldErr("data_dir", "required")
	}
	host, port, err := net.SplitHostPort(n.Listen)
	if err != nil {
		return fieldErr("listen", "%q must be host:port", n.Listen)
	}
	if p, err := strconv.Atoi(port); err != nil || !isDigits(port) || p > 65535 {
		return fieldErr("listen", "%q has an invalid port (must be 0-65535)", n.Listen)
	}
	if strings.ContainsAny(host, " \t\r\n,") {
		return fieldErr("listen", "%q has an invalid host", n.Listen)
	}
	if n.MaxConcurrentTasks < 1 {
		return fieldErr("max_concurrent_tasks", "%d must be >= 1", n.MaxConcurrentTasks)
	}
	if n.TopologyInterval <= 0 {
		return fieldErr("topology_interval", "%s must be > 0", n.TopologyInterval)
	}
	if n.WatermarkInterval <= 0 {
		return fieldErr("watermark_interval", "%s must be > 0", n.WatermarkInterval)
	}
	if _, ok := parseLogLevel(n.LogLevel); !ok {
		return fieldErr("log_level", "%q must be debug, info, warn or error", n.LogLevel)
	}
	if n.LogFormat != "text" && n.LogFormat != "json" {
		return fieldErr("log_format", "%q must be text or json", n.LogFormat)
	}
	if n.MaxErrorRowsKept < 1 {
		return fieldErr("max_error_rows_kept", "%d must be >= 1", n.MaxErrorRowsKept)
	}
	if err := n.validateActorFields(); err != nil {
		return err
	}
	if n.HTTP != "" {
		host, port, err := net.SplitHostPort(n.HTTP)
		if err != nil {
			return fieldErr("http", "%q must be host:port", n.HTTP)
		}
		if p, err := strconv.Atoi(port); err != nil || !isDigits(port) || p > 65535 {
			return fieldErr("http", "%q has an invalid port (must be 0-65535)", n.HTTP)
		}
		if strings.ContainsAny(host, " \t\r\n,") {
			return fieldErr("http", "%q has an invalid host", n.HTTP)
		}
	}
	if err := n.validateAllowedHosts(); err != nil {
		return err
	}
	if n.TLSCertFile != "" && n.TLSKeyFile == "" {
		return fieldErr("tls_key_file", "required when tls_cert_file is set")
	}
	if n.TLSKeyFile != "" && n.TLSCertFile == "" {
		return fieldErr("tls_cert_file", "required when tls_key_file is set")
	}
	if err := n.Cluster.Validate(); err != nil {
		return err
	}
	if err := n.validateDatabases(); err != nil {
		return err
	}
	return n.validateAlerts()
}

// validateAllowedHosts checks http_allowed_hosts: at most
// MaxHTTPAllowedHosts DNS names (letters, digits, '-' and '_' in labels of
// 1..63 bytes, 253 bytes in all, an optional final dot), without a port.
func (n Node) validateAllowedHosts() error {
	if len(n.HTTPAllowedHosts) > MaxHTTPAllowedHosts {
		return fieldErr("http_allowed_hosts", "%d names: at most %d", len(n.HTTPAllowedHosts), MaxHTTPAllowedHosts)
	}
	for i, h := range n.HTTPAllowedHosts {
		if err := checkHostName(h); err != nil {
			return fieldErr(fmt.Sprintf("http_allowed_hosts[%d]", i), "%s", err)
		}
	}
	return nil
}

// checkHostName says what is wrong with h as a name of http_allowed_hosts.
func checkHostName(h string) error {
	q := api.Quote(h)
	switch {
	case h == "":
		return errors.New("empty: want a host name such as loadnode.example.com")
	case net.ParseIP(strings.Trim(h, "[]")) != nil:
		return fmt.Errorf("%s is an IP address, which is always allowed: list host names only", q)
	case strings.Contains(h, "*"):
		return fmt.Errorf("%s: wildcards are not supported; list each host name", q)
	}
	if strings.Contains(h, "://") {
		return fmt.Errorf("%s is a URL: want its host name only", q)
	}
	if _, port, err := net.SplitHostPort(h); err == nil && isDigits(port) {
		return fmt.Errorf("%s: want a host name without a port (any port is allowed)", q)
	}
	name := strings.TrimSuffix(h, ".")
	if len(name) > 253 {
		return fmt.Errorf("%s is longer than 253 bytes", q)
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return fmt.Errorf("%s has an empty label", q)
		case len(label) > 63:
			return fmt.Errorf("%s has a label longer than 63 bytes", q)
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Errorf("%s has a label that starts or ends with '-'", q)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("%s is not a host name: want letters, digits, '-', '_' and '.'", q)
			}
		}
	}
	return nil
}

// validateActorFields checks the knobs the actors are started with.
func (n Node) validateActorFields() error {
	if fe := checkBytes("max_record_size", int64(n.MaxRecordSize), minMaxRecordSize, maxMaxRecordSize); fe != nil {
		return fe
	}
	if fe := checkBytes("error_row_raw_size", int64(n.ErrorRowRawSize), minErrorRowRawSize, maxErrorRowRawSize); fe != nil {
		return fe
	}
	if n.SourceRetryBase <= 0 || n.SourceRetryBase > maxSourceRetryBase {
		return fieldErr("source_retry_base", "%s must be > 0 and <= %s (the back-off cap)", n.SourceRetryBase, maxSourceRetryBase)
	}
	if n.SourceRetryLimit < 1 {
		return fieldErr("source_retry_limit", "%d must be >= 1", n.SourceRetryLimit)
	}
	if n.AutoResumeBase <= 0 {
		return fieldErr("auto_resume_base", "%s must be > 0", n.AutoResumeBase)
	}
	if n.AutoResumeMax < n.AutoResumeBase {
		return fieldErr("auto_resume_max", "%s must be >= auto_resume_base (%s)", n.AutoResumeMax, n.AutoResumeBase)
	}
	if n.AutoResumeQuiet <= 0 {
		return fieldErr("auto_resume_quiet", "%s must be > 0", n.AutoResumeQuiet)
	}
	if n.StallAfter <= 0 {
		return fieldErr("stall_after", "%s must be > 0", n.StallAfter)
	}
	if n.JobRestartLimit < 1 {
		return fieldErr("job_restart_limit", "%d must be >= 1", n.JobRestartLimit)
	}
	if n.JobRestartWindow <= 0 {
		return fieldErr("job_restart_window", "%s must be > 0", n.JobRestartWindow)
	}
	if n.JobRestartBackoff <= 0 {
		return fieldErr("job_restart_backoff", "%s must be > 0", n.JobRestartBackoff)
	}
	if n.JobRestartBackoffMax < n.JobRestartBackoff {
		return fieldErr("job_restart_backoff_max", "%s must be >= job_restart_backoff (%s)", n.JobRestartBackoffMax, n.JobRestartBackoff)
	}
	return nil
}

// validateExposure: a listen or http address that is not loopback (an
// empty host is every interface) requires a token and TLS.
func (n Node) validateExposure() error {
	for _, ep := range []struct{ field, addr string }{{"listen", n.Listen}, {"http", n.HTTP}} {
		if ep.addr == "" {
			continue
		}
		host, _, _ := net.SplitHostPort(ep.addr)
		if remoteauth.Loopback(host) {
			continue
		}
		var missing []string
		if n.AuthToken == "" && n.AuthTokenFile == "" {
			missing = append(missing, "a token (auth_token_file, --auth-token-file or $LOADNODE_AUTH_TOKEN)")
		}
		if n.TLSCertFile == "" {
			missing = append(missing, "TLS (tls_cert_file and tls_key_file, or --tls-cert and --tls-key)")
		}
		if len(missing) > 0 {
			return fieldErr(ep.field, "%q is not a loopback address: binding it requires %s; without them bind 127.0.0.1, ::1 or localhost", ep.addr, strings.Join(missing, " and "))
		}
	}
	return nil
}

// Exposed reports whether Listen or HTTP is bound beyond loopback.
func (n Node) Exposed() bool {
	for _, addr := range []string{n.Listen, n.HTTP} {
		if addr == "" {
			continue
		}
		if host, _, err := net.SplitHostPort(addr); err != nil || !remoteauth.Loopback(host) {
			return true
		}
	}
	return false
}

// SlogLevel returns LogLevel as a slog.Level (info when it is not valid).
func (n Node) SlogLevel() slog.Level {
	l, _ := parseLogLevel(n.LogLevel)
	return l
}

// Logger returns a logger writing to w at LogLevel, in LogFormat.
func (n Node) Logger(w io.Writer) *slog.Logger {
	return NewLogger(w, n.LogFormat, n.SlogLevel())
}

// NewLogger returns a logger writing to w at level, as JSON lines when
// format is "json", else as slog's text.
func NewLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	o := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, o))
	}
	return slog.New(slog.NewTextHandler(w, o))
}

func parseLogLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return slog.LevelInfo, false
}
