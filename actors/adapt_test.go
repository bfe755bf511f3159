package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/supervisor"
)

// testSource is what the tests' sources implement: a partition list and
// start look-up the adapter turns into a Source (Discover, ResolveReset,
// Render), passing Watcher and Lineage through.
type testSource interface {
	sources.Starter
	Watermarks(ctx context.Context) (map[int32]int64, error)
	NewReader(start map[int32]sources.Start) (sources.Reader, error)
	Close()
}

type adapted struct{ testSource }

func (a adapted) Discover(ctx context.Context, known map[int32]bool) ([]int32, map[int32]sources.Start, error) {
	return sources.Discover(ctx, a.testSource, known)
}

func (a adapted) ResolveReset(ctx context.Context, r sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error) {
	for p := range r.Offsets {
		if _, ok := cur[p]; !ok {
			return nil, &sources.ConfigError{Field: fmt.Sprintf("reset_offsets.%d", p), Err: fmt.Errorf("the job does not read partition %d", p)}
		}
	}
	return a.ResolveStarts(ctx, r.Offsets, true)
}

func (a adapted) Render(p int32, s sources.Start) (string, string) {
	return fmt.Sprintf("partition %d offset", p), fmt.Sprint(s.Offset)
}

type adaptedWatcher struct {
	adapted
	Watcher
}

type adaptedLineage struct {
	adapted
	Lineage
}

// adapt makes a test source a Source.
func adapt(s testSource) Source {
	if w, ok := s.(Watcher); ok {
		return adaptedWatcher{adapted{s}, w}
	}
	if l, ok := s.(Lineage); ok {
		return adaptedLineage{adapted{s}, l}
	}
	return adapted{s}
}

// testSettings returns the node's default settings (config.DefaultNode)
// with the non-zero fields of over on top.
func testSettings(over Settings) Settings {
	n := config.DefaultNode()
	s := Settings{
		MaxConcurrentTasks: n.MaxConcurrentTasks, TopologyInterval: n.TopologyInterval,
		WatermarkInterval: n.WatermarkInterval, MaxRecordBytes: int(n.MaxRecordSize),
		ErrorRowRawBytes: int(n.ErrorRowRawSize), SourceRetryBase: n.SourceRetryBase, SourceRetryMax: n.SourceRetryMax,
		SourceRetryLimit: n.SourceRetryLimit, AutoResumeBase: n.AutoResumeBase,
		AutoResumeMax: n.AutoResumeMax, AutoResumeQuiet: n.AutoResumeQuiet, StallAfter: n.StallAfter,
		JobSupervision: supervisor.Policy{MaxRestarts: n.JobRestartLimit, Window: n.JobRestartWindow,
			InitialBackoff: n.JobRestartBackoff, MaxBackoff: n.JobRestartBackoffMax, Jitter: supervisor.DefaultJitter},
	}
	pick := func(d *time.Duration, v time.Duration) {
		if v != 0 {
			*d = v
		}
	}
	pickInt := func(d *int, v int) {
		if v != 0 {
			*d = v
		}
	}
	pickInt(&s.MaxConcurrentTasks, over.MaxConcurrentTasks)
	pick(&s.TopologyInterval, over.TopologyInterval)
	pick(&s.WatermarkInterval, over.WatermarkInterval)
	pickInt(&s.MaxRecordBytes, over.MaxRecordBytes)
	pickInt(&s.ErrorRowRawBytes, over.ErrorRowRawBytes)
	pick(&s.SourceRetryBase, over.SourceRetryBase)
	pick(&s.SourceRetryMax, over.SourceRetryMax)
	pickInt(&s.SourceRetryLimit, over.SourceRetryLimit)
	pick(&s.AutoResumeBase, over.AutoResumeBase)
	pick(&s.AutoResumeMax, over.AutoResumeMax)
	pick(&s.AutoResumeQuiet, over.AutoResumeQuiet)
	pick(&s.StallAfter, over.StallAfter)
	o, js := over.JobSupervision, &s.JobSupervision
	pickInt(&js.MaxRestarts, o.MaxRestarts)
	pick(&js.Window, o.Window)
	pick(&js.InitialBackoff, o.InitialBackoff)
	pick(&js.MaxBackoff, o.MaxBackoff)
	if o.Jitter != 0 {
		js.Jitter = o.Jitter
	}
	return s
}

// testSpecs are the node's spec rules as the tests need them: config's
// defaults, validation and alters (node.specRules adds Kafka property and
// parser checks, which need the node).
type testSpecs struct{}

func (testSpecs) Prepare(spec *api.JobSpec) error {
	config.ApplyDefaults(spec)
	return config.ValidateJobSpec(spec)
}

func (testSpecs) Alter(cur *api.JobSpec, req *api.AlterJobRequest) (*api.JobSpec, []string, bool, error) {
	return config.Alter(cur, req)
}

func (testSpecs) Rebases(cur, next *api.JobSpec) bool { return config.Rebases(cur, next) }
func (testSpecs) PausedOnly(cur, next *api.JobSpec) []string {
	return config.PausedOnly(cur, next)
}

func (testSpecs) SourceName(spec *api.JobSpec) string { return "kafka://" + spec.GetKafka().GetTopic() }
