package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

const multiYAML = `name: events_load
tables: [orders, refunds]
format: csv
kafka:
  brokers: [127.0.0.1:9092]
  topic: events
`

// TestMultiTableSpec: tables: names the tables of a multi-table load
// (filled from the catalog at create); table becomes the first of them;
// the encoding round-trips; settings naming one table's columns, a
// table listed twice and tables of two databases are refused by name.
func TestMultiTableSpec(t *testing.T) {
	s, err := ParseJobSpec([]byte(multiYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.GetTables()) != 2 || s.GetTables()[1].GetName() != "refunds" || s.GetTable().GetName() != "orders" {
		t.Fatalf("tables %v, table %v", s.GetTables(), s.GetTable())
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "tables:") || strings.Contains(string(out), "\ntable:") {
		t.Fatalf("encoded:\n%s", out)
	}
	back, err := ParseJobSpec(out)
	if err != nil || len(back.GetTables()) != 2 {
		t.Fatalf("round trip: %v, %v", back.GetTables(), err)
	}

	full := func() *api.JobSpec {
		s, _ := ParseJobSpec([]byte(multiYAML))
		for _, tb := range s.Tables {
			tb.Columns = []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}
		}
		s.Table = nil
		ApplyDefaults(s)
		return s
	}
	if err := ValidateJobSpec(full()); err != nil {
		t.Fatalf("a valid multi-table spec: %v", err)
	}
	for _, tt := range []struct {
		name, field string
		edit        func(s *api.JobSpec)
	}{
		{"twice", "tables[1]", func(s *api.JobSpec) { s.Tables[1].Name = "orders" }},
		{"dash", "tables[1]", func(s *api.JobSpec) { s.Tables[1].Name = "x-y" }},
		{"two databases", "tables[1]", func(s *api.JobSpec) { s.Tables[1].Database = "analytics" }},
		{"unique table", "tables[0]", func(s *api.JobSpec) {
			s.Tables[0].Model, s.Tables[0].KeyColumns = api.TableModel_UNIQUE, []string{"id"}
			s.Table = s.Tables[0]
		}},
		{"where", "where", func(s *api.JobSpec) { s.Where = "id > 1" }},
		{"columns mapping", "columns_mapping", func(s *api.JobSpec) { s.ColumnsMapping = []string{"id"} }},
		{"table not the first", "table", func(s *api.JobSpec) { s.Table = s.Tables[1] }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := full()
			tt.edit(s)
			var fe *FieldError
			if err := ValidateJobSpec(s); !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("ValidateJobSpec = %v, want a FieldError naming %s", err, tt.field)
			}
		})
	}
}
