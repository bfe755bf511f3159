package doris

import (
	"errors"
	"google.golang.org/protobuf/proto"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

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
	"bloom_filter_columns":                           true,
	"bloom_filter_fpp":                               true,
	"estimate_partition_size":                        true,
	"group_commit_interval_ms":                       true,
	"group_commit_data_bytes":                        true,
}

// aggregationTypes are the Doris column aggregation types (AGGREGATE KEY
// model), refused by name.
var aggregationTypes = map[string]bool{
	"SUM": true, "MIN": true, "MAX": true, "REPLACE": true, "REPLACE_IF_NOT_NULL": true,
	"HLL_UNION": true, "BITMAP_UNION": true, "QUANTILE_UNION": true, "GENERIC": true,
}

const typesHelp = "supported: TINYINT, SMALLINT, INT, BIGINT, LARGEINT, FLOAT, DOUBLE, DECIMAL(p,s) with p <= 38, CHAR(n), VARCHAR(n), STRING, TEXT, BOOLEAN, DATE, DATETIME(p), TIMESTAMP, JSON"

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
		if t := p.peek(); t.is("INDEX") {
			if err := p.indexDef(st); err != nil {
				return nil, err
			}
		} else {
			col, err := p.columnDef()
			if err != nil {
				return nil, err
			}
			spec.Columns = append(spec.Columns, col)
		}
		if p.acceptSym(",") {
			// Doris's grammar allows one comma before the closing
			// parenthesis: (columnDefs (, indexDefs)? ,? ).
			if p.acceptSym(")") {
				break
			}
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		break
	}
	if err := p.tableClauses(st, spec); err != nil {
		return nil, err
	}
	st.CreateTable = spec
	return st, nil
}

// indexDef parses INDEX name (cols) [USING kind] [PROPERTIES (...)]
// [COMMENT '...'] in a column list: an index speeds Doris's queries and
// changes no value, so it is accepted and listed as ignored.
func (p *parser) indexDef(st *Statement) *Error {
	const clause = "INDEX"
	p.next()
	name, err := p.ident(clause, "an index name")
	if err != nil {
		return err
	}
	if _, err := p.identList(clause, "a column name"); err != nil {
		return err
	}
	kind := ""
	if p.accept("USING") {
		k, err := p.ident("INDEX USING", "an index type")
		if err != nil {
			return err
		}
		kind = " USING " + strings.ToUpper(k.text)
	}
	if p.peek().is("PROPERTIES") {
		p.next()
		if _, err := p.properties("INDEX PROPERTIES"); err != nil {
			return err
		}
	}
	if p.accept("COMMENT") {
		if v := p.peek(); v.kind != tokString {
			return p.errf(v, "INDEX COMMENT", "expected a string, found %s", v.describe())
		}
		p.next()
	}
	st.Ignored = append(st.Ignored, "INDEX "+name.text+kind)
	return nil
}

// columnDef parses one column definition:
// name type [KEY] [NULL | NOT NULL] [DEFAULT value] [COMMENT '...'].
func (p *parser) columnDef() (*api.Column, *Error) {
	nt, err := p.ident("CREATE TABLE", "a column name")
	if err != nil {
		return nil, err
	}
	clause := "column " + quote(nt.text)
	col, err := p.columnType(clause)
	if err != nil {
		return nil, err
	}
	col.Name = nt.text
	seen := make(map[string]bool)
	for {
		t := p.peek()
		if t.isSym(",") || t.isSym(")") || t.kind == tokEOF {
			if col.DefaultValue != nil {
				probe := proto.Clone(col).(*api.Column)
				probe.Aggregation = api.Aggregation_AGG_NONE
				if _, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{probe}}); err != nil {
					var fe *table.FieldError
					if errors.As(err, &fe) {
						return nil, p.errf(nt, clause+" DEFAULT", "%s", fe.Msg)
					}
					return nil, p.errf(nt, clause, "%v", err)
				}
			}
			return col, nil
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
			if seen["NOT"] {
				return nil, p.errf(t, clause, "NULL and NOT NULL both given")
			}
			p.next()
		case t.is("NOT"):
			if !p.peekAt(1).is("NULL") {
				return nil, p.errf(t, clause, "unexpected NOT")
			}
			if seen["NULL"] {
				return nil, p.errf(t, clause, "NULL and NOT NULL both given")
			}
			p.next()
			p.next()
			col.NotNull = true
		case t.is("DEFAULT"):
			p.next()
			v := p.peek()
			switch {
			case v.is("NULL"):
				p.next()
				if col.NotNull {
					return nil, p.errf(v, clause+" DEFAULT NULL", "a NOT NULL column cannot default to NULL")
				}
			case v.kind == tokString || v.kind == tokNumber:
				p.next()
				val := v.text
				col.DefaultValue = &val
			case v.isSym("-") && p.peekAt(1).kind == tokNumber:
				p.next()
				val := "-" + p.next().text
				col.DefaultValue = &val
			case v.is("CURRENT_TIMESTAMP"):
				if err := p.defaultNow(clause, col); err != nil {
					return nil, err
				}
			case v.is("CURRENT_DATE"), v.is("NOW"):
				return nil, p.errf(v, clause+" DEFAULT "+strings.ToUpper(v.text), "not supported yet: a default that depends on the load time")
			default:
				return nil, p.errf(v, clause+" DEFAULT", "expected a string, a number or NULL, found %s", v.describe())
			}
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
			a, ok := api.Aggregation_value[word]
			if !ok {
				return nil, p.errf(t, clause+" "+word, "not supported by loadnode (SUM, MIN, MAX, REPLACE and REPLACE_IF_NOT_NULL are)")
			}
			if col.Aggregation != api.Aggregation_AGG_NONE {
				return nil, p.errf(t, clause+" "+word, "a second aggregation type")
			}
			p.next()
			col.Aggregation = api.Aggregation(a)
		default:
			return nil, p.errf(t, clause, "unexpected %s in the column definition", t.describe())
		}
	}
}

// defaultNow parses CURRENT_TIMESTAMP[(p)] after DEFAULT: the column (a
// DATETIME, as Doris requires) takes the load time, with p fraction digits
// (0 without; at most the column's precision).
func (p *parser) defaultNow(clause string, col *api.Column) *Error {
	v := p.next()
	what := clause + " DEFAULT CURRENT_TIMESTAMP"
	if col.GetType() != api.ColumnType_DATETIME {
		return p.errf(v, what, "types other than DATETIME and DATETIMEV2 cannot use current_timestamp as the default value (as in Doris)")
	}
	prec := int64(0)
	if p.acceptSym("(") {
		n := p.peek()
		var err error
		if prec, err = strconv.ParseInt(n.text, 10, 32); n.kind != tokNumber || err != nil {
			return p.errf(n, what, "expected a precision, found %s", n.describe())
		}
		p.next()
		if err := p.expectSym(what, ")"); err != nil {
			return err
		}
		if prec > int64(col.GetPrecision()) {
			return p.errf(n, what, "precision %d is greater than the column's, %d", prec, col.GetPrecision())
		}
	}
	col.DefaultCurrentTimestamp = true
	col.DefaultCurrentTimestampPrecision = int32(prec)
	return nil
}

// columnType parses a Doris column type (table.TypeOf says which and their
// defaults) with its parameters.
func (p *parser) columnType(clause string) (*api.Column, *Error) {
	t := p.peek()
	if t.kind != tokIdent {
		return nil, p.errf(t, clause, "expected a column type, found %s", t.describe())
	}
	p.next()
	name := strings.ToUpper(t.text)
	switch name {
	case "TIMESTAMP":
		// Doris's TIMESTAMP is an instant: text without an offset is read
		// in the load's time zone, and shown in the reader's.
		if p.peek().isSym("(") {
			return nil, p.errf(p.peek(), clause, "TIMESTAMP(p) not supported by loadnode (TIMESTAMP keeps whole seconds)")
		}
		return &api.Column{Type: api.ColumnType_TIMESTAMP, TextInJobZone: true}, nil
	case "INT64", "FLOAT64", "INT8", "INT16", "INT32", "INT128", "FLOAT32":
		// loadnode's own names are for job specs, not Doris DDL.
		return nil, p.errf(t, clause, "type %s not supported by loadnode (%s)", name, typesHelp)
	case "ARRAY", "MAP", "STRUCT", "VARIANT", "HLL", "BITMAP", "QUANTILE_STATE", "AGG_STATE", "IPV4", "IPV6":
		return nil, p.errf(t, clause, "type %s not supported yet (%s)", name, typesHelp)
	}
	var args []int
	if p.peek().isSym("(") {
		p.next()
		for {
			a := p.peek()
			n, perr := strconv.ParseInt(a.text, 10, 32)
			if a.kind != tokNumber || perr != nil {
				return nil, p.errf(a, clause, "%s: expected a number, found %s", name, a.describe())
			}
			p.next()
			args = append(args, int(n))
			if p.acceptSym(",") {
				continue
			}
			if err := p.expectSym(clause, ")"); err != nil {
				return nil, err
			}
			break
		}
	}
	col, err := table.TypeOf(name, args)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "table: ")
		if strings.HasPrefix(msg, "unknown column type") {
			return nil, p.errf(t, clause, "type %s not supported by loadnode (%s)", name, typesHelp)
		}
		return nil, p.errf(t, clause, "%s", msg)
	}
	// An integer's display width (INT(11)) means nothing.
	return col, nil
}

// tableClauses parses what follows the column list of CREATE TABLE.
func (p *parser) tableClauses(st *Statement, spec *api.TableSpec) *Error {
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
			if !seen["DUPLICATE KEY"] {
				if err := p.inferModel(t, spec); err != nil {
					return err
				}
			}
			return p.checkRandom(t, spec)
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
			st.Ignored = append(st.Ignored, "ENGINE=OLAP")
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
			st.Ignored = append(st.Ignored, "DUPLICATE KEY (sort columns: rows are kept in load order)")
		case t.is("UNIQUE"), t.is("AGGREGATE"):
			name := strings.ToUpper(t.text) + " KEY"
			if err := once(t, "DUPLICATE KEY"); err != nil {
				return err
			}
			p.next()
			if err := p.expect(name, "KEY"); err != nil {
				return err
			}
			list, err := p.identList(name, "a column name")
			if err != nil {
				return err
			}
			spec.Model = api.TableModel_UNIQUE
			if name == "AGGREGATE KEY" {
				spec.Model = api.TableModel_AGGREGATE
			}
			for _, c := range list {
				col := columnNamed(spec, c.text)
				if col == nil {
					return p.errf(c, name, "unknown column %s", quote(c.text))
				}
				spec.KeyColumns = append(spec.KeyColumns, col.GetName())
			}
		case t.is("PRIMARY"):
			return p.errf(t, "PRIMARY KEY", "not a Doris table model (UNIQUE KEY is)")
		case t.is("COMMENT"):
			if err := once(t, "COMMENT"); err != nil {
				return err
			}
			p.next()
			if v := p.peek(); v.kind != tokString {
				return p.errf(v, "COMMENT", "expected a string, found %s", v.describe())
			}
			p.next()
			st.Ignored = append(st.Ignored, "COMMENT")
		case t.is("PARTITION"), t.is("AUTO"):
			if t.is("AUTO") && !p.peekAt(1).is("PARTITION") {
				return p.errf(t, "", "unexpected %s", t.describe())
			}
			what := "PARTITION BY"
			if t.is("AUTO") {
				what = "AUTO PARTITION BY"
			}
			n := p.peekAt(2)
			if t.is("AUTO") {
				n = p.peekAt(3)
			}
			if n.is("RANGE") || n.is("LIST") {
				what += " " + strings.ToUpper(n.text)
			}
			if err := once(t, "PARTITION BY"); err != nil {
				return err
			}
			if t.is("AUTO") {
				// Doris makes the partition a row needs: every row is kept.
				if err := p.skipPartitionBy(what); err != nil {
					return err
				}
				st.Ignored = append(st.Ignored, what+" (Doris makes the partition a row needs: every row is kept)")
				continue
			}
			parts, err := p.partitionBy(what, spec)
			if err != nil {
				return err
			}
			spec.Partitioning = parts
		case t.is("DISTRIBUTED"):
			if err := once(t, "DISTRIBUTED BY"); err != nil {
				return err
			}
			random, err := p.distributedBy(columns)
			if err != nil {
				return err
			}
			spec.RandomDistribution = random
			st.Ignored = append(st.Ignored, "DISTRIBUTED BY")
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
			var seqColTok, seqTypeTok *token // function_column.sequence_col, sequence_type
			for _, pr := range props {
				switch pr.key {
				case "function_column.sequence_col":
					col := columnNamed(spec, pr.val)
					if col == nil {
						return p.errf(pr.valTok, "PROPERTIES "+quote(pr.rawKey), "unknown column %s", quote(pr.val))
					}
					spec.SequenceColumn = col.GetName()
					seqColTok = &pr.keyTok
					continue
				case "function_column.sequence_type":
					// Doris's hidden __DORIS_SEQUENCE_COL__: no column of
					// the table; a load's ORDER BY (a stream load's
					// function_column.sequence_col) gives its value.
					clause := "PROPERTIES " + quote(pr.rawKey)
					if spec.GetModel() != api.TableModel_UNIQUE {
						return p.errf(pr.keyTok, clause, "needs a UNIQUE KEY table, as in Doris")
					}
					col, err := table.ParseType(pr.val)
					if err != nil {
						return p.errf(pr.valTok, clause, "%s", strings.TrimPrefix(err.Error(), "table: "))
					}
					switch col.GetType() {
					case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64, api.ColumnType_INT128, api.ColumnType_DATE:
					case api.ColumnType_DATETIME:
						if col.GetPrecision() != 0 {
							return p.errf(pr.valTok, clause, "%s: a hidden sequence of DATETIME(%d) not supported by loadnode (DATETIME keeps whole seconds)", quote(pr.val), col.GetPrecision())
						}
					default:
						return p.errf(pr.valTok, clause, "%s: want an integer type, DATE or DATETIME, as in Doris", quote(pr.val))
					}
					spec.HiddenSequenceType = col.GetType()
					seqTypeTok = &pr.keyTok
					continue
				case "enable_unique_key_skip_bitmap_column":
					// Doris's hidden skip-bitmap column: flexible partial
					// updates (unique_key_update_mode
					// UPDATE_FLEXIBLE_COLUMNS) of a UNIQUE table.
					switch {
					case isTrue(strings.ToLower(pr.val)):
						if spec.GetModel() != api.TableModel_UNIQUE {
							return p.errf(pr.keyTok, "PROPERTIES "+quote(pr.rawKey), "needs a UNIQUE KEY table, as in Doris")
						}
						spec.SkipBitmapColumn = true
					case isFalse(strings.ToLower(pr.val)):
					default:
						return p.errf(pr.valTok, "PROPERTIES "+quote(pr.rawKey), "must be true or false")
					}
					continue
				case "enable_unique_key_merge_on_write":
					// Merge-on-read and merge-on-write differ in when Doris
					// merges, not in what a read sees.
					st.Ignored = append(st.Ignored, "PROPERTIES "+quote(pr.rawKey)+" (rows always merge on write)")
					continue
				}
				if !ignoredTableProperties[pr.key] {
					return p.errf(pr.keyTok, "PROPERTIES "+quote(pr.rawKey), "not supported by loadnode")
				}
				st.Ignored = append(st.Ignored, "PROPERTIES "+quote(pr.rawKey))
			}
			if seqColTok != nil && seqTypeTok != nil {
				return p.errf(*seqTypeTok, "PROPERTIES \"function_column.sequence_type\"", "a table has a sequence column (function_column.sequence_col) or a hidden sequence of a type, not both")
			}
		default:
			return p.errf(t, "CREATE TABLE", "unexpected %s", t.describe())
		}
	}
}

// inferModel gives a table without a KEY clause Doris's model: when a
// column names an aggregation, an AGGREGATE table keyed by the columns
// before the first such column (a later column without one is a value
// column without an aggregation, refused by table.NewSchema as Doris
// refuses it); else DUPLICATE, as parsed.
func (p *parser) inferModel(at token, spec *api.TableSpec) *Error {
	first := -1
	for i, c := range spec.GetColumns() {
		if c.GetAggregation() != api.Aggregation_AGG_NONE {
			first = i
			break
		}
	}
	if first < 0 {
		return nil
	}
	if first == 0 {
		return p.errf(at, "CREATE TABLE", "column %s has an aggregation (%s) and no KEY clause names the keys: Doris makes the columns before the first aggregated one the AGGREGATE keys, and there is no key column; put a key column first or give AGGREGATE KEY(...)", quote(spec.Columns[0].GetName()), spec.Columns[0].GetAggregation())
	}
	spec.Model = api.TableModel_AGGREGATE
	for _, c := range spec.Columns[:first] {
		spec.KeyColumns = append(spec.KeyColumns, c.GetName())
	}
	return nil
}

// checkRandom refuses what Doris refuses with DISTRIBUTED BY RANDOM: a
// UNIQUE table, and an AGGREGATE table with a REPLACE or
// REPLACE_IF_NOT_NULL column.
func (p *parser) checkRandom(at token, spec *api.TableSpec) *Error {
	if !spec.GetRandomDistribution() {
		return nil
	}
	switch spec.GetModel() {
	case api.TableModel_UNIQUE:
		return p.errf(at, "DISTRIBUTED BY RANDOM", "should not be distributed by random when keys type is unique (as in Doris)")
	case api.TableModel_AGGREGATE:
		for _, c := range spec.GetColumns() {
			if a := c.GetAggregation(); a == api.Aggregation_REPLACE || a == api.Aggregation_REPLACE_IF_NOT_NULL {
				return p.errf(at, "DISTRIBUTED BY RANDOM", "should not be distributed by random when keys type is agg and column is in replace, [%s] is invalid (as in Doris)", c.GetName())
			}
		}
	}
	return nil
}

// distributedBy parses DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO],
// which says how Doris spreads rows over tablets: no difference here,
// but for which loads may say "load_to_single_tablet" (random reports
// RANDOM).
func (p *parser) distributedBy(columns func(string) *Error) (random bool, err *Error) {
	const clause = "DISTRIBUTED BY"
	p.next()
	if err := p.expect(clause, "BY"); err != nil {
		return false, err
	}
	switch t := p.peek(); {
	case t.is("HASH"):
		p.next()
		if err := columns("DISTRIBUTED BY HASH"); err != nil {
			return false, err
		}
	case t.is("RANDOM"):
		p.next()
		random = true
	default:
		return false, p.errf(t, clause, "expected HASH or RANDOM, found %s", t.describe())
	}
	if !p.accept("BUCKETS") {
		return random, nil
	}
	if p.accept("AUTO") {
		return random, nil
	}
	n := p.peek()
	if v, err := strconv.ParseInt(n.text, 10, 32); n.kind != tokNumber || err != nil || v < 1 {
		return false, p.errf(n, "BUCKETS", "expected a positive number or AUTO, found %s", n.describe())
	}
	p.next()
	return random, nil
}

// skipPartitionBy skips AUTO PARTITION BY RANGE|LIST (cols) (partitions...):
// Doris makes the partition a row needs, so it decides where rows live,
// not which are kept.
func (p *parser) skipPartitionBy(what string) *Error {
	p.accept("AUTO")
	p.next() // PARTITION
	if err := p.expect(what, "BY"); err != nil {
		return err
	}
	if !p.accept("RANGE") && !p.accept("LIST") {
		return p.errf(p.peek(), what, "expected RANGE or LIST, found %s", p.peek().describe())
	}
	// (cols) or (expr), then the partition list; both balanced parentheses.
	for k := 0; k < 2; k++ {
		t := p.peek()
		if !t.isSym("(") {
			if k == 1 {
				return nil // AUTO PARTITION may leave the list out
			}
			return p.errf(t, what, "expected (, found %s", t.describe())
		}
		if err := p.skipBalanced(what); err != nil {
			return err
		}
	}
	return nil
}

// skipBalanced skips a parenthesized group starting at "(" (where "[" may
// open what ")" closes: VALUES [("a"), ("b")) is half open).
func (p *parser) skipBalanced(what string) *Error {
	depth := 0
	for {
		t := p.next()
		switch {
		case t.kind == tokEOF:
			return p.errf(t, what, "unbalanced parentheses")
		case t.isSym("("), t.isSym("["):
			depth++
		case t.isSym(")"), t.isSym("]"):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// partitionBy parses PARTITION BY RANGE|LIST (cols) (partitions...) into
// the table's partitioning: as in Doris, a row outside every partition is
// an error row. The partitions, one of
//
//	PARTITION [IF NOT EXISTS] name VALUES LESS THAN MAXVALUE | (v, ... [MAXVALUE])
//	PARTITION [IF NOT EXISTS] name VALUES [(v, ...), (v, ...))
//	PARTITION [IF NOT EXISTS] name VALUES IN (v, ...) | ((v, ...), ...)
//
// each optionally followed by its own ("key" = "value") properties
// (placement: ignored). Batch partitions (FROM ... TO ... INTERVAL) and
// NULL partition values are refused by name. The values are checked
// against the columns' types when the table is made (table.NewSchema).
func (p *parser) partitionBy(what string, spec *api.TableSpec) (*api.TablePartitioning, *Error) {
	p.next() // PARTITION
	if err := p.expect(what, "BY"); err != nil {
		return nil, err
	}
	out := &api.TablePartitioning{}
	switch {
	case p.accept("RANGE"):
	case p.accept("LIST"):
		out.List = true
	default:
		return nil, p.errf(p.peek(), what, "expected RANGE or LIST, found %s", p.peek().describe())
	}
	if err := p.expectSym(what, "("); err != nil {
		return nil, err
	}
	for {
		c, err := p.ident(what, "a partition column")
		if err != nil {
			return nil, err
		}
		if p.peek().isSym("(") {
			return nil, p.errf(c, what+" ("+c.text+"(...))", "a partition expression is not supported by loadnode without AUTO PARTITION; partition by columns")
		}
		col := columnNamed(spec, c.text)
		if col == nil {
			return nil, p.errf(c, what, "unknown column %s", quote(c.text))
		}
		out.Columns = append(out.Columns, col.GetName())
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(what, ")"); err != nil {
			return nil, err
		}
		break
	}
	if err := p.expectSym(what, "("); err != nil {
		return nil, err
	}
	if p.acceptSym(")") {
		return out, nil // no partition: Doris takes no row
	}
	for {
		t := p.peek()
		switch {
		case t.is("FROM"):
			return nil, p.errf(t, what+" FROM ... TO ... INTERVAL", "batch partitions not supported by loadnode; list the partitions")
		case !t.is("PARTITION"):
			return nil, p.errf(t, what, "expected PARTITION, found %s", t.describe())
		}
		p.next()
		if p.accept("IF") {
			if err := p.expect(what, "NOT"); err != nil {
				return nil, err
			}
			if err := p.expect(what, "EXISTS"); err != nil {
				return nil, err
			}
		}
		name, err := p.ident(what, "a partition name")
		if err != nil {
			return nil, err
		}
		clause := "PARTITION " + name.text
		if err := p.expect(clause, "VALUES"); err != nil {
			return nil, err
		}
		pd := &api.TablePartition{Name: name.text}
		switch v := p.peek(); {
		case v.is("LESS"):
			p.next()
			if err := p.expect(clause, "THAN"); err != nil {
				return nil, err
			}
			if out.List {
				return nil, p.errf(v, clause+" VALUES LESS THAN", "a LIST partition takes VALUES IN (...)")
			}
			if p.peek().is("MAXVALUE") {
				p.next()
				pd.Upper = &api.PartitionBound{}
				for range out.Columns {
					pd.Upper.Values = append(pd.Upper.Values, &api.PartitionBoundValue{Max: true})
				}
			} else if pd.Upper, err = p.partitionTuple(clause, true); err != nil {
				return nil, err
			}
		case v.isSym("["):
			p.next()
			if out.List {
				return nil, p.errf(v, clause+" VALUES [...)", "a LIST partition takes VALUES IN (...)")
			}
			if pd.Lower, pd.Upper, err = p.partitionBetween(clause); err != nil {
				return nil, err
			}
		case v.is("IN"):
			p.next()
			if !out.List {
				return nil, p.errf(v, clause+" VALUES IN", "a RANGE partition takes VALUES LESS THAN (...) or VALUES [(...), (...))")
			}
			if pd.In, err = p.partitionIn(v, clause); err != nil {
				return nil, err
			}
		default:
			return nil, p.errf(v, clause+" VALUES", "expected LESS THAN, [ or IN, found %s", v.describe())
		}
		if p.peek().isSym("(") {
			// The partition's own properties (replication, storage).
			if _, err := p.properties(clause + " properties"); err != nil {
				return nil, err
			}
		}
		out.Partitions = append(out.Partitions, pd)
		if len(out.Partitions) > table.MaxTablePartitions {
			return nil, p.errf(name, what, "more than %d partitions", table.MaxTablePartitions)
		}
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(what, ")"); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// partitionTuple parses ("v1", "v2", ...); MAXVALUE is a value of a
// RANGE bound (rng).
// partitionBetween reads a range partition's [(v, ...), (v, ...)) after
// its "[": the lower and the upper bound.
func (p *parser) partitionBetween(clause string) (lower, upper *api.PartitionBound, err *Error) {
	if lower, err = p.partitionTuple(clause, true); err != nil {
		return nil, nil, err
	}
	if err := p.expectSym(clause, ","); err != nil {
		return nil, nil, err
	}
	if upper, err = p.partitionTuple(clause, true); err != nil {
		return nil, nil, err
	}
	if err := p.expectSym(clause, ")"); err != nil {
		return nil, nil, err
	}
	return lower, upper, nil
}

// partitionIn reads a list partition's values after IN (at): (v, ...) or
// ((v, ...), ...), at most table.MaxTablePartitions of them.
func (p *parser) partitionIn(at token, clause string) ([]*api.PartitionBound, *Error) {
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	var in []*api.PartitionBound
	for {
		var b *api.PartitionBound
		if p.peek().isSym("(") {
			var err *Error
			if b, err = p.partitionTuple(clause, false); err != nil {
				return nil, err
			}
		} else {
			val, err := p.partitionValue(clause, false)
			if err != nil {
				return nil, err
			}
			b = &api.PartitionBound{Values: []*api.PartitionBoundValue{val}}
		}
		in = append(in, b)
		if len(in) > table.MaxTablePartitions {
			return nil, p.errf(at, clause, "more than %d values", table.MaxTablePartitions)
		}
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		return in, nil
	}
}

func (p *parser) partitionTuple(clause string, rng bool) (*api.PartitionBound, *Error) {
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	b := &api.PartitionBound{}
	for {
		v, err := p.partitionValue(clause, rng)
		if err != nil {
			return nil, err
		}
		b.Values = append(b.Values, v)
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		return b, nil
	}
}

// partitionValue parses one partition value: a string, a number (with
// its sign) or, in a RANGE bound, MAXVALUE.
func (p *parser) partitionValue(clause string, rng bool) (*api.PartitionBoundValue, *Error) {
	t := p.peek()
	switch {
	case t.kind == tokString, t.kind == tokNumber:
		p.next()
		return &api.PartitionBoundValue{Text: t.text}, nil
	case t.isSym("-") && p.peekAt(1).kind == tokNumber:
		p.next()
		return &api.PartitionBoundValue{Text: "-" + p.next().text}, nil
	case t.is("MAXVALUE") && rng:
		p.next()
		return &api.PartitionBoundValue{Max: true}, nil
	case t.is("NULL"):
		return nil, p.errf(t, clause, "NULL partition values not supported by loadnode")
	}
	return nil, p.errf(t, clause, "expected a partition value, found %s", t.describe())
}

// columnNamed finds a column of spec case-insensitively (as Doris).
func columnNamed(spec *api.TableSpec, name string) *api.Column {
	for _, c := range spec.Columns {
		if strings.EqualFold(c.GetName(), name) {
			return c
		}
	}
	return nil
}
