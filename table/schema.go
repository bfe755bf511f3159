package table

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// maxNameLen bounds table and column names (the identifier rule is
// ^[A-Za-z_][A-Za-z0-9_]{0,127}$).
const maxNameLen = 128

// FieldError is a spec or format error that names the field at fault, as a
// path into the JobSpec ("table.columns[2].type", "column_separator").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	return "table: " + strings.TrimPrefix(e.Field, "table.") + ": " + e.Msg
}

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// MismatchError is returned by Compare: a spec differs from the stored table.
// Field is the first differing spec field ("table.columns[1]").
type MismatchError struct {
	Table string
	Field string
	Msg   string
}

func (e *MismatchError) Error() string { return "table " + e.Table + ": " + e.Msg }

// Schema is a validated, immutable view of an api.TableSpec.
type Schema struct {
	spec  *api.TableSpec
	cols  []*api.Column
	types []api.ColumnType
	meta  []colMeta
	index map[string]int
	// hasString reports whether any column is STRING (parsers then keep a
	// string copy of each record to slice values from).
	hasString bool
	// keys are the key columns of a UNIQUE or AGGREGATE table, in key
	// order; seq is the sequence column, or -1 (model.go).
	keys []int
	seq  int
	// hidden: the table has a hidden sequence (TableSpec.
	// hidden_sequence_type, model.go): types and meta have one more
	// entry than cols, at index len(cols), for the value each stored row
	// carries beside its columns; seq is that index. stored is cols and
	// that value as a column (StoredColumns).
	hidden bool
	stored []*api.Column
	// parts is the table's partitioning, nil without (partition.go).
	parts *partitions
}

// NewSchema validates spec and returns its Schema. The spec is cloned, so the
// caller may keep changing its own copy. Errors are *FieldError.
func NewSchema(spec *api.TableSpec) (*Schema, error) {
	if spec == nil {
		return nil, fieldErr("table", "missing")
	}
	if err := checkTableName(spec.GetName()); err != nil {
		return nil, fieldErr("table.name", "%s", err)
	}
	if _, known := api.TableModel_name[int32(spec.GetModel())]; !known {
		return nil, fieldErr("table.model", "unknown model %q", spec.GetModel().String())
	}
	cols := spec.GetColumns()
	if len(cols) == 0 {
		return nil, fieldErr("table.columns", "a table needs at least one column")
	}
	s := &Schema{
		spec:  proto.Clone(spec).(*api.TableSpec),
		types: make([]api.ColumnType, len(cols)),
		meta:  make([]colMeta, len(cols)),
		index: make(map[string]int, len(cols)),
	}
	for i, c := range cols {
		if c == nil {
			return nil, fieldErr(fmt.Sprintf("table.columns[%d]", i), "missing")
		}
		if err := checkName(c.GetName()); err != nil {
			return nil, fieldErr(fmt.Sprintf("table.columns[%d].name", i), "%s", err)
		}
		if j, dup := s.index[c.GetName()]; dup {
			return nil, fieldErr(fmt.Sprintf("table.columns[%d].name", i), "duplicate column %q (also columns[%d])", c.GetName(), j)
		}
		switch t := c.GetType(); t {
		case api.ColumnType_COLUMN_TYPE_UNSPECIFIED:
			return nil, fieldErr(fmt.Sprintf("table.columns[%d].type", i), "type of column %q is unspecified", c.GetName())
		default:
			if _, known := api.ColumnType_name[int32(t)]; !known {
				return nil, fieldErr(fmt.Sprintf("table.columns[%d].type", i), "unknown type %q", t.String())
			}
			s.types[i] = t
			s.hasString = s.hasString || isText(t)
		}
		m, err := columnMeta(c, fmt.Sprintf("table.columns[%d]", i))
		if err != nil {
			return nil, err
		}
		s.meta[i] = m
		s.index[c.GetName()] = i
	}
	s.cols = s.spec.GetColumns()
	s.stored = s.cols
	if err := s.compileHidden(); err != nil {
		return nil, err
	}
	if err := s.compileModel(); err != nil {
		return nil, err
	}
	if spec.GetSkipBitmapColumn() && spec.GetModel() != api.TableModel_UNIQUE {
		return nil, fieldErr("table.skip_bitmap_column", "needs a UNIQUE table (%s is %s), as Doris's enable_unique_key_skip_bitmap_column", spec.GetName(), spec.GetModel())
	}
	parts, err := s.compilePartitions()
	if err != nil {
		return nil, err
	}
	s.parts = parts
	return s, nil
}

// columnMeta validates the options of c (length, precision, scale,
// not_null, default_value) for its type and parses its default.
func columnMeta(c *api.Column, path string) (colMeta, error) {
	m := colMeta{notNull: c.GetNotNull(), length: int(c.GetLength()), precision: int(c.GetPrecision()), scale: int(c.GetScale())}
	t := c.GetType()
	switch t {
	case api.ColumnType_CHAR, api.ColumnType_VARCHAR:
		limit := MaxVarcharLength
		if t == api.ColumnType_CHAR {
			limit = MaxCharLength
		}
		if m.length < 1 || m.length > limit {
			return m, fieldErr(path+".length", "%s length %d: want 1..%d bytes", t, m.length, limit)
		}
	case api.ColumnType_DECIMAL:
		if m.precision < 1 || m.precision > MaxDecimalPrecision {
			return m, fieldErr(path+".precision", "DECIMAL precision %d: want 1..%d", m.precision, MaxDecimalPrecision)
		}
		if m.scale < 0 || m.scale > m.precision {
			return m, fieldErr(path+".scale", "DECIMAL(%d,%d): want a scale of 0..%d", m.precision, m.scale, m.precision)
		}
	case api.ColumnType_DATETIME:
		if m.precision < 0 || m.precision > MaxDatetimePrecision {
			return m, fieldErr(path+".precision", "DATETIME precision %d: want 0..%d", m.precision, MaxDatetimePrecision)
		}
	}
	if t != api.ColumnType_CHAR && t != api.ColumnType_VARCHAR && m.length != 0 {
		return m, fieldErr(path+".length", "only CHAR and VARCHAR have a length")
	}
	if t != api.ColumnType_DECIMAL && t != api.ColumnType_DATETIME && m.precision != 0 {
		return m, fieldErr(path+".precision", "only DECIMAL and DATETIME have a precision")
	}
	if t != api.ColumnType_DECIMAL && m.scale != 0 {
		return m, fieldErr(path+".scale", "only DECIMAL has a scale")
	}
	if c.GetTextInJobZone() {
		if t != api.ColumnType_TIMESTAMP {
			return m, fieldErr(path+".text_in_job_zone", "only a TIMESTAMP column reads its text in the job's zone")
		}
		m.jobZone = true
	}
	if c.GetDefaultCurrentTimestamp() {
		if t != api.ColumnType_DATETIME {
			return m, fieldErr(path+".default_current_timestamp", "a %s column cannot default to the load time (only DATETIME can, as in Doris)", typeName(t))
		}
		if c.DefaultValue != nil {
			return m, fieldErr(path+".default_current_timestamp", "a column has one default: default_value or default_current_timestamp")
		}
		p := int(c.GetDefaultCurrentTimestampPrecision())
		if p < 0 || p > m.precision {
			return m, fieldErr(path+".default_current_timestamp_precision", "CURRENT_TIMESTAMP(%d): want 0..%d, the column's precision", p, m.precision)
		}
		m.defNow, m.nowPrec = true, p
	} else if c.GetDefaultCurrentTimestampPrecision() != 0 {
		return m, fieldErr(path+".default_current_timestamp_precision", "only with default_current_timestamp")
	}
	if c.DefaultValue != nil {
		v, reason := convertText(t, m, []byte(c.GetDefaultValue()))
		if reason != "" {
			return m, fieldErr(path+".default", "%s", reason)
		}
		v.Str = strings.Clone(v.Str)
		m.hasDef, m.def = true, v
	}
	return m, nil
}

// checkName enforces ^[A-Za-z_][A-Za-z0-9_]{0,127}$.
func checkName(n string) error {
	if n == "" {
		return errors.New("empty name")
	}
	if len(n) > maxNameLen {
		return fmt.Errorf("name of %d bytes is longer than %d", len(n), maxNameLen)
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')
		if !ok {
			return fmt.Errorf("invalid name %q: want letters, digits and _, not starting with a digit", n)
		}
	}
	return nil
}

// Spec returns the validated spec. Callers must not modify it.
func (s *Schema) Spec() *api.TableSpec { return s.spec }

// Columns returns the columns in order. Callers must not modify them.
func (s *Schema) Columns() []*api.Column { return s.cols }

// Name is the table name.
func (s *Schema) Name() string { return s.spec.GetName() }

// Model is the table model.
func (s *Schema) Model() api.TableModel { return s.spec.GetModel() }

// NumColumns is len(Columns()).
func (s *Schema) NumColumns() int { return len(s.cols) }

// Width is the number of values a stored row holds: NumColumns, and one
// more for a table with a hidden sequence (its value, last). A parsed
// row, a merged row and an encoded row (AppendValue) have Width values.
func (s *Schema) Width() int { return len(s.types) }

// StoredColumns are the columns a sink stores: Columns, and for a table
// with a hidden sequence a last column HiddenSequenceStored of its type,
// which only a sink sees (a PostgreSQL table has it; loadnode's readers
// leave it out). Callers must not modify them.
func (s *Schema) StoredColumns() []*api.Column { return s.stored }

// colName names value i of a row: a column, or the hidden sequence.
func (s *Schema) colName(i int) string {
	if i >= len(s.cols) {
		return HiddenSequenceColumn
	}
	return s.cols[i].GetName()
}

// ColumnIndex returns the position of the named column.
func (s *Schema) ColumnIndex(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// Compare reports nil if existing and spec describe the same table (name,
// model, partitions, columns in order with their types), else a *MismatchError naming the
// first difference. Columns are numbered from 1 in the message.
func Compare(existing, spec *api.TableSpec) error {
	name := existing.GetName()
	mismatch := func(field, format string, args ...any) error {
		return &MismatchError{Table: name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if existing.GetName() != spec.GetName() {
		return mismatch("table.name", "spec names table %q", spec.GetName())
	}
	if existing.GetDatabase() != spec.GetDatabase() {
		return mismatch("table.database", "is in database %q, spec says %q", existing.GetDatabase(), spec.GetDatabase())
	}
	if existing.GetModel() != spec.GetModel() {
		return mismatch("table.model", "model is %s, spec says %s", existing.GetModel(), spec.GetModel())
	}
	if !slices.Equal(existing.GetKeyColumns(), spec.GetKeyColumns()) {
		return mismatch("table.keys", "key columns are %v, spec says %v", existing.GetKeyColumns(), spec.GetKeyColumns())
	}
	if existing.GetSequenceColumn() != spec.GetSequenceColumn() {
		return mismatch("table.sequence_column", "sequence column is %q, spec says %q", existing.GetSequenceColumn(), spec.GetSequenceColumn())
	}
	if existing.GetHiddenSequenceType() != spec.GetHiddenSequenceType() {
		return mismatch("table.sequence_type", "hidden sequence type is %s, spec says %s", hiddenTypeName(existing.GetHiddenSequenceType()), hiddenTypeName(spec.GetHiddenSequenceType()))
	}
	if !proto.Equal(existing.GetPartitioning(), spec.GetPartitioning()) {
		return mismatch("table.partitioning", "partitions (PARTITION BY) differ from the spec's")
	}
	ec, sc := existing.GetColumns(), spec.GetColumns()
	for i := 0; i < len(ec) || i < len(sc); i++ {
		field := fmt.Sprintf("table.columns[%d]", i)
		switch {
		case i >= len(sc):
			return mismatch(field, "column %d is %s %s, spec has only %d columns", i+1, ec[i].GetName(), ec[i].GetType(), len(sc))
		case i >= len(ec):
			return mismatch(field, "table has %d columns, spec adds column %d %s %s", len(ec), i+1, sc[i].GetName(), sc[i].GetType())
		case ec[i].GetName() != sc[i].GetName() || ec[i].GetType() != sc[i].GetType():
			return mismatch(field, "column %d is %s %s, spec says %s %s", i+1, ec[i].GetName(), ec[i].GetType(), sc[i].GetName(), sc[i].GetType())
		case !proto.Equal(ec[i], sc[i]):
			return mismatch(field, "column %d %s differs in its options (length, precision, scale, NOT NULL, DEFAULT or aggregation)", i+1, ec[i].GetName())
		}
	}
	return nil
}

// typeHelp lists the type names ParseType knows.
const typeHelp = "int64, float64, string, bool, timestamp, or a Doris type: tinyint, smallint, int, bigint, largeint, float, double, decimal(p,s), date, datetime(p), char(n), varchar(n), text, boolean, json"

// ParseType parses a column type as written in a job spec or a Doris DDL,
// case-insensitively, with its parameters: int64, float64, string, bool,
// timestamp (loadnode's names), and the Doris types TINYINT, SMALLINT, INT
// (INTEGER), BIGINT, LARGEINT, FLOAT, DOUBLE, DECIMAL[(p[,s])] (DECIMALV2,
// DECIMALV3; default (9,0) as Doris, p up to 38), DATE (DATEV2),
// DATETIME[(p)] (DATETIMEV2; wall clock, p fraction digits, default 0),
// CHAR[(n)] (default 1), VARCHAR[(n)] (default 65533; n in bytes), STRING,
// TEXT, BOOLEAN, JSON (JSONB). An integer type's display width (INT(11))
// is accepted and means nothing. It returns a Column with Type, Length,
// Precision and Scale set. Errors start with "table: ".
func ParseType(s string) (*api.Column, error) {
	name := strings.TrimSpace(s)
	var args []int
	if i := strings.IndexByte(name, '('); i >= 0 {
		if !strings.HasSuffix(name, ")") {
			return nil, fmt.Errorf("table: column type %q: unclosed (", s)
		}
		for _, a := range strings.Split(name[i+1:len(name)-1], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(a))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("table: column type %q: parameters must be numbers", s)
			}
			args = append(args, n)
		}
		name = strings.TrimSpace(name[:i])
	}
	return TypeOf(name, args)
}

// TypeOf is ParseType for a type name and its parameters, parsed already.
func TypeOf(name string, args []int) (*api.Column, error) {
	c := &api.Column{}
	maxArgs := 0
	switch strings.ToLower(name) {
	case "int64", "bigint":
		c.Type, maxArgs = api.ColumnType_INT64, 1
	case "float64", "double":
		c.Type = api.ColumnType_FLOAT64
	case "string", "text":
		c.Type = api.ColumnType_STRING
	case "bool", "boolean":
		c.Type = api.ColumnType_BOOL
	case "timestamp":
		c.Type = api.ColumnType_TIMESTAMP
	case "tinyint", "int8":
		c.Type, maxArgs = api.ColumnType_INT8, 1
	case "smallint", "int16":
		c.Type, maxArgs = api.ColumnType_INT16, 1
	case "int", "integer", "int32":
		c.Type, maxArgs = api.ColumnType_INT32, 1
	case "largeint", "int128":
		c.Type, maxArgs = api.ColumnType_INT128, 1
	case "float", "float32":
		c.Type = api.ColumnType_FLOAT32
	case "decimal", "decimalv2", "decimalv3":
		c.Type, maxArgs = api.ColumnType_DECIMAL, 2
		c.Precision = 9
		if len(args) > 0 {
			c.Precision = int32(args[0])
		}
		if len(args) > 1 {
			c.Scale = int32(args[1])
		}
	case "date", "datev2":
		c.Type = api.ColumnType_DATE
	case "datetime", "datetimev2":
		c.Type, maxArgs = api.ColumnType_DATETIME, 1
		if len(args) > 0 {
			c.Precision = int32(args[0])
		}
	case "char":
		c.Type, maxArgs, c.Length = api.ColumnType_CHAR, 1, 1
		if len(args) > 0 {
			c.Length = int32(args[0])
		}
	case "varchar":
		c.Type, maxArgs, c.Length = api.ColumnType_VARCHAR, 1, MaxVarcharLength
		if len(args) > 0 {
			c.Length = int32(args[0])
		}
	case "json", "jsonb":
		c.Type = api.ColumnType_JSON
	default:
		return nil, fmt.Errorf("table: unknown column type %q (want %s)", name, typeHelp)
	}
	if len(args) > maxArgs {
		if maxArgs == 0 {
			return nil, fmt.Errorf("table: column type %s takes no parameters", name)
		}
		return nil, fmt.Errorf("table: column type %s takes at most %s", name, plural(maxArgs, "parameter"))
	}
	if _, err := columnMeta(c, "type"); err != nil {
		return nil, fmt.Errorf("table: column type %s: %s", strings.ToUpper(name), err.(*FieldError).Msg)
	}
	return c, nil
}

// TypeString is the canonical spelling of a column's type, which ParseType
// reads back: int64, decimal(9,2), varchar(20), datetime(3), ...
func TypeString(c *api.Column) string {
	switch t := c.GetType(); t {
	case api.ColumnType_INT64, api.ColumnType_FLOAT64, api.ColumnType_STRING, api.ColumnType_BOOL, api.ColumnType_TIMESTAMP:
		return strings.ToLower(t.String())
	case api.ColumnType_DECIMAL:
		return fmt.Sprintf("decimal(%d,%d)", c.GetPrecision(), c.GetScale())
	case api.ColumnType_DATETIME:
		if c.GetPrecision() == 0 {
			return "datetime"
		}
		return fmt.Sprintf("datetime(%d)", c.GetPrecision())
	case api.ColumnType_CHAR:
		return fmt.Sprintf("char(%d)", c.GetLength())
	case api.ColumnType_VARCHAR:
		return fmt.Sprintf("varchar(%d)", c.GetLength())
	default:
		return strings.ToLower(typeName(t))
	}
}

// SpecField names the spec field at fault ("table.columns[1].type").
func (e *FieldError) SpecField() string { return e.Field }

// DorisTypeName is the type of c as Doris's DESC and SHOW CREATE TABLE
// name it (BIGINT for int64, DOUBLE for float64, ...; the others as
// TypeString writes them, in upper case).
func DorisTypeName(c *api.Column) string {
	switch c.GetType() {
	case api.ColumnType_INT64:
		return "BIGINT"
	case api.ColumnType_INT32:
		return "INT"
	case api.ColumnType_INT16:
		return "SMALLINT"
	case api.ColumnType_INT8:
		return "TINYINT"
	case api.ColumnType_INT128:
		return "LARGEINT"
	case api.ColumnType_FLOAT64:
		return "DOUBLE"
	case api.ColumnType_FLOAT32:
		return "FLOAT"
	case api.ColumnType_BOOL:
		return "BOOLEAN"
	}
	return strings.ToUpper(TypeString(c))
}
