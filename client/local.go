package client

import (
	"github.com/asynkron/protoactor-go/actor"
)

// Local returns a Client that sends its requests to a manager in the
// caller's own actor system (the node's HTTP API runs Exec and the other
// calls through it, as the CLI does over the network). It has no endpoint
// and no token: the caller authenticated its own request already. Close
// leaves the system alone; calls after Close fail with ErrClosed.
func Local(system *actor.ActorSystem, manager *actor.PID, opts ...Option) *Client {
	o := buildOptions(opts)
	return &Client{addr: "local:" + manager.GetId(), opts: o, logger: o.logger, system: system, manager: manager,
		local: true, done: make(chan struct{})}
}
