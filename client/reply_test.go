package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// TestReplyBoxTakesTheFirstReply: the first message is the reply, unwrapped
// from its envelope; later ones (a reply after a time-out, a stop) are
// dropped without blocking the sender.
func TestReplyBoxTakesTheFirstReply(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	box, pid := newReplyBox(sys)
	defer sys.ProcessRegistry.Remove(pid)
	sys.Root.Send(pid, &actor.MessageEnvelope{Message: &api.PingResponse{Jobs: 7}})
	sys.Root.Send(pid, &api.PingResponse{Jobs: 8})
	box.Stop(pid)
	got := <-box.ch
	if r, ok := got.(*api.PingResponse); !ok || r.GetJobs() != 7 {
		t.Fatalf("got %v, want the first reply (jobs 7)", got)
	}
	select {
	case m := <-box.ch:
		t.Fatalf("a second message came through: %v", m)
	default:
	}

	stopped, pid2 := newReplyBox(sys)
	defer sys.ProcessRegistry.Remove(pid2)
	sys.Root.Stop(pid2)
	if m := <-stopped.ch; !isDeadLetter(m) {
		t.Fatalf("a stopped box gave %v, want a dead letter", m)
	}
}

func isDeadLetter(m any) bool {
	_, ok := m.(*actor.DeadLetterResponse)
	return ok
}

// TestRequestLeavesNoProcess: each request's reply box leaves the registry
// when the request ends, answered, timed out or cancelled.
func TestRequestLeavesNoProcess(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	props := actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *api.PingRequest:
			ctx.Respond(&api.PingResponse{Jobs: 1})
		case *api.ShowJobRequest:
			_ = m // never answered
		}
	})
	mgr, err := sys.Root.SpawnNamed(props, "mgr")
	if err != nil {
		t.Fatal(err)
	}
	c := Local(sys, mgr, WithTimeout(50*time.Millisecond))
	before := processes(sys)
	if n, err := c.Ping(context.Background()); err != nil || n != 1 {
		t.Fatalf("ping: %d, %v", n, err)
	}
	if _, err := c.ShowJob(context.Background(), "x"); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("show: %v, want ErrNoAnswer", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("ping with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	c2 := Local(sys, mgr, WithTimeout(time.Hour))
	if _, err := c2.ShowJob(ctx, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("show with a deadline: %v, want DeadlineExceeded", err)
	}
	if after := processes(sys); after != before {
		t.Fatalf("registry holds %d processes after the requests, %d before", after, before)
	}
}

// processes is how many processes sys's registry holds.
func processes(sys *actor.ActorSystem) int {
	n := 0
	for _, m := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		n += m.Count()
	}
	return n
}
