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

func (m *Main) parseBackup(args []string) (command, error) {
	c := backupCmd{}
	fs := m.newFlagSet("backup", "backup --to DIR [--addr HOST:PORT] [--timeout D]\n\n"+
		"Asks the running node for a backup in DIR, on the node's machine: a new or\n"+
		"empty directory. It holds a consistent online copy of the embedded store\n"+
		"(Pebble checkpoint), the node's id (node-id) and a manifest (backup.json).\n"+
		"`loadnode serve --data DIR` on the copy (the node stopped) resumes every job\n"+
		"from its progress: the copy's, or PostgreSQL's for jobs loading there.\n"+
		"Two nodes started from one backup: the later one loads, the other's jobs\n"+
		"into PostgreSQL pause (SUPERSEDED). See README \"Backups\".")
	fs.StringVar(&c.to, "to", "", "backup `DIR` (new or empty; a relative path is made absolute here)")
	m.addConnFlags(fs, &c.conn)
	_ = fs.Set("timeout", backupTimeout.String())
	fs.Lookup("timeout").DefValue = backupTimeout.String() // what --help shows
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if err := exactArgs(fs, pos); err != nil {
		return nil, err
	}
	if c.to == "" {
		return nil, usagef("backup: --to DIR is required")
	}
	if c.to, err = filepath.Abs(c.to); err != nil {
		return nil, usagef("backup: --to: %v", err)
	}
	return c, c.conn.validate(fs)
}

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
