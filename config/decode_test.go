package config

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// ordersSpec is testdata/orders.yaml as a wire spec.
func ordersSpec() *api.JobSpec {
	return &api.JobSpec{
		Name: "orders_load",
		Table: &api.TableSpec{Name: "orders", Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "amount", Type: api.ColumnType_FLOAT64},
			{Name: "note", Type: api.ColumnType_STRING},
			{Name: "paid", Type: api.ColumnType_BOOL},
			{Name: "at", Type: api.ColumnType_TIMESTAMP},
		}},
		Format:                  "json",
		Jsonpaths:               []string{"$.id", "$.amount", "$.note", "$.paid", "$.at"},
		DesiredConcurrentNumber: 3,
		MaxBatchIntervalMs:      10_000,
		MaxBatchRows:            200_000,
		MaxBatchSize:            104857600,
		MaxErrorNumber:          0,
		Kafka: &api.KafkaSpec{
			Brokers:       []string{"127.0.0.1:9092"},
			Topic:         "orders",
			Partitions:    []int32{0, 1, 2},
			Offsets:       map[int32]string{0: "OFFSET_BEGINNING", 1: "OFFSET_END", 2: "1000"},
			DefaultOffset: "OFFSET_END",
			Properties:    map[string]string{"security.protocol": "SASL_SSL"},
		},
	}
}

func TestParseJobSpecExample(t *testing.T) {
	data, err := os.ReadFile("testdata/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseJobSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := ordersSpec(); !proto.Equal(s, want) {
		t.Fatalf("got  %v\nwant %v", s, want)
	}
	assertRoundTrip(t, s)
}

// minimal is the smallest valid spec; tests append or replace lines.
const minimal = `name: j
table:
  name: t
  columns:
    - {name: a, type: int64}
    - {name: b, type: string}
kafka:
  brokers: [h1:9092]
  topic: tp
`

func TestParseJobSpecDefaults(t *testing.T) {
	s, err := ParseJobSpec([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	want := &api.JobSpec{
		Name: "j",
		Table: &api.TableSpec{Name: "t", Columns: []*api.Column{
			{Name: "a", Type: api.ColumnType_INT64}, {Name: "b", Type: api.ColumnType_STRING}}},
		Format:                  "csv",
		ColumnSeparator:         ",",
		DesiredConcurrentNumber: 3,
		MaxBatchIntervalMs:      10_000,
		MaxBatchRows:            200_000,
		MaxBatchSize:            100 << 20,
		Kafka:                   &api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", DefaultOffset: "OFFSET_END"},
	}
	if !proto.Equal(s, want) {
		t.Fatalf("got  %v\nwant %v", s, want)
	}
	assertRoundTrip(t, s)
}

// TestParseJobSpecForms checks the alternative spellings of fields.
func TestParseJobSpecForms(t *testing.T) {
	cases := []struct {
		name  string
		extra string // top-level lines appended to minimal
		check func(t *testing.T, s *api.JobSpec)
	}{
		{"interval duration", "max_batch_interval: 1m30s\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchIntervalMs, int64(90_000)) }},
		{"interval ms", "max_batch_interval: 250ms\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchIntervalMs, int64(250)) }},
		{"interval int seconds", "max_batch_interval: 10\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchIntervalMs, int64(10_000)) }},
		{"interval string seconds", "max_batch_interval: \"20\"\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchIntervalMs, int64(20_000)) }},
		{"size int", "max_batch_size: 2048\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(2048)) }},
		{"size MiB", "max_batch_size: 64MiB\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(64<<20)) }},
		{"size MB", "max_batch_size: 100MB\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(100_000_000)) }},
		{"size GiB", "max_batch_size: 1GiB\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(1<<30)) }},
		{"size lower spaced", "max_batch_size: 2 kib\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(2048)) }},
		{"size string bytes", "max_batch_size: \"4096\"\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.MaxBatchSize, int64(4096)) }},
		{"quoted ints (Doris strings)", "desired_concurrent_number: \"5\"\nmax_batch_rows: \"10\"\nmax_error_number: \"7\"\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, s.DesiredConcurrentNumber, int32(5))
			eq(t, s.MaxBatchRows, int64(10))
			eq(t, s.MaxErrorNumber, int64(7))
		}},
		{"format upper", "format: JSON\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, s.Format, "json")
			eq(t, strings.Join(s.Jsonpaths, ","), "$.a,$.b")
		}},
		{"jsonpaths JSON string", "format: json\njsonpaths: '[\"$.x\", \"$.y\"]'\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, strings.Join(s.Jsonpaths, ","), "$.x,$.y")
		}},
		{"tab separator", "column_separator: \"\\t\"\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.ColumnSeparator, "\t") }},
		{"hex separator", "column_separator: \"\\x01\"\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.ColumnSeparator, "\x01") }},
		{"trim_double_quotes and skip_lines", "trim_double_quotes: true\nskip_lines: 2\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, s.TrimDoubleQuotes, true)
			eq(t, s.SkipLines, int32(2))
		}},
		{"num_as_string", "format: json\nnum_as_string: \"true\"\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.NumAsString, true) }},
		{"csv_with_names", "format: CSV_WITH_NAMES\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, s.Format, "csv_with_names")
			eq(t, s.ColumnSeparator, ",")
		}},
		{"csv_with_names_and_types", "format: csv_with_names_and_types\n", func(t *testing.T, s *api.JobSpec) { eq(t, s.Format, "csv_with_names_and_types") }},
		// Doris's hive_text: fields separated by the byte 0x01.
		{"hive_text", "format: hive_text\n", func(t *testing.T, s *api.JobSpec) {
			eq(t, s.Format, "hive_text")
			eq(t, s.ColumnSeparator, "\x01")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(minimal + tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, s)
			assertRoundTrip(t, s)
		})
	}

	t.Run("type aliases and model", func(t *testing.T) {
		s, err := ParseJobSpec([]byte(`name: j
table:
  name: t
  model: DUPLICATE
  columns:
    - {name: a, type: BIGINT}
    - {name: b, type: double}
    - {name: c, type: varchar}
    - {name: d, type: boolean}
    - {name: e, type: datetime}
kafka: {brokers: "h:1", topic: t}
`))
		if err != nil {
			t.Fatal(err)
		}
		var got []api.ColumnType
		for _, c := range s.Table.Columns {
			got = append(got, c.Type)
		}
		// Doris names mean Doris types: varchar is VARCHAR(65533), datetime
		// a wall clock.
		want := []api.ColumnType{api.ColumnType_INT64, api.ColumnType_FLOAT64, api.ColumnType_VARCHAR, api.ColumnType_BOOL, api.ColumnType_DATETIME}
		if len(got) != len(want) {
			t.Fatalf("types %v", got)
		}
		for i := range want {
			eq(t, got[i], want[i])
		}
		assertRoundTrip(t, s)
	})
}

func TestParseKafkaForms(t *testing.T) {
	head := strings.TrimSuffix(minimal, "kafka:\n  brokers: [h1:9092]\n  topic: tp\n")
	cases := []struct {
		name  string
		kafka string
		want  *api.KafkaSpec
	}{
		{"lists", "kafka:\n  brokers: [h1:9092, h2:9093]\n  topic: tp\n  partitions: [0, 1, 2]\n  offsets: [OFFSET_BEGINNING, offset_end, 1000]\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092", "h2:9093"}, Topic: "tp", Partitions: []int32{0, 1, 2},
				Offsets: map[int32]string{0: "OFFSET_BEGINNING", 1: "OFFSET_END", 2: "1000"}, DefaultOffset: "OFFSET_END"}},
		{"doris comma strings", "kafka:\n  brokers: \"h1:9092, h2:9093\"\n  topic: tp\n  partitions: \"0,1,2\"\n  offsets: \"OFFSET_BEGINNING,OFFSET_END,1000\"\n  default_offset: offset_beginning\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092", "h2:9093"}, Topic: "tp", Partitions: []int32{0, 1, 2},
				Offsets: map[int32]string{0: "OFFSET_BEGINNING", 1: "OFFSET_END", 2: "1000"}, DefaultOffset: "OFFSET_BEGINNING"}},
		{"plain comma strings", "kafka:\n  brokers: h1:9092,h2:9093\n  topic: tp\n  partitions: 3,4\n  offsets: 5,OFFSET_END\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092", "h2:9093"}, Topic: "tp", Partitions: []int32{3, 4},
				Offsets: map[int32]string{3: "5", 4: "OFFSET_END"}, DefaultOffset: "OFFSET_END"}},
		{"single partition", "kafka:\n  brokers: h1:9092\n  topic: tp\n  partitions: 7\n  offsets: 12\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", Partitions: []int32{7},
				Offsets: map[int32]string{7: "12"}, DefaultOffset: "OFFSET_END"}},
		{"offsets map without partitions", "kafka:\n  brokers: [h1:9092]\n  topic: tp\n  offsets: {0: OFFSET_BEGINNING, \"2\": 1000}\n  default_offset: OFFSET_BEGINNING\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp",
				Offsets: map[int32]string{0: "OFFSET_BEGINNING", 2: "1000"}, DefaultOffset: "OFFSET_BEGINNING"}},
		{"offsets map subset of partitions", "kafka:\n  brokers: [h1:9092]\n  topic: tp\n  partitions: [0, 1, 2]\n  offsets:\n    2: 0010\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", Partitions: []int32{0, 1, 2},
				Offsets: map[int32]string{2: "10"}, DefaultOffset: "OFFSET_END"}},
		{"offsets before partitions", "kafka:\n  offsets: [1, 2]\n  partitions: [5, 6]\n  brokers: [h1:9092]\n  topic: tp\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", Partitions: []int32{5, 6},
				Offsets: map[int32]string{5: "1", 6: "2"}, DefaultOffset: "OFFSET_END"}},
		{"empty partitions", "kafka:\n  brokers: [h1:9092]\n  topic: tp\n  partitions: []\n  offsets: []\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", DefaultOffset: "OFFSET_END"}},
		{"properties", "kafka:\n  brokers: [h1:9092]\n  topic: tp\n  properties:\n    sasl.mechanism: PLAIN\n    session.timeout.ms: 30000\n    tls: true\n    empty:\n",
			&api.KafkaSpec{Brokers: []string{"h1:9092"}, Topic: "tp", DefaultOffset: "OFFSET_END",
				Properties: map[string]string{"sasl.mechanism": "PLAIN", "session.timeout.ms": "30000", "tls": "true", "empty": ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(head + tc.kafka))
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(s.Kafka, tc.want) {
				t.Fatalf("got  %v\nwant %v", s.Kafka, tc.want)
			}
			assertRoundTrip(t, s)
		})
	}
}

// TestParseJobSpecErrors covers the errors found while reading YAML; the
// rules of ValidateJobSpec are covered by TestValidateJobSpec and, through
// YAML, by the cases at the end.
func TestParseJobSpecErrors(t *testing.T) {
	kafkaHead := strings.TrimSuffix(minimal, "kafka:\n  brokers: [h1:9092]\n  topic: tp\n") + "kafka:\n  brokers: [h1:9092]\n  topic: tp\n"
	cases := []struct {
		name  string
		yaml  string
		field string
		line  int // 0: not checked
		msg   string
	}{
		{"unknown top key", minimal + "colums: []\n", "colums", 10, "unknown key"},
		{"unknown kafka key", kafkaHead + "  brokerz: x\n", "kafka.brokerz", 10, "unknown key"},
		{"unknown column key", strings.Replace(minimal, "{name: a, type: int64}", "{name: a, type: int64, null: true}", 1), "table.columns[0].null", 5, "unknown key"},
		{"unknown table key", strings.Replace(minimal, "  name: t\n", "  name: t\n  key: [a]\n", 1), "table.key", 4, "unknown key"},
		{"kafka and kinesis", minimal + "kinesis:\n  stream: s\n  region: us-east-1\n", "kinesis", 0, "exactly one source"},
		{"duplicate key", minimal + "name: k\n", "name", 10, "duplicate key"},
		{"top not mapping", "- a\n", "", 1, "must be a mapping"},
		{"empty", "", "", 0, "empty"},
		{"comment only", "# nothing\n", "", 0, "empty"},
		{"two documents", minimal + "---\nname: x\n", "", 0, "more than one"},
		{"name not scalar", strings.Replace(minimal, "name: j", "name: [j]", 1), "name", 1, "string"},
		{"name required", strings.Replace(minimal, "name: j\n", "", 1), "name", 0, "required"},
		{"name invalid", strings.Replace(minimal, "name: j", "name: 9j", 1), "name", 1, "must match"},
		{"table name invalid", strings.Replace(minimal, "  name: t\n", "  name: \"t t\"\n", 1), "table.name", 3, "must match"},
		{"columns not list", strings.Replace(minimal, "  columns:\n    - {name: a, type: int64}\n    - {name: b, type: string}\n", "  columns: a\n", 1), "table.columns", 4, "list"},
		{"column type unknown", strings.Replace(minimal, "type: string", "type: number", 1), "table.columns[1].type", 6, "unknown column type"},
		{"column type missing", strings.Replace(minimal, "{name: b, type: string}", "{name: b}", 1), "table.columns[1].type", 6, "required"},
		{"column duplicate", strings.Replace(minimal, "{name: b,", "{name: A,", 1), "table.columns[1].name", 6, "duplicate"},
		{"model", strings.Replace(minimal, "  name: t\n", "  name: t\n  model: merge\n", 1), "table.model", 4, "duplicate, unique or aggregate"},
		{"model without keys", strings.Replace(minimal, "  name: t\n", "  name: t\n  model: unique\n", 1), "table.keys", 0, "needs key columns"},
		{"format explicit empty", minimal + "format: \"\"\n", "format", 10, "hive_text, json, avro or protobuf"},
		{"format unknown", minimal + "format: parquet\n", "format", 10, "csv, csv_with_names, csv_with_names_and_types, hive_text, json, avro or protobuf"},
		{"separator explicit empty", minimal + "column_separator: \"\"\n", "column_separator", 10, "empty"},
		{"separator newline", minimal + "column_separator: \"\\n\"\n", "column_separator", 10, "newline"},
		{"separator with json", minimal + "format: json\ncolumn_separator: \",\"\n", "column_separator", 11, "only with format csv"},
		{"skip_lines negative", minimal + "skip_lines: -1\n", "skip_lines", 10, "integer >= 0"},
		{"skip_lines with json", minimal + "format: json\nskip_lines: 1\n", "skip_lines", 11, "only with a csv format"},
		{"trim_double_quotes with json", minimal + "format: json\ntrim_double_quotes: true\n", "trim_double_quotes", 11, "only with a csv format"},
		{"num_as_string with csv", minimal + "num_as_string: true\n", "num_as_string", 10, "only with format json"},
		{"trim_double_quotes not bool", minimal + "trim_double_quotes: yes please\n", "trim_double_quotes", 10, "true or false"},
		{"jsonpaths with csv", minimal + "jsonpaths: [$.a, $.b]\n", "jsonpaths", 10, "only with format json"},
		{"jsonpaths count", minimal + "format: json\njsonpaths: [$.a]\n", "jsonpaths", 11, "1 paths for 2 columns"},
		{"jsonpaths dollar", minimal + "format: json\njsonpaths: [$.a, b]\n", "jsonpaths[1]", 11, "must start with"},
		{"jsonpaths bad JSON string", minimal + "format: json\njsonpaths: '[\"$.a\"'\n", "jsonpaths", 11, "JSON array"},
		{"jsonpaths not strings", minimal + "format: json\njsonpaths: [[a], b]\n", "jsonpaths[0]", 11, "string"},
		{"concurrency 0", minimal + "desired_concurrent_number: 0\n", "desired_concurrent_number", 10, "between 1 and 64"},
		{"concurrency 65", minimal + "desired_concurrent_number: 65\n", "desired_concurrent_number", 10, "between 1 and 64"},
		{"concurrency huge", minimal + "desired_concurrent_number: 99999999999\n", "desired_concurrent_number", 10, "between 1 and 64"},
		{"concurrency float", minimal + "desired_concurrent_number: 1.5\n", "desired_concurrent_number", 10, "integer"},
		{"interval 0", minimal + "max_batch_interval: 0\n", "max_batch_interval", 10, "between 100ms and 1h"},
		{"interval 50ms", minimal + "max_batch_interval: 50ms\n", "max_batch_interval", 10, "between 100ms and 1h"},
		{"interval 2h", minimal + "max_batch_interval: 2h\n", "max_batch_interval", 10, "between 100ms and 1h"},
		{"interval 3601", minimal + "max_batch_interval: 3601\n", "max_batch_interval", 10, "between 100ms and 1h"},
		{"interval negative", minimal + "max_batch_interval: -5\n", "max_batch_interval", 10, "between 100ms and 1h"},
		{"interval huge seconds", minimal + "max_batch_interval: 9223372036854775807\n", "max_batch_interval", 10, "out of range"},
		{"interval no unit float", minimal + "max_batch_interval: 1.5\n", "max_batch_interval", 10, "duration"},
		{"interval garbage", minimal + "max_batch_interval: soon\n", "max_batch_interval", 10, "duration"},
		{"interval sub-ms", minimal + "max_batch_interval: 100500us\n", "max_batch_interval", 10, "whole number of milliseconds"},
		{"rows 0", minimal + "max_batch_rows: 0\n", "max_batch_rows", 10, "between 1 and 10000000"},
		{"rows over", minimal + "max_batch_rows: 10000001\n", "max_batch_rows", 10, "between 1 and 10000000"},
		{"size 0", minimal + "max_batch_size: 0\n", "max_batch_size", 10, "out of range"},
		{"size small", minimal + "max_batch_size: 1000B\n", "max_batch_size", 10, "out of range"},
		{"size big", minimal + "max_batch_size: 11GiB\n", "max_batch_size", 10, "out of range"},
		{"size overflow", minimal + "max_batch_size: 9223372036854775807GiB\n", "max_batch_size", 10, "out of range"},
		{"size unit", minimal + "max_batch_size: 64M\n", "max_batch_size", 10, "units"},
		{"size fraction", minimal + "max_batch_size: 1.5GiB\n", "max_batch_size", 10, "units"},
		{"size negative", minimal + "max_batch_size: -2048\n", "max_batch_size", 10, "out of range"},
		{"error number negative", minimal + "max_error_number: -1\n", "max_error_number", 10, ">= 0"},
		{"kafka required", strings.TrimSuffix(minimal, "kafka:\n  brokers: [h1:9092]\n  topic: tp\n"), "kafka", 0, "required"},
		{"kafka not mapping", strings.TrimSuffix(minimal, "kafka:\n  brokers: [h1:9092]\n  topic: tp\n") + "kafka: [a]\n", "kafka", 7, "mapping"},
		{"brokers empty", strings.Replace(minimal, "[h1:9092]", "[]", 1), "kafka.brokers", 8, "required"},
		{"brokers empty string", strings.Replace(minimal, "[h1:9092]", "\"\"", 1), "kafka.brokers", 8, "required"},
		{"broker no port", strings.Replace(minimal, "[h1:9092]", "[h1:9092, h2]", 1), "kafka.brokers[1]", 8, "host:port"},
		{"broker comma empty element", strings.Replace(minimal, "[h1:9092]", "\"h1:9092,,h2:9092\"", 1), "kafka.brokers[1]", 8, "host:port"},
		{"broker bad port", strings.Replace(minimal, "[h1:9092]", "\"h1:9092,h2:99999\"", 1), "kafka.brokers[1]", 8, "port"},
		{"brokers mapping", strings.Replace(minimal, "[h1:9092]", "{a: b}", 1), "kafka.brokers", 8, "list"},
		{"topic required", strings.Replace(minimal, "  topic: tp\n", "", 1), "kafka.topic", 7, "required"},
		{"topic invalid", strings.Replace(minimal, "topic: tp", "topic: \"a b\"", 1), "kafka.topic", 9, "not a valid Kafka topic"},
		{"partition negative", kafkaHead + "  partitions: [0, -1]\n", "kafka.partitions[1]", 10, "out of range"},
		{"partition too big", kafkaHead + "  partitions: [2147483648]\n", "kafka.partitions[0]", 10, "out of range"},
		{"partition not int", kafkaHead + "  partitions: \"0,x\"\n", "kafka.partitions[1]", 10, "integer"},
		{"partition duplicate", kafkaHead + "  partitions: 0,1,0\n", "kafka.partitions[2]", 10, "duplicate"},
		{"offsets list without partitions", kafkaHead + "  offsets: [OFFSET_END]\n", "kafka.offsets", 10, "requires kafka.partitions"},
		{"offsets string without partitions", kafkaHead + "  offsets: OFFSET_END\n", "kafka.offsets", 10, "requires kafka.partitions"},
		{"offsets count", kafkaHead + "  partitions: [0, 1]\n  offsets: [1]\n", "kafka.offsets", 11, "1 offsets for 2 partitions"},
		{"offsets list value", kafkaHead + "  partitions: [0, 1, 2]\n  offsets: [1, 2, latest]\n", "kafka.offsets[2]", 11, "OFFSET_BEGINNING"},
		{"offsets comma value", kafkaHead + "  partitions: [0, 1]\n  offsets: \"1,-2\"\n", "kafka.offsets[1]", 11, "non-negative"},
		{"offsets map key not in partitions", kafkaHead + "  partitions: [0, 1]\n  offsets:\n    0: 5\n    3: 7\n", "kafka.offsets.3", 13, "not in kafka.partitions"},
		{"offsets map bad value", kafkaHead + "  offsets: {4: nope}\n", "kafka.offsets.4", 10, "non-negative"},
		{"offsets map bad key", kafkaHead + "  offsets: {x: 1}\n", "kafka.offsets", 10, "partition number"},
		{"offsets map negative key", kafkaHead + "  offsets: {-1: 1}\n", "kafka.offsets.-1", 10, "out of range"},
		{"offsets map duplicate key", kafkaHead + "  offsets: {1: 1, 01: 2}\n", "kafka.offsets.1", 10, "duplicate"},
		{"default offset", kafkaHead + "  default_offset: latest\n", "kafka.default_offset", 10, "OFFSET_END"},
		{"default offset empty", kafkaHead + "  default_offset: \"\"\n", "kafka.default_offset", 10, "OFFSET_END"},
		{"properties not mapping", kafkaHead + "  properties: [a]\n", "kafka.properties", 10, "mapping"},
		{"property not scalar", kafkaHead + "  properties:\n    a: [b]\n", "kafka.properties.a", 11, "string"},
		{"property empty key", kafkaHead + "  properties:\n    \"\": b\n", "kafka.properties", 10, "empty property name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error; spec %v", s)
			}
			if s != nil {
				t.Fatalf("spec returned with error %v", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q does not contain %q", err, tc.msg)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want *FieldError, got %T %v", err, err)
			}
			if fe.Field != tc.field {
				t.Fatalf("field = %q, want %q (error: %v)", fe.Field, tc.field, err)
			}
			if tc.line != 0 && fe.Line != tc.line {
				t.Fatalf("line = %d, want %d (error: %v)", fe.Line, tc.line, err)
			}
		})
	}
}

func TestParseJobSpecYAMLSyntax(t *testing.T) {
	_, err := ParseJobSpec([]byte("name: [unclosed\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "config: ") {
		t.Fatalf("got %v", err)
	}
}

func TestMarshalJobSpec(t *testing.T) {
	out, err := MarshalJobSpec(ordersSpec())
	if err != nil {
		t.Fatal(err)
	}
	want := `name: orders_load
table:
  name: orders
  columns:
    - {name: id, type: int64}
    - {name: amount, type: float64}
    - {name: note, type: string}
    - {name: paid, type: bool}
    - {name: at, type: timestamp}
format: json
jsonpaths: [$.id, $.amount, $.note, $.paid, $.at]
desired_concurrent_number: 3
max_batch_interval: 10s
max_batch_rows: 200000
max_batch_size: 104857600
max_error_number: 0
kafka:
  brokers: ['127.0.0.1:9092']
  topic: orders
  partitions: [0, 1, 2]
  offsets: {0: OFFSET_BEGINNING, 1: OFFSET_END, 2: 1000}
  default_offset: OFFSET_END
  properties:
    security.protocol: SASL_SSL
`
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	if _, err := MarshalJobSpec(nil); err == nil {
		t.Fatal("nil spec marshalled")
	}

	// Values that YAML would read as another type, or that need quoting.
	s := validSpec()
	s.Name = "true"
	s.Table.Name = "null"
	s.ColumnSeparator = "\x01"
	s.Kafka.Topic = "123"
	s.Kafka.Brokers = []string{"[::1]:9092", "h:1"}
	s.Kafka.Properties = map[string]string{
		"sasl.password": "p: #x\n'\"", "n": "0x10", "b": "yes", "e": "", "sp": " lead", "x.y": "~",
	}
	s.MaxBatchIntervalMs = 90_500
	assertRoundTrip(t, s)
}

// assertRoundTrip checks that s survives MarshalJobSpec then ParseJobSpec.
func assertRoundTrip(t testing.TB, s *api.JobSpec) {
	t.Helper()
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("parse of marshalled spec: %v\n%s", err, out)
	}
	if !proto.Equal(s, back) {
		t.Fatalf("round trip differs:\n got %v\nwant %v\nyaml:\n%s", back, s, out)
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestMarshalRoundTripRandomStrings round-trips specs whose free-form strings
// (separator, jsonpaths, property values) are drawn from
// characters that YAML treats specially.
func TestMarshalRoundTripRandomStrings(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	alphabet := []rune("ab :#-?!&*%@`'\"\\\t\r\n\u0085\ufeff\u2028\u00a0\u00e9\x00\x01\x7f{}[],|>~.0123456789eE+")
	str := func(minLen, maxLen int) string {
		rs := make([]rune, minLen+r.IntN(maxLen-minLen+1))
		for i := range rs {
			rs[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(rs)
	}
	tested := 0
	for range 2000 {
		s := validSpec()
		s.Kafka.Properties = map[string]string{"k": str(0, 8), "sasl.password": str(0, 8)}
		if r.IntN(2) == 0 {
			s.ColumnSeparator = str(1, 3)
		} else {
			s.Format, s.ColumnSeparator = "json", ""
			s.Jsonpaths = []string{"$" + str(0, 6), "$" + str(0, 6)}
		}
		if ValidateJobSpec(s) != nil {
			continue
		}
		tested++
		assertRoundTrip(t, s)
	}
	if tested < 500 {
		t.Fatalf("only %d valid specs generated", tested)
	}
}

func TestStrictRatioTimezone(t *testing.T) {
	s, err := ParseJobSpec([]byte(`name: j
table: {name: t, columns: [{name: a, type: "decimal(20,3)", not_null: true, default: "1.5"}]}
strict_mode: false
max_filter_ratio: 0.25
timezone: Asia/Shanghai
kafka: {brokers: "h:1", topic: t}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.StrictMode == nil || s.GetStrictMode() || s.GetMaxFilterRatio() != 0.25 || s.GetTimezone() != "Asia/Shanghai" {
		t.Errorf("spec = %v", s)
	}
	c := s.GetTable().GetColumns()[0]
	if c.GetType() != api.ColumnType_DECIMAL || c.GetPrecision() != 20 || c.GetScale() != 3 || !c.GetNotNull() || c.GetDefaultValue() != "1.5" {
		t.Errorf("column = %v", c)
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil || !proto.Equal(back, s) {
		t.Errorf("round trip:\n%s\n%v %v", out, back, err)
	}
	for _, bad := range []string{"max_filter_ratio: 2", "timezone: Mars/Base", "strict_mode: maybe"} {
		if _, err := ParseJobSpec([]byte("name: j\ntable: {name: t, columns: [{name: a, type: int}]}\n" + bad + "\nkafka: {brokers: \"h:1\", topic: t}\n")); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestParseIntervalSize pins the text spellings shared by the job spec file
// and the Doris statements (doris calls ParseInterval and ParseSize).
func TestParseIntervalSize(t *testing.T) {
	const interval, size = "ParseInterval", "ParseSize"
	parse := map[string]func(string) (int64, error){interval: ParseInterval, size: ParseSize}
	for _, tt := range []struct {
		fn, in  string
		want    int64
		errPart string // "" for a valid spelling
	}{
		{interval, "10", 10000, ""},
		{interval, " 0010 ", 10000, ""},
		{interval, "500ms", 500, ""},
		{interval, "1m", 60000, ""},
		{interval, "0", 0, ""}, // the range is the caller's
		{interval, "-5s", -5000, ""},
		{interval, "100500us", 0, "whole number of milliseconds"},
		{interval, "1.5", 0, "duration"},
		{interval, "+5", 0, "duration"},
		{interval, "", 0, "duration"},
		{interval, "9223372036854775807", 0, "out of range"},
		{size, "104857600", 104857600, ""},
		{size, "64MiB", 64 << 20, ""},
		{size, " 100 mb ", 100e6, ""},
		{size, "1b", 1, ""},
		{size, "0", 0, ""}, // the range is the caller's
		{size, "1.5GB", 0, "64MiB"},
		{size, "64M", 0, "units"},
		{size, "-2048", 0, "units"},
		{size, "GiB", 0, "units"},
		{size, "9223372036854775807GiB", 0, "out of range"},
	} {
		got, err := parse[tt.fn](tt.in)
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) {
				t.Errorf("%s(%q) = %d, %v; want an error with %q", tt.fn, tt.in, got, err, tt.errPart)
			}
		} else if err != nil || got != tt.want {
			t.Errorf("%s(%q) = %d, %v; want %d", tt.fn, tt.in, got, err, tt.want)
		}
	}
}

// TestLCTimeNamesProperty checks the job property lc_time_names: decoded,
// kept through a round trip, its case as written, an unknown locale
// refused by its name.
func TestLCTimeNamesProperty(t *testing.T) {
	s, err := ParseJobSpec([]byte(`name: j
table: {name: t, columns: [{name: a, type: string}]}
lc_time_names: ZH_cn
columns_mapping: [d, "a = dayname(d)"]
kafka: {brokers: "h:1", topic: t}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.GetLcTimeNames() != "ZH_cn" {
		t.Errorf("lc_time_names = %q", s.GetLcTimeNames())
	}
	assertRoundTrip(t, s)
	if f := table.FormatOf(s); f.LCTimeNames != "ZH_cn" {
		t.Errorf("FormatOf: lc_time_names %q", f.LCTimeNames)
	}
	_, err = ParseJobSpec([]byte("name: j\ntable: {name: t, columns: [{name: a, type: int}]}\nlc_time_names: xx_XX\nkafka: {brokers: \"h:1\", topic: t}\n"))
	if err == nil || !strings.Contains(err.Error(), "lc_time_names") || !strings.Contains(err.Error(), "xx_XX") {
		t.Errorf("lc_time_names xx_XX: %v, want an error naming the field and the value", err)
	}
}
