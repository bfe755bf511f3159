package main

import (
	"context"
	"fmt"
	"io"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

type (
	tableCountCmd struct {
		conn  connFlags
		table string
	}
	tableListCmd     struct{ conn connFlags }
	tableDescribeCmd struct {
		conn  connFlags
		table string
	}
	tableDropCmd struct {
		conn     connFlags
		table    string
		ifExists bool
	}
	tableExportCmd struct {
		conn   connFlags
		table  string
		format string
		out    string
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

// tableCommands are the table group's rows of the command table.
var tableCommands = []subcommand{
	{group: "table", name: "list", about: "list tables: database, sink, jobs",
		bind: bind(func(c *tableListCmd, _ *flagSet) *connFlags { return &c.conn }, nil)},
	{group: "table", name: "describe", args: []string{"NAME"}, usage: "NAME",
		about: "a table's columns, database, jobs and row count",
		bind: bind(func(c *tableDescribeCmd, _ *flagSet) *connFlags { return &c.conn },
			func(_ *Main, c *tableDescribeCmd, pos []string) error { c.table = pos[0]; return nil })},
	{group: "table", name: "drop", args: []string{"NAME"}, usage: "NAME [--if-exists]",
		about: "drop a table and its rows (refused while a job loads into it)",
		bind: bind(func(c *tableDropCmd, fs *flagSet) *connFlags {
			fs.BoolVar(&c.ifExists, "if-exists", false, "an unknown table is not an error")
			return &c.conn
		}, func(_ *Main, c *tableDropCmd, pos []string) error { c.table = pos[0]; return nil })},
	{group: "table", name: "count", args: []string{"NAME"}, usage: "NAME", about: "print a table's row count",
		bind: bind(func(c *tableCountCmd, _ *flagSet) *connFlags { return &c.conn },
			func(_ *Main, c *tableCountCmd, pos []string) error { c.table = pos[0]; return nil })},
	{group: "table", name: "scan", args: []string{"NAME"}, usage: "NAME [--limit N] [--format jsonl|table]",
		about: "print a table's rows",
		bind: bind(func(c *tableScanCmd, fs *flagSet) *connFlags {
			fs.IntVar(&c.limit, "limit", defaultScanLimit, "at most `N` rows; 0 for all")
			fs.StringVar(&c.format, "format", "jsonl", "output `format`: jsonl (one JSON object per row) or table")
			return &c.conn
		}, func(_ *Main, c *tableScanCmd, pos []string) error {
			c.table = pos[0]
			if c.limit < 0 {
				return usagef("table scan: --limit %d must be >= 0", c.limit)
			}
			switch c.format {
			case "jsonl", "table":
				return nil
			}
			return usagef("table scan: --format %q must be jsonl or table", c.format)
		})},
	{group: "table", name: "export", args: []string{"NAME"}, usage: "NAME --format csv|jsonl|parquet [-o FILE]",
		about: "write every row, page by page (stdout without -o)",
		more: "Writes every row of a table, read page by page with a cursor (never the whole\n" +
			"table in one reply). csv: a header, NULL as \\N; jsonl: one object a row;\n" +
			"parquet: one optional column per table column (docs/operations.md, \"Tables\", has the types).",
		bind: bind(func(c *tableExportCmd, fs *flagSet) *connFlags {
			fs.StringVar(&c.format, "format", "", "output `format`: csv, jsonl or parquet")
			fs.StringVar(&c.out, "o", "", "output `FILE` (default stdout; written to a new FILE.<random>.tmp and renamed over FILE when complete)")
			return &c.conn
		}, func(_ *Main, c *tableExportCmd, pos []string) error {
			c.table = pos[0]
			switch c.format {
			case "csv", "jsonl", "parquet":
				return nil
			case "":
				return usagef("table export: --format csv|jsonl|parquet is required")
			}
			return usagef("table export: --format %q must be csv, jsonl or parquet", c.format)
		})},
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

func (c tableListCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	tables, err := cl.ListTables(ctx)
	if err != nil {
		return err
	}
	return printTableList(m.Stdout, tables)
}

func (c tableDescribeCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	ti, err := cl.DescribeTable(ctx, c.table)
	if err != nil {
		return err
	}
	return printTableDescribe(m.Stdout, ti)
}

func (c tableDropCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	dropped, err := cl.DropTable(ctx, c.table, c.ifExists)
	if err != nil {
		return err
	}
	if !dropped {
		fmt.Fprintf(m.Stdout, "table %s does not exist\n", c.table)
		return nil
	}
	fmt.Fprintf(m.Stdout, "table %s dropped\n", c.table)
	return nil
}

// run streams the table: each page is written as it arrives. With -o the
// rows go to a temporary file beside FILE that replaces FILE only once the
// export is complete and on disk (replaceFile); a failed export leaves FILE
// as it was and fails the command.
func (c tableExportCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	if c.out == "" {
		if _, err := c.export(ctx, cl, m.Stdout); err != nil {
			return fmt.Errorf("table export: %w", err)
		}
		return nil
	}
	n := 0
	err = replaceFile(c.out, func(w io.Writer) error {
		var err error
		n, err = c.export(ctx, cl, w)
		return err
	})
	if err != nil {
		return fmt.Errorf("table export: %w", err)
	}
	fmt.Fprintf(m.Stderr, "exported %d rows of %s to %s\n", n, c.table, c.out)
	return nil
}

// export writes every row of the table to out and returns the row count.
// An error says whether reading the table or writing out failed.
func (c tableExportCmd) export(ctx context.Context, cl *client.Client, out io.Writer) (int, error) {
	it := cl.ScanTable(ctx, c.table, client.WithPageSize(api.MaxScanPage))
	var w rowWriter
	n := 0
	for it.Next() {
		if w == nil {
			var err error
			if w, err = newRowWriter(c.format, out, it.Schema()); err != nil {
				return n, fmt.Errorf("write rows: %w", err)
			}
		}
		if err := w.Write(it.Row().Raw()); err != nil {
			return n, fmt.Errorf("write rows: %w", err)
		}
		n++
	}
	if err := it.Err(); err != nil {
		return n, fmt.Errorf("read %s after %d rows: %w", c.table, n, err)
	}
	if w == nil {
		// No rows: the schema comes from describe.
		ti, err := cl.DescribeTable(ctx, c.table)
		if err != nil {
			return n, fmt.Errorf("read %s: %w", c.table, err)
		}
		if w, err = newRowWriter(c.format, out, ti.GetSpec()); err != nil {
			return n, fmt.Errorf("write rows: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return n, fmt.Errorf("write rows: %w", err)
	}
	return n, nil
}
