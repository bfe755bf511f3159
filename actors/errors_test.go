package actors

import (
	"errors"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
)

// TestStaleCommitIsOneSentinel: a refusal by the job (stale generation or
// start) and one by the store are the same to errors.Is; the job's wraps
// with %w (it re-wrapped the store's with %v, which broke errors.Is).
func TestStaleCommitIsOneSentinel(t *testing.T) {
	if !errors.Is(ErrStaleCommit, persistence.ErrStaleCommit) || !errors.Is(ErrStaleCommit, sink.ErrStaleCommit) {
		t.Fatal("actors.ErrStaleCommit is not the store's sentinel")
	}
	j := &job{jobCore: jobCore{state: api.JobState_RUNNING}, sourceTopology: sourceTopology{generation: 2}, commitPipeline: commitPipeline{progress: map[int32]int64{0: 10}}}
	for _, c := range []*commitBatch{
		{generation: 1, ranges: []sink.Range{{Partition: 0, From: 10, To: 11}}},
		{generation: 2, ranges: []sink.Range{{Partition: 0, From: 9, To: 11}}},
	} {
		err := j.stale(c)
		if !errors.Is(err, persistence.ErrStaleCommit) {
			t.Errorf("stale(%+v) = %v, not errors.Is persistence.ErrStaleCommit", c, err)
		}
	}
}
