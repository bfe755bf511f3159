package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

// TestJobCommittedOverTheWire: the light read and its long poll reach a
// node and come back; a bad wait or name gets its error.
func TestJobCommittedOverTheWire(t *testing.T) {
	n := startNode(t)
	c := dial(t, n.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := c.JobCommitted(ctx, "nope")
	wantCode(t, err, api.ErrorCode_NOT_FOUND, "name")
	if _, err := c.WaitCommitted(ctx, "nope", 0, api.MaxCommittedWaitMs*time.Millisecond+time.Millisecond); err == nil {
		t.Fatal("a wait over the bound was sent")
	}

	if _, err := c.CreateJob(ctx, validSpec("orders_load")); err != nil {
		t.Fatal(err)
	}
	got, err := c.JobCommitted(ctx, "orders_load")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "orders_load" || got.GetCommittedBatches() != 0 || got.GetLoadedRows() != 0 {
		t.Fatalf("committed of a new job = %v", got)
	}
	// Nothing to read (no broker): the long poll answers at its end with
	// the job as it stands.
	got, err = c.WaitCommitted(ctx, "orders_load", 0, 10*time.Millisecond)
	if err != nil || got.GetCommittedBatches() != 0 {
		t.Fatalf("long poll = %v, %v; want no batches", got, err)
	}
}
