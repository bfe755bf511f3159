package node

import (
	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/supervisor"
)

// actorSettings maps a validated node config onto the actors' settings,
// field for field: the defaults and the ranges are config's (DefaultNode,
// Validate), and nothing here fills in a value of its own. Only the restart
// jitter, which has no key, is supervisor.DefaultJitter.
//
// REQUIRES: n.Validate() == nil.
func actorSettings(n config.Node) actors.Settings {
	return actors.Settings{
		MaxConcurrentTasks: n.MaxConcurrentTasks,
		TopologyInterval:   n.TopologyInterval,
		WatermarkInterval:  n.WatermarkInterval,
		MaxRecordBytes:     n.MaxRecordSize,
		ErrorRowRawBytes:   n.ErrorRowRawSize,
		SourceRetryBase:    n.SourceRetryBase,
		SourceRetryMax:     n.SourceRetryMax,
		SourceRetryLimit:   n.SourceRetryLimit,
		AutoResumeBase:     n.AutoResumeBase,
		AutoResumeMax:      n.AutoResumeMax,
		AutoResumeQuiet:    n.AutoResumeQuiet,
		StallAfter:         n.StallAfter,
		JobSupervision: supervisor.Policy{
			MaxRestarts:    n.JobRestartLimit,
			Window:         n.JobRestartWindow,
			InitialBackoff: n.JobRestartBackoff,
			MaxBackoff:     n.JobRestartBackoffMax,
			Jitter:         supervisor.DefaultJitter,
		},
	}
}
