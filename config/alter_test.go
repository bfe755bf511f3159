package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

func alterBase() *api.JobSpec {
	s := &api.JobSpec{
		Name:  "orders_load",
		Table: &api.TableSpec{Name: "orders", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}},
		Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:9092"}, Topic: "orders", Properties: map[string]string{"client.id": "a"}},
	}
	ApplyDefaults(s)
	return s
}

func TestAlterMask(t *testing.T) {
	cur := alterBase()
	req := &api.AlterJobRequest{Spec: &api.JobSpec{MaxBatchRows: 77, Kafka: &api.KafkaSpec{Properties: map[string]string{"fetch.max.bytes": "1048576"}}},
		UpdateMask: []string{"max_batch_rows", "kafka.properties.fetch.max.bytes", "kafka.properties.client.id"}}
	next, changes, reopen, err := Alter(cur, req)
	if err != nil {
		t.Fatal(err)
	}
	if next.GetMaxBatchRows() != 77 || next.GetKafka().GetProperties()["fetch.max.bytes"] != "1048576" {
		t.Fatalf("next = %v", next)
	}
	if _, ok := next.GetKafka().GetProperties()["client.id"]; ok {
		t.Fatal("a masked property absent from the patch must be removed")
	}
	if !reopen || !slices.Equal(changes, []string{"max_batch_rows 200000->77", "kafka.properties"}) {
		t.Fatalf("changes %q reopen %v", changes, reopen)
	}
	if cur.GetMaxBatchRows() == 77 {
		t.Fatal("Alter modified cur")
	}
}

func TestAlterRefusesByName(t *testing.T) {
	tests := []struct {
		name  string
		req   func() *api.AlterJobRequest
		field string
	}{
		{"mask bad topic", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "a b"}}, UpdateMask: []string{"kafka.topic"}}
		}, "kafka.topic"},
		{"mask partitions without a topic change", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Partitions: []int32{1}}}, UpdateMask: []string{"kafka.partitions"}}
		}, "kafka.partitions"},
		{"mask offsets without a topic change", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "orders", Offsets: map[int32]string{0: "5"}}}, UpdateMask: []string{"kafka.topic", "kafka.offsets"}}
		}, "kafka.offsets"},
		{"mask format", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{Format: "json"}, UpdateMask: []string{"format"}}
		}, "format"},

		{"mask out of range", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{MaxBatchRows: -5}, UpdateMask: []string{"max_batch_rows"}}
		}, "max_batch_rows"},
		{"whole spec partitions of the same topic", func() *api.AlterJobRequest {
			s := alterBase()
			s.Kafka.Partitions = []int32{0}
			return &api.AlterJobRequest{Spec: s}
		}, "kafka.partitions"},
		{"whole spec source family", func() *api.AlterJobRequest {
			s := alterBase()
			s.Kafka = nil
			s.Kinesis = &api.KinesisSpec{Stream: "s", Region: "us-east-1"}
			return &api.AlterJobRequest{Spec: s}
		}, "kafka.brokers"},
		{"whole spec table", func() *api.AlterJobRequest {
			s := alterBase()
			s.Table.Columns[0].Name = "x"
			s.Jsonpaths = alterBase().Jsonpaths
			return &api.AlterJobRequest{Spec: s}
		}, "table"},
		{"whole spec format", func() *api.AlterJobRequest {
			s := proto.Clone(alterBase()).(*api.JobSpec)
			s.Format, s.ColumnSeparator, s.Jsonpaths = "json", "", nil
			return &api.AlterJobRequest{Spec: s}
		}, "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := Alter(alterBase(), tt.req())
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Alter = %v, want a FieldError naming %s", err, tt.field)
			}
		})
	}
}

// TestAlterTopic: a new topic (and broker list) is alterable; the old
// topic's partitions and offsets do not carry over unless given again, and
// Rebases says the job's progress does not apply to the new spec.
func TestAlterTopic(t *testing.T) {
	cur := alterBase()
	cur.Kafka.Partitions = []int32{0, 1}
	cur.Kafka.Offsets = map[int32]string{1: "7"}
	next, changes, reopen, err := Alter(cur, &api.AlterJobRequest{
		Spec:       &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "orders_v2", Brokers: []string{"127.0.0.1:9093"}, DefaultOffset: "OFFSET_BEGINNING"}},
		UpdateMask: []string{"kafka.topic", "kafka.brokers", "kafka.default_offset"},
	})
	if err != nil {
		t.Fatal(err)
	}
	k := next.GetKafka()
	if k.GetTopic() != "orders_v2" || !slices.Equal(k.GetBrokers(), []string{"127.0.0.1:9093"}) || len(k.GetPartitions()) != 0 || len(k.GetOffsets()) != 0 || k.GetDefaultOffset() != "OFFSET_BEGINNING" {
		t.Fatalf("next kafka = %v", k)
	}
	if !reopen || !Rebases(cur, next) {
		t.Fatalf("reopen %v, rebases %v; want both", reopen, Rebases(cur, next))
	}
	want := []string{"kafka.brokers 127.0.0.1:9092->127.0.0.1:9093", "kafka.topic orders->orders_v2", "kafka.partitions [0 1]->[]", "kafka.default_offset OFFSET_END->OFFSET_BEGINNING"}
	if !slices.Equal(changes, want) {
		t.Fatalf("changes = %q, want %q", changes, want)
	}

	// Explicit partitions and offsets of the new topic, by mask.
	next, _, _, err = Alter(cur, &api.AlterJobRequest{
		Spec:       &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "orders_v2", Partitions: []int32{2}, Offsets: map[int32]string{2: "OFFSET_END"}}},
		UpdateMask: []string{"kafka.topic", "kafka.partitions", "kafka.offsets"},
	})
	if err != nil || !slices.Equal(next.GetKafka().GetPartitions(), []int32{2}) || next.GetKafka().GetOffsets()[2] != "OFFSET_END" {
		t.Fatalf("next = %v, %v", next.GetKafka(), err)
	}

	// A whole spec (job alter -f) with a new topic keeps its own offsets;
	// with the same topic its offsets are ignored.
	whole := proto.Clone(cur).(*api.JobSpec)
	whole.Kafka.Topic, whole.Kafka.Partitions, whole.Kafka.Offsets = "orders_v2", nil, map[int32]string{0: "3"}
	if next, _, _, err = Alter(cur, &api.AlterJobRequest{Spec: whole}); err != nil || next.GetKafka().GetOffsets()[0] != "3" || !Rebases(cur, next) {
		t.Fatalf("whole spec: %v, %v", next.GetKafka(), err)
	}
	same := proto.Clone(cur).(*api.JobSpec)
	same.Kafka.Brokers, same.Kafka.Offsets = []string{"127.0.0.1:9093"}, map[int32]string{1: "9"}
	if next, _, _, err = Alter(cur, &api.AlterJobRequest{Spec: same}); err != nil || next.GetKafka().GetOffsets()[1] != "7" || Rebases(cur, next) {
		t.Fatalf("whole spec, same topic: %v, %v", next.GetKafka(), err)
	}
}

// TestAlterKeepsRedactedSecrets: a spec copied from `job show` carries
// api.Redacted in place of its secrets; altering with it keeps the stored
// secrets (they stay usable) and changes what was changed.
func TestAlterKeepsRedactedSecrets(t *testing.T) {
	cur := alterBase()
	cur.Kafka.Properties = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "s3cret"}
	shown := api.RedactSpec(cur)
	if shown.GetKafka().GetProperties()["sasl.password"] != api.Redacted || cur.GetKafka().GetProperties()["sasl.password"] != "s3cret" {
		t.Fatalf("RedactSpec: shown %v, cur %v", shown.GetKafka().GetProperties(), cur.GetKafka().GetProperties())
	}
	shown = proto.Clone(shown).(*api.JobSpec)
	shown.MaxBatchRows = 77
	for _, req := range []*api.AlterJobRequest{
		{Spec: shown},
		{Spec: shown, UpdateMask: []string{"kafka.properties", "max_batch_rows"}},
	} {
		next, _, reopen, err := Alter(cur, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := next.GetKafka().GetProperties()["sasl.password"]; got != "s3cret" || reopen || next.GetMaxBatchRows() != 77 {
			t.Errorf("mask %v: password %q, reopen %v, rows %d", req.UpdateMask, got, reopen, next.GetMaxBatchRows())
		}
	}
}

// TestAlterLoadProperties: Doris's load properties (COLUMNS TERMINATED BY,
// COLUMNS, WHERE, DELETE ON, ORDER BY) and jsonpaths are alterable, and
// PausedOnly names them when they change (the job actor then needs the job
// PAUSED). A json job given a mapping loses the paths ApplyDefaults gave
// it, so its fields are read by their own names.
func TestAlterLoadProperties(t *testing.T) {
	cur := alterBase()
	next, changes, _, err := Alter(cur, &api.AlterJobRequest{
		Spec:       &api.JobSpec{ColumnSeparator: "|", ColumnsMapping: []string{"id", "tmp"}, Where: "id > 1", SequenceColumn: "id", DeleteOn: "id = 0"},
		UpdateMask: []string{"column_separator", "columns_mapping", "where", "sequence_column", "delete_on"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if next.GetColumnSeparator() != "|" || !slices.Equal(next.GetColumnsMapping(), []string{"id", "tmp"}) || next.GetWhere() != "id > 1" ||
		next.GetSequenceColumn() != "id" || next.GetDeleteOn() != "id = 0" {
		t.Fatalf("next = %v", next)
	}
	want := []string{"column_separator \",\"->\"|\"", "columns_mapping ()->(id, tmp)", `where ""->"id > 1"`, `delete_on ""->"id = 0"`, `sequence_column ""->"id"`}
	if !slices.Equal(changes, want) {
		t.Errorf("changes = %q, want %q", changes, want)
	}
	if got := PausedOnly(cur, next); !slices.Equal(got, []string{"column_separator", "columns_mapping", "where", "delete_on", "sequence_column"}) {
		t.Errorf("PausedOnly = %q", got)
	}
	if got := PausedOnly(cur, cur); len(got) != 0 {
		t.Errorf("PausedOnly(cur, cur) = %q", got)
	}

	js := alterBase()
	js.Format, js.ColumnSeparator = "json", ""
	ApplyDefaults(js)
	next, _, _, err = Alter(js, &api.AlterJobRequest{Spec: &api.JobSpec{ColumnsMapping: []string{"id"}}, UpdateMask: []string{"columns_mapping"}})
	if err != nil || len(next.GetJsonpaths()) != 0 {
		t.Fatalf("json job given COLUMNS: jsonpaths %q, %v; want the defaulted ones gone", next.GetJsonpaths(), err)
	}
	if got := PausedOnly(js, next); !slices.Equal(got, []string{"columns_mapping", "jsonpaths"}) {
		t.Errorf("PausedOnly = %q", got)
	}
	// Given paths stay.
	js.Jsonpaths = []string{"$.x"}
	if next, _, _, err = Alter(js, &api.AlterJobRequest{Spec: &api.JobSpec{ColumnsMapping: []string{"id"}}, UpdateMask: []string{"columns_mapping"}}); err != nil || !slices.Equal(next.GetJsonpaths(), []string{"$.x"}) {
		t.Fatalf("given jsonpaths: %q, %v", next.GetJsonpaths(), err)
	}
}

// TestAlterStripOuterArray: strip_outer_array is alterable (Doris's ALTER
// ROUTINE LOAD changes it) on a json job, and refused on a csv one.
func TestAlterStripOuterArray(t *testing.T) {
	cur := alterBase()
	cur.Format, cur.ColumnSeparator = FormatJSON, ""
	ApplyDefaults(cur)
	next, changes, _, err := Alter(cur, &api.AlterJobRequest{Spec: &api.JobSpec{StripOuterArray: true}, UpdateMask: []string{"strip_outer_array"}})
	if err != nil {
		t.Fatal(err)
	}
	if !next.GetStripOuterArray() || !slices.Equal(changes, []string{"strip_outer_array false->true"}) {
		t.Fatalf("next %v, changes %q", next.GetStripOuterArray(), changes)
	}
	csv := alterBase()
	_, _, _, err = Alter(csv, &api.AlterJobRequest{Spec: &api.JobSpec{StripOuterArray: true}, UpdateMask: []string{"strip_outer_array"}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "strip_outer_array" {
		t.Fatalf("csv job: %v, want a *FieldError on strip_outer_array", err)
	}
}

// TestAlterTable: update_mask "table" moves a job to another table of its
// database (Doris's ALTER ROUTINE LOAD ... ON), a change only a PAUSED job
// takes; the jsonpaths derived from the old table's columns are derived
// from the new one's; another database, a multi-table job and a whole
// spec's other table are refused, naming the field.
func TestAlterTable(t *testing.T) {
	cur := alterBase()
	cur.Format, cur.ColumnSeparator = FormatJSON, ""
	ApplyDefaults(cur)
	dst := &api.TableSpec{Name: "orders2", Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64}, {Name: "v", Type: api.ColumnType_STRING}}}
	next, changes, _, err := Alter(cur, &api.AlterJobRequest{Spec: &api.JobSpec{Table: dst}, UpdateMask: []string{"table"}})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(next.GetTable(), dst) || !slices.Equal(next.GetJsonpaths(), []string{"$.k", "$.v"}) || !slices.Equal(changes, []string{"table orders->orders2", `jsonpaths ["$.id"]->["$.k" "$.v"]`}) {
		t.Fatalf("next table %v, jsonpaths %q, changes %q", next.GetTable(), next.GetJsonpaths(), changes)
	}
	if got := PausedOnly(cur, next); !slices.Equal(got, []string{"jsonpaths", "table"}) {
		t.Errorf("PausedOnly = %q, want [jsonpaths table]", got)
	}
	given := proto.Clone(cur).(*api.JobSpec)
	given.Jsonpaths = []string{"$.a", "$.b"}
	if next, _, _, err := Alter(given, &api.AlterJobRequest{Spec: &api.JobSpec{Table: dst}, UpdateMask: []string{"table"}}); err != nil || !slices.Equal(next.GetJsonpaths(), []string{"$.a", "$.b"}) {
		t.Errorf("given jsonpaths: %q, %v; want them kept", next.GetJsonpaths(), err)
	}
	multi := proto.Clone(cur).(*api.JobSpec)
	multi.Tables = []*api.TableSpec{cur.GetTable()}
	other := proto.Clone(dst).(*api.TableSpec)
	other.Database = "analytics"
	whole := proto.Clone(cur).(*api.JobSpec)
	whole.Table.Name = "orders2"
	for what, tc := range map[string]struct {
		cur *api.JobSpec
		req *api.AlterJobRequest
		say string
	}{
		"another database": {cur, &api.AlterJobRequest{Spec: &api.JobSpec{Table: other}, UpdateMask: []string{"table"}}, "a job moves only to a table of its own database"},
		"no name":          {cur, &api.AlterJobRequest{Spec: &api.JobSpec{Table: &api.TableSpec{}}, UpdateMask: []string{"table"}}, "names no table"},
		"multi-table":      {multi, &api.AlterJobRequest{Spec: &api.JobSpec{Table: dst}, UpdateMask: []string{"table"}}, "multi-table"},
		"whole spec":       {cur, &api.AlterJobRequest{Spec: whole}, "an alter may change only"},
	} {
		_, _, _, err := Alter(tc.cur, tc.req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "table" || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("%s: %v; want a *FieldError on table saying %q", what, err, tc.say)
		}
	}
}

// TestAlterNumAsString: num_as_string is alterable on a json job (Doris's
// ALTER ROUTINE LOAD changes it, in its suites), through a mask and a
// whole spec, and refused on a csv one.
func TestAlterNumAsString(t *testing.T) {
	cur := alterBase()
	cur.Format, cur.ColumnSeparator = FormatJSON, ""
	ApplyDefaults(cur)
	next, changes, _, err := Alter(cur, &api.AlterJobRequest{Spec: &api.JobSpec{NumAsString: true}, UpdateMask: []string{"num_as_string"}})
	if err != nil || !next.GetNumAsString() || !slices.Equal(changes, []string{"num_as_string false->true"}) {
		t.Fatalf("mask: next %v, changes %q, %v", next.GetNumAsString(), changes, err)
	}
	whole := proto.Clone(cur).(*api.JobSpec)
	whole.NumAsString = true
	if next, _, _, err := Alter(cur, &api.AlterJobRequest{Spec: whole}); err != nil || !next.GetNumAsString() {
		t.Fatalf("whole spec: %v, %v", next.GetNumAsString(), err)
	}
	_, _, _, err = Alter(alterBase(), &api.AlterJobRequest{Spec: &api.JobSpec{NumAsString: true}, UpdateMask: []string{"num_as_string"}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "num_as_string" {
		t.Fatalf("csv job: %v, want a *FieldError on num_as_string", err)
	}
}

// TestAlterUniqueKeyUpdateMode: unique_key_update_mode is alterable, only
// while PAUSED (a change of how records become rows), and described.
func TestAlterUniqueKeyUpdateMode(t *testing.T) {
	cur := alterBase()
	next, changes, _, err := Alter(cur, &api.AlterJobRequest{Spec: &api.JobSpec{UniqueKeyUpdateMode: "UPDATE_FIXED_COLUMNS"}, UpdateMask: []string{"unique_key_update_mode"}})
	if err != nil || next.GetUniqueKeyUpdateMode() != "UPDATE_FIXED_COLUMNS" {
		t.Fatalf("next = %v, %v", next, err)
	}
	if want := []string{`unique_key_update_mode ""->"UPDATE_FIXED_COLUMNS"`}; !slices.Equal(changes, want) {
		t.Errorf("changes = %q, want %q", changes, want)
	}
	if got := PausedOnly(cur, next); !slices.Equal(got, []string{"unique_key_update_mode"}) {
		t.Errorf("PausedOnly = %q", got)
	}
}
