package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuickTiny runs every scenario at a tiny size against a kfake child
// process, so that `go test ./...` exercises the harness end to end.
func TestQuickTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs child processes")
	}
	binary := filepath.Join(t.TempDir(), "loadnode")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/loadnode")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var log bytes.Buffer
	o := Options{
		Quick: true, Binary: binary, Records: 3000, Runs: 1,
		Formats: []string{"csv"}, Partitions: []int{2},
		Creates: 16, ScaleJobs: []int{20}, ScaleTimeout: 20 * time.Second, ScaleSettle: time.Second,
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
	var e2e, ceiling, store int
	for _, r := range res.Throughput {
		switch r.Scenario {
		case ScenarioE2E:
			e2e++
			if r.E2EToCeilingRatio == nil || *r.E2EToCeilingRatio <= 0 || r.CommitToStoreRatio == nil {
				t.Errorf("e2e %s/%d: ratios %v %v", r.Format, r.Partitions, r.E2EToCeilingRatio, r.CommitToStoreRatio)
			}
		case ScenarioCeiling:
			ceiling++
		case ScenarioStore:
			store++
		}
		if r.RecordsPerSec <= 0 || r.Records != 3000 {
			t.Errorf("%s %s/%d: %v records/s over %d records", r.Scenario, r.Format, r.Partitions, r.RecordsPerSec, r.Records)
		}
	}
	if e2e != 1 || ceiling != 1 || store != 1 {
		t.Fatalf("rows: %d e2e, %d ceiling, %d store", e2e, ceiling, store)
	}
	if c := res.Create; c == nil || c.CreateP99Ms <= 0 || c.PebbleSyncP99Ms <= 0 || c.CreatesPerSec16 <= 0 {
		t.Fatalf("create: %+v", c)
	}
	if len(res.Scale) != 1 || res.Scale[0].Created != 20 || res.Scale[0].Shown != 20 {
		t.Fatalf("scale: %+v", res.Scale)
	}

	var js, txt, svg bytes.Buffer
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(js.String(), `"e2e_to_ceiling_ratio"`); n != 1 {
		t.Errorf("e2e_to_ceiling_ratio appears %d times in the JSON, want 1", n)
	}
	if err := WriteText(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ceiling (franz-go)", "loadnode e2e", "store ceiling", "bare synced 1 KB Pebble commit", "targets"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
	if err := WriteSVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg.String(), "<svg") || strings.Count(svg.String(), "<rect") < 5 {
		t.Errorf("svg:\n%s", svg.String())
	}
}

func TestAppendRecordParses(t *testing.T) {
	for _, size := range []int{120, 200, 1000} {
		for _, f := range []string{"json", "csv"} {
			b := appendRecord(nil, f, 123456, size)
			if len(b) != size {
				t.Errorf("%s record of size %d is %d bytes: %s", f, size, len(b), b)
			}
		}
	}
	if _, err := encodeRows(100, 200); err != nil {
		t.Fatal(err)
	}
}

func TestMedianPercentile(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if p := percentile(d, 50); p != 5 {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(d, 99); p != 10 {
		t.Errorf("p99 = %v", p)
	}
}
