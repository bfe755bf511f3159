package node

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// TestGuardFilter: the guard keeps a batch's messages of known types in
// order, answers each one of an unknown type that has a sender (a type name
// not registered, a type index outside the batch) and drops one that has
// none.
func TestGuardFilter(t *testing.T) {
	sys := actor.NewActorSystem()
	t.Cleanup(sys.Shutdown)
	answers := make(chan *api.JobResponse, 8)
	probe := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if r, ok := c.Message().(*api.JobResponse); ok {
			answers <- r
		}
	}))
	b := &remote.MessageBatch{
		TypeNames: []string{string(proto.MessageName(&api.ListJobsRequest{})), "loadnode.probe.Unknown"},
		Senders:   []*actor.PID{probe},
		Envelopes: []*remote.MessageEnvelope{
			{TypeId: 0, Sender: 1},
			{TypeId: 1, Sender: 1},
			{TypeId: 1, Sender: 0},
			{TypeId: 7, Sender: 1},
			{TypeId: 0, Sender: 0},
		},
	}
	kept := []*remote.MessageEnvelope{b.Envelopes[0], b.Envelopes[4]}
	g := &unknownGuard{root: sys.Root, logger: slog.New(slog.DiscardHandler)}
	g.filter(b)
	if len(b.Envelopes) != len(kept) || b.Envelopes[0] != kept[0] || b.Envelopes[1] != kept[1] {
		t.Fatalf("kept %v, want the two of a known type", b.Envelopes)
	}
	for _, want := range []string{`unknown message type "loadnode.probe.Unknown"`, "unknown message type #7"} {
		select {
		case r := <-answers:
			if r.GetError().GetCode() != api.ErrorCode_UNKNOWN_MESSAGE || !strings.Contains(r.GetError().GetMessage(), want) {
				t.Fatalf("answer %v, want UNKNOWN_MESSAGE with %q", r.GetError(), want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer with %q", want)
		}
	}
	// The message without a sender was not answered: the next message
	// the probe gets is a marker sent after the answers.
	sys.Root.Send(probe, &api.JobResponse{})
	select {
	case r := <-answers:
		if r.GetError() != nil {
			t.Fatalf("a third answer: %v", r.GetError())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the marker did not arrive")
	}
}
