package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/pgtest"
)

// TestPostgresScenario runs the postgres scenario small and checks its two
// rows, the server CPU, the ratio and its target line.
func TestPostgresScenario(t *testing.T) {
	binary := buildBinary(t)
	pgtest.Bin(t)
	var log bytes.Buffer
	o := Options{
		Quick: true, Binary: binary, Records: 6000, Runs: 1, BatchRows: 1000, Scenarios: []string{ScenarioPostgres},
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
	var ceil, e2e *Throughput
	for _, r := range res.Throughput {
		switch r.Scenario {
		case scenarioPGCeiling:
			ceil = r
		case scenarioPGE2E:
			e2e = r
		}
	}
	if ceil == nil || e2e == nil {
		t.Fatalf("throughput rows: %+v", res.Throughput)
	}
	for _, r := range []*Throughput{ceil, e2e} {
		if r.Records != 6000 || r.RecordsPerSec <= 0 || r.ServerCPUSecPerMillion <= 0 || r.CPUSecPerMillion <= 0 {
			t.Errorf("%s row: %+v", r.Scenario, r)
		}
	}
	if e2e.Partitions != 8 || e2e.PGToCeilingRatio == nil {
		t.Errorf("e2e row: %+v", e2e)
	}
	found := false
	for _, tg := range res.Targets {
		found = found || strings.HasPrefix(tg.Name, "postgres e2e / postgres ceiling")
	}
	if !found {
		t.Errorf("no postgres target in %+v", res.Targets)
	}
}
