package doris

import (
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// insert parses the rest of INSERT INTO [db.]table [TEMPORARY PARTITION
// (tp)] [(cols)] VALUES (v, ...)
// [, (v, ...)]: each value a string, a number (with an optional sign),
// TRUE, FALSE or NULL, kept as text for the node to parse as its column's
// type.
func (p *parser) insert() (*Statement, *Error) {
	const clause = "INSERT"
	if err := p.expect(clause, "INTO"); err != nil {
		return nil, err
	}
	db, name, _, err := p.qualifiedName("INSERT INTO", "a table name")
	if err != nil {
		return nil, err
	}
	req := &api.TableInsertRequest{Table: name}
	switch t := p.peek(); {
	case t.is("TEMPORARY"):
		// INSERT INTO t TEMPORARY PARTITION (tp): the rows go to the
		// temporary partition's catalog table (table.TemporaryPartitionTable),
		// which refuses a row outside its values.
		p.next()
		if n := p.peek(); !n.is("PARTITION") && !n.is("PARTITIONS") {
			return nil, p.errf(n, "INSERT INTO ... TEMPORARY PARTITION", "expected PARTITION, found %s", n.describe())
		}
		p.next()
		var parts []token
		if p.peek().isSym("(") {
			if parts, err = p.identList("INSERT INTO ... TEMPORARY PARTITION", "a partition name"); err != nil {
				return nil, err
			}
		} else {
			n, err := p.ident("INSERT INTO ... TEMPORARY PARTITION", "a partition name")
			if err != nil {
				return nil, err
			}
			parts = []token{n}
		}
		if len(parts) > 1 {
			return nil, p.errf(parts[1], "INSERT INTO ... TEMPORARY PARTITION", "an INSERT into more than one temporary partition is not supported by loadnode")
		}
		req.Table = table.TemporaryPartitionTable(name, parts[0].text)
	case t.is("PARTITION") || t.is("PARTITIONS"):
		return nil, p.errf(t, "INSERT INTO ... PARTITION", "not supported by loadnode: an INSERT writes each row to the partition its values fall in")
	}
	if p.peek().isSym("(") {
		cols, err := p.identList("INSERT INTO "+name, "a column name")
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			req.Columns = append(req.Columns, c.text)
		}
	}
	if t := p.peek(); !t.is("VALUES") {
		if t.is("SELECT") || t.is("WITH") {
			return nil, p.errf(t, "INSERT INTO ... SELECT", "not supported by loadnode (only VALUES)")
		}
		return nil, p.errf(t, clause, "expected VALUES, found %s", t.describe())
	}
	p.next()
	for {
		if err := p.expectSym("VALUES", "("); err != nil {
			return nil, err
		}
		row := &api.InsertRow{}
		for {
			t := p.next()
			cell := &api.InsertCell{}
			switch {
			case t.kind == tokString || t.kind == tokNumber:
				cell.Text = t.text
			case t.isSym("-") || t.isSym("+"):
				n := p.next()
				if n.kind != tokNumber {
					return nil, p.errf(n, "VALUES", "expected a number after %s, found %s", t.text, n.describe())
				}
				cell.Text = strings.TrimPrefix(t.text, "+") + n.text
			case t.is("NULL"):
				cell.Null = true
			case t.is("TRUE"), t.is("FALSE"):
				cell.Text = strings.ToLower(t.text)
			default:
				return nil, p.errf(t, "VALUES", "expected a string, a number, TRUE, FALSE or NULL, found %s", t.describe())
			}
			row.Cells = append(row.Cells, cell)
			if p.acceptSym(",") {
				continue
			}
			if err := p.expectSym("VALUES", ")"); err != nil {
				return nil, err
			}
			break
		}
		req.Rows = append(req.Rows, row)
		if !p.acceptSym(",") {
			break
		}
	}
	return &Statement{Insert: req, DB: db}, nil
}

// InsertedMessage is the answer to an INSERT of rows into target (the
// statement's table: a temporary partition's catalog name t#tp is named
// as Doris names it, "temporary partition tp of table t").
func InsertedMessage(rows int64, target string) string {
	noun := " rows"
	if rows == 1 {
		noun = " row"
	}
	return strconv.FormatInt(rows, 10) + noun + " inserted into " + table.DisplayName(target)
}
