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
// file by LoadNode. Each field is one key of the file; its name, default,
// unit, range and documentation are declared once, in nodeKeys
// (nodekeys.go), from which DefaultNode, LoadNode, Validate, Values (the
// --check-config printer) and config/SPEC.md's table come.
type Node struct {
	// DataDir holds the node's Pebble store (data_dir).
	DataDir string
	// Listen is the host:port of the remote (client) endpoint (listen).
	Listen string
	// MaxConcurrentTasks is the number of node-wide task slots
	// (max_concurrent_tasks).
	MaxConcurrentTasks int
	// TopologyInterval is how often a job looks for new partitions
	// (topology_interval).
	TopologyInterval time.Duration
	// WatermarkInterval is how often high-watermarks are refreshed to compute
	// lag (watermark_interval).
	WatermarkInterval time.Duration
	// LogLevel is one of debug, info, warn, error, in any case (log_level).
	LogLevel string
	// LogFormat is text or json (log_format).
	LogFormat string
	// MaxErrorRowsKept is how many error rows are kept per job
	// (max_error_rows_kept).
	MaxErrorRowsKept int
	// HTTP is the admin endpoint, HOST:PORT, or "" for none (http).
	HTTP string
	// HTTPAllowedHosts are the host names, beyond IP addresses and
	// localhost, by which the admin endpoint may be reached
	// (http_allowed_hosts): a request whose Host header names another host
	// is answered 421 (DNS rebinding).
	HTTPAllowedHosts []string
	// AuthTokenFile is a file holding the token that clients and HTTP
	// requests must present (auth_token_file). AuthToken overrides it.
	AuthTokenFile string
	// AuthToken is the token itself. It is never read from a config file or
	// a flag (process listings would show it): `loadnode serve` sets it from
	// $LOADNODE_AUTH_TOKEN, and a program embedding a node may set it. When
	// set, it overrides AuthTokenFile.
	AuthToken string
	// MySQL is the MySQL-protocol endpoint's host:port (mysql); "" is off.
	MySQL string
	// MySQLMaxConnections bounds the MySQL endpoint's open connections
	// (mysql_max_connections).
	MySQLMaxConnections int

	// TLSCertFile and TLSKeyFile are a PEM certificate (chain) and its
	// private key (tls_cert_file, tls_key_file): both or neither.
	TLSCertFile string
	TLSKeyFile  string

	// MaxRecordSize is the largest record (its value) a task loads, in
	// bytes (max_record_size).
	MaxRecordSize int
	// ErrorRowRawSize is how many bytes of a bad record an error row keeps
	// (error_row_raw_size).
	ErrorRowRawSize int
	// SourceRetryBase is a job's first back-off after a transient source
	// error (source_retry_base); it doubles per consecutive error up to
	// SourceRetryMax (source_retry_max).
	SourceRetryBase time.Duration
	SourceRetryMax  time.Duration
	// SourceRetryLimit is how many consecutive transient source errors a job
	// rides out before it pauses (source_retry_limit).
	SourceRetryLimit int
	// AutoResumeBase, AutoResumeMax and AutoResumeQuiet shape the delay
	// before a job paused for a transient reason is resumed
	// (auto_resume_base, auto_resume_max, auto_resume_quiet).
	AutoResumeBase  time.Duration
	AutoResumeMax   time.Duration
	AutoResumeQuiet time.Duration
	// StallAfter: a RUNNING job with lag above zero whose progress has not
	// moved for this long is reported "stalled" (stall_after).
	StallAfter time.Duration
	// JobRestartLimit, JobRestartWindow, JobRestartBackoff and
	// JobRestartBackoffMax are the restart budget and back-off of job
	// actors (job_restart_limit, job_restart_window, job_restart_backoff,
	// job_restart_backoff_max): the node passes them to the supervisor.
	JobRestartLimit      int
	JobRestartWindow     time.Duration
	JobRestartBackoff    time.Duration
	JobRestartBackoffMax time.Duration

	// Databases are the databases jobs may load into, by name (databases).
	Databases map[string]Database
	// Alerts are the webhook targets of job events (alerts).
	Alerts Alerts
	// Cluster makes the node a member of a cluster on etcd (cluster).
	Cluster Cluster
}

// DefaultNode returns the node configuration with every default set.
func DefaultNode() Node {
	var n Node
	for _, k := range nodeKeys() {
		if k.setDefault != nil {
			k.setDefault(&n)
		}
	}
	return n
}

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
	keys := nodeKeys()
	names := make([]string, len(keys))
	byName := make(map[string]NodeKey, len(keys))
	for i, k := range keys {
		names[i], byName[k.Name] = k.Name, k
	}
	d := &decoder{lines: make(map[string]int)}
	err = d.mapping(root, "", names, func(key string, v *yaml.Node) error {
		return byName[key].decode(d, v, &n)
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

// validateFields checks every key, in the order of nodeKeys.
func (n Node) validateFields() error {
	for _, k := range nodeKeys() {
		if k.check != nil {
			if err := k.check(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAddr checks the host:port of the key field (listen, http).
func checkAddr(field, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fieldErr(field, "%q must be host:port", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || !isDigits(port) || p > 65535 {
		return fieldErr(field, "%q has an invalid port (must be 0-65535)", addr)
	}
	if strings.ContainsAny(host, " \t\r\n,") {
		return fieldErr(field, "%q has an invalid host", addr)
	}
	return nil
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

// validateExposure: a listen, http or mysql address that is not loopback
// (an empty host is every interface) requires a token and TLS.
func (n Node) validateExposure() error {
	for _, ep := range []struct{ field, addr string }{{"listen", n.Listen}, {"http", n.HTTP}, {"mysql", n.MySQL}} {
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

// Exposed reports whether Listen, HTTP or MySQL is bound beyond loopback.
func (n Node) Exposed() bool {
	for _, addr := range []string{n.Listen, n.HTTP, n.MySQL} {
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
