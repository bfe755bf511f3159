package config

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// validSpec returns a complete, valid spec as a Go client would build it.
func validSpec() *api.JobSpec {
	return &api.JobSpec{
		Name: "orders_load",
		Table: &api.TableSpec{Name: "orders", Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
		}},
		Format:                  FormatCSV,
		ColumnSeparator:         ",",
		DesiredConcurrentNumber: 3,
		MaxBatchIntervalMs:      10_000,
		MaxBatchRows:            200_000,
		MaxBatchSize:            100 << 20,
		Kafka: &api.KafkaSpec{
			Brokers:       []string{"127.0.0.1:9092"},
			Topic:         "orders",
			Partitions:    []int32{0, 1, 2},
			Offsets:       map[int32]string{0: OffsetBeginning, 2: "1000"},
			DefaultOffset: OffsetEnd,
		},
	}
}

func TestApplyDefaults(t *testing.T) {
	s := &api.JobSpec{
		Name:  "j",
		Table: &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "a", Type: api.ColumnType_INT64}}},
		Kafka: &api.KafkaSpec{Brokers: []string{"h:1"}, Topic: "t", Offsets: map[int32]string{3: "offset_beginning", 4: "007"}},
	}
	ApplyDefaults(s)
	want := &api.JobSpec{
		Name:                    "j",
		Table:                   &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "a", Type: api.ColumnType_INT64}}},
		Format:                  "csv",
		ColumnSeparator:         ",",
		DesiredConcurrentNumber: 3,
		MaxBatchIntervalMs:      10_000,
		MaxBatchRows:            200_000,
		MaxBatchSize:            104857600,
		Kafka: &api.KafkaSpec{Brokers: []string{"h:1"}, Topic: "t", DefaultOffset: "OFFSET_END",
			Offsets: map[int32]string{3: "OFFSET_BEGINNING", 4: "7"}},
	}
	if !proto.Equal(s, want) {
		t.Fatalf("ApplyDefaults:\n got %v\nwant %v", s, want)
	}
	again := proto.Clone(s).(*api.JobSpec)
	ApplyDefaults(again)
	if !proto.Equal(s, again) {
		t.Fatalf("ApplyDefaults is not idempotent:\n%v\n%v", s, again)
	}
	if err := ValidateJobSpec(s); err != nil {
		t.Fatal(err)
	}

	j := &api.JobSpec{Format: "JSON", Table: want.Table}
	ApplyDefaults(j)
	if j.Format != "json" || j.ColumnSeparator != "" || len(j.Jsonpaths) != 1 || j.Jsonpaths[0] != "$.a" {
		t.Fatalf("json defaults: %v", j)
	}
	ApplyDefaults(nil) // no panic
}

func TestValidateJobSpec(t *testing.T) {
	if err := ValidateJobSpec(validSpec()); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	cases := []struct {
		name  string
		mut   func(s *api.JobSpec)
		field string // "" means valid
	}{
		{"name required", func(s *api.JobSpec) { s.Name = "" }, "name"},
		{"name pattern", func(s *api.JobSpec) { s.Name = "1abc" }, "name"},
		{"name too long", func(s *api.JobSpec) { s.Name = "a" + strings.Repeat("b", 128) }, "name"},
		{"name max length", func(s *api.JobSpec) { s.Name = "a" + strings.Repeat("b", 127) }, ""},
		{"name dash", func(s *api.JobSpec) { s.Name = "_a-b" }, ""},
		{"table required", func(s *api.JobSpec) { s.Table = nil }, "table"},
		{"table name required", func(s *api.JobSpec) { s.Table.Name = "" }, "table.name"},
		{"table name pattern", func(s *api.JobSpec) { s.Table.Name = "a.b" }, "table.name"},
		{"table name dash", func(s *api.JobSpec) { s.Table.Name = "x-y" }, "table.name"},
		{"table name max length", func(s *api.JobSpec) { s.Table.Name = "a" + strings.Repeat("b", 127) }, ""},
		{"table name too long", func(s *api.JobSpec) { s.Table.Name = "a" + strings.Repeat("b", 128) }, "table.name"},
		{"table model", func(s *api.JobSpec) { s.Table.Model = 7 }, "table.model"},
		{"no columns", func(s *api.JobSpec) { s.Table.Columns = nil }, "table.columns"},
		{"nil column", func(s *api.JobSpec) { s.Table.Columns[1] = nil }, "table.columns[1]"},
		{"column name required", func(s *api.JobSpec) { s.Table.Columns[1].Name = "" }, "table.columns[1].name"},
		{"column name pattern", func(s *api.JobSpec) { s.Table.Columns[1].Name = "a-b" }, "table.columns[1].name"},
		{"duplicate column", func(s *api.JobSpec) { s.Table.Columns[1].Name = "ID" }, "table.columns[1].name"},
		{"column type unset", func(s *api.JobSpec) { s.Table.Columns[0].Type = 0 }, "table.columns[0].type"},
		{"column type unknown", func(s *api.JobSpec) { s.Table.Columns[1].Type = 99 }, "table.columns[1].type"},
		{"format required", func(s *api.JobSpec) { s.Format = "" }, "format"},
		{"format unknown", func(s *api.JobSpec) { s.Format = "parquet" }, "format"},
		{"separator empty", func(s *api.JobSpec) { s.ColumnSeparator = "" }, "column_separator"},
		{"separator newline", func(s *api.JobSpec) { s.ColumnSeparator = "\n" }, "column_separator"},
		{"separator quote", func(s *api.JobSpec) { s.ColumnSeparator = `"` }, "column_separator"},
		{"separator tab", func(s *api.JobSpec) { s.ColumnSeparator = "\t" }, ""},
		{"separator multi-byte", func(s *api.JobSpec) { s.ColumnSeparator = "||" }, ""},
		{"jsonpaths with csv", func(s *api.JobSpec) { s.Jsonpaths = []string{"$.id", "$.note"} }, "jsonpaths"},
		{"json ok", func(s *api.JobSpec) { s.Format, s.ColumnSeparator, s.Jsonpaths = "json", "", []string{"$.id", "$.n.x"} }, ""},
		{"separator with json", func(s *api.JobSpec) { s.Format, s.Jsonpaths = "json", []string{"$.id", "$.note"} }, "column_separator"},
		{"jsonpaths count", func(s *api.JobSpec) { s.Format, s.ColumnSeparator, s.Jsonpaths = "json", "", []string{"$.id"} }, "jsonpaths"},
		{"jsonpath no $", func(s *api.JobSpec) { s.Format, s.ColumnSeparator, s.Jsonpaths = "json", "", []string{"$.id", "note"} }, "jsonpaths[1]"},
		{"concurrency 0", func(s *api.JobSpec) { s.DesiredConcurrentNumber = 0 }, "desired_concurrent_number"},
		{"concurrency 65", func(s *api.JobSpec) { s.DesiredConcurrentNumber = 65 }, "desired_concurrent_number"},
		{"concurrency 64", func(s *api.JobSpec) { s.DesiredConcurrentNumber = 64 }, ""},
		{"interval 99ms", func(s *api.JobSpec) { s.MaxBatchIntervalMs = 99 }, "max_batch_interval"},
		{"interval 100ms", func(s *api.JobSpec) { s.MaxBatchIntervalMs = 100 }, ""},
		{"interval 1h", func(s *api.JobSpec) { s.MaxBatchIntervalMs = 3_600_000 }, ""},
		{"interval over 1h", func(s *api.JobSpec) { s.MaxBatchIntervalMs = 3_600_001 }, "max_batch_interval"},
		{"rows 0", func(s *api.JobSpec) { s.MaxBatchRows = 0 }, "max_batch_rows"},
		{"rows 1", func(s *api.JobSpec) { s.MaxBatchRows = 1 }, ""},
		{"rows over", func(s *api.JobSpec) { s.MaxBatchRows = 10_000_001 }, "max_batch_rows"},
		{"size under 1KiB", func(s *api.JobSpec) { s.MaxBatchSize = 1023 }, "max_batch_size"},
		{"size 10GiB", func(s *api.JobSpec) { s.MaxBatchSize = 10 << 30 }, ""},
		{"size over 10GiB", func(s *api.JobSpec) { s.MaxBatchSize = 10<<30 + 1 }, "max_batch_size"},
		{"error number negative", func(s *api.JobSpec) { s.MaxErrorNumber = -1 }, "max_error_number"},
		{"kafka required", func(s *api.JobSpec) { s.Kafka = nil }, "kafka"},
		{"brokers required", func(s *api.JobSpec) { s.Kafka.Brokers = nil }, "kafka.brokers"},
		{"broker no port", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"h:1", "localhost"} }, "kafka.brokers[1]"},
		{"broker bad port", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"h:65536"} }, "kafka.brokers[0]"},
		{"broker port 0", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"h:0"} }, "kafka.brokers[0]"},
		{"broker signed port", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"h:+80"} }, "kafka.brokers[0]"},
		{"broker no host", func(s *api.JobSpec) { s.Kafka.Brokers = []string{":9092"} }, "kafka.brokers[0]"},
		{"broker bad host", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"a\"b:9092"} }, "kafka.brokers[0]"},
		{"broker ipv6", func(s *api.JobSpec) { s.Kafka.Brokers = []string{"[::1]:9092"} }, ""},
		{"topic required", func(s *api.JobSpec) { s.Kafka.Topic = "" }, "kafka.topic"},
		{"topic chars", func(s *api.JobSpec) { s.Kafka.Topic = "a/b" }, "kafka.topic"},
		{"topic dot", func(s *api.JobSpec) { s.Kafka.Topic = ".." }, "kafka.topic"},
		{"topic too long", func(s *api.JobSpec) { s.Kafka.Topic = strings.Repeat("t", 250) }, "kafka.topic"},
		{"partition negative", func(s *api.JobSpec) { s.Kafka.Partitions = []int32{0, -1} }, "kafka.partitions[1]"},
		{"partition duplicate", func(s *api.JobSpec) { s.Kafka.Partitions = []int32{0, 1, 2, 1} }, "kafka.partitions[3]"},
		{"offset key not in partitions", func(s *api.JobSpec) { s.Kafka.Offsets[5] = "1" }, "kafka.offsets.5"},
		{"offset key negative", func(s *api.JobSpec) { s.Kafka.Partitions = nil; s.Kafka.Offsets[-1] = "1" }, "kafka.offsets.-1"},
		{"offset value bad", func(s *api.JobSpec) { s.Kafka.Offsets[2] = "latest" }, "kafka.offsets.2"},
		{"offset value negative", func(s *api.JobSpec) { s.Kafka.Offsets[2] = "-1" }, "kafka.offsets.2"},
		{"offset lower-case", func(s *api.JobSpec) { s.Kafka.Offsets[2] = "offset_end" }, ""},
		{"offsets without partitions", func(s *api.JobSpec) { s.Kafka.Partitions = nil }, ""},
		{"default offset bad", func(s *api.JobSpec) { s.Kafka.DefaultOffset = "OFFSET_LATEST" }, "kafka.default_offset"},
		{"default offset empty", func(s *api.JobSpec) { s.Kafka.DefaultOffset = "" }, "kafka.default_offset"},
		{"property bad name", func(s *api.JobSpec) { s.Kafka.Properties = map[string]string{"a b": "x"} }, "kafka.properties"},
		{"property value free-form", func(s *api.JobSpec) { s.Kafka.Properties = map[string]string{"sasl.password": "p: #\n\x01"} }, ""},
		{"property empty key", func(s *api.JobSpec) { s.Kafka.Properties = map[string]string{"": "x"} }, "kafka.properties"},
		{"commit group", func(s *api.JobSpec) { s.Kafka.CommitGroup = "lag-tools.orders" }, ""},
		{"commit group with a space", func(s *api.JobSpec) { s.Kafka.CommitGroup = "a b" }, "kafka.commit_group"},
		{"commit group too long", func(s *api.JobSpec) { s.Kafka.CommitGroup = strings.Repeat("g", 256) }, "kafka.commit_group"},
		{"error topic", func(s *api.JobSpec) { s.ErrorTopic = "orders-dlq" }, ""},
		{"error topic bad name", func(s *api.JobSpec) { s.ErrorTopic = "a/b" }, "error_topic"},
		{"error topic is the source", func(s *api.JobSpec) { s.ErrorTopic = s.Kafka.Topic }, "error_topic"},
		{"error topic elsewhere", func(s *api.JobSpec) {
			s.ErrorTopic, s.ErrorTopicBrokers = s.Kafka.Topic, []string{"dlq:9092"}
			s.ErrorTopicProperties = map[string]string{"security.protocol": "SSL"}
		}, ""},
		{"error topic bad broker", func(s *api.JobSpec) { s.ErrorTopic, s.ErrorTopicBrokers = "d", []string{"dlq"} }, "error_topic_brokers[0]"},
		{"error topic brokers alone", func(s *api.JobSpec) { s.ErrorTopicBrokers = []string{"dlq:9092"} }, "error_topic_brokers"},
		{"error topic properties on the job's cluster", func(s *api.JobSpec) {
			s.ErrorTopic, s.ErrorTopicProperties = "d", map[string]string{"security.protocol": "SSL"}
		}, "error_topic_properties"},
		{"error topic of a kinesis job needs brokers", func(s *api.JobSpec) {
			s.Kafka, s.ErrorTopic = nil, "d"
			s.Kinesis = &api.KinesisSpec{Stream: "s", Region: "us-east-1", DefaultPosition: "TRIM_HORIZON"}
		}, "error_topic_brokers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.mut(s)
			err := ValidateJobSpec(s)
			checkField(t, err, tc.field)
		})
	}
}

// checkField asserts that err is nil when field is "", else a *FieldError
// naming field.
func checkField(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FieldError for %q, got %v", field, err)
	}
	if fe.Field != field {
		t.Fatalf("field = %q, want %q (error: %v)", fe.Field, field, err)
	}
	if !strings.HasPrefix(err.Error(), "config: "+field+": ") {
		t.Fatalf("error %q lacks prefix", err)
	}
}

func TestFieldErrorString(t *testing.T) {
	for _, tc := range []struct {
		err  *FieldError
		want string
	}{
		{&FieldError{Field: "kafka.topic", Msg: "required"}, "config: kafka.topic: required"},
		{&FieldError{Field: "kafka.x", Msg: "unknown key", Line: 12}, "config: kafka.x: unknown key (line 12)"},
		{&FieldError{Msg: "job spec is empty"}, "config: job spec is empty"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestCanonicalOffset(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"OFFSET_BEGINNING", "OFFSET_BEGINNING", true},
		{"offset_beginning", "OFFSET_BEGINNING", true},
		{"OFFSET_END", "OFFSET_END", true},
		{"offset_end", "OFFSET_END", true},
		{"0", "0", true},
		{"1000", "1000", true},
		{"007", "7", true},
		{"9223372036854775807", "9223372036854775807", true},
		{"9223372036854775808", "", false},
		{"-1", "", false},
		{"+1", "", false},
		{" 1", "", false},
		{"", "", false},
		{"Offset_End", "", false},
		{"latest", "", false},
	} {
		got, ok := canonicalOffset(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("canonicalOffset(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
