package doris

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// storedSpec is what a node keeps of a CREATE ROUTINE LOAD: the parsed
// spec with the table's columns and the defaults.
func storedSpec(t *testing.T, sql string) *api.JobSpec {
	t.Helper()
	st := mustParse(t, sql)
	spec := st.CreateRoutineLoad
	spec.Table.Database = st.DB
	for _, n := range []string{"k", "v", "seq", "flag"} {
		spec.Table.Columns = append(spec.Table.Columns, &api.Column{Name: n, Type: api.ColumnType_STRING})
	}
	config.ApplyDefaults(spec)
	return spec
}

// TestCreateStatementRoundTrip: SHOW CREATE ROUTINE LOAD's statement
// parses back to the job's spec.
func TestCreateStatementRoundTrip(t *testing.T) {
	for _, sql := range []string{
		`CREATE ROUTINE LOAD example_db.j1 ON t FROM KAFKA ("kafka_broker_list" = "b1:9092,b2:9092", "kafka_topic" = "orders")`,
		`CREATE ROUTINE LOAD j2 ON t WITH MERGE
		   COLUMNS TERMINATED BY "\x01", COLUMNS (k, v, seq, flag, v2 = v + 1), WHERE k > 1, DELETE ON flag = 1, ORDER BY seq
		   PROPERTIES ("desired_concurrent_number" = "3", "max_batch_interval" = "500ms", "max_batch_rows" = "300000",
		     "max_batch_size" = "104857600", "max_error_number" = "7", "max_filter_ratio" = "0.5", "strict_mode" = "true",
		     "timezone" = "Asia/Shanghai", "enclose" = "'", "escape" = "\\", "empty_field_as_null" = "true",
		     "loadnode.error_topic" = "dead", "loadnode.error_topic_brokers" = "b3:9092")
		   FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "t\"q", "kafka_partitions" = "0,1,2",
		     "kafka_offsets" = "OFFSET_BEGINNING,5,2024-01-02 03:04:05", "property.group.id" = "g1",
		     "property.client.id" = "c1", "property.kafka_default_offsets" = "OFFSET_END")`,
		`CREATE ROUTINE LOAD j3 ON t COLUMNS TERMINATED BY "\t"
		   PROPERTIES ("format" = "json", "jsonpaths" = "[\"$.a\",\"$.b.c\"]", "json_root" = "$.data",
		     "partial_columns" = "true", "partial_update_new_key_behavior" = "ERROR", "fill_missing_columns" = "false")
		   FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "x")`,
		`CREATE ROUTINE LOAD j4 ON t PROPERTIES ("format" = "json")
		   FROM KINESIS ("kinesis_stream" = "s", "kinesis_region" = "us-east-1", "kinesis_endpoint" = "http://127.0.0.1:4567",
		     "aws.access_key" = "AK", "aws.secret_key" = "SK", "kinesis_shards" = "shardId-000000000000,shardId-000000000001",
		     "kinesis_positions" = "TRIM_HORIZON,LATEST", "property.kinesis_default_position" = "TRIM_HORIZON")`,
	} {
		if strings.Contains(sql, "COLUMNS TERMINATED") && strings.Contains(sql, `"json"`) {
			// a separator is csv only: drop it for the json case
			sql = strings.Replace(sql, `COLUMNS TERMINATED BY "\t"`, "", 1)
		}
		want := storedSpec(t, sql)
		stmt := CreateStatement(want)
		got := storedSpec(t, stmt)
		if !proto.Equal(want, got) {
			t.Errorf("%s\nrendered as\n%s\nparses to a different spec:\nwant %s\ngot  %s", sql, stmt, prototext.Format(want), prototext.Format(got))
		}
	}
}

func TestRoutineLoadRow(t *testing.T) {
	spec := storedSpec(t, `CREATE ROUTINE LOAD db1.j ON t PROPERTIES ("max_batch_interval" = "20")
	  FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "orders", "property.sasl.password" = "******")`)
	created := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	info := &api.JobInfo{
		Summary:       &api.JobSummary{Id: 42, Name: "j", State: api.JobState_PAUSED, Reason: api.Reason_USER_PAUSE, ReasonMessage: "paused by the user"},
		Spec:          spec,
		CreatedUnixMs: created.UnixMilli(),
		Partitions: []*api.PartitionInfo{
			{Partition: 0, CommittedOffset: 3, HighWatermark: 5, Lag: 2},
			{Partition: 1, CommittedOffset: 0, HighWatermark: -1, Lag: -1},
		},
		Stats: &api.JobStats{LoadedRows: 3, ErrorRows: 1, UnselectedRows: 2, ReceivedBytes: 28, CommittedBatches: 4, AbortedBatches: 1},
		History: []*api.Transition{
			{From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, TimeUnixMs: created.Add(time.Second).UnixMilli()},
			{From: api.JobState_RUNNING, To: api.JobState_PAUSED, TimeUnixMs: created.Add(time.Minute).UnixMilli()},
		},
	}
	row := RoutineLoadRow(info, time.UTC)
	if len(row) != len(RoutineLoadColumns) || len(RoutineLoadColumns) != 22 {
		t.Fatalf("%d cells, %d columns: want 22 (Doris's)", len(row), len(RoutineLoadColumns))
	}
	cell := func(name string) string {
		for i, c := range RoutineLoadColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return ""
	}
	// The positions tools read (the Doris regression suites): [8] State,
	// [11] JobProperties, [14] Statistic, [17] ReasonOfStateChanged.
	for i, want := range map[int]string{0: "42", 1: "j", 2: "2026-12-02 01:00:00", 3: "2026-12-02 01:01:00", 4: "NULL",
		5: "db1", 6: "t", 7: "false", 8: "PAUSED", 9: "KAFKA", 10: "0", 17: "paused by the user"} {
		if row[i] != want {
			t.Errorf("[%d] %s = %q, want %q", i, RoutineLoadColumns[i], row[i], want)
		}
	}
	var stat map[string]any
	if err := json.Unmarshal([]byte(row[14]), &stat); err != nil {
		t.Fatalf("Statistic %q: %v", row[14], err)
	}
	for k, want := range map[string]float64{"loadedRows": 3, "errorRows": 1, "unselectedRows": 2, "totalRows": 6,
		"receivedBytes": 28, "committedTaskNum": 4, "abortedTaskNum": 1} {
		if stat[k] != want {
			t.Errorf("Statistic %s = %v, want %v (%s)", k, stat[k], want, row[14])
		}
	}
	var props map[string]string
	if err := json.Unmarshal([]byte(row[11]), &props); err != nil {
		t.Fatalf("JobProperties %q: %v", row[11], err)
	}
	if props["max_batch_interval"] != "20" || props["format"] != "csv" || props["merge_type"] != "APPEND" || props["column_separator"] != "'\t'" {
		t.Errorf("JobProperties = %s", row[11])
	}
	if got, want := cell("Progress"), `{"0":"2","1":"-1"}`; got != want {
		t.Errorf("Progress = %s, want %s (the last offset consumed, as Doris shows it)", got, want)
	}
	if got, want := cell("Lag"), `{"0":2,"1":-1}`; got != want {
		t.Errorf("Lag = %s, want %s", got, want)
	}
	if got, want := cell("DataSourceProperties"), `{"brokerList":"b1:9092","currentKafkaPartitions":"0,1","topic":"orders"}`; got != want {
		t.Errorf("DataSourceProperties = %s, want %s", got, want)
	}
	if got := cell("CustomProperties"); !strings.Contains(got, `"kafka_default_offsets":"OFFSET_END"`) || !strings.Contains(got, `"sasl.password":"******"`) {
		t.Errorf("CustomProperties = %s", got)
	}

	// A stopped job: EndTime set, PauseTime NULL.
	info = proto.Clone(info).(*api.JobInfo)
	info.Summary.State = api.JobState_STOPPED
	info.History = append(info.History, &api.Transition{From: api.JobState_PAUSED, To: api.JobState_STOPPED, TimeUnixMs: created.Add(time.Hour).UnixMilli()})
	row = RoutineLoadRow(info, time.UTC)
	if row[3] != "NULL" || row[4] != "2026-12-02 02:00:00" || row[8] != "STOPPED" {
		t.Errorf("stopped: PauseTime %q EndTime %q State %q", row[3], row[4], row[8])
	}

	// A multi-table load names its tables.
	info = proto.Clone(info).(*api.JobInfo)
	info.Spec.Table = nil
	info.Spec.Tables = []*api.TableSpec{{Name: "a"}, {Name: "b"}}
	row = RoutineLoadRow(info, time.UTC)
	if row[6] != "a,b" || row[7] != "true" {
		t.Errorf("multi-table: TableName %q IsMultiTable %q", row[6], row[7])
	}
}

// TestRoutineLoadRowSinkUnreachable (issue 25, D7): a job whose sink a
// show could not read is still a row, its OtherMsg saying what is missing
// and why; the figures not read are left out of the Statistic cell.
func TestRoutineLoadRowSinkUnreachable(t *testing.T) {
	spec := storedSpec(t, `CREATE ROUTINE LOAD db1.j ON t FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "orders")`)
	info := &api.JobInfo{
		Summary: &api.JobSummary{Id: 1, Name: "j", State: api.JobState_RUNNING},
		Spec:    spec,
		Stats:   &api.JobStats{LoadedRows: 3},
		// A live job: its figures are known, its error rows were not read.
		ErrorRowsUnavailable: "connection refused",
	}
	row := RoutineLoadRow(info, time.UTC)
	if row[8] != "RUNNING" || row[19] != "sink unreachable: error rows unavailable: connection refused" || !strings.Contains(row[14], `"loadedRows":3`) {
		t.Errorf("live job, error rows unavailable: State %q OtherMsg %q Statistic %s", row[8], row[19], row[14])
	}
	// A stopped job: nothing of its sink was read.
	info.Summary.State, info.Stats, info.ProgressUnavailable = api.JobState_STOPPED, nil, "connection refused"
	row = RoutineLoadRow(info, time.UTC)
	if row[19] != "sink unreachable: progress and statistics unavailable: connection refused" || row[14] != "{}" {
		t.Errorf("stopped job, progress unavailable: OtherMsg %q Statistic %s", row[19], row[14])
	}
}

func TestRoutineLoadTaskRows(t *testing.T) {
	created := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	info := &api.JobInfo{
		Summary:    &api.JobSummary{Id: 7, Name: "j", State: api.JobState_RUNNING},
		Spec:       &api.JobSpec{MaxBatchIntervalMs: 10000},
		Partitions: []*api.PartitionInfo{{Partition: 0, CommittedOffset: 10}, {Partition: 1, CommittedOffset: 20}, {Partition: 2, CommittedOffset: 30}},
		Tasks: []*api.TaskInfo{
			{Id: "9-0", Generation: 9, Index: 0, Partitions: []int32{0, 2}, CreatedUnixMs: created.UnixMilli()},
			{Id: "9-1", Generation: 9, Index: 1, Partitions: []int32{1}, CreatedUnixMs: created.UnixMilli()},
		},
	}
	rows := RoutineLoadTaskRows(info, time.UTC)
	if len(rows) != 2 || len(RoutineLoadTaskColumns) != 9 {
		t.Fatalf("rows %v, columns %v", rows, RoutineLoadTaskColumns)
	}
	want := []string{"9-0", "9", "PREPARE", "7", "2026-12-02 01:00:00", "2026-12-02 01:00:00", "10", "-1", `{"0":"10","2":"30"}`}
	if !slices.Equal(want, rows[0]) {
		t.Errorf("task row %q, want %q", rows[0], want)
	}
	if rows[1][8] != `{"1":"20"}` {
		t.Errorf("task 1 DataSourceProperties = %s", rows[1][8])
	}
	info.Tasks = nil
	if rows := RoutineLoadTaskRows(info, time.UTC); len(rows) != 0 {
		t.Errorf("no task, rows %v", rows)
	}
}

// TestCreateStatementMultiTable: a multi-table load renders without ON,
// so that it reads back as a multi-table load of its database.
func TestCreateStatementMultiTable(t *testing.T) {
	spec := &api.JobSpec{
		Name:   "mt",
		Table:  &api.TableSpec{Name: "a", Database: "analytics"},
		Tables: []*api.TableSpec{{Name: "a", Database: "analytics"}, {Name: "b", Database: "analytics"}},
		Format: config.FormatCSV,
		Kafka:  &api.KafkaSpec{Brokers: []string{"b1:9092"}, Topic: "t"},
	}
	config.ApplyDefaults(spec)
	stmt := CreateStatement(spec)
	st := mustParse(t, stmt)
	if !st.MultiTable || st.DB != "analytics" || st.CreateRoutineLoad.GetKafka().GetTopic() != "t" {
		t.Fatalf("%s\nparses to %+v, want a multi-table load in analytics", stmt, st)
	}
}

// TestRoutineLoadRowSubSecondInterval: a max_batch_interval under a second
// shows as the duration it is ("100ms", as SHOW CREATE ROUTINE LOAD writes
// it), not as 0 whole seconds.
func TestRoutineLoadRowSubSecondInterval(t *testing.T) {
	for _, tc := range []struct{ given, want string }{{"100ms", "100ms"}, {"1500ms", "1500ms"}, {"2", "2"}} {
		spec := storedSpec(t, `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_interval" = "`+tc.given+`")
		  FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "orders")`)
		row := RoutineLoadRow(&api.JobInfo{Summary: &api.JobSummary{Id: 1, Name: "j"}, Spec: spec}, time.UTC)
		var props map[string]string
		if err := json.Unmarshal([]byte(row[11]), &props); err != nil {
			t.Fatalf("JobProperties %q: %v", row[11], err)
		}
		if got := props["max_batch_interval"]; got != tc.want {
			t.Errorf("max_batch_interval %s shows as %q, want %q", tc.given, got, tc.want)
		}
	}
}

// TestJobPropertiesJSONPaths: a json job's JobProperties shows the
// jsonpaths it was given, and "" (as Doris) for the ones loadnode derived
// from the table's columns when it was given none; num_as_string as set.
func TestJobPropertiesJSONPaths(t *testing.T) {
	for _, tc := range []struct{ props, paths, numStr string }{
		{`"format" = "json"`, "", "false"},
		{`"format" = "json", "jsonpaths" = "[\"$.v\", \"$.k\"]", "num_as_string" = "true"`, `["$.v","$.k"]`, "true"},
	} {
		spec := storedSpec(t, `CREATE ROUTINE LOAD j ON t PROPERTIES (`+tc.props+`) FROM KAFKA ("kafka_broker_list" = "b1:9092", "kafka_topic" = "orders")`)
		if len(spec.GetJsonpaths()) == 0 {
			t.Fatalf("%s: no jsonpaths in the spec (the defaults derive them)", tc.props)
		}
		row := RoutineLoadRow(&api.JobInfo{Summary: &api.JobSummary{Id: 1, Name: "j"}, Spec: spec}, time.UTC)
		var props map[string]string
		if err := json.Unmarshal([]byte(row[11]), &props); err != nil {
			t.Fatalf("JobProperties %q: %v", row[11], err)
		}
		if props["jsonpaths"] != tc.paths || props["num_as_string"] != tc.numStr {
			t.Errorf("%s: jsonpaths %q, num_as_string %q; want %q, %q", tc.props, props["jsonpaths"], props["num_as_string"], tc.paths, tc.numStr)
		}
	}
}
