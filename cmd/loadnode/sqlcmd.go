package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/doris"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/query"
)

// sqlCmd is `loadnode sql "STATEMENT"`: one Doris-compatible statement.
type sqlCmd struct {
	conn      connFlags
	statement string
}

// sqlCommands is the row of `sql` in the command table.
var sqlCommands = []subcommand{{name: "sql", args: []string{"STATEMENT"}, usage: `"STATEMENT"`,
	about: "run one Doris-compatible statement",
	note:  "Doris: CREATE/DROP/TRUNCATE TABLE, SHOW TABLES, DESC, INSERT INTO ... VALUES, CREATE/PAUSE/RESUME/STOP/SHOW ROUTINE LOAD",
	more: `Runs one Doris-compatible statement: CREATE TABLE, CREATE ROUTINE LOAD,
PAUSE / RESUME [ALL] ROUTINE LOAD [FOR name], STOP ROUTINE LOAD FOR name,
SHOW [ALL] ROUTINE LOAD [FOR name], SHOW ROUTINE LOAD TASK WHERE
JobName = "name", SHOW [ALL] CREATE ROUTINE LOAD FOR name, SHOW TABLES,
DESC name, DROP TABLE [IF EXISTS] name, TRUNCATE TABLE name,
INSERT INTO ... VALUES, and SELECT (count(*), projections, WHERE,
GROUP BY with count/sum/min/max/avg, ORDER BY, LIMIT/OFFSET over one
table; a table as the mysql client prints one). SHOW ... ROUTINE LOAD
answers with Doris's columns in Doris's order, one row after the other as
Doris's \G prints them. "-" reads the statement from standard input.`,
	bind: bind(func(c *sqlCmd, _ *flagSet) *connFlags { return &c.conn }, func(m *Main, c *sqlCmd, pos []string) error {
		c.statement = pos[0]
		if c.statement == "-" {
			in := m.Stdin
			if in == nil {
				in = os.Stdin
			}
			b, err := io.ReadAll(in)
			if err != nil {
				return fmt.Errorf("sql: read statement: %w", err)
			}
			c.statement = string(b)
		}
		if strings.TrimSpace(c.statement) == "" {
			return usagef("sql: empty statement")
		}
		return nil
	}),
}}

func (c sqlCmd) run(ctx context.Context, m *Main) error {
	cl, err := m.dial(ctx, c.conn)
	if err != nil {
		return err
	}
	res, err := exec.Exec(ctx, cl, c.statement)
	if err != nil {
		return err
	}
	isShow := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(c.statement)), "SHOW")
	st, _ := doris.Parse(c.statement) // Exec parsed it already
	switch {
	case res.GetResult() != nil && query.IsSelect(c.statement):
		return printResultTable(m.Stdout, res.GetResult())
	case res.GetResult() != nil:
		return printResultVertical(m.Stdout, res.GetResult())
	case st != nil && st.ShowTables:
		return printTableList(m.Stdout, res.GetTables())
	case st != nil && st.Describe != nil && len(res.GetTables()) == 1:
		return printTableDescribe(m.Stdout, res.GetTables()[0])
	case res.GetJobs() != nil || (isShow && res.GetJob() == nil):
		return printJobList(m.Stdout, res.GetJobs())
	case res.GetJob() != nil && isShow:
		return printJobText(m.Stdout, res.GetJob())
	case res.GetJob() != nil && res.GetMessage() == "":
		s := res.GetJob().GetSummary()
		fmt.Fprintf(m.Stdout, "job %s: %s\n", s.GetName(), stateText(s))
		return nil
	}
	msg := res.GetMessage()
	if msg == "" {
		msg = "ok"
	}
	fmt.Fprintln(m.Stdout, msg)
	return nil
}

// printResultTable prints a SELECT's result set as the mysql client
// prints one: a bordered table, then "N rows in set" ("Empty set" for
// none).
func printResultTable(w io.Writer, rs *api.ResultSet) error {
	widths := make([]int, len(rs.GetColumns()))
	for j, c := range rs.GetColumns() {
		widths[j] = utf8.RuneCountInString(c)
		for _, r := range rs.GetRows() {
			if j < len(r.GetValues()) {
				widths[j] = max(widths[j], utf8.RuneCountInString(r.GetValues()[j]))
			}
		}
	}
	var b strings.Builder
	rule := func() {
		for _, n := range widths {
			b.WriteString("+" + strings.Repeat("-", n+2))
		}
		b.WriteString("+\n")
	}
	line := func(cells []string) {
		for j, n := range widths {
			v := ""
			if j < len(cells) {
				v = cells[j]
			}
			fmt.Fprintf(&b, "| %s%s ", v, strings.Repeat(" ", n-utf8.RuneCountInString(v)))
		}
		b.WriteString("|\n")
	}
	if n := len(rs.GetRows()); n == 0 {
		b.WriteString("Empty set\n")
	} else {
		rule()
		line(rs.GetColumns())
		rule()
		for _, r := range rs.GetRows() {
			line(r.GetValues())
		}
		rule()
		if n == 1 {
			b.WriteString("1 row in set\n")
		} else {
			fmt.Fprintf(&b, "%d rows in set\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printResultVertical prints a result set as Doris's mysql client prints
// it with \G: a header per row, then one "Column: value" line per column,
// the names right-aligned; "Empty set" when there is no row.
func printResultVertical(w io.Writer, rs *api.ResultSet) error {
	width := 0
	for _, c := range rs.GetColumns() {
		width = max(width, len(c))
	}
	var b strings.Builder
	for i, r := range rs.GetRows() {
		fmt.Fprintf(&b, "*************************** %d. row ***************************\n", i+1)
		for j, c := range rs.GetColumns() {
			v := ""
			if j < len(r.GetValues()) {
				v = r.GetValues()[j]
			}
			fmt.Fprintf(&b, "%*s: %s\n", width, c, v)
		}
	}
	switch n := len(rs.GetRows()); n {
	case 0:
		b.WriteString("Empty set\n")
	case 1:
		b.WriteString("1 row in set\n")
	default:
		fmt.Fprintf(&b, "%d rows in set\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
