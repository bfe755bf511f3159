package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// backupCmd is `loadnode backup --to DIR`: the running node writes a
// backup to DIR, a consistent online copy of its embedded store with its
// node id and a manifest (the node holds the store's lock, so only it can
// read it consistently).
type backupCmd struct {
	conn connFlags
	to   string
}

// backupTimeout is `backup`'s default --timeout: a checkpoint of a large
// store takes longer than a job command.
const backupTimeout = 10 * time.Minute

// backupCommands is the row of `backup` in the command table.
var backupCommands = []subcommand{{name: "backup", usage: "--to DIR", timeout: backupTimeout,
	about: "write a backup of the node's embedded store",
	note:  "a consistent online copy of the node's embedded store",
	more: "Asks the running node for a backup in DIR, on the node's machine: a new or\n" +
		"empty directory. It holds a consistent online copy of the embedded store\n" +
		"(Pebble checkpoint), the node's id (node-id) and a manifest (backup.json).\n" +
		"`loadnode serve --data DIR` on the copy (the node stopped) resumes every job\n" +
		"from its progress: the copy's, or PostgreSQL's for jobs loading there.\n" +
		"Two nodes started from one backup: the later one loads, the other's jobs\n" +
		"into PostgreSQL pause (SUPERSEDED). See docs/backups.md.",
	bind: bind(func(c *backupCmd, fs *flagSet) *connFlags {
		fs.StringVar(&c.to, "to", "", "backup `DIR` (new or empty; a relative path is made absolute here)")
		return &c.conn
	}, func(_ *Main, c *backupCmd, _ []string) error {
		if c.to == "" {
			return usagef("backup: --to DIR is required")
		}
		var err error
		if c.to, err = filepath.Abs(c.to); err != nil {
			return usagef("backup: --to: %v", err)
		}
		return nil
	}),
}}

func (c backupCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	resp, err := cl.Backup(ctx, c.to)
	if err != nil {
		return err
	}
	fmt.Fprintf(m.Stdout, "backup written to %s (%d files, %d bytes)\n", resp.GetDir(), resp.GetFiles(), resp.GetBytes())
	return nil
}
