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
DELETE ON del=1
PROPERTIES ("format" = "json", "jsonpaths" = '["$.id", "$.city"]', "timezone" = "+8:00")
FROM KAFKA ("kafka_broker_list" = "127.0.0.1:9", "kafka_topic" = "corpus_1", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	// A routine load's suite writes its clauses in upper case and FROM
	// KAFKA's properties beside the others; with no time zone the job gets
	// the one the suites ran in.
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
		{"one_per_line", map[string]string{"skip_lines": "2"}, []string{"h1", "h2", "a,1", "b,2"}}, // a property, not the harness's
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
