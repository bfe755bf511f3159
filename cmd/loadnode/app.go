package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

// Main is the loadnode program: ParseFlags picks a command, Run runs it,
// Close releases what it opened (a client connection, a node), Report turns
// the outcome into stderr text and an exit code. Tests drive Main with their
// own writers and environment.
type Main struct {
	Stdin  io.Reader // `job create -f -`
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment (LOADNODE_ADDR).
	Getenv func(string) string
	// Exit ends the process; `serve` calls it when a stop signal was not
	// obeyed within shutdownGrace. Default os.Exit.
	Exit func(code int)

	cmd    command
	client *client.Client
	node   *node.Node
}

// command is one parsed subcommand.
type command interface {
	run(ctx context.Context, m *Main) error
}

// NewMain returns a Main wired to the process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Exit: os.Exit}
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const (
	defaultAddr = "127.0.0.1:7070"
	envAddr     = "LOADNODE_ADDR"
	envTLSCA    = "LOADNODE_TLS_CA"
)

// errHelp is returned by ParseFlags after it printed help on request.
var errHelp = errors.New("loadnode: help shown")

// usageError is a wrong command line (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// ParseFlags parses the command line (without the program name) into the
// command that Run runs.
func (m *Main) ParseFlags(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return m.help(rest)
	case "--version":
		name = "version"
	}
	var err error
	if len(group(name)) > 0 {
		m.cmd, err = m.parseGroup(name, rest)
		return err
	}
	i := slices.IndexFunc(commands, func(s subcommand) bool { return s.group == "" && s.name == name })
	if i < 0 {
		return usagef("unknown command %q", name)
	}
	m.cmd, err = m.parse(commands[i], rest)
	return err
}

// help prints the usage of the whole program or of one command group.
func (m *Main) help(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(m.Stdout, mainUsage())
		return errHelp
	}
	// "help job", "help job show": the same as "-h" on that command.
	if err := m.ParseFlags(context.Background(), append(append([]string{}, args...), "-h")); !errors.Is(err, errHelp) {
		if err == nil {
			return usagef("no help for %q", strings.Join(args, " "))
		}
		return err
	}
	return errHelp
}

// Run runs the parsed command.
func (m *Main) Run(ctx context.Context) error {
	if m.cmd == nil {
		return nil
	}
	return m.cmd.run(ctx, m)
}

// Close releases the client connection or the node that Run opened.
func (m *Main) Close() error {
	var errs []error
	if m.client != nil {
		errs = append(errs, m.client.Close())
		m.client = nil
	}
	if m.node != nil {
		errs = append(errs, m.node.Close())
		m.node = nil
	}
	return errors.Join(errs...)
}

// Report prints err (if any) to Stderr as "loadnode: ..." and returns the
// process exit code: 0 for success and help, 2 for a wrong command line, 1
// otherwise.
func (m *Main) Report(err error) int {
	var ue *usageError
	var ce *client.Error
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(m.Stderr, "loadnode: %s\nRun 'loadnode help' for usage.\n", ue.msg)
		return exitUsage
	case errors.Is(err, client.ErrUnauthenticated):
		fmt.Fprintf(m.Stderr, "loadnode: %s\nGive the node's token with --token-file FILE or $%s.\n", err, config.TokenEnv)
		return exitError
	case errors.As(err, &ce):
		// What the node answered: "INVALID_ARGUMENT: kafka.topic: required",
		// after what the command adds ("table export: read t: ...").
		fmt.Fprintf(m.Stderr, "loadnode: %s\n", err)
		return exitError
	default:
		fmt.Fprintf(m.Stderr, "loadnode: %s\n", err)
		return exitError
	}
}

// flagSet is a subcommand's flags and its usage line.
type flagSet struct {
	*flag.FlagSet
	name   string // "job show"
	usage  string // the line after "Usage: loadnode "
	stdout io.Writer
}

// newFlagSet returns a flag set that reports errors instead of exiting and
// prints nothing itself; -h prints the usage line (set by parse) and the
// flags to Stdout (see parseArgs).
func (m *Main) newFlagSet(name string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, name: name, stdout: m.Stdout}
}

func (fs *flagSet) printUsage() {
	fmt.Fprintf(fs.stdout, "Usage: loadnode %s\n", fs.usage)
	var flags strings.Builder
	fs.SetOutput(&flags)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	if flags.Len() > 0 {
		fmt.Fprintf(fs.stdout, "\nFlags:\n%s", flags.String())
	}
}

// parseArgs parses flags that may come before, between or after the
// positional arguments ("job show NAME -o json") and returns the positional
// arguments. Everything after "--" is positional. -h prints the usage and
// returns errHelp.
func parseArgs(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.printUsage()
				return nil, errHelp
			}
			return nil, usagef("%s: %s", fs.name, err)
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// exactArgs checks the number of positional arguments.
func exactArgs(fs *flagSet, pos []string, names ...string) error {
	if len(pos) == len(names) {
		return nil
	}
	if len(pos) < len(names) {
		return usagef("%s: missing %s", fs.name, strings.Join(names[len(pos):], " "))
	}
	return usagef("%s: unexpected argument %q", fs.name, pos[len(names)])
}

// connFlags are the flags of every command that talks to a node.
type connFlags struct {
	addr        string
	timeout     time.Duration
	tokenFile   string
	tlsCA       string
	tlsInsecure bool
}

// addConnFlags binds the connection flags to c; timeout is the default
// --timeout (0: client.DefaultTimeout).
func (m *Main) addConnFlags(fs *flagSet, c *connFlags, timeout time.Duration) {
	if timeout == 0 {
		timeout = client.DefaultTimeout
	}
	def := defaultAddr
	if env := m.Getenv(envAddr); env != "" {
		def = env
	}
	fs.StringVar(&c.addr, "addr", def, "node address `HOST:PORT` ($"+envAddr+" sets the default)")
	fs.DurationVar(&c.timeout, "timeout", timeout, "per-request `timeout`")
	fs.StringVar(&c.tokenFile, "token-file", "", "`FILE` holding the node's token (default: $"+config.TokenEnv+")")
	fs.StringVar(&c.tlsCA, "tls-ca", m.Getenv(envTLSCA), "talk TLS to the node, verifying it with the PEM CA `FILE` ($"+envTLSCA+" sets the default)")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "talk TLS to the node WITHOUT verifying its certificate (tests only)")
}

func (c connFlags) validate(fs *flagSet) error {
	if c.addr == "" {
		return usagef("%s: --addr is empty", fs.name)
	}
	if c.timeout <= 0 {
		return usagef("%s: --timeout must be > 0", fs.name)
	}
	if c.tlsCA != "" && c.tlsInsecure {
		return usagef("%s: --tls-ca and --tls-insecure exclude each other", fs.name)
	}
	return nil
}

// authOptions are the token and TLS options of c: the token from
// --token-file, else $LOADNODE_AUTH_TOKEN; TLS from --tls-ca or
// --tls-insecure.
func (m *Main) authOptions(c connFlags) ([]client.Option, error) {
	var opts []client.Option
	tok := m.Getenv(config.TokenEnv)
	if c.tokenFile != "" {
		var err error
		if tok, err = config.ReadTokenFile(c.tokenFile); err != nil {
			return nil, err
		}
	}
	if tok != "" {
		if err := config.CheckToken(tok); err != nil {
			return nil, fmt.Errorf("$%s: %w", config.TokenEnv, err)
		}
		opts = append(opts, client.WithToken(tok))
	}
	switch {
	case c.tlsCA != "":
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", c.tlsCA)
		}
		opts = append(opts, client.WithTLS(&tls.Config{RootCAs: pool}))
	case c.tlsInsecure:
		opts = append(opts, client.WithTLS(&tls.Config{InsecureSkipVerify: true}))
	}
	return opts, nil
}

// dial connects to the node; Close closes the connection.
func (m *Main) dial(ctx context.Context, c connFlags) (*client.Client, error) {
	logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	auth, err := m.authOptions(c)
	if err != nil {
		return nil, err
	}
	cl, err := client.Dial(ctx, c.addr, append([]client.Option{client.WithTimeout(c.timeout), client.WithLogger(logger)}, auth...)...)
	if err != nil {
		return nil, err
	}
	m.client = cl
	return cl, nil
}

// devCommands is the row of `dev` in the command table: its arguments go to
// runDev as they are.
var devCommands = []subcommand{{name: "dev", usage: "...", about: "run a development node with its own Kafka",
	pass: func(args []string) command { return devCmd{args: args} },
}}

// devCmd is `loadnode dev ...`: its arguments go to runDev (dev.go) as they
// are.
type devCmd struct{ args []string }

func (c devCmd) run(ctx context.Context, m *Main) error {
	return runDev(ctx, c.args, m.Stdout, m.Stderr)
}
