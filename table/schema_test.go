package table

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

func col(name string, t api.ColumnType) *api.Column { return &api.Column{Name: name, Type: t} }

func spec(name string, cols ...*api.Column) *api.TableSpec {
	return &api.TableSpec{Name: name, Columns: cols}
}

// testSchema is a six-column table of every type.
func testSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := NewSchema(spec("orders",
		col("id", api.ColumnType_INT64),
		col("amount", api.ColumnType_FLOAT64),
		col("name", api.ColumnType_STRING),
		col("ok", api.ColumnType_BOOL),
		col("ts", api.ColumnType_TIMESTAMP),
		col("note", api.ColumnType_STRING),
	))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSchemaErrors(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name      string
		spec      *api.TableSpec
		field     string
		msgSubstr string
	}{
		{"nil", nil, "table", "missing"},
		{"empty name", spec("", col("a", api.ColumnType_INT64)), "table.name", "empty"},
		{"bad name", spec("1abc", col("a", api.ColumnType_INT64)), "table.name", "invalid name"},
		{"name with dash", spec("a-b", col("a", api.ColumnType_INT64)), "table.name", "invalid name"},
		{"long name", spec(long, col("a", api.ColumnType_INT64)), "table.name", "longer than 128"},
		{"no columns", spec("t"), "table.columns", "at least one column"},
		{"nil column", spec("t", col("a", api.ColumnType_INT64), nil), "table.columns[1]", "missing"},
		{"bad column name", spec("t", col("a", api.ColumnType_INT64), col("b c", api.ColumnType_INT64)), "table.columns[1].name", "invalid name"},
		{"dup column", spec("t", col("a", api.ColumnType_INT64), col("a", api.ColumnType_STRING)), "table.columns[1].name", `duplicate column "a"`},
		{"unspecified type", spec("t", col("a", api.ColumnType_INT64), col("b", api.ColumnType_INT64), col("c", 0)), "table.columns[2].type", "unspecified"},
		{"unknown type", spec("t", col("a", api.ColumnType_INT64), col("b", api.ColumnType_INT64), col("c", 99)), "table.columns[2].type", `unknown type "99"`},
		{"unknown model", &api.TableSpec{Name: "t", Columns: []*api.Column{col("a", api.ColumnType_INT64)}, Model: 7}, "table.model", "unknown model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSchema(tt.spec)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FieldError", err)
			}
			if fe.Field != tt.field {
				t.Errorf("field = %q, want %q", fe.Field, tt.field)
			}
			if !strings.Contains(err.Error(), tt.msgSubstr) || !strings.HasPrefix(err.Error(), "table: ") {
				t.Errorf("err = %q, want prefix \"table: \" and %q", err, tt.msgSubstr)
			}
		})
	}
	_, err := NewSchema(spec("t", col("a", api.ColumnType_INT64), col("b", api.ColumnType_INT64), col("c", 99)))
	if got, want := err.Error(), `table: columns[2].type: unknown type "99"`; got != want {
		t.Errorf("err = %q, want %q", got, want)
	}
}

func TestNewSchemaOK(t *testing.T) {
	in := spec("T_1", col("_a", api.ColumnType_INT64), col("b9", api.ColumnType_TIMESTAMP), col(strings.Repeat("z", 128), api.ColumnType_STRING))
	s, err := NewSchema(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Columns[0].Name = "changed" // the schema holds its own copy
	if s.Columns()[0].GetName() != "_a" || s.Spec().GetName() != "T_1" || s.NumColumns() != 3 || s.Name() != "T_1" || s.Model() != api.TableModel_DUPLICATE {
		t.Errorf("schema = %v", s.Spec())
	}
	if i, ok := s.ColumnIndex("b9"); !ok || i != 1 {
		t.Errorf("ColumnIndex(b9) = %d, %v", i, ok)
	}
	if _, ok := s.ColumnIndex("changed"); ok {
		t.Errorf("ColumnIndex(changed) found")
	}
}

func TestCompare(t *testing.T) {
	base := func() *api.TableSpec {
		return spec("orders", col("id", api.ColumnType_INT64), col("amount", api.ColumnType_FLOAT64))
	}
	tests := []struct {
		name  string
		spec  *api.TableSpec
		field string
		want  string // "" means equal
	}{
		{"same", base(), "", ""},
		{"other name", spec("order", col("id", api.ColumnType_INT64), col("amount", api.ColumnType_FLOAT64)), "table.name", `table orders: spec names table "order"`},
		{"type differs", spec("orders", col("id", api.ColumnType_INT64), col("amount", api.ColumnType_INT64)), "table.columns[1]", "table orders: column 2 is amount FLOAT64, spec says amount INT64"},
		{"name differs", spec("orders", col("ID", api.ColumnType_INT64), col("amount", api.ColumnType_FLOAT64)), "table.columns[0]", "table orders: column 1 is id INT64, spec says ID INT64"},
		{"order differs", spec("orders", col("amount", api.ColumnType_FLOAT64), col("id", api.ColumnType_INT64)), "table.columns[0]", "table orders: column 1 is id INT64, spec says amount FLOAT64"},
		{"fewer", spec("orders", col("id", api.ColumnType_INT64)), "table.columns[1]", "table orders: column 2 is amount FLOAT64, spec has only 1 columns"},
		{"more", spec("orders", col("id", api.ColumnType_INT64), col("amount", api.ColumnType_FLOAT64), col("x", api.ColumnType_STRING)), "table.columns[2]", "table orders: table has 2 columns, spec adds column 3 x STRING"},
		{"model", &api.TableSpec{Name: "orders", Columns: base().Columns, Model: 3}, "table.model", "table orders: model is DUPLICATE, spec says 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Compare(base(), tt.spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Compare = %v, want nil", err)
				}
				return
			}
			var me *MismatchError
			if !errors.As(err, &me) {
				t.Fatalf("Compare = %v, want *MismatchError", err)
			}
			if err.Error() != tt.want || me.Field != tt.field {
				t.Errorf("Compare = %q (field %q), want %q (field %q)", err, me.Field, tt.want, tt.field)
			}
		})
	}
}

// TestParseTypeNames: ParseType knows loadnode's and Doris's type names,
// case-insensitively, and its errors start with "table: ".
func TestParseTypeNames(t *testing.T) {
	tests := map[string]api.ColumnType{
		"int64": api.ColumnType_INT64, "BIGINT": api.ColumnType_INT64, "Int": api.ColumnType_INT32,
		"float64": api.ColumnType_FLOAT64, "double": api.ColumnType_FLOAT64, "FLOAT": api.ColumnType_FLOAT32,
		"string": api.ColumnType_STRING, "varchar": api.ColumnType_VARCHAR, "Text": api.ColumnType_STRING,
		"bool": api.ColumnType_BOOL, "boolean": api.ColumnType_BOOL,
		"timestamp": api.ColumnType_TIMESTAMP, "DateTime": api.ColumnType_DATETIME,
		"tinyint": api.ColumnType_INT8, "smallint": api.ColumnType_INT16, "largeint": api.ColumnType_INT128,
		"decimal": api.ColumnType_DECIMAL, "DATEV2": api.ColumnType_DATE, "char": api.ColumnType_CHAR, "jsonb": api.ColumnType_JSON,
	}
	for in, want := range tests {
		got, err := ParseType(in)
		if err != nil || got.GetType() != want {
			t.Errorf("ParseType(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "INT9", "column_type_unspecified", "decimal(39)", "varchar(0)", "char(256)", "datetime(7)", "int(1,2)", "decimal(5,6)"} {
		if _, err := ParseType(bad); err == nil || !strings.HasPrefix(err.Error(), "table: ") {
			t.Errorf("ParseType(%q) err = %v, want a table: error", bad, err)
		}
	}
}
