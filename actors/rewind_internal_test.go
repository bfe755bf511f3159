package actors

import (
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// TestNextKeySpace: a reset advances the key-space count and keeps the
// last move's fence and positions; past table.MaxKeySpace it is refused.
func TestNextKeySpace(t *testing.T) {
	rb, err := nextKeySpace(nil)
	if err != nil || rb.GetCount() != 1 || rb.GetFence() != 0 {
		t.Fatalf("first: %v, %v", rb, err)
	}
	moved := &api.SourceRebase{Fence: 7, Positions: map[int32]int64{0: 3}, Count: 2}
	rb, err = nextKeySpace(moved)
	if err != nil || rb.GetCount() != 3 || rb.GetFence() != 7 || rb.GetPositions()[0] != 3 || moved.GetCount() != 2 {
		t.Fatalf("after a move: %v, %v (the move: %v)", rb, err, moved)
	}
	if _, err := nextKeySpace(&api.SourceRebase{Count: table.MaxKeySpace}); err == nil {
		t.Fatal("past MaxKeySpace: no error")
	}
	if table.KeySpace(5, table.MaxKeySpace) == table.KeySpace(5, 0) {
		t.Fatal("MaxKeySpace's keys are the first key space's")
	}
}
