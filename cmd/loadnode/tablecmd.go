package main

import (
	"context"
	"fmt"
)

const tableUsage = `table COMMAND

Commands:
  count NAME                                    print a table's row count
  scan NAME [--limit N] [--format jsonl|table]  print a table's rows`

type (
	tableCountCmd struct {
		conn  connFlags
		table string
	}
	tableScanCmd struct {
		conn   connFlags
		table  string
		limit  int
		format string
	}
)

// defaultScanLimit is `table scan`'s default --limit.
const defaultScanLimit = 1000

func (m *Main) parseTable(args []string) (command, error) {
	if len(args) == 0 {
		return nil, usagef("table: missing command (count, scan)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help":
		fmt.Fprintf(m.Stdout, "Usage: loadnode %s\n", tableUsage)
		return nil, errHelp
	case "count":
		c := tableCountCmd{}
		fs := m.newFlagSet("table count", "table count NAME [--addr HOST:PORT] [--timeout D]")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos, "NAME"); err != nil {
			return nil, err
		}
		c.table = pos[0]
		return c, c.conn.validate(fs)
	case "scan":
		c := tableScanCmd{}
		fs := m.newFlagSet("table scan", "table scan NAME [--limit N] [--format jsonl|table] [--addr HOST:PORT] [--timeout D]")
		fs.IntVar(&c.limit, "limit", defaultScanLimit, "at most `N` rows; 0 for all")
		fs.StringVar(&c.format, "format", "jsonl", "output `format`: jsonl (one JSON object per row) or table")
		m.addConnFlags(fs, &c.conn)
		pos, err := parseArgs(fs, args)
		if err != nil {
			return nil, err
		}
		if err := exactArgs(fs, pos, "NAME"); err != nil {
			return nil, err
		}
		c.table = pos[0]
		if c.limit < 0 {
			return nil, usagef("table scan: --limit %d must be >= 0", c.limit)
		}
		switch c.format {
		case "jsonl", "table":
		default:
			return nil, usagef("table scan: --format %q must be jsonl or table", c.format)
		}
		return c, c.conn.validate(fs)
	}
	return nil, usagef("table: unknown command %q", sub)
}

func (c tableCountCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	n, err := cl.Count(ctx, c.table)
	if err != nil {
		return err
	}
	fmt.Fprintln(m.Stdout, n)
	return nil
}

func (c tableScanCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	schema, rows, err := cl.Scan(ctx, c.table, c.limit)
	if err != nil {
		return err
	}
	if c.format == "table" {
		return printRowsTable(m.Stdout, schema, rows)
	}
	return printRowsJSONL(m.Stdout, schema, rows)
}
