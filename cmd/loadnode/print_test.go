package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

func vInt(i int64) *api.Value     { return &api.Value{Kind: &api.Value_Int64{Int64: i}} }
func vFloat(f float64) *api.Value { return &api.Value{Kind: &api.Value_Float64{Float64: f}} }
func vStr(s string) *api.Value    { return &api.Value{Kind: &api.Value_String_{String_: s}} }
func vBool(b bool) *api.Value     { return &api.Value{Kind: &api.Value_Bool{Bool: b}} }
func vTS(us int64) *api.Value {
	return &api.Value{Kind: &api.Value_TimestampMicros{TimestampMicros: us}}
}
func vNull() *api.Value { return &api.Value{Kind: &api.Value_Null{Null: true}} }

func ordersSchema() *api.TableSpec {
	return &api.TableSpec{Name: "orders", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "amount", Type: api.ColumnType_FLOAT64},
		{Name: "note", Type: api.ColumnType_STRING},
		{Name: "paid", Type: api.ColumnType_BOOL},
		{Name: "at", Type: api.ColumnType_TIMESTAMP},
	}}
}

// 2024-01-02T03:04:05.123456Z
var tsMicros = time.Date(2024, 1, 2, 3, 4, 5, 123456000, time.UTC).UnixMicro()

func TestPrintRowsJSONL(t *testing.T) {
	rows := []*api.Row{
		{Values: []*api.Value{vInt(9007199254740993), vFloat(12.5), vStr(`a "q" <b> & é`), vBool(true), vTS(tsMicros)}},
		{Values: []*api.Value{vNull(), vNull(), vNull(), vNull(), vNull()}},
		{Values: []*api.Value{vInt(-1), vFloat(1e-7), vStr("tab\there\nnl"), vBool(false), vTS(0)}},
		{Values: []*api.Value{vInt(2), vFloat(math.Inf(1)), vStr(""), {}, vTS(-1)}},
		{Values: []*api.Value{vInt(3)}}, // short row: missing values are null
	}
	var b bytes.Buffer
	if err := printRowsJSONL(&b, ordersSchema(), rows); err != nil {
		t.Fatal(err)
	}
	want := `{"id":9007199254740993,"amount":12.5,"note":"a \"q\" <b> & é","paid":true,"at":"2024-01-02T03:04:05.123456Z"}
{"id":null,"amount":null,"note":null,"paid":null,"at":null}
{"id":-1,"amount":1e-7,"note":"tab\there\nnl","paid":false,"at":"1970-01-01T00:00:00Z"}
{"id":2,"amount":null,"note":"","paid":null,"at":"1969-12-31T23:59:59.999999Z"}
{"id":3,"amount":null,"note":null,"paid":null,"at":null}
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	// Every line is valid JSON, and int64 survives as a number.
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
}

func TestPrintRowsTable(t *testing.T) {
	rows := []*api.Row{
		{Values: []*api.Value{vInt(1), vFloat(12.5), vStr("hello world"), vBool(true), vTS(tsMicros)}},
		{Values: []*api.Value{vNull(), vNull(), vStr("NULL"), vNull(), vNull()}},
		{Values: []*api.Value{vInt(1234567), vFloat(-0.25), vStr("two\tcols"), vBool(false), vTS(0)}},
		{Values: []*api.Value{vInt(0), vFloat(0), vStr(""), vBool(true), vTS(1)}},
	}
	var b bytes.Buffer
	if err := printRowsTable(&b, ordersSchema(), rows); err != nil {
		t.Fatal(err)
	}
	want := `id       amount  note         paid   at
1        12.5    hello world  true   2024-01-02T03:04:05.123456Z
NULL     NULL    "NULL"       NULL   NULL
1234567  -0.25   "two\tcols"  false  1970-01-01T00:00:00Z
0        0       ""           true   1970-01-01T00:00:00.000001Z
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintRowsEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := printRowsJSONL(&b, ordersSchema(), nil); err != nil || b.Len() != 0 {
		t.Fatalf("jsonl of no rows: %q, %v", b.String(), err)
	}
	if err := printRowsTable(&b, ordersSchema(), nil); err != nil || b.String() != "id  amount  note  paid  at\n" {
		t.Fatalf("table of no rows: %q, %v", b.String(), err)
	}
}

func TestPrintJobList(t *testing.T) {
	jobs := []*api.JobSummary{
		{Id: 1, Name: "orders_load", State: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED, Table: "orders", Source: "kafka://orders",
			Health: "lagging", TotalLag: 12000, LoadedRows: 5, Sink: "postgres db public.orders"},
		{Id: 2, Name: "b", State: api.JobState_PAUSED, Reason: api.Reason_ERROR_ROWS_EXCEEDED, Table: "t", Source: "kafka://t"},
		{Id: 3, Name: "c", State: api.JobState_NEED_SCHEDULE, Table: "t", Source: "kafka://t"},
	}
	var b bytes.Buffer
	if err := printJobList(&b, jobs); err != nil {
		t.Fatal(err)
	}
	want := `NAME         STATE          REASON               HEALTH   LAG    ROWS  TABLE   SOURCE          SINK
orders_load  RUNNING        SCHEDULED            lagging  12000  5     orders  kafka://orders  postgres db public.orders
b            PAUSED         ERROR_ROWS_EXCEEDED  -        -      -     t       kafka://t       -
c            NEED_SCHEDULE  -                    -        -      -     t       kafka://t       -
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}

	// Cluster mode: a job whose owner did not give its figures shows them
	// unknown, never 0.
	b.Reset()
	if err := printJobList(&b, []*api.JobSummary{{Id: 4, Name: "far", State: api.JobState_RUNNING, Table: "t", Source: "kafka://t",
		Health: "unknown", TotalLag: -1, LoadedRows: -1, RowsPerSecond: -1, Sink: "postgres db public.t", Owner: "m2"}}); err != nil {
		t.Fatal(err)
	}
	want = `NAME  STATE    REASON  HEALTH   LAG  ROWS  TABLE  SOURCE     SINK                  OWNER
far   RUNNING  -       unknown  ?    ?     t      kafka://t  postgres db public.t  m2
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// t0 is 2024-01-02T03:04:05.000Z in Unix milliseconds.
var t0 = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()

func showInfo() *api.JobInfo {
	spec := &api.JobSpec{
		Name:   "orders_load",
		Table:  ordersSchema(),
		Format: "csv", ColumnSeparator: ",",
		Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:9092"}, Topic: "orders", DefaultOffset: "OFFSET_BEGINNING"},
	}
	config.ApplyDefaults(spec)
	long := bytes.Repeat([]byte("x"), 300)
	return &api.JobInfo{
		Summary: &api.JobSummary{Id: 7, Name: "orders_load", State: api.JobState_PAUSED, Reason: api.Reason_ERROR_ROWS_EXCEEDED,
			ReasonMessage: "3 error rows in 10 rows > max_error_number 2", Table: "orders", Source: "kafka://orders"},
		Spec: spec,
		Partitions: []*api.PartitionInfo{
			{Partition: 0, CommittedOffset: 120, HighWatermark: 150, Lag: 30},
			{Partition: 1, CommittedOffset: 5, HighWatermark: -1, Lag: -1},
		},
		Stats: &api.JobStats{LoadedRows: 125, ErrorRows: 3, ReceivedBytes: 4096, CommittedBatches: 4, AbortedBatches: 1,
			WindowRows: 10, WindowErrorRows: 3, LastCommitUnixMs: t0 + 60_000},
		History: []*api.Transition{
			{Seq: 1, TimeUnixMs: t0, To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED, Message: "created"},
			{Seq: 2, TimeUnixMs: t0 + 1, From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED},
			{Seq: 3, TimeUnixMs: t0 + 61_500, From: api.JobState_RUNNING, To: api.JobState_PAUSED, Reason: api.Reason_ERROR_ROWS_EXCEEDED, Message: "3 error rows in 10 rows > max_error_number 2"},
		},
		ErrorRows: []*api.ErrorRow{
			{Partition: 0, Offset: 17, Raw: []byte("1,abc,\"x\"\n\xff"), Reason: "column amount: not a number", TimeUnixMs: t0 + 61_000},
			{Partition: 1, Offset: 3, Raw: long, Reason: "too many columns", TimeUnixMs: t0 + 61_400},
		},
		CreatedUnixMs: t0,
		RunningTasks:  0,
		TotalLag:      -1,
	}
}

func TestPrintJobText(t *testing.T) {
	var b bytes.Buffer
	if err := printJobText(&b, showInfo()); err != nil {
		t.Fatal(err)
	}
	want := `Job:            orders_load (id 7)
State:          PAUSED (ERROR_ROWS_EXCEEDED: 3 error rows in 10 rows > max_error_number 2)
Table:          orders
Source:         kafka://orders
Format:         csv
Created:        2024-01-02T03:04:05.000Z
Running tasks:  0
Total lag:      ?

History:
  SEQ  TIME                      FROM           TO             REASON               MESSAGE
  1    2024-01-02T03:04:05.000Z  -              NEED_SCHEDULE  CREATED              created
  2    2024-01-02T03:04:05.001Z  NEED_SCHEDULE  RUNNING        SCHEDULED            ""
  3    2024-01-02T03:05:06.500Z  RUNNING        PAUSED         ERROR_ROWS_EXCEEDED  3 error rows in 10 rows > max_error_number 2

Partitions:
  PARTITION  COMMITTED  HIGH WATERMARK  LAG
  0          120        150             30
  1          5          ?               ?

Stats:
  loaded rows        125
  error rows         3
  received bytes     4096
  committed batches  4
  aborted batches    1
  error window       3 error rows in 10 rows
  last commit        2024-01-02T03:05:05.000Z

Last error rows (2):
  partition 0 offset 17 at 2024-01-02T03:05:06.000Z: column amount: not a number
    raw: "1,abc,\"x\"\n\xff"
  partition 1 offset 3 at 2024-01-02T03:05:06.400Z: too many columns
    raw: "` + strings.Repeat("x", 200) + `"... (300 bytes, first 200 shown)
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPrintJobTextMinimal(t *testing.T) {
	// A job just created: no partitions, history or stats yet.
	info := &api.JobInfo{Summary: &api.JobSummary{Id: 1, Name: "j", State: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED, ReasonMessage: "created"}}
	var b bytes.Buffer
	if err := printJobText(&b, info); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"State:          NEED_SCHEDULE (CREATED)\n", "Total lag:      0\n", "last commit        -\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	for _, absent := range []string{"History:", "Partitions:", "error rows ("} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("unexpected %q in\n%s", absent, b.String())
		}
	}
}

// TestPrintJobTextRefusals: commits the sink refused on this node are
// shown under the statistics, with the newest reason; none, no line.
func TestPrintJobTextRefusals(t *testing.T) {
	info := showInfo()
	info.RefusedCommits, info.LastRefusal = 3, "postgres: commit job 7 partition 0: stored progress 500, commit from 0: sink: stale commit"
	var b bytes.Buffer
	if err := printJobText(&b, info); err != nil {
		t.Fatal(err)
	}
	want := "  aborted batches    1\n  refused commits    3 on this node; last: postgres: commit job 7 partition 0: stored progress 500, commit from 0: sink: stale commit\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("missing %q in\n%s", want, b.String())
	}
	b.Reset()
	if err := printJobText(&b, showInfo()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "refused commits") {
		t.Fatalf("refused commits shown for a job that had none:\n%s", b.String())
	}
}

func TestPrintJobYAML(t *testing.T) {
	info := showInfo()
	var b bytes.Buffer
	if err := printJobYAML(&b, info); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "# job orders_load (id 7)\n# state: PAUSED (ERROR_ROWS_EXCEEDED: ") {
		t.Errorf("status header:\n%s", out)
	}
	// The output is a spec file: it reads back to the same spec.
	spec, err := config.ParseJobSpec(b.Bytes())
	if err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if !proto.Equal(spec, info.GetSpec()) {
		t.Fatalf("round trip:\n got %v\nwant %v", spec, info.GetSpec())
	}
	if err := printJobYAML(&b, &api.JobInfo{}); err == nil {
		t.Error("a job without a spec printed")
	}
}

func TestPrintJobJSON(t *testing.T) {
	info := showInfo()
	var b bytes.Buffer
	if err := printJobJSON(&b, info); err != nil {
		t.Fatal(err)
	}
	var back api.JobInfo
	if err := protojson.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&back, info) {
		t.Fatal("protojson round trip differs")
	}
}

func TestStateText(t *testing.T) {
	for _, tc := range []struct {
		s    *api.JobSummary
		want string
	}{
		{&api.JobSummary{State: api.JobState_RUNNING}, "RUNNING"},
		{&api.JobSummary{State: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED, ReasonMessage: "created"}, "NEED_SCHEDULE (CREATED)"},
		{&api.JobSummary{State: api.JobState_PAUSED, Reason: api.Reason_USER_PAUSE, ReasonMessage: "paused by user"}, "PAUSED (USER_PAUSE: paused by user)"},
	} {
		if got := stateText(tc.s); got != tc.want {
			t.Errorf("stateText(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":       "plain",
		"two words":   "two words",
		"":            `""`,
		" lead":       `" lead"`,
		"trail ":      `"trail "`,
		"a\tb":        `"a\tb"`,
		"line\nbreak": `"line\nbreak"`,
		"é ü":         "é ü",
	} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintJobTextPublish(t *testing.T) {
	info := showInfo()
	info.Publish = &api.PublishStatus{CommitGroup: "lag", GroupCommits: 4, GroupFailures: 1, GroupLastError: "coordinator not available",
		ErrorTopic: "orders-dlq", DeadLettersProduced: 3, DeadLettersPending: 2, DeadLetterFailures: 7}
	var b bytes.Buffer
	if err := printJobText(&b, info); err != nil {
		t.Fatal(err)
	}
	want := `
Publishing (best effort, since the source was opened):
  commit group  lag: 4 commits, 1 failures, last error: coordinator not available
  error topic   orders-dlq: 3 produced, 2 pending, 7 failures
`
	if !strings.Contains(b.String(), want) {
		t.Fatalf("got\n%s\nwant it to contain\n%s", b.String(), want)
	}
}

// TestPrintJobTextSinkUnreachable (issue 25, D7): a show whose sink did
// not answer prints the job with the sink marked unreachable and each part
// it could not read marked unavailable, with the reason.
func TestPrintJobTextSinkUnreachable(t *testing.T) {
	info := showInfo()
	info.Sink = "postgres analytics public.orders"
	info.ErrorRowsUnavailable = "postgres: error rows of job 7: failed to connect: connection refused"
	var b bytes.Buffer
	if err := printJobText(&b, info); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Sink:           postgres analytics public.orders (unreachable: see below)\n",
		"\nLast error rows: unavailable: postgres: error rows of job 7: failed to connect: connection refused\n",
		"  loaded rows ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	info.ProgressUnavailable = "the sink did not answer within 3s"
	b.Reset()
	if err := printJobText(&b, info); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nStats: unavailable: the sink did not answer within 3s\n") || strings.Contains(b.String(), "loaded rows") {
		t.Errorf("a show without the progress prints\n%s\nwant the statistics marked unavailable", b.String())
	}
	b.Reset()
	if err := printJobYAML(&b, info); err != nil || !strings.Contains(b.String(), "# loaded rows, error rows, total lag: unavailable: the sink did not answer within 3s\n") {
		t.Errorf("job show -o yaml without the progress = %v\n%s", err, b.String())
	}
}
