package doris

import (
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// AlterTable is ALTER TABLE [db.]t ADD TEMPORARY PARTITION or DROP
// TEMPORARY PARTITION, Doris's temporary partitions: a partition of t
// whose rows no plain SELECT of t reads, that a load fills with
// TEMPORARY PARTITION (tp) and a SELECT reads with FROM t TEMPORARY
// PARTITION (tp). Its rows are a table of their own in the catalog
// (table.TemporaryPartitionTable). Any other ALTER TABLE, and REPLACE
// PARTITION ... WITH TEMPORARY PARTITION, is refused by name.
type AlterTable struct {
	DB, Table string
	// AddTemporary is ADD TEMPORARY PARTITION name [VALUES ...]: the
	// partition as written (no values: a temporary partition of a table
	// without PARTITION BY). The caller makes its catalog table with
	// TemporarySpec once it has the table's spec.
	AddTemporary *api.TablePartition
	// DropTemporary is DROP TEMPORARY PARTITION [IF EXISTS] name: the
	// partition's name (Statement.IfExists says IF EXISTS).
	DropTemporary string
}

// TemporarySpec is the catalog table of a's ADD TEMPORARY PARTITION
// for the table whose spec is parent (table.TemporaryPartitionSpec).
func (a *AlterTable) TemporarySpec(parent *api.TableSpec) (*api.TableSpec, error) {
	return table.TemporaryPartitionSpec(parent, a.AddTemporary.GetName(), a.AddTemporary)
}

// TemporaryTable is the catalog name of temporary partition part of a's
// table (table.TemporaryPartitionTable).
func (a *AlterTable) TemporaryTable(part string) string {
	return table.TemporaryPartitionTable(a.Table, part)
}

// alterTable parses the rest of ALTER TABLE [db.]t ...
func (p *parser) alterTable() (*Statement, *Error) {
	const clause = "ALTER TABLE"
	db, name, _, err := p.qualifiedName(clause, "a table name")
	if err != nil {
		return nil, err
	}
	st := &Statement{DB: db, AlterTable: &AlterTable{DB: db, Table: name}}
	verb := p.next()
	switch {
	case verb.is("ADD") && p.peek().is("TEMPORARY"):
		p.next()
		const what = "ADD TEMPORARY PARTITION"
		if err := p.expect(what, "PARTITION"); err != nil {
			return nil, err
		}
		if p.peek().is("IF") {
			return nil, p.errf(p.peek(), what+" IF NOT EXISTS", "not supported by loadnode")
		}
		n, err := p.ident(what, "a partition name")
		if err != nil {
			return nil, err
		}
		pd, err := p.temporaryValues(what+" "+n.text, n.text)
		if err != nil {
			return nil, err
		}
		if p.peek().isSym("(") {
			// The partition's own properties (replication, storage).
			if _, err := p.properties(what + " properties"); err != nil {
				return nil, err
			}
			st.Ignored = append(st.Ignored, "partition properties")
		}
		if p.peek().is("DISTRIBUTED") {
			hash := func(clause string) *Error {
				_, err := p.identList(clause, "a column name")
				return err
			}
			if _, err := p.distributedBy(hash); err != nil {
				return nil, err
			}
			st.Ignored = append(st.Ignored, "DISTRIBUTED BY")
		}
		st.AlterTable.AddTemporary = pd
	case verb.is("DROP") && p.peek().is("TEMPORARY"):
		p.next()
		const what = "DROP TEMPORARY PARTITION"
		if err := p.expect(what, "PARTITION"); err != nil {
			return nil, err
		}
		if p.accept("IF") {
			if err := p.expect(what+" IF EXISTS", "EXISTS"); err != nil {
				return nil, err
			}
			st.IfExists = true
		}
		n, err := p.ident(what, "a partition name")
		if err != nil {
			return nil, err
		}
		p.accept("FORCE") // Doris: skip the recycle bin; loadnode has none
		st.AlterTable.DropTemporary = n.text
	case verb.is("REPLACE") && p.peek().is("WITH"):
		return nil, p.errf(verb, "ALTER TABLE REPLACE WITH TABLE", "swapping or replacing tables not supported by loadnode")
	case verb.is("REPLACE"):
		return nil, p.errf(verb, "ALTER TABLE REPLACE PARTITION", "replacing partitions (WITH TEMPORARY PARTITION) not supported by loadnode; a temporary partition's rows are read with SELECT ... FROM t TEMPORARY PARTITION (tp)")
	default:
		what := "ALTER TABLE " + strings.ToUpper(verb.text)
		if verb.kind != tokIdent {
			what = clause
		}
		return nil, p.errf(verb, what, "not supported by loadnode; ALTER TABLE takes ADD TEMPORARY PARTITION and DROP TEMPORARY PARTITION")
	}
	if t := p.peek(); t.kind != tokEOF && !t.isSym(";") {
		return nil, p.errf(t, clause, "unexpected %s", t.describe())
	}
	return st, nil
}

// temporaryValues parses the VALUES of ADD TEMPORARY PARTITION name,
// if any: LESS THAN MAXVALUE | (v, ...), [(v, ...), (v, ...)) or IN
// (v, ...) | ((v, ...), ...). Which the table takes (its PARTITION BY),
// and the values' types, are checked when the partition is added
// (table.TemporaryPartitionSpec, table.ResolveTemporaryPartition).
func (p *parser) temporaryValues(clause, name string) (*api.TablePartition, *Error) {
	pd := &api.TablePartition{Name: name}
	if !p.accept("VALUES") {
		return pd, nil
	}
	var err *Error
	switch v := p.peek(); {
	case v.is("LESS"):
		p.next()
		if err := p.expect(clause, "THAN"); err != nil {
			return nil, err
		}
		if p.accept("MAXVALUE") {
			pd.Upper = &api.PartitionBound{Values: []*api.PartitionBoundValue{{Max: true}}}
		} else if pd.Upper, err = p.partitionTuple(clause, true); err != nil {
			return nil, err
		}
	case v.isSym("["):
		p.next()
		if pd.Lower, pd.Upper, err = p.partitionBetween(clause); err != nil {
			return nil, err
		}
	case v.is("IN"):
		p.next()
		if pd.In, err = p.partitionIn(v, clause); err != nil {
			return nil, err
		}
	default:
		return nil, p.errf(v, clause+" VALUES", "expected LESS THAN, [ or IN, found %s", v.describe())
	}
	return pd, nil
}
