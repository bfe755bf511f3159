package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"

	"github.com/loadnode/loadnode/formats/registry"
	"github.com/loadnode/loadnode/table"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testnode.RemoveBinary()
	os.Exit(code)
}

func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and runs child processes")
	}
	path, err := testnode.BuildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestQuickTiny runs every scenario at a tiny size against a kfake child
// process, so that `go test ./...` exercises the harness end to end.
func TestQuickTiny(t *testing.T) {
	binary := buildBinary(t)
	// Without kcat or PostgreSQL their scenarios report a skip: that fails
	// the test unless $LOADNODE_SKIP_KCAT=1 or $LOADNODE_SKIP_POSTGRES=1.
	_, err := kcatPath()
	noKcat := testdeps.LeaveOut(t, testdeps.Kcat, err)
	_, err = pgtest.FindBin()
	noPostgres := testdeps.LeaveOut(t, testdeps.Postgres, err)
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
	var e2e, ceiling, store, kcat int
	for _, r := range res.Throughput {
		if r.Scenario == ScenarioKcat {
			kcat++
		}
		if r.Skipped != "" {
			leftOut := (r.Scenario == ScenarioKcat && noKcat) ||
				((r.Scenario == scenarioPGCeiling || r.Scenario == scenarioPGE2E) && noPostgres)
			if !leftOut {
				t.Errorf("%s %s/%d skipped: %s", r.Scenario, r.Format, r.Partitions, r.Skipped)
			}
			continue
		}
		switch r.Scenario {
		case ScenarioE2E:
			e2e++
			if r.E2EToCeilingRatio == nil || *r.E2EToCeilingRatio <= 0 || r.CommitToStoreRatio == nil || r.E2EToStoreRatio == nil || r.CommitRowsPerSec <= 0 {
				t.Errorf("e2e %s/%d: ratios %v %v %v, commit rows/s %v", r.Format, r.Partitions, r.E2EToCeilingRatio, r.CommitToStoreRatio, r.E2EToStoreRatio, r.CommitRowsPerSec)
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
	if e2e != 1 || ceiling != 1 || store != 1 || kcat != 1 {
		t.Fatalf("rows: %d e2e, %d ceiling, %d store, %d kcat", e2e, ceiling, store, kcat)
	}
	if c := res.Create; c == nil || c.CreateP99Ms <= 0 || c.PebbleSyncP99Ms <= 0 || c.CreatesPerSec16 <= 0 {
		t.Fatalf("create: %+v", c)
	}
	if len(res.Scale) != 1 || res.Scale[0].Created != 20 || res.Scale[0].Shown != 20 || res.Scale[0].Listed != 20 {
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

// TestKcat runs the kcat baseline next to the ceiling and loadnode at 8
// partitions and checks its rows, ratio, target line and JSON.
func TestKcat(t *testing.T) {
	binary := buildBinary(t)
	_, err := kcatPath()
	testdeps.Require(t, testdeps.Kcat, err)
	var log bytes.Buffer
	o := Options{
		Quick: true, Binary: binary, Records: 4000, Runs: 1, Scenarios: []string{ScenarioKcat, ScenarioE2E},
		Formats: []string{"json"}, Partitions: []int{8}, Timeout: 2 * time.Minute, Log: &log,
	}
	res, err := Run(context.Background(), o)
	t.Logf("log:\n%s", log.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	if !strings.HasPrefix(res.Settings.Kcat, "kcat 1.") {
		t.Errorf("kcat version %q", res.Settings.Kcat)
	}
	var kc, e2e *Throughput
	for _, r := range res.Throughput {
		switch r.Scenario {
		case ScenarioKcat:
			kc = r
		case ScenarioE2E:
			e2e = r
		}
	}
	if kc == nil || e2e == nil {
		t.Fatalf("throughput rows: %+v", res.Throughput)
	}
	if kc.Records != 4000 || kc.RecordsPerSec <= 0 || kc.Skipped != "" || kc.CPUSecPerMillion <= 0 {
		t.Errorf("kcat row: %+v", kc)
	}
	// Values are ~200 bytes: kcat's %S sizes must add up to about that.
	if per := kc.MBPerSec * 1e6 / kc.RecordsPerSec; per < 150 || per > 250 {
		t.Errorf("kcat counted %.0f bytes per record, want ~200", per)
	}
	if e2e.E2EToKcatRatio == nil || *e2e.E2EToKcatRatio <= 0 {
		t.Errorf("e2e row has no ratio to kcat: %+v", e2e)
	}
	var txt, js bytes.Buffer
	if err := WriteText(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kcat (librdkafka)", "e2e faster than kcat, json, 8 partitions", "x kcat"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
	if err := WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"scenario": "kcat"`, `"e2e_to_kcat_ratio"`, `"kcat": "kcat 1.`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestKcatMissing: without kcat on PATH the scenario is reported skipped
// with how to install it, and its target as not measured.
func TestKcatMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := kcatPath()
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y kcat") {
		t.Fatalf("kcatPath with an empty PATH: %v", err)
	}
	res := &Results{Throughput: []*Throughput{
		{Scenario: ScenarioKcat, Format: "csv", Partitions: 8, Records: 10, Skipped: err.Error()},
	}}
	res.Targets = targets(res)
	if len(res.Targets) != 1 || !res.Targets[0].NotMeasured || res.Targets[0].Met {
		t.Fatalf("targets: %+v", res.Targets)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"skipped", "kcat skipped: kcat is not on PATH", "not measured"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, txt.String())
		}
	}
}

func TestAppendRecordParses(t *testing.T) {
	for _, size := range []int{120, 200, 1000} {
		for _, f := range []string{"json", "csv", "avro"} {
			b := appendRecord(nil, f, 123456, size)
			if len(b) != size && (f != "avro" || len(b) < size-2 || len(b) > size+2) {
				t.Errorf("%s record of size %d is %d bytes: %s", f, size, len(b), b)
			}
		}
	}
	if _, err := encodeRows(100, 200); err != nil {
		t.Fatal(err)
	}
}

// TestCgoSetting: the header says how the binary was built, so that
// figures of a cgo and a non-cgo build are never mixed up.
func TestCgoSetting(t *testing.T) {
	v := cgoEnabled()
	if v != "0" && v != "1" {
		t.Fatalf("CGO_ENABLED build setting %q, want 0 or 1", v)
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, &Results{Host: Host{CgoEnabled: v}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "built with CGO_ENABLED="+v) {
		t.Errorf("header lacks the cgo setting:\n%s", txt.String())
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

// TestAvroRecordLoads: the bench's avro record decodes through the
// registry into the six columns, with the values its json twin has.
func TestAvroRecordLoads(t *testing.T) {
	reg, err := startRegistry()
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	o := Options{registryURL: reg.URL()}
	spec := o.jobSpec("j", "t", "avro", "topic", []string{"127.0.0.1:9092"})
	dec, err := registry.NewRegistries().Decoder(spec)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := table.NewSchema(spec.Table)
	if err != nil {
		t.Fatal(err)
	}
	f := table.FormatOf(spec)
	f.Decoder = dec
	pa, err := table.NewParser(schema, f)
	if err != nil {
		t.Fatal(err)
	}
	pj, err := table.NewParser(schema, table.FormatOf(o.jobSpec("j", "t", "json", "topic", nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 7, 123456} {
		a, err := pa.Parse(appendRecord(nil, "avro", i, 200), nil)
		if err != nil {
			t.Fatal(err)
		}
		j, err := pj.Parse(appendRecord(nil, "json", i, 200), nil)
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < 5; c++ { // the note's padding differs
			if a[c] != j[c] {
				t.Fatalf("record %d column %d: avro %v, json %v", i, c, a[c], j[c])
			}
		}
	}
}

// TestCoresBound: the e2e / ceiling target's note says what the machine's
// cores allow at the run's CPU per record, and says nothing without the
// figures (no broker child, no busy cores).
func TestCoresBound(t *testing.T) {
	ratio := 0.4
	r := &Results{Host: Host{CPUs: 2}}
	e2e := &Throughput{Scenario: ScenarioE2E, RecordsPerSec: 2e6, CPUSecPerMillion: 0.9, BrokerCPUSecPerMillion: 0.1, CoresBusy: 1.9, E2EToCeilingRatio: &ratio}
	got := coresBound(r, e2e)
	// 2 cores / (0.9 + 0.1) s per million = 2,000,000 records/s; the ceiling 5,000,000.
	for _, want := range []string{"2 cores at 0.90 + 0.10", "at most 2000000 records/s", "0.40 x the ceiling", "1.90 cores busy"} {
		if !strings.Contains(got, want) {
			t.Errorf("coresBound = %q, want it to say %q", got, want)
		}
	}
	for name, tp := range map[string]*Throughput{
		"no broker":     {Scenario: ScenarioE2E, RecordsPerSec: 2e6, CPUSecPerMillion: 0.9, CoresBusy: 1.9, E2EToCeilingRatio: &ratio},
		"no busy cores": {Scenario: ScenarioE2E, RecordsPerSec: 2e6, CPUSecPerMillion: 0.9, BrokerCPUSecPerMillion: 0.1, E2EToCeilingRatio: &ratio},
		"no ratio":      {Scenario: ScenarioE2E, RecordsPerSec: 2e6, CPUSecPerMillion: 0.9, BrokerCPUSecPerMillion: 0.1, CoresBusy: 1.9},
	} {
		if got := coresBound(r, tp); got != "" {
			t.Errorf("%s: coresBound = %q, want nothing", name, got)
		}
	}
}
