package config

import (
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// TestModelSpec: SPEC.md's UNIQUE example parses, validates, compiles, and
// prints back the same; an AGGREGATE spec keeps its aggregations.
func TestModelSpec(t *testing.T) {
	src := `name: users_load
table:
  name: users
  model: unique
  keys: [id]
  sequence_column: updated_at
  columns:
    - {name: id, type: bigint}
    - {name: name, type: varchar(64)}
    - {name: deleted, type: tinyint}
    - {name: updated_at, type: datetime(3)}
merge_type: MERGE
delete_on: "deleted = 1"
format: json
kafka: {brokers: "k1:9092", topic: users}
`
	s, err := ParseJobSpec([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ApplyDefaults(s)
	if err := ValidateJobSpec(s); err != nil {
		t.Fatal(err)
	}
	sc, err := table.NewSchema(s.GetTable())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.NewParser(sc, table.FormatOf(s)); err != nil {
		t.Fatal(err)
	}
	if sc.SequenceColumn() != 3 || len(sc.KeyColumns()) != 1 || s.GetMergeType() != api.MergeType_MERGE {
		t.Errorf("spec = %v", s)
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	ApplyDefaults(back)
	if back.String() != s.String() {
		t.Errorf("round trip:\n%s\n%v\nwant %v", out, back, s)
	}

	agg := strings.NewReplacer("model: unique", "model: aggregate", "  sequence_column: updated_at\n", "",
		"{name: name, type: varchar(64)}", "{name: name, type: varchar(64), aggregation: replace_if_not_null}",
		"{name: deleted, type: tinyint}", "{name: deleted, type: bigint, aggregation: SUM}",
		"{name: updated_at, type: datetime(3)}", "{name: updated_at, type: datetime(3), aggregation: max}",
		"merge_type: MERGE\n", "", "delete_on: \"deleted = 1\"\n", "").Replace(src)
	s, err = ParseJobSpec([]byte(agg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.NewSchema(s.GetTable()); err != nil {
		t.Fatal(err)
	}
	if a := s.GetTable().GetColumns()[2].GetAggregation(); a != api.Aggregation_SUM {
		t.Errorf("aggregation = %v", a)
	}
	bad := strings.Replace(agg, "aggregation: SUM", "aggregation: AVG", 1)
	if _, err := ParseJobSpec([]byte(bad)); err == nil || !strings.Contains(err.Error(), "SUM, MIN, MAX, REPLACE or REPLACE_IF_NOT_NULL") {
		t.Errorf("aggregation AVG: %v", err)
	}
}

// TestDefaultCurrentTimestampSpec: a column defaulting to the load time
// (default_current_timestamp, with its precision) parses and prints back the
// same.
func TestDefaultCurrentTimestampSpec(t *testing.T) {
	src := `name: j
table:
  name: t
  columns:
    - {name: id, type: int}
    - {name: d, type: datetime, default_current_timestamp: true}
    - {name: d3, type: datetime(3), default_current_timestamp: true, default_current_timestamp_precision: 3}
    - {name: t, type: timestamp, text_in_job_zone: true}
format: json
kafka: {brokers: "k1:9092", topic: t}
`
	s, err := ParseJobSpec([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	cols := s.GetTable().GetColumns()
	if !cols[1].GetDefaultCurrentTimestamp() || cols[1].GetDefaultCurrentTimestampPrecision() != 0 ||
		!cols[2].GetDefaultCurrentTimestamp() || cols[2].GetDefaultCurrentTimestampPrecision() != 3 || !cols[3].GetTextInJobZone() {
		t.Fatalf("columns = %v", cols)
	}
	ApplyDefaults(s)
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	ApplyDefaults(back)
	if back.String() != s.String() {
		t.Errorf("round trip:\n%s\n%v\nwant %v", out, back, s)
	}
	if _, err := ParseJobSpec([]byte(strings.Replace(src, "default_current_timestamp: true}", "default_current_timestamp: yes please}", 1))); err == nil {
		t.Error("default_current_timestamp: yes please was accepted")
	}
}

// TestHiddenSequenceSpec: table.sequence_type (Doris
// function_column.sequence_type) parses, validates and prints back; the
// job's sequence_column names a field of its columns_mapping.
func TestHiddenSequenceSpec(t *testing.T) {
	src := `name: seq_load
table:
  name: t
  model: unique
  keys: [k1, k2]
  sequence_type: int
  columns:
    - {name: k1, type: int}
    - {name: k2, type: tinyint}
    - {name: v1, type: varchar(1024)}
columns_mapping: [k1, k2, v1, del, seq]
sequence_column: seq
merge_type: MERGE
delete_on: "del = 1"
kafka: {brokers: "k1:9092", topic: t}
`
	s, err := ParseJobSpec([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ApplyDefaults(s)
	if err := ValidateJobSpec(s); err != nil {
		t.Fatal(err)
	}
	if s.GetTable().GetHiddenSequenceType() != api.ColumnType_INT32 {
		t.Fatalf("hidden sequence type = %v, want INT32", s.GetTable().GetHiddenSequenceType())
	}
	sc, err := table.NewSchema(s.GetTable())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.UpdateOf(sc, s); err != nil {
		t.Fatal(err)
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	ApplyDefaults(back)
	if back.String() != s.String() {
		t.Errorf("round trip:\n%s\n%v\nwant %v", out, back, s)
	}
	if _, err := ParseJobSpec([]byte(strings.Replace(src, "sequence_type: int", "sequence_type: intx", 1))); err == nil || !strings.Contains(err.Error(), "table.sequence_type") {
		t.Errorf("sequence_type intx: %v, want an error naming table.sequence_type", err)
	}
}
