package config

import (
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
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
	// MaxErrorRowsKept is how many error rows are kept per job (the newest).
	// Default 1000; >= 1.
	MaxErrorRowsKept int `yaml:"max_error_rows_kept"`
	// HTTP is the admin endpoint (/metrics, /healthz, /readyz, /v1/jobs),
	// HOST:PORT. Default "" (off). Like Listen, a host that is not loopback
	// requires a token and TLS.
	HTTP string `yaml:"http"`
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
}

// DefaultNode returns the node configuration with every default set.
func DefaultNode() Node {
	return Node{
		DataDir:            "./loadnode-data",
		Listen:             "127.0.0.1:7070",
		MaxConcurrentTasks: 64,
		TopologyInterval:   10 * time.Second,
		WatermarkInterval:  5 * time.Second,
		LogLevel:           "info",
		MaxErrorRowsKept:   1000,
	}
}

var nodeKeys = []string{"data_dir", "listen", "max_concurrent_tasks", "topology_interval", "watermark_interval", "log_level", "max_error_rows_kept", "http", "auth_token_file", "tls_cert_file", "tls_key_file"}

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
		case "auth_token_file":
			n.AuthTokenFile, err = str(v, key)
		case "tls_cert_file":
			n.TLSCertFile, err = str(v, key)
		case "tls_key_file":
			n.TLSKeyFile, err = str(v, key)
		case "log_level":
			n.LogLevel, err = str(v, key)
		case "max_concurrent_tasks":
			n.MaxConcurrentTasks, err = nodeInt(v, key)
		case "max_error_rows_kept":
			n.MaxErrorRowsKept, err = nodeInt(v, key)
		case "topology_interval":
			n.TopologyInterval, err = duration(v, key)
		case "watermark_interval":
			n.WatermarkInterval, err = duration(v, key)
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
	if n.MaxErrorRowsKept < 1 {
		return fieldErr("max_error_rows_kept", "%d must be >= 1", n.MaxErrorRowsKept)
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
	if n.TLSCertFile != "" && n.TLSKeyFile == "" {
		return fieldErr("tls_key_file", "required when tls_cert_file is set")
	}
	if n.TLSKeyFile != "" && n.TLSCertFile == "" {
		return fieldErr("tls_cert_file", "required when tls_key_file is set")
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
		if isLoopback(host) {
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
		if host, _, err := net.SplitHostPort(addr); err != nil || !isLoopback(host) {
			return true
		}
	}
	return false
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SlogLevel returns LogLevel as a slog.Level (info when it is not valid).
func (n Node) SlogLevel() slog.Level {
	l, _ := parseLogLevel(n.LogLevel)
	return l
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
