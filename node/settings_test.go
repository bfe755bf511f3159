package node

import (
	"reflect"
	"testing"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/supervisor"
)

// TestActorSettingsComplete: every field of actors.Settings (and of its
// supervisor.Policy) is set from the default node config. A knob added to
// the actors without a config key and a mapping in actorSettings is zero
// here and fails the test.
func TestActorSettingsComplete(t *testing.T) {
	s := actorSettings(config.DefaultNode())
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		if v.Kind() == reflect.Struct {
			for i := range v.NumField() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name)
			}
			return
		}
		if v.IsZero() {
			t.Errorf("%s is zero: actorSettings maps no config key onto it", path)
		}
	}
	walk(reflect.ValueOf(s), "Settings")
}

// TestActorSettingsMapping: each setting comes from its own key (every
// value below is distinct from its default and from the others of its
// type, so a swapped or missed mapping shows).
func TestActorSettingsMapping(t *testing.T) {
	n := config.DefaultNode()
	n.MaxConcurrentTasks = 3
	n.TopologyInterval = 11 * time.Second
	n.WatermarkInterval = 12 * time.Second
	n.MaxRecordSize = 5000
	n.ErrorRowRawSize = 600
	n.SourceRetryBase = 13 * time.Second
	n.SourceRetryMax = 21 * time.Second
	n.SourceRetryLimit = 7
	n.AutoResumeBase = 14 * time.Second
	n.AutoResumeMax = 15 * time.Second
	n.AutoResumeQuiet = 16 * time.Second
	n.StallAfter = 17 * time.Second
	n.JobRestartLimit = 9
	n.JobRestartWindow = 18 * time.Second
	n.JobRestartBackoff = 19 * time.Second
	n.JobRestartBackoffMax = 20 * time.Second
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	want := actors.Settings{
		MaxConcurrentTasks: 3,
		TopologyInterval:   11 * time.Second,
		WatermarkInterval:  12 * time.Second,
		MaxRecordBytes:     5000,
		ErrorRowRawBytes:   600,
		SourceRetryBase:    13 * time.Second,
		SourceRetryMax:     21 * time.Second,
		SourceRetryLimit:   7,
		AutoResumeBase:     14 * time.Second,
		AutoResumeMax:      15 * time.Second,
		AutoResumeQuiet:    16 * time.Second,
		StallAfter:         17 * time.Second,
		JobSupervision: supervisor.Policy{
			MaxRestarts:    9,
			Window:         18 * time.Second,
			InitialBackoff: 19 * time.Second,
			MaxBackoff:     20 * time.Second,
			Jitter:         supervisor.DefaultJitter,
		},
	}
	if got := actorSettings(n); got != want {
		t.Fatalf("actorSettings:\n got %+v\nwant %+v", got, want)
	}
}
