package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

// serveCmd is `loadnode serve`. Empty flag values leave the file's (or the
// default) setting alone.
type serveCmd struct {
	configFile string
	dataDir    string
	listen     string
	logLevel   string
	logFormat  string
	http       string
	mysql      string
	tokenFile  string
	tlsCert    string
	tlsKey     string
	check      bool
	cpuProfile string
	addrFile   string
	// acceptWALLoss: see node.Config.AcceptWALLoss.
	acceptWALLoss bool
}

// serveCommands is the row of `serve` in the command table.
var serveCommands = []subcommand{{name: "serve", about: "run a node",
	usage: "[--config FILE] [--data DIR] [--listen HOST:PORT] [--http HOST:PORT] [--mysql HOST:PORT] [--log-level LEVEL] [--log-format text|json]\n" +
		"[--auth-token-file FILE] [--tls-cert FILE --tls-key FILE] [--addr-file FILE]",
	more: "Runs a node until SIGINT or SIGTERM. Flags override the environment, which\n" +
		"overrides the config file; defaults: data ./loadnode-data, listen\n" +
		"127.0.0.1:7070, log level info. An address that is not loopback requires a\n" +
		"token (a file, or $" + config.TokenEnv + "; never a flag value) and TLS.",
	bind: bind(func(c *serveCmd, fs *flagSet) *connFlags {
		fs.StringVar(&c.configFile, "config", "", "node config `FILE` (YAML)")
		fs.StringVar(&c.dataDir, "data", "", "data `DIR` (the Pebble store)")
		fs.StringVar(&c.listen, "listen", "", "client endpoint `HOST:PORT` (port 0 picks one)")
		fs.StringVar(&c.logLevel, "log-level", "", "log `LEVEL`: debug, info, warn or error")
		fs.StringVar(&c.logFormat, "log-format", "", "log `FORMAT`: text (key=value) or json (one object a line)")
		fs.BoolVar(&c.check, "check-config", false, "validate the configuration (file, environment, flags), print it and exit")
		fs.StringVar(&c.http, "http", "", "admin endpoint `HOST:PORT` (/metrics, /healthz, /readyz, /v1/jobs); off by default")
		fs.StringVar(&c.mysql, "mysql", "", "MySQL-protocol endpoint `HOST:PORT` for Doris users (mysql -h HOST -P PORT -uroot); off by default")
		fs.StringVar(&c.tokenFile, "auth-token-file", "", "`FILE` holding the token clients must present (overrides $"+config.TokenEnv+")")
		fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM certificate `FILE`: both endpoints serve TLS")
		fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
		fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (recovery included) to `FILE` at shutdown")
		fs.StringVar(&c.addrFile, "addr-file", "", "once ready, write the bound addresses to `FILE` as JSON {\"addr\",\"http\",\"pid\"} (atomically; removed at shutdown)")
		fs.BoolVar(&c.acceptWALLoss, "accept-wal-loss", false, "start although the store's write-ahead log is corrupt before intact records, dropping them (logged at ERROR); without it such a store is refused")
		return nil
	}, nil),
}}

// nodeConfig is the file (or the defaults) with the flags applied.
func (c serveCmd) nodeConfig(getenv func(string) string) (config.Node, error) {
	cfg := config.DefaultNode()
	if c.configFile != "" {
		data, err := os.ReadFile(c.configFile)
		if err != nil {
			return config.Node{}, fmt.Errorf("serve: %w", err)
		}
		if cfg, err = config.LoadNode(data); err != nil {
			return config.Node{}, fmt.Errorf("serve: %s: %w", c.configFile, err)
		}
	}
	// Environment variables override the file; flags override both.
	if getenv != nil {
		for env, dst := range map[string]*string{
			"LOADNODE_DATA": &cfg.DataDir, "LOADNODE_LISTEN": &cfg.Listen,
			"LOADNODE_HTTP": &cfg.HTTP, "LOADNODE_MYSQL": &cfg.MySQL, "LOADNODE_LOG_LEVEL": &cfg.LogLevel, "LOADNODE_LOG_FORMAT": &cfg.LogFormat,
		} {
			if v := getenv(env); v != "" {
				*dst = v
			}
		}
		// The token itself, only ever from the environment.
		cfg.AuthToken = getenv(config.TokenEnv)
		// So are database passwords given as values.
		for name, db := range cfg.Databases {
			db.Password = getenv(config.DatabasePasswordEnv(name))
			cfg.Databases[name] = db
		}
	}
	if c.dataDir != "" {
		cfg.DataDir = c.dataDir
	}
	if c.listen != "" {
		cfg.Listen = c.listen
	}
	if c.logLevel != "" {
		cfg.LogLevel = c.logLevel
	}
	if c.logFormat != "" {
		cfg.LogFormat = c.logFormat
	}
	if c.http != "" {
		cfg.HTTP = c.http
	}
	if c.mysql != "" {
		cfg.MySQL = c.mysql
	}
	if c.tokenFile != "" {
		cfg.AuthTokenFile, cfg.AuthToken = c.tokenFile, ""
	}
	if c.tlsCert != "" {
		cfg.TLSCertFile = c.tlsCert
	}
	if c.tlsKey != "" {
		cfg.TLSKeyFile = c.tlsKey
	}
	if err := cfg.Validate(); err != nil {
		return config.Node{}, fmt.Errorf("serve: %w", err)
	}
	return cfg, nil
}

// yamlList writes list as a YAML flow sequence of double-quoted strings.
func yamlList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// shutdownGrace bounds the time from a stop signal (SIGTERM, SIGINT) to the
// end of the process (docs/limits.md).
const shutdownGrace = 5 * time.Second

// exitShutdownTimeout is the exit status when shutdownGrace ran out.
const exitShutdownTimeout = 75

func (c serveCmd) run(ctx context.Context, m *Main) error {
	cfg, err := c.nodeConfig(m.Getenv)
	if err != nil {
		return err
	}
	if c.check {
		// Read the token and the certificate as Start will, so that a bad
		// file fails the check; print where the token comes from, never it.
		if _, err := cfg.Token(); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		if _, err := cfg.LoadTLS(); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		for _, kv := range cfg.Values() {
			fmt.Fprintf(m.Stdout, "%s: %s\n", kv.Key, kv.Value)
		}
		fmt.Fprintf(m.Stdout, "# token from: %s\n", cfg.TokenSource())
		if err := printDatabases(ctx, m, cfg); err != nil {
			return err
		}
		if cl := cfg.Cluster; cl.Enabled() {
			fmt.Fprintf(m.Stdout, "cluster:\n  name: %q\n  etcd: %s\n  lease: %s\n  prefix: %q\n  max_jobs_per_node: %d\n  request_timeout: %s\n  user: %q\n  password_file: %q\n  tls_ca_file: %q\n  tls_cert_file: %q\n  tls_key_file: %q\n",
				cl.Name, yamlList(cl.Etcd), cl.Lease, cl.Prefix, cl.MaxJobsPerNode, cl.RequestTimeout, cl.User, cl.PasswordFile, cl.TLSCAFile, cl.TLSCertFile, cl.TLSKeyFile)
		}
		if err := printAlerts(m, cfg); err != nil {
			return err
		}
		fmt.Fprintln(m.Stderr, "loadnode: configuration is valid")
		return nil
	}
	logger := cfg.Logger(m.Stderr)
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return fmt.Errorf("serve: --cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("serve: --cpuprofile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				logger.Warn("loadnode: write CPU profile", "file", c.cpuProfile, "err", err)
			}
		}()
	}
	// A stop signal always stops the process: if the node does not stop
	// within shutdownGrace of it (a store stuck on a full disk, a recovery
	// that cannot finish), the process exits without a clean close; the
	// store is crash-consistent, so a restart recovers the durable state.
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-stopped:
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(shutdownGrace)
		defer t.Stop()
		select {
		case <-stopped:
		case <-t.C:
			logger.Error("loadnode: did not stop within "+shutdownGrace.String()+" of the signal; exiting without a clean close (a restart recovers the durable state)",
				"exit_code", exitShutdownTimeout)
			if m.Exit != nil {
				m.Exit(exitShutdownTimeout)
			}
		}
	}()
	node.TuneRuntime(m.Getenv)
	if limit, from := node.CgroupMemoryLimit(); limit > 0 {
		logger.Info("loadnode: Go soft memory limit from the cgroup's (set GOMEMLIMIT to choose another)", "bytes", limit, "from", from)
	}
	hooks, err := node.CrashHooks(m.Getenv(node.CrashEnv))
	if err != nil {
		return err
	}
	if m.Getenv(node.CrashEnv) != "" {
		logger.Warn("loadnode: crash point armed", "point", m.Getenv(node.CrashEnv))
	}
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: logger, Hooks: hooks, AcceptWALLoss: c.acceptWALLoss})
	if err != nil {
		return err
	}
	m.node = n
	if c.addrFile != "" {
		if err := writeAddrFile(c.addrFile, boundAddrs{Addr: n.Addr(), HTTP: n.AdminAddr(), MySQL: n.MySQLAddr(), PID: os.Getpid()}); err != nil {
			return err // Close closes the node
		}
		defer os.Remove(c.addrFile)
	}
	logger.Info("loadnode: serving", "addr", n.Addr(), "data", cfg.DataDir, "http", n.AdminAddr(), "mysql", n.MySQLAddr())
	<-ctx.Done()
	logger.Info("loadnode: shutting down", "addr", n.Addr())
	m.node = nil
	if err := n.Close(); err != nil {
		return fmt.Errorf("serve: close: %w", err)
	}
	logger.Info("loadnode: stopped")
	return nil
}

// printAlerts prints the webhook targets; a secret that cannot be read
// fails the check. Where a secret comes from is printed, never the secret.
func printAlerts(m *Main, cfg config.Node) error {
	if len(cfg.Alerts.Webhooks) == 0 {
		fmt.Fprintln(m.Stdout, "alerts: {}")
		return nil
	}
	fmt.Fprintln(m.Stdout, "alerts:\n  webhooks:")
	for i, w := range cfg.Alerts.Webhooks {
		field := fmt.Sprintf("alerts.webhooks[%d]", i)
		secret, inline, err := w.ReadSecret(field)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		from := "none (unsigned)"
		switch {
		case inline:
			from = "inline in the config file (prefer secret_file or secret_env)"
		case w.SecretEnv != "":
			from = "$" + w.SecretEnv
		case secret != "":
			from = "secret_file " + w.SecretFile
		}
		events := "all"
		if w.Events != nil {
			events = strings.Join(w.Events, ", ")
		}
		fmt.Fprintf(m.Stdout, "    - url: %q\n      name: %q\n      events: [%s]\n      timeout: %s\n      queue_size: %d\n      max_attempts: %d\n      backoff_base: %s\n      backoff_max: %s\n      # secret from: %s\n",
			w.URL, w.TargetName(), events, w.Timeout, w.QueueSize, w.MaxAttempts, w.BackoffBase, w.BackoffMax, from)
	}
	return nil
}

// printDatabases prints every database of cfg and whether it answered. A
// password that cannot be read fails the check; an unreachable database
// does not (the node starts, and its jobs wait for it).
func printDatabases(ctx context.Context, m *Main, cfg config.Node) error {
	if len(cfg.Databases) == 0 {
		fmt.Fprintln(m.Stdout, "databases: {}")
		return nil
	}
	for _, name := range cfg.DatabaseNames() {
		if _, err := cfg.Databases[name].ReadPassword("databases." + name); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
	}
	fmt.Fprintln(m.Stdout, "databases:")
	for _, p := range node.ProbeDatabases(ctx, cfg, 5*time.Second) {
		db := cfg.Databases[p.Name]
		state := "reachable"
		if p.Err != nil {
			state = "unreachable: " + p.Err.Error()
		}
		fmt.Fprintf(m.Stdout, "  %s:\n    type: %s\n    dsn: %q\n    password_file: %q\n    schema: %q\n    # password from: %s\n    # %s\n",
			p.Name, db.Type, db.RedactedDSN(), db.PasswordFile, db.Schema, db.PasswordSource(p.Name), state)
	}
	return nil
}
