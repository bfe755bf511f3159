package postgres

import (
	"errors"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

// TestRaiseFenceRefusesFormerOwner: once a new owner has raised the fence
// to its epoch, a commit of the former owner (older epoch, any local
// generation) is refused and writes nothing; the new owner's commits go
// through.
func TestRaiseFenceRefusesFormerOwner(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("fenced", col("n", api.ColumnType_INT64))
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	old := sink.EpochFence(7, 3)
	commit := func(fence uint64, from int64) error {
		return s.Commit(&sink.Commit{JobID: 1, Table: "fenced", Fence: fence, Ranges: []sink.Range{{Partition: 0, From: from, To: from + 1}}})
	}
	if err := commit(old, 0); err != nil {
		t.Fatalf("the first owner's commit: %v", err)
	}
	var _ sink.Fencer = s
	if err := s.RaiseFence(1, sink.EpochFence(9, 0)); err != nil {
		t.Fatal(err)
	}
	if err := commit(sink.EpochFence(7, sink.MaxLocal), 1); !errors.Is(err, sink.ErrStaleCommit) {
		t.Errorf("a former owner's commit after the new owner raised the fence = %v, want ErrStaleCommit", err)
	}
	if p, err := s.Progress(1); err != nil || p.Positions[0] != 1 || p.Fence != sink.EpochFence(9, 0) {
		t.Errorf("progress %+v, %v; want position 1 and the raised fence", p, err)
	}
	if err := commit(sink.EpochFence(9, 1), 1); err != nil {
		t.Errorf("the new owner's commit: %v", err)
	}
	// Raising to a lower fence changes nothing.
	if err := s.RaiseFence(1, sink.EpochFence(8, 0)); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.Progress(1); p.Fence != sink.EpochFence(9, 1) {
		t.Errorf("fence %d after raising to a lower one, want %d", p.Fence, sink.EpochFence(9, 1))
	}
}
