package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/node"
)

// TestCrashAfterCreateSynced is the Doris #67681 window with a real
// process: the node dies right after the create snapshot is synced and
// before the job actor is spawned. Replay must yield the job in
// NEED_SCHEDULE (never RUNNING), and the job must then load everything.
func TestCrashAfterCreateSynced(t *testing.T) {
	const topic, name, tbl = "window", "window_load", "window_rows"
	b := testnode.StartBroker(t, 3, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 3000)
	dir := t.TempDir()

	p := startNode(t, dir, node.CrashEnv+"=after-create-sync")
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs()))
	cancel()
	if err == nil {
		t.Fatal("create was acknowledged although the node died before spawning the job")
	}
	if exited, werr := p.Wait(10 * time.Second); !exited {
		t.Fatal("node still running 10 s after the create; expected SIGKILL at the crash point")
	} else if werr == nil {
		t.Fatal("node exited cleanly; expected SIGKILL at the crash point")
	}
	c.Close()

	p = startNode(t, dir)
	c = p.Client(t)
	info := showJob(t, c, name)
	h := info.History
	if len(h) == 0 || h[0].To != api.JobState_NEED_SCHEDULE || h[0].Reason != api.Reason_CREATED {
		t.Fatalf("history after replay = %v; want it to start with NEED_SCHEDULE (CREATED)", h)
	}
	for _, tr := range h {
		if tr.Reason == api.Reason_RECOVERED {
			t.Fatalf("replay found a stored RUNNING for a job that never ran: %v", h)
		}
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
}

// TestCrashAfterCommitBeforeAck kills the node after a batch is durable but
// before the task hears about it; on restart nothing is loaded twice.
func TestCrashAfterCommitBeforeAck(t *testing.T) {
	const topic, name, tbl = "acks", "acks_load", "acks_rows"
	b := testnode.StartBroker(t, 2, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 20000)
	dir := t.TempDir()

	p := startNode(t, dir, node.CrashEnv+"=after-commit:3")
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if _, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs())); err != nil {
		t.Fatal(err)
	}
	cancel()
	if exited, werr := p.Wait(30 * time.Second); !exited {
		t.Fatal("node still running after 30 s; expected SIGKILL at the crash point")
	} else if werr == nil {
		t.Fatal("node exited cleanly; expected SIGKILL at the crash point")
	}
	c.Close()
	p = startNode(t, dir)
	c = p.Client(t)
	waitDrained(t, c, b, name, topic, 60*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
}
