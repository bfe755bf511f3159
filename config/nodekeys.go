package config

import (
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// NodeKey is one key of the node config file, declared once in nodeKeys:
// its name, its default, how it decodes and validates, and its doc line.
// LoadNode decodes by the table, DefaultNode and Node.Validate come from it,
// `serve --check-config` prints Node.Values (its order), and config/SPEC.md's
// node-config table is generated from NodeKeys (go generate ./config).
type NodeKey struct {
	// Name is the YAML key.
	Name string
	// Default is the default as a file would write it ("10s", "16MiB",
	// `""`), or "" when it has no such form (a list, a section).
	Default string
	// DefaultNote follows Default in the docs: "off", "none", the bytes of
	// a size.
	DefaultNote string
	// Range is the unit and the range of a valid value.
	Range string
	// Doc is what the key means, one line of SPEC.md (Markdown).
	Doc string

	setDefault func(*Node)
	decode     func(d *decoder, v *yaml.Node, n *Node) error
	// check reports the first problem of the key's value in n (nil when
	// every decoded value is valid). It may compare with a key before it.
	check func(n Node) error
	// show is the value in n written as YAML; nil for a section (databases,
	// alerts, cluster), which --check-config prints on its own.
	show func(n Node) string
}

// NodeKeys returns the keys of the node config file in their order: the
// order of validation, of --check-config and of SPEC.md's table.
func NodeKeys() []NodeKey { return nodeKeys() }

// NodeValue is a key of the node config with its value written as YAML.
type NodeValue struct{ Key, Value string }

// Values returns every key of n but the sections (databases, alerts,
// cluster) with its value, in the order of NodeKeys: a node config file
// that LoadNode reads back as n.
func (n Node) Values() []NodeValue {
	var out []NodeValue
	for _, k := range nodeKeys() {
		if k.show != nil {
			out = append(out, NodeValue{k.Name, k.show(n)})
		}
	}
	return out
}

// Ranges of the node's byte sizes.
const (
	minMaxRecordSize   = 1
	maxMaxRecordSize   = 1 << 30 // 1 GiB
	minErrorRowRawSize = 1
	maxErrorRowRawSize = 1 << 20 // 1 MiB
)

// MaxHTTPAllowedHosts bounds http_allowed_hosts.
const MaxHTTPAllowedHosts = 64

// nodeKeys is the one declaration of the node config's keys. The order is
// the order of validation (the first problem is reported).
func nodeKeys() []NodeKey {
	return []NodeKey{
		strKey("data_dir", "./loadnode-data", func(n *Node) *string { return &n.DataDir },
			func(n Node) error {
				if n.DataDir == "" {
					return fieldErr("data_dir", "required")
				}
				return nil
			}).
			docs("", "path", "Directory of the node's Pebble store."),
		strKey("listen", "127.0.0.1:7070", func(n *Node) *string { return &n.Listen },
			func(n Node) error { return checkAddr("listen", n.Listen) }).
			docs("", "`host:port`, port 0..65535", "Remote (client) endpoint. Empty host: every interface; port 0: any free port."),
		intKey("max_concurrent_tasks", 64, func(n *Node) *int { return &n.MaxConcurrentTasks }).
			docs("", "≥ 1 tasks", "Node-wide task slots shared by all jobs."),
		durationKey("topology_interval", 10*time.Second, func(n *Node) *time.Duration { return &n.TopologyInterval }, nil).
			docs("", "> 0", "How often a job looks for new partitions."),
		durationKey("watermark_interval", 5*time.Second, func(n *Node) *time.Duration { return &n.WatermarkInterval }, nil).
			docs("", "> 0", "How often high-watermarks are refreshed to compute lag."),
		strKey("log_level", "info", func(n *Node) *string { return &n.LogLevel },
			func(n Node) error {
				if _, ok := parseLogLevel(n.LogLevel); !ok {
					return fieldErr("log_level", "%q must be debug, info, warn or error", n.LogLevel)
				}
				return nil
			}).
			docs("", "`debug` \\| `info` \\| `warn` \\| `error`", "Case-insensitive (`--log-level`, `$LOADNODE_LOG_LEVEL`)."),
		strKey("log_format", "text", func(n *Node) *string { return &n.LogFormat },
			func(n Node) error {
				if n.LogFormat != "text" && n.LogFormat != "json" {
					return fieldErr("log_format", "%q must be text or json", n.LogFormat)
				}
				return nil
			}).
			docs("", "`text` \\| `json`", "How log records are written to stderr: slog's key=value text, or one JSON object a line (`--log-format`, `$LOADNODE_LOG_FORMAT`)."),
		intKey("max_error_rows_kept", 1000, func(n *Node) *int { return &n.MaxErrorRowsKept }).
			docs("", "≥ 1 rows", "Error rows kept per job (the newest)."),

		sizeKey("max_record_size", 16<<20, minMaxRecordSize, maxMaxRecordSize, func(n *Node) *int { return &n.MaxRecordSize }).
			docs("", "size, 1 B..1 GiB", "The largest record (its value) a task loads; a larger one becomes an error row. It also bounds every value parsing a record makes: an expression's result (each function's, on the way too), an avro or protobuf record decoded to JSON; a record that would need a larger one is an error row naming the function (or format) and the limit."),
		sizeKey("error_row_raw_size", 1<<10, minErrorRowRawSize, maxErrorRowRawSize, func(n *Node) *int { return &n.ErrorRowRawSize }).
			docs("", "size, 1 B..1 MiB", "Bytes of a bad record an error row keeps; the rest is cut."),
		durationKey("source_retry_base", 500*time.Millisecond, func(n *Node) *time.Duration { return &n.SourceRetryBase },
			func(n Node) error {
				// A source_retry_max that is not > 0 is reported by its own key.
				if n.SourceRetryMax > 0 && n.SourceRetryBase > n.SourceRetryMax {
					return fieldErr("source_retry_base", "%s must be > 0 and <= %s (the back-off cap, source_retry_max)", n.SourceRetryBase, n.SourceRetryMax)
				}
				return nil
			}).
			docs("", "duration, > 0 and ≤ `source_retry_max`", "A job's first back-off after a transient source error; it doubles per consecutive error, up to `source_retry_max`."),
		durationKey("source_retry_max", 30*time.Second, func(n *Node) *time.Duration { return &n.SourceRetryMax }, nil).
			docs("", "duration, > 0", "Cap of the source retry back-off."),
		intKey("source_retry_limit", 8, func(n *Node) *int { return &n.SourceRetryLimit }).
			docs("", "≥ 1 errors", "Consecutive transient source errors a job rides out (about 90 s with the default base and cap) before it pauses with `SOURCE_UNREACHABLE`, which is auto-resumed. The same limit and back-off apply to a table's database that does not answer (`SINK_UNREACHABLE`)."),
		durationKey("auto_resume_base", 10*time.Second, func(n *Node) *time.Duration { return &n.AutoResumeBase }, nil).
			docs("", "duration, > 0", "First delay before a job paused for a transient reason is resumed; it doubles per auto-resume within `auto_resume_quiet`."),
		durationKey("auto_resume_max", 5*time.Minute, func(n *Node) *time.Duration { return &n.AutoResumeMax },
			func(n Node) error {
				return atLeast("auto_resume_max", n.AutoResumeMax, "auto_resume_base", n.AutoResumeBase)
			}).
			docs("", "duration, ≥ `auto_resume_base`", "Cap of the auto-resume delay."),
		durationKey("auto_resume_quiet", 30*time.Minute, func(n *Node) *time.Duration { return &n.AutoResumeQuiet }, nil).
			docs("", "duration, > 0", "A job without an auto-resume for this long starts again from `auto_resume_base` (as Doris)."),
		durationKey("stall_after", time.Minute, func(n *Node) *time.Duration { return &n.StallAfter }, nil).
			docs("", "duration, > 0", "A `RUNNING` (or `NEED_SCHEDULE`) job with lag above zero whose progress (a commit) has not moved for this long is reported `stalled`, and the `stalled` alert fires."),
		intKey("job_restart_limit", 10, func(n *Node) *int { return &n.JobRestartLimit }).
			docs("", "≥ 1 restarts", "Restarts of a failed job actor within `job_restart_window`; one more stops it and pauses the job (`RESTART_BUDGET_EXHAUSTED`, auto-resumed)."),
		durationKey("job_restart_window", 30*time.Second, func(n *Node) *time.Duration { return &n.JobRestartWindow }, nil).
			docs("", "duration, > 0", "Window over which job actor restarts are counted."),
		durationKey("job_restart_backoff", 100*time.Millisecond, func(n *Node) *time.Duration { return &n.JobRestartBackoff }, nil).
			docs("", "duration, > 0", "Delay before a job actor's first restart; it doubles per restart within the window (with 20% jitter)."),
		durationKey("job_restart_backoff_max", 10*time.Second, func(n *Node) *time.Duration { return &n.JobRestartBackoffMax },
			func(n Node) error {
				return atLeast("job_restart_backoff_max", n.JobRestartBackoffMax, "job_restart_backoff", n.JobRestartBackoff)
			}).
			docs("", "duration, ≥ `job_restart_backoff`", "Cap of the restart delay."),

		strKey("http", "", func(n *Node) *string { return &n.HTTP },
			func(n Node) error {
				if n.HTTP == "" {
					return nil
				}
				return checkAddr("http", n.HTTP)
			}).
			docs("off", "`host:port`", "Admin endpoint (`/metrics`, `/healthz`, `/readyz`, `/v1/jobs`, `/debug/pprof`, the console at `/ui/`). It answers only requests whose `Host` is an IP address, `localhost` or a name of `http_allowed_hosts` (docs/operations.md, \"Admin endpoint\")."),
		NodeKey{
			Name: "http_allowed_hosts",
			decode: func(d *decoder, v *yaml.Node, n *Node) error {
				items, err := d.list(v, "http_allowed_hosts")
				if err != nil {
					return err
				}
				n.HTTPAllowedHosts = nil
				for _, it := range items {
					n.HTTPAllowedHosts = append(n.HTTPAllowedHosts, it.text)
				}
				return nil
			},
			check: Node.validateAllowedHosts,
			show:  func(n Node) string { return yamlList(n.HTTPAllowedHosts) },
		}.docs("none", "list of host names, at most "+strconv.Itoa(MaxHTTPAllowedHosts),
			"Names, beyond IP addresses and `localhost`, by which the admin endpoint may be reached (a DNS name or a load balancer's name in front of it); the host of `http`, when it is a name, is allowed too. Each is a DNS name without a port (any port is allowed; labels of letters, digits, `-` and `_`, 1..63 bytes, 253 in all), matched in any case; no wildcards, no IP addresses (always allowed). A request naming another `Host` is answered `421 Misdirected Request`, except `/healthz`: this is what refuses a page of another site that reaches a loopback node by DNS rebinding. A YAML list or a comma-separated string."),
		strKey("mysql", "", func(n *Node) *string { return &n.MySQL },
			func(n Node) error {
				if n.MySQL == "" {
					return nil
				}
				return checkAddr("mysql", n.MySQL)
			}).
			docs("off", "`host:port`", "MySQL-protocol endpoint for Doris users (`mysql -h HOST -P PORT -uroot -p\"$TOKEN\"`, JDBC, pymysql, go-sql-driver/mysql): the statements of `loadnode sql`, answered as Doris's FE answers them. The password is the token (any user); with TLS configured, clients must use TLS. Beyond loopback it needs a token and TLS, like `listen`. Doris's FE port is 9030 (README \"Five minutes for a Doris user\")."),
		intKey("mysql_max_connections", 256, func(n *Node) *int { return &n.MySQLMaxConnections }).
			docs("", "≥ 1 connections", "Open connections the MySQL endpoint takes; one more is answered error 1040 `Too many connections`."),
		strKey("auth_token_file", "", func(n *Node) *string { return &n.AuthTokenFile }, nil).
			docs("none", "path", "File holding the token every client call and HTTP request but `/healthz` must present; trimmed; ≥ "+strconv.Itoa(MinTokenLen)+" printable ASCII characters, no spaces. `$LOADNODE_AUTH_TOKEN` overrides it (the token is never a config or flag value)."),
		strKey("tls_cert_file", "", func(n *Node) *string { return &n.TLSCertFile },
			func(n Node) error {
				if n.TLSKeyFile != "" && n.TLSCertFile == "" {
					return fieldErr("tls_cert_file", "required when tls_key_file is set")
				}
				return nil
			}).
			docs("no TLS", "path", "PEM certificate (chain); with `tls_key_file`, the endpoints (`listen`, `http`, `mysql`) serve TLS. Both or neither."),
		strKey("tls_key_file", "", func(n *Node) *string { return &n.TLSKeyFile },
			func(n Node) error {
				if n.TLSCertFile != "" && n.TLSKeyFile == "" {
					return fieldErr("tls_key_file", "required when tls_cert_file is set")
				}
				return nil
			}).
			docs("", "path", "PEM private key of `tls_cert_file`."),

		NodeKey{
			Name:       "cluster",
			setDefault: func(n *Node) { n.Cluster = DefaultCluster() },
			decode: func(d *decoder, v *yaml.Node, n *Node) (err error) {
				n.Cluster, err = d.cluster(v)
				return err
			},
			check: func(n Node) error { return n.Cluster.Validate() },
		}.docs("absent (a single node)", "mapping", "Makes the node a member of a cluster on etcd. See \"Cluster\" below and docs/cluster.md."),
		NodeKey{
			Name: "databases",
			decode: func(d *decoder, v *yaml.Node, n *Node) (err error) {
				n.Databases, err = d.databases(v)
				return err
			},
			check: Node.validateDatabases,
		}.docs("none", "mapping name → database", "Databases jobs load into (`table.database`). Names match `^[A-Za-z_][A-Za-z0-9_]{0,62}$`. See below."),
		NodeKey{
			Name: "alerts",
			decode: func(d *decoder, v *yaml.Node, n *Node) (err error) {
				n.Alerts, err = d.alerts(v)
				return err
			},
			check: Node.validateAlerts,
		}.docs("none", "mapping with `webhooks`", "Webhook targets of job events (paused, stalled, failing, resumed, stopped, recovered). See below."),
	}
}

// docs returns k with its documentation.
func (k NodeKey) docs(note, rng, doc string) NodeKey {
	if note != "" {
		k.DefaultNote = note
	}
	k.Range, k.Doc = rng, doc
	return k
}

// strKey is a string key; check may be nil.
func strKey(name, def string, field func(*Node) *string, check func(Node) error) NodeKey {
	shown := def
	if def == "" {
		shown = `""`
	}
	return NodeKey{
		Name:       name,
		Default:    shown,
		setDefault: func(n *Node) { *field(n) = def },
		decode: func(_ *decoder, v *yaml.Node, n *Node) (err error) {
			*field(n), err = str(v, name)
			return err
		},
		check: check,
		show:  func(n Node) string { return strconv.Quote(*field(&n)) },
	}
}

// intKey is a count, >= 1.
func intKey(name string, def int, field func(*Node) *int) NodeKey {
	return NodeKey{
		Name:       name,
		Default:    strconv.Itoa(def),
		setDefault: func(n *Node) { *field(n) = def },
		decode: func(_ *decoder, v *yaml.Node, n *Node) (err error) {
			*field(n), err = nodeInt(v, name)
			return err
		},
		check: func(n Node) error {
			if v := *field(&n); v < 1 {
				return fieldErr(name, "%d must be >= 1", v)
			}
			return nil
		},
		show: func(n Node) string { return strconv.Itoa(*field(&n)) },
	}
}

// sizeKey is a size in bytes, lo..hi, written in a file as bytes or as a
// size such as 16MiB.
func sizeKey(name string, def, lo, hi int64, field func(*Node) *int) NodeKey {
	return NodeKey{
		Name:        name,
		Default:     formatSize(def),
		DefaultNote: strconv.FormatInt(def, 10),
		setDefault:  func(n *Node) { *field(n) = int(def) },
		decode: func(_ *decoder, v *yaml.Node, n *Node) (err error) {
			*field(n), err = nodeSize(v, name, lo, hi)
			return err
		},
		check: func(n Node) error {
			if fe := checkBytes(name, int64(*field(&n)), lo, hi); fe != nil {
				return fe
			}
			return nil
		},
		show: func(n Node) string { return strconv.Itoa(*field(&n)) },
	}
}

// durationKey is a duration, > 0, then check (which may be nil).
func durationKey(name string, def time.Duration, field func(*Node) *time.Duration, check func(Node) error) NodeKey {
	return NodeKey{
		Name:       name,
		Default:    shortDuration(def),
		setDefault: func(n *Node) { *field(n) = def },
		decode: func(_ *decoder, v *yaml.Node, n *Node) (err error) {
			*field(n), err = duration(v, name)
			return err
		},
		check: func(n Node) error {
			if v := *field(&n); v <= 0 {
				return fieldErr(name, "%s must be > 0", v)
			}
			if check != nil {
				return check(n)
			}
			return nil
		},
		show: func(n Node) string { return (*field(&n)).String() },
	}
}

// atLeast checks that the duration of key is >= that of the key other.
func atLeast(key string, v time.Duration, other string, min time.Duration) error {
	if v < min {
		return fieldErr(key, "%s must be >= %s (%s)", v, other, min)
	}
	return nil
}

// shortDuration writes d in its largest whole unit ("5m", not "5m0s").
func shortDuration(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}

// yamlList writes list as a YAML flow sequence of double-quoted strings.
func yamlList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
