package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFreshnessTiny runs the freshness scenario at a tiny size against a
// kfake child process: both rates, the least max_batch_interval.
func TestFreshnessTiny(t *testing.T) {
	binary := buildBinary(t)
	var log bytes.Buffer
	o := Options{
		Quick: true, Binary: binary, Records: 3000, Runs: 1,
		Formats: []string{"csv"}, Partitions: []int{2}, Scenarios: []string{ScenarioFreshness},
		FreshnessDuration: 300 * time.Millisecond, FreshnessIntervals: []time.Duration{100 * time.Millisecond},
		Timeout: 2 * time.Minute, Log: &log,
	}
	res, err := Run(context.Background(), o)
	t.Logf("%d bytes of log:\n%s", log.Len(), log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	f := res.Freshness
	if f == nil || f.MaxRecordsPerSec <= 0 || len(f.Cells) != 2 {
		t.Fatalf("freshness: %+v", f)
	}
	for _, c := range f.Cells {
		if c.Records < 1 || c.P50Ms <= 0 || c.P99Ms < c.P50Ms || c.MaxMs < c.P99Ms || c.Polls < 1 || c.ResolutionMaxMs <= 0 {
			t.Errorf("cell %+v", c)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(res.Targets), func(t Target) bool { return !strings.HasPrefix(t.Name, "freshness") })); n != 2 {
		t.Errorf("%d freshness targets, want 2: %+v", n, res.Targets)
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, res); err != nil || !strings.Contains(text.String(), "freshness (csv, 2 partitions)") {
		t.Errorf("text (%v):\n%s", err, text.String())
	}
	if err := WriteJSON(&js, res); err != nil || !strings.Contains(js.String(), `"freshness"`) {
		t.Errorf("json (%v):\n%s", err, js.String())
	}
}

// TestFreshnessLatencies checks that a record's latency is taken from the
// first committed offset seen past it, and that warm-up records are left
// out; a run of records is one record each.
func TestFreshnessLatencies(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms int) int64 { return t0.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	p := &freshProducer{parts: 3, byPart: [][]produced{
		{{0, 1, at(0), at(1)}, {2, 1, at(20), at(22)}, {1, 1, at(10), at(11)}, {3, 1, at(30), at(33)}}, // out of order: sorted by offset
		{{0, 1, at(5), at(5)}, {1, 1, at(15), at(30)}},
		{{0, 4, at(8), at(9)}, {4, 3, at(12), at(14)}}, // the first run before at(10): left out
	}}
	marks := map[int32][]seen{
		0: {{1, t0.Add(50 * time.Millisecond)}, {3, t0.Add(100 * time.Millisecond)}, {4, t0.Add(200 * time.Millisecond)}},
		1: {{2, t0.Add(40 * time.Millisecond)}},
		2: {{5, t0.Add(60 * time.Millisecond)}, {7, t0.Add(90 * time.Millisecond)}},
	}
	got, acks, sinceAck := p.latencies(marks, at(10))
	slices.Sort(got)
	want := []time.Duration{25 * time.Millisecond, 48 * time.Millisecond, 78 * time.Millisecond, 78 * time.Millisecond,
		80 * time.Millisecond, 90 * time.Millisecond, 170 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("latencies %v, want %v", got, want)
	}
	// In partition order, then offset order: offsets 1, 2, 3 of 0, 1 of 1,
	// then 4, 5, 6 of 2.
	ms := func(v ...int) (out []time.Duration) {
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	wantAcks, wantSince := ms(1, 2, 3, 15, 2, 2, 2), ms(89, 78, 167, 10, 46, 76, 76)
	if !slices.Equal(acks, wantAcks) || !slices.Equal(sinceAck, wantSince) {
		t.Fatalf("produce to ack %v, want %v; ack to commit %v, want %v", acks, wantAcks, sinceAck, wantSince)
	}
}

// TestFreshProducerRecords produces ticks of records of both formats into
// kfake clusters of one and of three brokers (partitions led by
// different brokers: a request per leader) and reads them back with kgo's
// consumer: every record the producer says it produced is there once, at
// the offset of its run, with its run's produce time as its produced_at
// and its Kafka timestamp, its body one of the producer's; the ends are
// the topic's end offsets. More than freshBatchRecords records per
// partition go as several ticks.
func TestFreshProducerRecords(t *testing.T) {
	for _, brokers := range []int{1, 3} {
		for _, format := range []string{"json", "csv"} {
			t.Run(fmt.Sprintf("%s_%d", format, brokers), func(t *testing.T) {
				testFreshProducer(t, brokers, format)
			})
		}
	}
}

func testFreshProducer(t *testing.T, brokers int, format string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const parts = 5
	fake, err := kfake.NewCluster(kfake.NumBrokers(brokers), kfake.SeedTopics(parts, "fresh"))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	for k := range int32(parts) { // partition k led by broker k % brokers
		if err := fake.MoveTopicPartition("fresh", k, k%int32(brokers)); err != nil {
			t.Fatal(err)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p, err := newFreshProducer(ctx, cl, "fresh", format, parts, 200)
	if err != nil {
		t.Fatal(err)
	}
	for k, l := range p.leaders {
		if l != int32(k%brokers) {
			t.Fatalf("leaders %v, want partition k's broker k %% %d", p.leaders, brokers)
		}
	}
	ticks := []int{1, 7, 3, 2*freshBatchRecords*parts + 11, 998}
	total := 0
	for _, n := range ticks {
		if err := p.produceN(ctx, n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if err := p.flush(); err != nil {
		t.Fatal(err)
	}
	ends := p.ends()
	if sum(ends) != int64(total) {
		t.Fatalf("ends %v: %d records, want %d", ends, sum(ends), total)
	}
	topicEnds, err := endOffsets(ctx, kadm.NewClient(cl), "fresh")
	if err != nil || !maps.Equal(topicEnds, ends) {
		t.Fatalf("the topic's end offsets %v (%v), the producer's %v", topicEnds, err, ends)
	}
	// Each offset's produce time, from the runs.
	want := map[int32]map[int64]int64{}
	for k, runs := range p.byPart {
		want[int32(k)] = map[int64]int64{}
		for _, r := range runs {
			if r.acked < r.at || r.n < 1 {
				t.Fatalf("partition %d: run %+v", k, r)
			}
			for off := r.offset; off < r.offset+r.n; off++ {
				if _, dup := want[int32(k)][off]; dup {
					t.Fatalf("partition %d: offset %d in two runs", k, off)
				}
				want[int32(k)][off] = r.at
			}
		}
	}
	bodies := map[string]bool{}
	for _, b := range p.bodies {
		bodies[string(b)] = true
	}
	from := map[string]map[int32]kgo.Offset{"fresh": {}}
	for k := range parts {
		from["fresh"][int32(k)] = kgo.NewOffset().At(0)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...), kgo.ConsumePartitions(from))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	read := 0
	for read < total {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("after %d records of %d: %v", read, total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			read++
			at, ok := want[r.Partition][r.Offset]
			if !ok {
				t.Fatalf("partition %d offset %d: no run has it", r.Partition, r.Offset)
			}
			delete(want[r.Partition], r.Offset)
			end := appendProducedAtEnd(nil, format == "json", at)
			v := string(r.Value)
			if !strings.HasSuffix(v, string(end)) {
				t.Fatalf("partition %d offset %d: %q does not end with its produce time %q", r.Partition, r.Offset, v, end)
			}
			body := v[:len(v)-len(end)]
			if format == "json" {
				body += "}"
			}
			if !bodies[body] {
				t.Fatalf("partition %d offset %d: body %q is not one of the producer's", r.Partition, r.Offset, body)
			}
			if r.Timestamp.UnixMilli() != time.Unix(0, at).UnixMilli() {
				t.Fatalf("partition %d offset %d: timestamp %v, produced at %v", r.Partition, r.Offset, r.Timestamp, time.Unix(0, at))
			}
		})
	}
	for k, left := range want {
		if len(left) > 0 {
			t.Fatalf("partition %d: %d records of the runs not read", k, len(left))
		}
	}
}

// TestAppendProducedAt checks that a produced value (valueHead, then
// appendProducedAtEnd) is its record with the produce time as its last
// column, in both formats.
func TestAppendProducedAt(t *testing.T) {
	const ns = 1764979200123456789
	value := func(format string) []byte {
		body := appendRecord(nil, format, 7, 200)
		return appendProducedAtEnd(append([]byte(nil), valueHead(body, format == "json")...), format == "json", ns)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(value("json")))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m["produced_at"] != json.Number(strconv.Itoa(ns)) || m["id"] != json.Number("7") {
		t.Errorf("json record %v", m)
	}
	f := strings.Split(string(value("csv")), ",")
	if len(f) != len(benchColumns())+1 || f[len(f)-1] != strconv.Itoa(ns) {
		t.Errorf("csv record %q", f)
	}
}

// TestFreshProducerNoTopic checks that a producer of a topic the broker
// does not have fails, naming the topic, when its context ends (it looks
// the leaders up again meanwhile: a new topic may have none yet).
func TestFreshProducerNoTopic(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fake.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	p, err := newFreshProducer(ctx, cl, "no_such_topic", "json", 2, 200)
	if err == nil || !strings.Contains(err.Error(), "no_such_topic") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("producer %v, error %v; want one naming the topic, after the context's end", p, err)
	}
}
