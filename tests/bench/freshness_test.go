package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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
// out.
func TestFreshnessLatencies(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms int) int64 { return t0.Add(time.Duration(ms) * time.Millisecond).UnixNano() }
	p := &freshProducer{parts: 2, byPart: [][]produced{
		{{0, at(0), at(1)}, {2, at(20), at(22)}, {1, at(10), at(11)}, {3, at(30), at(33)}}, // out of order: sorted by offset
		{{0, at(5), at(5)}, {1, at(15), at(30)}},
	}}
	marks := map[int32][]seen{
		0: {{1, t0.Add(50 * time.Millisecond)}, {3, t0.Add(100 * time.Millisecond)}, {4, t0.Add(200 * time.Millisecond)}},
		1: {{2, t0.Add(40 * time.Millisecond)}},
	}
	got, acks, sinceAck := p.latencies(marks, at(10))
	slices.Sort(got)
	want := []time.Duration{25 * time.Millisecond, 80 * time.Millisecond, 90 * time.Millisecond, 170 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Fatalf("latencies %v, want %v", got, want)
	}
	// In partition order, then offset order: offsets 1, 2, 3 of 0, then 1 of 1.
	wantAcks := []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 15 * time.Millisecond}
	wantSince := []time.Duration{89 * time.Millisecond, 78 * time.Millisecond, 167 * time.Millisecond, 10 * time.Millisecond}
	if !slices.Equal(acks, wantAcks) || !slices.Equal(sinceAck, wantSince) {
		t.Fatalf("produce to ack %v, want %v; ack to commit %v, want %v", acks, wantAcks, sinceAck, wantSince)
	}
}

// TestAppendProducedAt checks that the produce time is the last column of
// both formats.
func TestAppendProducedAt(t *testing.T) {
	const ns = 1764979200123456789
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(appendProducedAt(nil, appendRecord(nil, "json", 7, 200), true, ns)))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m["produced_at"] != json.Number(strconv.Itoa(ns)) || m["id"] != json.Number("7") {
		t.Errorf("json record %v", m)
	}
	f := strings.Split(string(appendProducedAt(nil, appendRecord(nil, "csv", 7, 200), false, ns)), ",")
	if len(f) != len(benchColumns())+1 || f[len(f)-1] != strconv.Itoa(ns) {
		t.Errorf("csv record %q", f)
	}
}
