package doris

import (
	"fmt"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// ShowCreateTableColumns are the columns of SHOW CREATE TABLE, as Doris
// names them.
var ShowCreateTableColumns = []string{"Table", "Create Table"}

// CreateTableStatement is the CREATE TABLE statement of spec, as SHOW
// CREATE TABLE answers it: Doris's DDL that Parse reads back into spec
// (its columns, types, NULL, defaults, aggregations, model and keys,
// partitions, RANDOM distribution, sequence and skip-bitmap properties),
// qualified with spec's database when it has one. A column type Doris's
// DDL cannot spell (a loadnode TIMESTAMP of a job spec, whose text is
// UTC) is written as the nearest Doris type.
func CreateTableStatement(spec *api.TableSpec) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	if db := spec.GetDatabase(); db != "" {
		b.WriteString(backquote(db) + ".")
	}
	b.WriteString(backquote(spec.GetName()) + " (\n")
	for i, c := range spec.GetColumns() {
		b.WriteString("  " + backquote(c.GetName()) + " " + table.DorisTypeName(c))
		if a := c.GetAggregation(); a != api.Aggregation_AGG_NONE {
			b.WriteString(" " + a.String())
		}
		if c.GetNotNull() {
			b.WriteString(" NOT NULL")
		} else {
			b.WriteString(" NULL")
		}
		switch {
		case c.DefaultValue != nil:
			b.WriteString(" DEFAULT " + doubleQuote(c.GetDefaultValue()))
		case c.GetDefaultCurrentTimestamp() && c.GetDefaultCurrentTimestampPrecision() > 0:
			fmt.Fprintf(&b, " DEFAULT CURRENT_TIMESTAMP(%d)", c.GetDefaultCurrentTimestampPrecision())
		case c.GetDefaultCurrentTimestamp():
			b.WriteString(" DEFAULT CURRENT_TIMESTAMP")
		}
		if i < len(spec.GetColumns())-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(") ENGINE=OLAP\n")
	keys := backquoteList(spec.GetKeyColumns())
	switch spec.GetModel() {
	case api.TableModel_UNIQUE:
		b.WriteString("UNIQUE KEY(" + keys + ")\n")
	case api.TableModel_AGGREGATE:
		b.WriteString("AGGREGATE KEY(" + keys + ")\n")
	}
	if pt := spec.GetPartitioning(); pt != nil {
		kind := "RANGE"
		if pt.GetList() {
			kind = "LIST"
		}
		b.WriteString("PARTITION BY " + kind + "(" + backquoteList(pt.GetColumns()) + ")\n(")
		for i, p := range pt.GetPartitions() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\nPARTITION " + backquote(p.GetName()) + " VALUES ")
			switch {
			case pt.GetList():
				in := make([]string, len(p.GetIn()))
				for j, v := range p.GetIn() {
					in[j] = boundText(v)
				}
				b.WriteString("IN (" + strings.Join(in, ", ") + ")")
			case p.GetLower() != nil:
				b.WriteString("[" + boundText(p.GetLower()) + ", " + boundText(p.GetUpper()) + ")")
			default:
				b.WriteString("LESS THAN " + boundText(p.GetUpper()))
			}
		}
		b.WriteString(")\n")
	}
	switch {
	case spec.GetRandomDistribution():
		b.WriteString("DISTRIBUTED BY RANDOM BUCKETS AUTO\n")
	case spec.GetModel() != api.TableModel_DUPLICATE:
		b.WriteString("DISTRIBUTED BY HASH(" + keys + ") BUCKETS AUTO\n")
	}
	var props []string
	if s := spec.GetSequenceColumn(); s != "" {
		props = append(props, `"function_column.sequence_col" = `+doubleQuote(s))
	}
	if t := spec.GetHiddenSequenceType(); t != api.ColumnType_COLUMN_TYPE_UNSPECIFIED {
		props = append(props, `"function_column.sequence_type" = `+doubleQuote(table.DorisTypeName(&api.Column{Type: t})))
	}
	if spec.GetSkipBitmapColumn() {
		props = append(props, `"enable_unique_key_skip_bitmap_column" = "true"`)
	}
	if len(props) > 0 {
		b.WriteString("PROPERTIES (\n" + strings.Join(props, ",\n") + "\n)")
	}
	return strings.TrimSuffix(b.String(), "\n") + ";"
}

// boundText is a partition bound: ("v", ...), MAXVALUE as written.
func boundText(pb *api.PartitionBound) string {
	vals := make([]string, len(pb.GetValues()))
	for i, v := range pb.GetValues() {
		if v.GetMax() {
			vals[i] = "MAXVALUE"
		} else {
			vals[i] = doubleQuote(v.GetText())
		}
	}
	return "(" + strings.Join(vals, ", ") + ")"
}

// backquote is name as a `quoted identifier` (a backquote doubled).
func backquote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func backquoteList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = backquote(n)
	}
	return strings.Join(out, ", ")
}

// doubleQuote is s as a "string" with the escapes the lexer reads.
func doubleQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`).Replace(s) + `"`
}
