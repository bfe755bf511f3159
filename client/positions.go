package client

import (
	"context"

	"github.com/loadnode/loadnode/api"
)

// ResetPositions moves a PAUSED Kinesis job's shards to new start positions
// (by shard id: TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a sequence
// number to read after). spec, if not nil, changes the job's properties in
// the same step, as in AlterJob. The change is journaled with the old and new
// positions; a shard's record count (its ordinal) never moves back, so
// records read again are added as new rows.
func (c *Client) ResetPositions(ctx context.Context, name string, spec *api.JobSpec, positions map[string]string) (*api.JobInfo, error) {
	return c.job(ctx, "alter job", &api.AlterJobRequest{Name: name, Spec: spec, ResetPositions: positions})
}
