package doris

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// maxExactDecimalDigits is the largest DECIMAL precision loadnode accepts:
// DECIMAL is stored as FLOAT64, and every decimal number of at most 15
// significant digits survives the round trip through a float64 (and back to
// its shortest decimal form) unchanged.
const maxExactDecimalDigits = 15

// ignoredTableProperties are CREATE TABLE PROPERTIES that only say how Doris
// places, replicates or compacts tablets. They cannot change which rows a
// loadnode table holds or their values, so they are accepted and ignored.
// Any other table property is refused by name.
var ignoredTableProperties = map[string]bool{
	"replication_num":                                true,
	"replication_allocation":                         true,
	"storage_medium":                                 true,
	"storage_cooldown_time":                          true,
	"storage_format":                                 true,
	"compression":                                    true,
	"light_schema_change":                            true,
	"disable_auto_compaction":                        true,
	"enable_single_replica_compaction":               true,
	"enable_duplicate_without_keys_by_default":       true,
	"skip_write_index_on_load":                       true,
	"compaction_policy":                              true,
	"time_series_compaction_goal_size_mbytes":        true,
	"time_series_compaction_file_count_threshold":    true,
	"time_series_compaction_time_threshold_seconds":  true,
	"time_series_compaction_level_threshold":         true,
	"time_series_compaction_empty_rowsets_threshold": true,
	"in_memory":                                      true,
	"is_being_synced":                                true,
	"colocate_with":                                  true,
	"store_row_column":                               true,
}

// aggregationTypes are the Doris column aggregation types (AGGREGATE KEY
// model), refused by name.
var aggregationTypes = map[string]bool{
	"SUM": true, "MIN": true, "MAX": true, "REPLACE": true, "REPLACE_IF_NOT_NULL": true,
	"HLL_UNION": true, "BITMAP_UNION": true, "QUANTILE_UNION": true, "GENERIC": true,
}

const typesHelp = "supported: TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s) with p <= 15, CHAR, VARCHAR, STRING, TEXT, BOOLEAN, DATE, DATETIME"

// createTable parses the rest of CREATE TABLE [IF NOT EXISTS] [db.]name
// (columns) [clauses].
func (p *parser) createTable() (*Statement, *Error) {
	const clause = "CREATE TABLE"
	st := &Statement{}
	if t := p.peek(); t.is("IF") {
		p.next()
		if err := p.expect(clause, "NOT"); err != nil {
			return nil, err
		}
		if err := p.expect(clause, "EXISTS"); err != nil {
			return nil, err
		}
		st.IfNotExists = true
	}
	db, name, _, err := p.qualifiedName(clause, "a table name")
	if err != nil {
		return nil, err
	}
	st.DB = db
	spec := &api.TableSpec{Name: name, Model: api.TableModel_DUPLICATE}
	switch t := p.peek(); {
	case t.is("LIKE"):
		return nil, p.errf(t, "CREATE TABLE LIKE", "not supported by loadnode; list the columns")
	case t.is("AS"):
		return nil, p.errf(t, "CREATE TABLE AS SELECT", "not supported by loadnode; list the columns")
	}
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	for {
		col, err := p.columnDef()
		if err != nil {
			return nil, err
		}
		spec.Columns = append(spec.Columns, col)
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		break
	}
	if err := p.tableClauses(spec); err != nil {
		return nil, err
	}
	st.CreateTable = spec
	return st, nil
}

// columnDef parses one column definition:
// name type [KEY] [NULL] [DEFAULT NULL] [COMMENT '...'].
func (p *parser) columnDef() (*api.Column, *Error) {
	if t := p.peek(); t.is("INDEX") {
		return nil, p.errf(t, "INDEX", "indexes not supported by loadnode")
	}
	nt, err := p.ident("CREATE TABLE", "a column name")
	if err != nil {
		return nil, err
	}
	clause := "column " + quote(nt.text)
	typ, err := p.columnType(clause)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool)
	for {
		t := p.peek()
		if t.isSym(",") || t.isSym(")") || t.kind == tokEOF {
			return &api.Column{Name: nt.text, Type: typ}, nil
		}
		word := strings.ToUpper(t.text)
		if t.kind == tokIdent && seen[word] {
			return nil, p.errf(t, clause, "%s given twice", word)
		}
		seen[word] = true
		switch {
		case t.is("KEY"):
			// A key column of the DUPLICATE model is a sort column in Doris;
			// loadnode keys rows by their source position, so it changes nothing.
			p.next()
		case t.is("NULL"):
			p.next()
		case t.is("NOT"):
			if p.peekAt(1).is("NULL") {
				return nil, p.errf(t, clause+" NOT NULL", "not supported yet: loadnode columns are nullable and do not refuse NULL values")
			}
			return nil, p.errf(t, clause, "unexpected NOT")
		case t.is("DEFAULT"):
			p.next()
			if v := p.peek(); v.is("NULL") {
				p.next()
				continue
			}
			return nil, p.errf(t, clause+" DEFAULT", "not supported yet: a value missing from a record loads as NULL (only DEFAULT NULL is accepted)")
		case t.is("COMMENT"):
			p.next()
			if v := p.peek(); v.kind != tokString {
				return nil, p.errf(v, clause+" COMMENT", "expected a string, found %s", v.describe())
			}
			p.next()
		case t.is("AUTO_INCREMENT"):
			return nil, p.errf(t, clause+" AUTO_INCREMENT", "not supported by loadnode")
		case t.is("ON"):
			return nil, p.errf(t, clause+" ON UPDATE", "not supported by loadnode")
		case t.is("AS"), t.is("GENERATED"):
			return nil, p.errf(t, clause+" AS", "generated columns not supported by loadnode")
		case t.kind == tokIdent && aggregationTypes[word]:
			return nil, p.errf(t, clause+" "+word, "aggregation types belong to the AGGREGATE KEY model, which is not supported yet")
		default:
			return nil, p.errf(t, clause, "unexpected %s in the column definition", t.describe())
		}
	}
}

// columnType parses a Doris column type and maps it to a loadnode type.
func (p *parser) columnType(clause string) (api.ColumnType, *Error) {
	t := p.peek()
	if t.kind != tokIdent {
		return 0, p.errf(t, clause, "expected a column type, found %s", t.describe())
	}
	p.next()
	name := strings.ToUpper(t.text)
	var typ api.ColumnType
	maxArgs := 0 // type parameters in parentheses accepted
	switch name {
	case "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT":
		typ, maxArgs = api.ColumnType_INT64, 1 // display width, as in INT(11)
	case "FLOAT", "DOUBLE":
		typ = api.ColumnType_FLOAT64
	case "DECIMAL", "DECIMALV2", "DECIMALV3":
		typ, maxArgs = api.ColumnType_FLOAT64, 2
	case "CHAR", "VARCHAR":
		typ, maxArgs = api.ColumnType_STRING, 1
	case "STRING", "TEXT":
		typ = api.ColumnType_STRING
	case "BOOLEAN", "BOOL":
		typ = api.ColumnType_BOOL
	case "DATE", "DATEV2":
		typ = api.ColumnType_TIMESTAMP
	case "DATETIME", "DATETIMEV2":
		typ, maxArgs = api.ColumnType_TIMESTAMP, 1 // fractional-second precision
	case "LARGEINT":
		return 0, p.errf(t, clause, "type LARGEINT not supported: loadnode integers are 64-bit (use BIGINT)")
	default:
		return 0, p.errf(t, clause, "type %s not supported by loadnode (%s)", name, typesHelp)
	}
	if !p.peek().isSym("(") {
		return typ, nil
	}
	open := p.next()
	if maxArgs == 0 {
		return 0, p.errf(open, clause, "type %s takes no parameters", name)
	}
	var args []int64
	for {
		a := p.peek()
		n, perr := strconv.ParseInt(a.text, 10, 32)
		if a.kind != tokNumber || perr != nil {
			return 0, p.errf(a, clause, "%s: expected a number, found %s", name, a.describe())
		}
		p.next()
		args = append(args, n)
		if len(args) < maxArgs && p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return 0, err
		}
		break
	}
	switch name {
	case "DECIMAL", "DECIMALV2", "DECIMALV3":
		prec, scale := args[0], int64(0)
		if len(args) == 2 {
			scale = args[1]
		}
		what := fmt.Sprintf("%s(%d,%d)", name, prec, scale)
		if prec < 1 || scale > prec {
			return 0, p.errf(t, clause, "%s: precision must be >= 1 and scale <= precision", what)
		}
		if prec > maxExactDecimalDigits {
			return 0, p.errf(t, clause, "%s: precision above %d digits not supported (DECIMAL is stored as FLOAT64, exact to %d significant digits)", what, maxExactDecimalDigits, maxExactDecimalDigits)
		}
	case "DATETIME", "DATETIMEV2":
		if args[0] > 6 {
			return 0, p.errf(t, clause, "%s(%d): precision must be 0..6", name, args[0])
		}
	default:
		if args[0] < 1 {
			return 0, p.errf(t, clause, "%s(%d): length must be >= 1", name, args[0])
		}
	}
	return typ, nil
}

// tableClauses parses what follows the column list of CREATE TABLE.
func (p *parser) tableClauses(spec *api.TableSpec) *Error {
	seen := make(map[string]bool)
	once := func(t token, name string) *Error {
		if seen[name] {
			return p.errf(t, name, "given twice")
		}
		seen[name] = true
		return nil
	}
	hasColumn := func(name string) bool {
		for _, c := range spec.Columns {
			if strings.EqualFold(c.Name, name) {
				return true
			}
		}
		return false
	}
	columns := func(clause string) *Error {
		list, err := p.identList(clause, "a column name")
		if err != nil {
			return err
		}
		for _, c := range list {
			if !hasColumn(c.text) {
				return p.errf(c, clause, "unknown column %s", quote(c.text))
			}
		}
		return nil
	}
	for {
		t := p.peek()
		if t.kind == tokEOF || t.isSym(";") {
			return nil
		}
		switch {
		case t.is("ENGINE"):
			if err := once(t, "ENGINE"); err != nil {
				return err
			}
			p.next()
			if err := p.expectSym("ENGINE", "="); err != nil {
				return err
			}
			e, err := p.ident("ENGINE", "an engine name")
			if err != nil {
				return err
			}
			if !strings.EqualFold(e.text, "OLAP") {
				return p.errf(e, "ENGINE="+e.text, "not supported by loadnode (only OLAP)")
			}
		case t.is("DUPLICATE"):
			if err := once(t, "DUPLICATE KEY"); err != nil {
				return err
			}
			p.next()
			if err := p.expect("DUPLICATE KEY", "KEY"); err != nil {
				return err
			}
			// Sort columns in Doris; loadnode keys rows by source position.
			if err := columns("DUPLICATE KEY"); err != nil {
				return err
			}
		case t.is("UNIQUE"), t.is("AGGREGATE"), t.is("PRIMARY"):
			name := strings.ToUpper(t.text) + " KEY"
			return p.errf(t, name, "table model not supported yet (only DUPLICATE KEY)")
		case t.is("COMMENT"):
			if err := once(t, "COMMENT"); err != nil {
				return err
			}
			p.next()
			if v := p.peek(); v.kind != tokString {
				return p.errf(v, "COMMENT", "expected a string, found %s", v.describe())
			}
			p.next()
		case t.is("PARTITION"), t.is("AUTO"):
			if t.is("AUTO") && !p.peekAt(1).is("PARTITION") {
				return p.errf(t, "", "unexpected %s", t.describe())
			}
			what := "PARTITION BY"
			if t.is("AUTO") {
				what = "AUTO PARTITION BY"
			}
			if n := p.peekAt(2); t.is("PARTITION") && (n.is("RANGE") || n.is("LIST")) {
				what += " " + strings.ToUpper(n.text)
			}
			return p.errf(t, what, "partitioned tables not supported yet")
		case t.is("DISTRIBUTED"):
			if err := once(t, "DISTRIBUTED BY"); err != nil {
				return err
			}
			if err := p.distributedBy(columns); err != nil {
				return err
			}
		case t.is("ROLLUP"):
			return p.errf(t, "ROLLUP", "materialized views not supported by loadnode")
		case t.is("PROPERTIES"):
			if err := once(t, "PROPERTIES"); err != nil {
				return err
			}
			p.next()
			props, err := p.properties("PROPERTIES")
			if err != nil {
				return err
			}
			for _, pr := range props {
				if !ignoredTableProperties[pr.key] {
					return p.errf(pr.keyTok, "PROPERTIES "+quote(pr.rawKey), "not supported by loadnode")
				}
			}
		default:
			return p.errf(t, "CREATE TABLE", "unexpected %s", t.describe())
		}
	}
}

// distributedBy parses DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO],
// which says how Doris spreads rows over tablets: no difference here.
func (p *parser) distributedBy(columns func(string) *Error) *Error {
	const clause = "DISTRIBUTED BY"
	p.next()
	if err := p.expect(clause, "BY"); err != nil {
		return err
	}
	switch t := p.peek(); {
	case t.is("HASH"):
		p.next()
		if err := columns("DISTRIBUTED BY HASH"); err != nil {
			return err
		}
	case t.is("RANDOM"):
		p.next()
	default:
		return p.errf(t, clause, "expected HASH or RANDOM, found %s", t.describe())
	}
	if !p.accept("BUCKETS") {
		return nil
	}
	if p.accept("AUTO") {
		return nil
	}
	n := p.peek()
	if v, err := strconv.ParseInt(n.text, 10, 32); n.kind != tokNumber || err != nil || v < 1 {
		return p.errf(n, "BUCKETS", "expected a positive number or AUTO, found %s", n.describe())
	}
	p.next()
	return nil
}
