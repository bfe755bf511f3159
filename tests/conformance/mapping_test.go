package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A stream load's headers become a routine load's clauses and PROPERTIES;
// the ones about the file or the session do not reach the statement.
func TestLoadStatement(t *testing.T) {
	c := &loadCase{Properties: map[string]string{
		"format": "json", "jsonpaths": `["$.id", "$.city"]`, "columns": "id, city, code = id * 10",
		"column_separator": `\x01`, "where": "id > 1", "time_zone": "+8:00", "read_json_by_line": "true",
		"memtable_on_sink_node": "true", "merge_type": "merge", "delete": "del=1", "partitions": "p1, p2",
		"function_column.sequence_col": "seq",
	}}
	got, err := loadStatement(c, "j", "t_c1", "127.0.0.1:9", "corpus_1", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := `CREATE ROUTINE LOAD j ON t_c1 WITH MERGE
COLUMNS TERMINATED BY "\x01",
COLUMNS(id, city, code = id * 10),
WHERE id > 1,
PARTITION(p1, p2),
DELETE ON del=1,
ORDER BY seq
PROPERTIES ("format" = "json", "jsonpaths" = '["$.id", "$.city"]', "timezone" = "+8:00")
FROM KAFKA ("kafka_broker_list" = "127.0.0.1:9", "kafka_topic" = "corpus_1", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A routine load's suite writes its clauses in upper case and FROM
	// KAFKA's properties beside the others; with no time zone the job gets
	// the one the suites ran in.
	// A header's value is its text; as a SQL literal its backslashes are
	// doubled (test_json_load__select28's escaped quotes).
	c = &loadCase{Properties: map[string]string{"format": "json", "jsonpaths": `["$.tags.\"a.b\"","$.k2"]`}}
	got, _ = loadStatement(c, "j", "t", "b:1", "tp", 1)
	if want := `PROPERTIES ("format" = "json", "jsonpaths" = '["$.tags.\\"a.b\\"","$.k2"]', "timezone" = "Asia/Shanghai")`; !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant it to hold\n%s", got, want)
	}

	c = &loadCase{Properties: map[string]string{
		"COLUMNS TERMINATED BY": ",", "COLUMNS": "id, name", "WHERE": "id > 1", "escape": `\`,
		"property.kafka_default_offsets": "OFFSET_BEGINNING", "property.group.id": "g",
	}}
	got, _ = loadStatement(c, "j", "t", "b:1", "tp", 3)
	want = `CREATE ROUTINE LOAD j ON t
COLUMNS TERMINATED BY ",",
COLUMNS(id, name),
WHERE id > 1
PROPERTIES ("escape" = "\\", "timezone" = "Asia/Shanghai")
FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "tp", "property.kafka_default_offsets" = "OFFSET_BEGINNING", "property.group.id" = "g")`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A stream load is one transaction: the routine load reads all its
// records in one batch, of which at most max_filter_ratio (0 unless the
// case gives one) may be filtered, with no count of error rows.
func TestLoadStatementStreamLoad(t *testing.T) {
	c := &loadCase{Kind: "stream_load", Properties: map[string]string{"format": "json", "max_filter_ratio": "0.2"}}
	got, err := loadStatement(c, "j", "t", "b:1", "tp", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := `CREATE ROUTINE LOAD j ON t
PROPERTIES ("format" = "json", "max_batch_interval" = "60", "max_batch_rows" = "10", "max_error_number" = "9223372036854775807", "max_filter_ratio" = "0.2", "timezone" = "Asia/Shanghai")
FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "tp", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	c.Properties = nil
	if got, _ := loadStatement(c, "j", "t", "b:1", "tp", 0); !strings.Contains(got, `"max_batch_rows" = "1"`) || !strings.Contains(got, `"max_filter_ratio" = "0"`) {
		t.Errorf("no records, no ratio: %s", got)
	}
}

func TestCaseRecords(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("data.csv", "h1\nh2\na,1\r\n\nb,2\n")
	for _, tc := range []struct {
		records string
		props   map[string]string
		want    []string
	}{
		{"one_per_line", nil, []string{"h1", "h2", "a,1", "b,2"}},
		// skip_lines and the header formats skip lines at the start of
		// the stream load's file: the file is one record, whose lines
		// loadnode reads as rows, skipping the first.
		{"one_per_line", map[string]string{"skip_lines": "2"}, []string{"h1\nh2\na,1\r\n\nb,2\n"}},
		{"one_per_line", map[string]string{"format": "CSV_with_names"}, []string{"h1\nh2\na,1\r\n\nb,2\n"}},
		{"one_per_line", map[string]string{"format": "json", "skip_lines": "2"}, []string{"h1", "h2", "a,1", "b,2"}},
		{"whole_file", nil, []string{"h1\nh2\na,1\r\n\nb,2\n"}},
		{"whole_file", map[string]string{"line_delimiter": "h"}, []string{"", "1\n", "2\na,1\r\n\nb,2"}},
	} {
		got, err := caseRecords(&loadCase{dir: dir, Records: tc.records, Properties: tc.props})
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: %q, %v; want %q", tc.records, tc.props, got, err, tc.want)
		}
	}
	write("data.2.csv", "two\n")
	write("data.10.csv", "ten\n")
	got, _ := caseRecords(&loadCase{dir: dir, Records: "whole_file"})
	if len(got) != 3 || got[1] != "two\n" || got[2] != "ten\n" {
		t.Errorf("data files in order: %q", got)
	}
}

// A case whose later files load with other properties (laterLoads) runs
// one load per change.
func TestCaseLoads(t *testing.T) {
	dir := t.TempDir()
	for name, s := range map[string]string{"data.1.csv": "a|1\n", "data.2.csv": "b;2\nc;3\n", "data.3.csv": "d;4\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	laterLoads["test_case_loads"] = map[int]map[string]string{2: {"column_separator": ";"}}
	defer delete(laterLoads, "test_case_loads")
	c := &loadCase{name: "test_case_loads", dir: dir, Records: "one_per_line", Properties: map[string]string{"column_separator": "|", "format": "csv"}}
	loads, err := caseLoads(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(loads) != 2 || !slices.Equal(loads[0].records, []string{"a|1"}) || !slices.Equal(loads[1].records, []string{"b;2", "c;3", "d;4"}) ||
		loads[0].props["column_separator"] != "|" || loads[1].props["column_separator"] != ";" || loads[1].props["format"] != "csv" {
		t.Errorf("loads %+v", loads)
	}
	if c.Properties["column_separator"] != "|" {
		t.Errorf("the case's properties changed: %v", c.Properties)
	}
}
