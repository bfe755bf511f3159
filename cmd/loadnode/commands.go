package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The command table: every command of the program is one subcommand row,
// declared beside the command it parses into (jobCommands in jobcmd.go,
// ...). One function parses any row (parse); the usage texts (the
// program's, a group's, a command's) and the "missing command" message are
// made from the rows, so that a command added to the table is listed
// everywhere.

// commands is the table, in the order the program's usage lists it.
var commands = slices.Concat(serveCommands, jobCommands, tableCommands, clusterCommands, sqlCommands,
	backupCommands, devCommands, kfakeCommands, benchCommands, versionCommands)

// subcommand is one row of the command table.
type subcommand struct {
	group string   // "job", "table", "cluster"; "" for a command of its own ("sql")
	name  string   // "show"
	args  []string // the positional arguments, in order ("NAME"): "missing NAME"
	// usage is the synopsis after the name: the positional arguments and
	// the command's own flags ("NAME [-o text|json|yaml]"). A second line
	// continues it, aligned under the first by the printer. The connection
	// flags are added to -h's line ("[--addr HOST:PORT] [--timeout D]").
	usage string
	about string // one line for the group's list of commands
	note  string // said after the synopsis in the program's usage ("" none)
	more  string // paragraphs -h prints after the usage line
	// timeout is the default --timeout of a command that talks to a node
	// (0: client.DefaultTimeout).
	timeout time.Duration
	// bind binds the command's flags to a new command value and returns
	// its connection flags (nil: it talks to no node) and the function
	// that checks the parsed flags, takes the positional arguments (as
	// many as args names) and returns the command.
	bind func(fs *flagSet) (*connFlags, func(m *Main, pos []string) (command, error))
	// pass, instead of bind, takes the arguments as they are (dev, bench).
	pass func(args []string) command
}

// bind makes a row's bind function for a command of type C: flags binds
// the flags to c and returns its connection flags (nil: none); check
// (nil: nothing to check) validates c and takes the positional arguments.
func bind[C command](flags func(c *C, fs *flagSet) *connFlags, check func(m *Main, c *C, pos []string) error) func(*flagSet) (*connFlags, func(*Main, []string) (command, error)) {
	return func(fs *flagSet) (*connFlags, func(*Main, []string) (command, error)) {
		c := new(C)
		var conn *connFlags
		if flags != nil {
			conn = flags(c, fs)
		}
		return conn, func(m *Main, pos []string) (command, error) {
			if check != nil {
				if err := check(m, c, pos); err != nil {
					return nil, err
				}
			}
			return *c, nil
		}
	}
}

// path is "job show", or "sql" for a command of its own.
func (s subcommand) path() string {
	return strings.TrimSpace(s.group + " " + s.name)
}

// synopsis is "job show NAME [-o text|json|yaml]", its continuation lines
// indented by indent more than the first.
func (s subcommand) synopsis(indent int) string {
	first := s.path()
	if s.usage == "" {
		return first
	}
	pad := "\n" + strings.Repeat(" ", indent+len(first)+1)
	return first + " " + strings.ReplaceAll(s.usage, "\n", pad)
}

// parse parses args (what follows the command's name) into the row's
// command: flags before, between or after the positional arguments, then
// their number, the command's own checks and the connection flags.
func (m *Main) parse(s subcommand, args []string) (command, error) {
	if s.pass != nil {
		return s.pass(args), nil
	}
	fs := m.newFlagSet(s.path())
	conn, build := s.bind(fs)
	line := s.synopsis(len("Usage: loadnode "))
	if conn != nil {
		m.addConnFlags(fs, conn, s.timeout)
		line += " [--addr HOST:PORT] [--timeout D]"
	}
	if s.more != "" {
		line += "\n\n" + s.more
	}
	fs.usage = line
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if err := exactArgs(fs, pos, s.args...); err != nil {
		return nil, err
	}
	c, err := build(m, pos)
	if err != nil {
		return nil, err
	}
	if conn != nil {
		if err := conn.validate(fs); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// group returns the rows of the group name, in table order.
func group(name string) []subcommand {
	var rows []subcommand
	for _, s := range commands {
		if s.group == name && name != "" {
			rows = append(rows, s)
		}
	}
	return rows
}

// parseGroup parses "job show NAME ...": the command of the group by name,
// or the group's usage on -h.
func (m *Main) parseGroup(name string, args []string) (command, error) {
	rows := group(name)
	if len(args) == 0 {
		return nil, usagef("%s: missing command (%s)", name, strings.Join(groupNames(rows), ", "))
	}
	sub, args := args[0], args[1:]
	if isHelpFlag(sub) {
		fmt.Fprintf(m.Stdout, "Usage: loadnode %s", groupUsage(name, rows))
		return nil, errHelp
	}
	for _, s := range rows {
		if s.name == sub {
			return m.parse(s, args)
		}
	}
	return nil, usagef("%s: unknown command %q", name, sub)
}

func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

func groupNames(rows []subcommand) []string {
	names := make([]string, len(rows))
	for i, s := range rows {
		names[i] = s.name
	}
	return names
}

// maxAboutColumn bounds the column of a group's command descriptions: a
// longer synopsis puts its description on the next line.
const maxAboutColumn = 46

// groupUsage is "job COMMAND\n\nCommands:\n" and a line per command: its
// synopsis, then what it does, in one column.
func groupUsage(name string, rows []subcommand) string {
	col := 0
	for _, s := range rows {
		if w := len(s.name) + 1 + len(s.usage); w+2 <= maxAboutColumn {
			col = max(col, w+2)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s COMMAND\n\nCommands:\n", name)
	for _, s := range rows {
		syn := strings.TrimSpace(s.name + " " + s.usage)
		if len(syn)+2 > col {
			fmt.Fprintf(&b, "  %s\n  %*s%s\n", syn, col, "", s.about)
			continue
		}
		fmt.Fprintf(&b, "  %-*s%s\n", col, syn, s.about)
	}
	return b.String()
}

// noteColumn is where the program's usage puts a command's note, after
// "loadnode " and the synopsis (at least three spaces after it).
const noteColumn = 32

// mainUsage is the program's usage: a line per command of the table.
func mainUsage() string {
	var b strings.Builder
	b.WriteString("loadnode runs routine loads: Kafka or Kinesis into its embedded store or PostgreSQL,\non one node or a cluster on etcd.\n\nUsage:\n")
	for _, s := range commands {
		line := "loadnode " + s.synopsis(len("  loadnode "))
		if s.note != "" {
			last := line[strings.LastIndex(line, "\n")+1:]
			line += strings.Repeat(" ", max(3, noteColumn-len(last))) + "(" + s.note + ")"
		}
		fmt.Fprintf(&b, "  %s\n", line)
	}
	b.WriteString(`  loadnode help [COMMAND]

Every job, table and sql command takes --addr HOST:PORT (default
127.0.0.1:7070, or $LOADNODE_ADDR), --timeout DURATION (per request, default
10s), and for a node that requires them: the token from --token-file FILE or
$LOADNODE_AUTH_TOKEN, and TLS with --tls-ca FILE (or $LOADNODE_TLS_CA).
Run "loadnode COMMAND -h" for a command's flags.
`)
	return b.String()
}
