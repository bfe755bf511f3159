package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/registrytest"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/node"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

const (
	avroOrderV1 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}},{"name":"old","type":"string"}]}`
	// v2 adds qty (with a default) and removes old.
	avroOrderV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}},{"name":"qty","type":"int","default":1}]}`
)

// fastRetry is a node config whose jobs give up on a dead registry (or
// source) quickly and auto-resume soon.
func fastRetry(t *testing.T) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "node.yaml")
	cfg := "source_retry_base: 100ms\nsource_retry_limit: 2\nauto_resume_base: 1s\nauto_resume_max: 2s\nwatermark_interval: 200ms\n"
	if err := os.WriteFile(f, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", f}
}

func avroWire(t *testing.T, schema string, id int, v any) []byte {
	t.Helper()
	body, err := avro.Marshal(avro.MustParse(schema), v)
	if err != nil {
		t.Fatal(err)
	}
	var h sr.ConfluentHeader
	b, _ := h.AppendEncode(nil, id, nil)
	return append(b, body...)
}

// produceRecords produces recs and waits for every acknowledgement; with
// a ledger, each record is recorded with payload seq from[i].
func produceRecords(t *testing.T, b *testnode.Broker, l *ledger.Ledger, recs []*kgo.Record, seqs []int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i, r := range recs {
		wg.Add(1)
		b.Client().Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				return
			}
			if l != nil {
				l.Add(ledger.Position{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}, ledger.Payload{Seq: seqs[i]})
			}
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func avroSpec(name, topic, url string, brokers []string) *api.JobSpec {
	return &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: name + "_rows", Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
			{Name: "city", Type: api.ColumnType_STRING},
			{Name: "qty", Type: api.ColumnType_INT64, DefaultValue: proto.String("7")},
			{Name: "k", Type: api.ColumnType_STRING},
			{Name: "trace", Type: api.ColumnType_STRING},
			{Name: "ts", Type: api.ColumnType_TIMESTAMP},
			{Name: "src", Type: api.ColumnType_STRING},
		}},
		Format:                  "avro",
		SchemaRegistry:          &api.SchemaRegistrySpec{Url: url, TimeoutMs: 2000},
		Jsonpaths:               []string{"$.id", "$.note", "$.addr.city", "$.qty"},
		ColumnsMapping:          []string{"id", "note", "city", "qty", "k = __key", "trace = `__header.trace`", "ts = __timestamp", "src = concat(__topic, ':', __partition, ':', __offset)"},
		DesiredConcurrentNumber: 1, MaxBatchIntervalMs: 200, MaxErrorNumber: 10, MaxBatchRows: 5000, MaxBatchSize: 4 << 20,
		Kafka: &api.KafkaSpec{Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING"},
	}
}

// TestAvroSchemaRegistry: avro records through the binary, with a schema
// change mid-stream (a field added with a default, one removed), nested
// fields by path, the key, a header, the timestamp, topic, partition and
// offset in columns; a record naming an unknown schema id is an error row
// with its raw bytes; a registry that goes down pauses the job
// (SCHEMA_REGISTRY_UNREACHABLE, no error rows), and when it is back the
// job resumes by itself and loads every record once.
func TestAvroSchemaRegistry(t *testing.T) {
	const topic = "avro_orders"
	reg := registrytest.New(t)
	id1 := reg.Register(t, topic+"-value", sr.TypeAvro, avroOrderV1)
	id2 := reg.Register(t, topic+"-value", sr.TypeAvro, avroOrderV2)
	b := testnode.StartBroker(t, 1, topic)
	p := startNodeArgs(t, t.TempDir(), fastRetry(t))
	c := p.Client(t)
	ts0 := time.UnixMilli(1_700_000_000_000).UTC()
	var recs []*kgo.Record
	for i := 0; i < 60; i++ {
		var v []byte
		if i < 30 {
			v = avroWire(t, avroOrderV1, id1, map[string]any{"id": int64(i), "note": fmt.Sprintf("n%d", i), "addr": map[string]any{"city": "Oslo"}, "old": "x"})
		} else {
			v = avroWire(t, avroOrderV2, id2, map[string]any{"id": int64(i), "note": nil, "addr": map[string]any{"city": "Rome"}, "qty": 3})
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", i), Value: v, Timestamp: ts0.Add(time.Duration(i) * time.Second),
			Headers: []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t-%d", i)}}})
	}
	var h sr.ConfluentHeader
	unknown, _ := h.AppendEncode(nil, 4242, nil)
	unknown = append(unknown, 0x02, 0x00)
	recs = append(recs, &kgo.Record{Topic: topic, Value: unknown})
	produceRecords(t, b, nil, recs, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, avroSpec("avro_load", topic, reg.URL(), b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "avro_load", topic, 60*time.Second)
	info := showJob(t, c, "avro_load")
	if info.Stats.LoadedRows != 60 || info.Stats.ErrorRows != 1 || len(info.ErrorRows) != 1 {
		t.Fatalf("loaded %d, error rows %d (%v), want 60 and 1", info.Stats.LoadedRows, info.Stats.ErrorRows, info.ErrorRows)
	}
	er := info.ErrorRows[0]
	if !bytes.Equal(er.Raw, unknown) || !strings.Contains(er.Reason, "schema id 4242 is not in the schema registry") {
		t.Fatalf("error row: raw %x reason %q; want raw %x and the unknown id named", er.Raw, er.Reason, unknown)
	}
	rows := scanAll(t, c, "avro_load_rows")
	if len(rows) != 60 {
		t.Fatalf("%d rows, want 60", len(rows))
	}
	for _, r := range rows {
		v := r.Values
		i := v[0].GetInt64()
		wantCity, wantQty, wantNote := "Oslo", int64(7), fmt.Sprintf("n%d", i) // v1 has no qty: the column default
		if i >= 30 {
			wantCity, wantQty, wantNote = "Rome", 3, ""
		}
		if v[2].GetString_() != wantCity || v[3].GetInt64() != wantQty || v[1].GetString_() != wantNote ||
			v[4].GetString_() != fmt.Sprintf("key-%d", i) || v[5].GetString_() != fmt.Sprintf("t-%d", i) ||
			v[6].GetTimestampMicros() != ts0.Add(time.Duration(i)*time.Second).UnixMicro() ||
			v[7].GetString_() != fmt.Sprintf("%s:0:%d", topic, r.Offset) {
			t.Fatalf("row %d: %v", i, v)
		}
		if i >= 30 && !v[1].GetNull() {
			t.Fatalf("row %d: note %v, want NULL", i, v[1])
		}
	}

	// The registry goes down; records with a schema id not cached yet
	// arrive.
	reg.Stop()
	id3, _, err := reg.Reg.RegisterSchema(topic+"-value", sr.Schema{Schema: strings.Replace(avroOrderV2, `"default":1}`, `"default":1},{"name":"extra","type":"string","default":""}`, 1)})
	if err != nil {
		t.Fatal(err)
	}
	v3 := strings.Replace(avroOrderV2, `"default":1}`, `"default":1},{"name":"extra","type":"string","default":""}`, 1)
	recs = recs[:0]
	for i := 60; i < 80; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte("k"), Value: avroWire(t, v3, id3, map[string]any{"id": int64(i), "note": "late", "addr": map[string]any{"city": "Bern"}, "qty": 2, "extra": "e"})})
	}
	produceRecords(t, b, nil, recs, nil)
	waitFor(t, 60*time.Second, "paused with SCHEMA_REGISTRY_UNREACHABLE", func() (bool, string) {
		s := showJob(t, c, "avro_load").Summary
		return s.State == api.JobState_PAUSED && s.Reason == api.Reason_SCHEMA_REGISTRY_UNREACHABLE, fmt.Sprintf("%s %s %s", s.State, s.Reason, s.ReasonMessage)
	})
	if info := showJob(t, c, "avro_load"); info.Stats.ErrorRows != 1 || info.Stats.LoadedRows != 60 {
		t.Fatalf("while the registry is down: loaded %d, error rows %d; want 60 and 1", info.Stats.LoadedRows, info.Stats.ErrorRows)
	}
	if err := reg.Start(); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "avro_load", topic, 90*time.Second)
	info = showJob(t, c, "avro_load")
	if info.Stats.LoadedRows != 80 || info.Stats.ErrorRows != 1 || info.Summary.State != api.JobState_RUNNING {
		t.Fatalf("after the registry came back: %s, loaded %d, error rows %d; want RUNNING, 80 and 1", info.Summary.State, info.Stats.LoadedRows, info.Stats.ErrorRows)
	}
	if n := len(scanAll(t, c, "avro_load_rows")); n != 80 {
		t.Fatalf("%d rows, want 80", n)
	}
}

// TestAvroKillExactlyOnce: 100,000 avro records, the node SIGKILLed after
// its third commit and restarted: every record is loaded exactly once.
func TestAvroKillExactlyOnce(t *testing.T) {
	const topic, name = "avro_kill", "avro_kill"
	reg := registrytest.New(t)
	id := reg.Register(t, topic+"-value", sr.TypeAvro, avroOrderV2)
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	const n = 100_000
	recs := make([]*kgo.Record, n)
	seqs := make([]int64, n)
	s := avro.MustParse(avroOrderV2)
	var h sr.ConfluentHeader
	for i := range recs {
		body, err := avro.Marshal(s, map[string]any{"id": int64(i), "note": "r", "addr": map[string]any{"city": "Oslo"}, "qty": i % 10})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := h.AppendEncode(nil, id, nil)
		recs[i] = &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: append(v, body...)}
		seqs[i] = int64(i)
	}
	produceRecords(t, b, l, recs, seqs)
	dir := t.TempDir()
	p := startNode(t, dir, node.CrashEnv+"=after-commit:3")
	c := p.Client(t)
	spec := avroSpec(name, topic, reg.URL(), b.Addrs())
	spec.DesiredConcurrentNumber = 2
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	cancel()
	if exited, werr := p.Wait(60 * time.Second); !exited || werr == nil {
		info := showJob(t, c, name)
		t.Fatalf("node exited=%v err=%v; expected SIGKILL at the crash point; job %s %s, stats %v", exited, werr, info.Summary, info.ErrorRows, info.Stats)
	}
	c.Close()
	p = startNode(t, dir)
	c = p.Client(t)
	waitDrained(t, c, b, name, topic, 180*time.Second)
	checkExactlyOnce(t, c, l, name, name+"_rows")
}

const (
	protoOrderV1 = `syntax = "proto3";
package shop;
message Order {
  int64 id = 1;
  string note = 2;
  message Addr { string city = 1; }
  Addr addr = 3;
}`
	// v2 adds qty and removes note.
	protoOrderV2 = `syntax = "proto3";
package shop;
message Order {
  int64 id = 1;
  message Addr { string city = 1; }
  Addr addr = 3;
  int32 qty = 4;
}`
)

// protoWire encodes an Order by hand (field numbers as in the schemas):
// id (1), note (2), addr.city (3.1), qty (4).
func protoWire(id int, schemaID int64, note, city string, qty int) []byte {
	var h sr.ConfluentHeader
	b, _ := h.AppendEncode(nil, int(schemaID), []int{0})
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	if note != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, note)
	}
	var addr []byte
	addr = protowire.AppendTag(addr, 1, protowire.BytesType)
	addr = protowire.AppendString(addr, city)
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendBytes(b, addr)
	if qty != 0 {
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(qty))
	}
	return b
}

// TestProtobufSchemaRegistry: protobuf records with a schema change
// mid-stream (a field added, one removed), nested fields by path, a
// header in a column; a record that does not decode is an error row.
func TestProtobufSchemaRegistry(t *testing.T) {
	const topic = "proto_orders"
	reg := registrytest.New(t)
	id1 := reg.Register(t, topic+"-value", sr.TypeProtobuf, protoOrderV1)
	id2 := reg.Register(t, topic+"-value", sr.TypeProtobuf, protoOrderV2)
	b := testnode.StartBroker(t, 1, topic)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	var recs []*kgo.Record
	for i := 0; i < 40; i++ {
		v := protoWire(i, int64(id1), fmt.Sprintf("n%d", i), "Oslo", 0)
		if i >= 20 {
			v = protoWire(i, int64(id2), "", "Rome", 5)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Value: v, Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("t")}}})
	}
	var h sr.ConfluentHeader
	bad, _ := h.AppendEncode(nil, id2, []int{0})
	bad = append(bad, 0xff, 0xff) // a truncated varint
	recs = append(recs, &kgo.Record{Topic: topic, Value: bad})
	produceRecords(t, b, nil, recs, nil)
	spec := avroSpec("proto_load", topic, reg.URL(), b.Addrs())
	spec.Format = "protobuf"
	spec.Table.Columns[3].DefaultValue = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "proto_load", topic, 60*time.Second)
	info := showJob(t, c, "proto_load")
	if info.Stats.LoadedRows != 40 || info.Stats.ErrorRows != 1 || len(info.ErrorRows) != 1 || !bytes.Equal(info.ErrorRows[0].Raw, bad) {
		t.Fatalf("loaded %d, error rows %d (%v); want 40 and the bad record", info.Stats.LoadedRows, info.Stats.ErrorRows, info.ErrorRows)
	}
	for _, r := range scanAll(t, c, "proto_load_rows") {
		v := r.Values
		i := v[0].GetInt64()
		// proto3: an absent scalar is its zero value.
		wantNote, wantCity, wantQty := fmt.Sprintf("n%d", i), "Oslo", int64(0)
		if i >= 20 {
			wantNote, wantCity, wantQty = "", "Rome", 5
		}
		if v[1].GetString_() != wantNote || v[2].GetString_() != wantCity || v[3].GetInt64() != wantQty || v[5].GetString_() != "t" {
			t.Fatalf("row %d: %v", i, v)
		}
	}
}

// TestMetadataColumnsText: key, headers, timestamp, topic, partition and
// offset reach columns from csv and json records too.
func TestMetadataColumnsText(t *testing.T) {
	b := testnode.StartBroker(t, 1, "meta_csv", "meta_json")
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	ts0 := time.UnixMilli(1_700_000_000_000).UTC()
	for _, format := range []string{"csv", "json"} {
		topic := "meta_" + format
		var recs []*kgo.Record
		for i := 0; i < 10; i++ {
			v := fmt.Appendf(nil, "%d,n%d", i, i)
			if format == "json" {
				v = fmt.Appendf(nil, `{"id":%d,"note":"n%d"}`, i, i)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "key-%d", i), Value: v, Timestamp: ts0.Add(time.Duration(i) * time.Millisecond),
				Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("old")}, {Key: "trace", Value: fmt.Appendf(nil, "t-%d", i)}}})
		}
		produceRecords(t, b, nil, recs, nil)
		spec := &api.JobSpec{
			Name: "meta_" + format,
			Table: &api.TableSpec{Name: "meta_" + format + "_rows", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT64},
				{Name: "note", Type: api.ColumnType_STRING},
				{Name: "k", Type: api.ColumnType_STRING},
				{Name: "trace", Type: api.ColumnType_STRING},
				{Name: "ts", Type: api.ColumnType_TIMESTAMP},
				{Name: "ms", Type: api.ColumnType_INT64},
				{Name: "src", Type: api.ColumnType_STRING},
				{Name: "missing", Type: api.ColumnType_STRING},
			}},
			Format:                  format,
			ColumnsMapping:          []string{"id", "note", "k = __key", "trace = `__header.trace`", "ts = __timestamp", "ms = __timestamp_ms", "src = concat(__topic, '/', __partition, '/', __offset)", "missing = `__header.nope`"},
			DesiredConcurrentNumber: 1, MaxBatchIntervalMs: 200, MaxBatchRows: 5000, MaxBatchSize: 4 << 20,
			Kafka: &api.KafkaSpec{Brokers: b.Addrs(), Topic: topic, DefaultOffset: "OFFSET_BEGINNING"},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := c.CreateJob(ctx, spec); err != nil {
			t.Fatal(err)
		}
		cancel()
		waitDrained(t, c, b, spec.Name, topic, 60*time.Second)
		rows := scanAll(t, c, spec.Table.Name)
		if len(rows) != 10 {
			t.Fatalf("%s: %d rows, want 10", format, len(rows))
		}
		for _, r := range rows {
			v := r.Values
			i := v[0].GetInt64()
			at := ts0.Add(time.Duration(i) * time.Millisecond)
			if v[2].GetString_() != fmt.Sprintf("key-%d", i) || v[3].GetString_() != fmt.Sprintf("t-%d", i) ||
				v[4].GetTimestampMicros() != at.UnixMicro() || v[5].GetInt64() != at.UnixMilli() ||
				v[6].GetString_() != fmt.Sprintf("%s/0/%d", topic, r.Offset) || !v[7].GetNull() {
				t.Fatalf("%s row %d: %v", format, i, v)
			}
		}
	}
}

// TestKinesisMetadataColumns: a Kinesis record's partition key, sequence
// number and arrival time reach columns.
func TestKinesisMetadataColumns(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream = "meta_stream"
	kinesistest.CreateStream(t, kc, stream, 1)
	before := time.Now().Add(-time.Minute)
	var recs []kinesistest.Record
	for i := 0; i < 20; i++ {
		recs = append(recs, kinesistest.Record{Key: fmt.Sprintf("pk-%d", i), Data: fmt.Appendf(nil, `{"id":%d}`, i)})
	}
	puts := kinesistest.PutRecords(t, kc, stream, recs...)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	spec := kinesisSpec("kin_meta", "kin_meta_rows", stream, endpoint)
	spec.Table.Columns = []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "pk", Type: api.ColumnType_STRING},
		{Name: "seq", Type: api.ColumnType_STRING},
		{Name: "at", Type: api.ColumnType_TIMESTAMP},
		{Name: "topic", Type: api.ColumnType_STRING},
	}
	spec.ColumnsMapping = []string{"id", "pk = __key", "seq = __sequence", "at = __timestamp", "topic = __topic"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var rows []*api.Row
	waitFor(t, 60*time.Second, "20 rows", func() (bool, string) {
		rows = scanAll(t, c, "kin_meta_rows")
		return len(rows) == 20, fmt.Sprintf("%d rows", len(rows))
	})
	for _, r := range rows {
		v := r.Values
		i := v[0].GetInt64()
		at := time.UnixMicro(v[3].GetTimestampMicros())
		if v[1].GetString_() != fmt.Sprintf("pk-%d", i) || v[2].GetString_() != puts[i].Seq || at.Before(before) || at.After(time.Now().Add(time.Minute)) || !v[4].GetNull() {
			t.Fatalf("row %d: %v (put seq %s)", i, v, puts[i].Seq)
		}
	}
}
