package node

import (
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/loadnode/loadnode/api"
)

// The remote guard: a message of a type this node does not know is an
// answer, not a hang.
//
// protoactor's endpoint reader deserializes a protobuf message by finding
// its type name in the protobuf registry, and panics when no binary type
// has that name; RecoverStream would then close the stream, the rest of
// the message batch would be lost and the caller would wait out its
// time-out. answerUnknown takes such messages out of each batch as the
// stream receives it, before protoactor reads the batch, and answers their
// senders.

// answerUnknown is a stream interceptor that answers every remote message
// of a protobuf type this node does not know with a *api.JobResponse whose
// error has code UNKNOWN_MESSAGE and names the type (what the manager
// answers a known type it does not handle), and passes the rest of its
// batch on. A message sent without a sender is dropped and logged.
// RecoverStream stays behind it for any other message protoactor cannot
// read.
func answerUnknown(system *actor.ActorSystem, logger *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, &unknownGuard{ServerStream: ss, root: system.Root, logger: logger})
	}
}

// unknownGuard filters the message batches one remote stream receives.
// It is used by the stream's one reading goroutine.
type unknownGuard struct {
	grpc.ServerStream
	root   *actor.RootContext
	logger *slog.Logger
}

func (g *unknownGuard) RecvMsg(m any) error {
	if err := g.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if rm, ok := m.(*remote.RemoteMessage); ok {
		if b := rm.GetMessageBatch(); b != nil {
			g.filter(b)
		}
	}
	return nil
}

// protoSerializer is the id of protoactor's protobuf serializer, the one
// that panics on an unknown type (its JSON serializer hands one on as a
// *remote.JsonMessage, which the manager answers).
const protoSerializer = 0

// filter removes b's envelopes of unknown types and answers their senders.
func (g *unknownGuard) filter(b *remote.MessageBatch) {
	kept := b.Envelopes[:0]
	for _, env := range b.Envelopes {
		name, known := typeOf(b, env)
		if known {
			kept = append(kept, env)
			continue
		}
		sender := senderOf(b, env)
		if sender == nil {
			g.logger.Warn("remote: dropped a message of a type the node does not know, sent without a sender", "type", name)
			continue
		}
		g.logger.Warn("remote: answered a message of a type the node does not know", "type", name, "sender", sender.String())
		g.root.Send(sender, &api.JobResponse{Error: &api.Error{
			Code:    api.ErrorCode_UNKNOWN_MESSAGE,
			Message: fmt.Sprintf("loadnode: unknown message type %s", name),
		}})
	}
	clear(b.Envelopes[len(kept):])
	b.Envelopes = kept
}

// typeOf returns the quoted type name of env and whether protoactor can
// deserialize it.
func typeOf(b *remote.MessageBatch, env *remote.MessageEnvelope) (string, bool) {
	if env.TypeId < 0 || int(env.TypeId) >= len(b.TypeNames) {
		return fmt.Sprintf("#%d (the batch names %d types)", env.TypeId, len(b.TypeNames)), false
	}
	name := b.TypeNames[env.TypeId]
	if env.SerializerId != protoSerializer {
		return api.Quote(name), true
	}
	_, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	return api.Quote(name), err == nil
}

// senderOf is env's sender as protoactor's endpoint reader reads it (nil
// when there is none or the batch does not have it).
func senderOf(b *remote.MessageBatch, env *remote.MessageEnvelope) *actor.PID {
	i := int(env.Sender)
	if i <= 0 || i > len(b.Senders) {
		return nil
	}
	pid := b.Senders[i-1]
	if env.SenderRequestId > 0 {
		pid = proto.Clone(pid).(*actor.PID)
		pid.RequestId = env.SenderRequestId
	}
	return pid
}
