package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// printTableList prints NAME DATABASE SINK JOBS, one table a line.
func printTableList(w io.Writer, tables []*api.TableInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tDATABASE\tSINK\tJOBS")
	for _, t := range tables {
		db := t.GetSpec().GetDatabase()
		if db == "" {
			db = "-"
		}
		jobs := "-"
		if len(t.GetJobs()) > 0 {
			jobs = strings.Join(t.GetJobs(), ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(t.GetSpec().GetName()), cell(db), cell(t.GetSink()), jobs)
	}
	return tw.Flush()
}

// printTableDescribe prints a table's database, sink, rows and jobs, then
// its columns as Doris's DESC does: Field, Type, Null, Default.
func printTableDescribe(w io.Writer, t *api.TableInfo) error {
	spec := t.GetSpec()
	tw := newTable(w)
	fmt.Fprintf(tw, "Table:\t%s\n", cell(spec.GetName()))
	db := spec.GetDatabase()
	if db == "" {
		db = "- (the node's embedded store)"
	}
	fmt.Fprintf(tw, "Database:\t%s\n", db)
	fmt.Fprintf(tw, "Sink:\t%s\n", cell(t.GetSink()))
	fmt.Fprintf(tw, "Model:\t%s\n", spec.GetModel())
	rows := strconv.FormatInt(t.GetRows(), 10)
	if t.GetRows() < 0 {
		rows = "? (" + t.GetCountError() + ")"
	}
	fmt.Fprintf(tw, "Rows:\t%s\n", rows)
	jobs := "-"
	if len(t.GetJobs()) > 0 {
		jobs = strings.Join(t.GetJobs(), ", ")
	}
	fmt.Fprintf(tw, "Jobs:\t%s\n", jobs)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "Field\tType\tNull\tDefault")
	for _, c := range spec.GetColumns() {
		null := "YES"
		if c.GetNotNull() {
			null = "NO"
		}
		def := "NULL"
		switch {
		case c.DefaultValue != nil:
			def = cell(c.GetDefaultValue())
		case c.GetDefaultCurrentTimestamp() && c.GetDefaultCurrentTimestampPrecision() > 0:
			def = fmt.Sprintf("CURRENT_TIMESTAMP(%d)", c.GetDefaultCurrentTimestampPrecision())
		case c.GetDefaultCurrentTimestamp():
			def = "CURRENT_TIMESTAMP"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cell(c.GetName()), table.DorisTypeName(c), null, def)
	}
	return tw.Flush()
}
