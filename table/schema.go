package table

import (
	"errors"
	"fmt"
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
	index map[string]int
	// hasString reports whether any column is STRING (parsers then keep a
	// string copy of each record to slice values from).
	hasString bool
}

// NewSchema validates spec and returns its Schema. The spec is cloned, so the
// caller may keep changing its own copy. Errors are *FieldError.
func NewSchema(spec *api.TableSpec) (*Schema, error) {
	if spec == nil {
		return nil, fieldErr("table", "missing")
	}
	if err := checkName(spec.GetName()); err != nil {
		return nil, fieldErr("table.name", "%s", err)
	}
	if m := spec.GetModel(); m != api.TableModel_DUPLICATE {
		return nil, fieldErr("table.model", "unknown model %q", m.String())
	}
	cols := spec.GetColumns()
	if len(cols) == 0 {
		return nil, fieldErr("table.columns", "a table needs at least one column")
	}
	s := &Schema{
		spec:  proto.Clone(spec).(*api.TableSpec),
		types: make([]api.ColumnType, len(cols)),
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
		case api.ColumnType_INT64, api.ColumnType_FLOAT64, api.ColumnType_STRING, api.ColumnType_BOOL, api.ColumnType_TIMESTAMP:
			s.types[i] = t
			s.hasString = s.hasString || t == api.ColumnType_STRING
		case api.ColumnType_COLUMN_TYPE_UNSPECIFIED:
			return nil, fieldErr(fmt.Sprintf("table.columns[%d].type", i), "type of column %q is unspecified", c.GetName())
		default:
			return nil, fieldErr(fmt.Sprintf("table.columns[%d].type", i), "unknown type %q", t.String())
		}
		s.index[c.GetName()] = i
	}
	s.cols = s.spec.GetColumns()
	return s, nil
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

// ColumnIndex returns the position of the named column.
func (s *Schema) ColumnIndex(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// Compare reports nil if existing and spec describe the same table (name,
// model, columns in order with their types), else a *MismatchError naming the
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
		}
	}
	return nil
}

// ParseColumnType parses a type name, case-insensitively: int64, float64,
// string, bool, timestamp, and the aliases bigint, int, double, float,
// varchar, text, boolean, datetime.
func ParseColumnType(s string) (api.ColumnType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "int64", "bigint", "int":
		return api.ColumnType_INT64, nil
	case "float64", "double", "float":
		return api.ColumnType_FLOAT64, nil
	case "string", "varchar", "text":
		return api.ColumnType_STRING, nil
	case "bool", "boolean":
		return api.ColumnType_BOOL, nil
	case "timestamp", "datetime":
		return api.ColumnType_TIMESTAMP, nil
	}
	return api.ColumnType_COLUMN_TYPE_UNSPECIFIED, fmt.Errorf("table: unknown column type %q (want int64, float64, string, bool or timestamp)", s)
}

// SpecField names the spec field at fault ("table.columns[1].type").
func (e *FieldError) SpecField() string { return e.Field }
