package node_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

func start(t *testing.T) *node.Node {
	t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// unknownMessage builds a protobuf message of a type no loadnode binary
// knows: protoactor's deserializer finds no type for it and panics.
func unknownMessage(t *testing.T) proto.Message {
	t.Helper()
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:    proto.String("probe/unknown.proto"),
		Package: proto.String("loadnode.probe"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Unknown"),
			Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("x"), Number: proto.Int32(1),
				Type:  descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), JsonName: proto.String("x"),
			}},
		}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(fd.Messages().Get(0))
	m.Set(fd.Messages().Get(0).Fields().Get(0), protoreflectString("boom"))
	return m
}

// peer is a bare protoactor remote peer, as a foreign client would be.
func peer(t *testing.T) *actor.ActorSystem {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return node.QuietLogger(slog.New(slog.DiscardHandler)) }))
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0))
	r.Start()
	t.Cleanup(func() { r.Shutdown(false); sys.Shutdown() })
	return sys
}

// TestUnknownRemoteMessage: a remote message of a type the node does not
// know is answered with UNKNOWN_MESSAGE naming the type, and neither the
// node nor the connection dies; a known type the manager does not handle
// gets UNKNOWN_MESSAGE too; the node keeps answering.
func TestUnknownRemoteMessage(t *testing.T) {
	n := start(t)
	sys := peer(t)
	mgr := actor.NewPID(n.Addr(), api.ManagerName)

	// The unknown type, and a request sent right behind it (in the same
	// batch, or the next on the same stream): both are answered.
	unknown := sys.Root.RequestFuture(mgr, unknownMessage(t), 5*time.Second)
	behind := sys.Root.RequestFuture(mgr, &api.ListJobsRequest{}, 5*time.Second)
	res, err := unknown.Result()
	if err != nil {
		t.Fatalf("unknown type: %v, want an answer", err)
	}
	if r, ok := res.(*api.JobResponse); !ok || r.GetError().GetCode() != api.ErrorCode_UNKNOWN_MESSAGE ||
		!strings.Contains(r.GetError().GetMessage(), `"loadnode.probe.Unknown"`) {
		t.Fatalf("unknown type: got %v, want UNKNOWN_MESSAGE naming \"loadnode.probe.Unknown\"", res)
	}
	if res, err := behind.Result(); err != nil {
		t.Fatalf("list sent behind the unknown type: %v", err)
	} else if _, ok := res.(*api.ListJobsResponse); !ok {
		t.Fatalf("list sent behind the unknown type: got %T", res)
	}
	// A known type that is not a request.
	res, err = sys.Root.RequestFuture(mgr, &api.Row{}, 5*time.Second).Result()
	if err != nil {
		t.Fatalf("known non-request type: %v", err)
	}
	if r, ok := res.(*api.JobResponse); !ok || r.GetError().GetCode() != api.ErrorCode_UNKNOWN_MESSAGE {
		t.Fatalf("known non-request type: got %v", res)
	}
	// The node answers a normal request, over the same connection and a
	// new one, at the first try.
	for i, s := range []*actor.ActorSystem{sys, peer(t)} {
		res, err := s.Root.RequestFuture(mgr, &api.ListJobsRequest{}, 5*time.Second).Result()
		if err != nil {
			t.Fatalf("list over connection %d after an unknown message: %v", i, err)
		}
		if _, ok := res.(*api.ListJobsResponse); !ok {
			t.Fatalf("list over connection %d: got %T", i, res)
		}
	}
}

// TestRefusesNonLoopback: with no authentication or TLS yet, the node does
// not open its client endpoint beyond this machine.
func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		cfg := config.DefaultNode()
		cfg.DataDir, cfg.Listen = t.TempDir(), addr
		n, err := node.Start(context.Background(), node.Config{Node: cfg})
		if err == nil {
			n.Close()
			t.Fatalf("listen %s: started, want a refusal", addr)
		}
		if !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("listen %s: %v", addr, err)
		}
	}
}
