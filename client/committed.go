package client

import (
	"context"
	"time"

	"github.com/loadnode/loadnode/api"
)

// JobCommitted returns a job's committed positions (per partition), loaded
// and error rows, committed batches and the time of its last commit: a
// light read the node answers from what the job published after its last
// commit, without reading its store or sink and without asking the job,
// so it may be polled often (ShowJob reads the job's journal and sink).
func (c *Client) JobCommitted(ctx context.Context, name string) (*api.JobCommitted, error) {
	return c.committed(ctx, &api.JobCommittedRequest{Name: name})
}

// WaitCommitted is JobCommitted as a long poll: it answers once the job
// has more than afterBatches committed batches (or its state changed),
// or after wait (at most api.MaxCommittedWaitMs ms) with the job as it
// stands. Passing the committed_batches of the last answer watches the
// job's commits one by one without a polling period.
func (c *Client) WaitCommitted(ctx context.Context, name string, afterBatches int64, wait time.Duration) (*api.JobCommitted, error) {
	if wait < 0 || wait > api.MaxCommittedWaitMs*time.Millisecond {
		return nil, errorf("wait committed: wait %v must be within 0 and %v", wait, api.MaxCommittedWaitMs*time.Millisecond)
	}
	return c.committed(ctx, &api.JobCommittedRequest{Name: name, AfterBatches: afterBatches, WaitMs: wait.Milliseconds()})
}

// WaitCommits is WaitCommitted with the job's commits since afterBatches
// in the answer's Commits, oldest first, each with its own time and
// positions (those this node's process published, at most the last
// api.MaxCommittedHistory): a watcher dates every commit exactly, however
// long it took to ask again.
func (c *Client) WaitCommits(ctx context.Context, name string, afterBatches int64, wait time.Duration) (*api.JobCommitted, error) {
	if wait < 0 || wait > api.MaxCommittedWaitMs*time.Millisecond {
		return nil, errorf("wait commits: wait %v must be within 0 and %v", wait, api.MaxCommittedWaitMs*time.Millisecond)
	}
	return c.committed(ctx, &api.JobCommittedRequest{Name: name, AfterBatches: afterBatches, WaitMs: wait.Milliseconds(), History: true})
}

func (c *Client) committed(ctx context.Context, req *api.JobCommittedRequest) (*api.JobCommitted, error) {
	resp, err := call[*api.JobCommittedResponse](ctx, c, "job committed", req)
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	if resp.GetCommitted() == nil {
		return nil, errorf("job committed: reply has no positions")
	}
	return resp.GetCommitted(), nil
}
