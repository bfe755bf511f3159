package node

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/prometheus/client_golang/prometheus"
)

// endpoints counts the node's connections to client endpoints, from the
// remote's connect and terminate events: loadnode_client_endpoints is how
// many are open, loadnode_client_endpoints_closed_total how many closed,
// whether the client went away or stopped answering the keepalive pings
// (replyKeepalive), when its queued replies are dropped.
//
// Concurrency: the event stream calls on its publishers' goroutines; the
// set of open addresses is under mu.
type endpoints struct {
	open   prometheus.Gauge
	closed prometheus.Counter
	sub    *eventstream.Subscription
	es     *eventstream.EventStream

	mu struct {
		sync.Mutex
		addrs map[string]struct{}
	}
}

func newEndpoints(reg prometheus.Registerer) *endpoints {
	e := &endpoints{
		open: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "loadnode_client_endpoints",
			Help: "Client endpoints the node holds a connection to (for replies).",
		}),
		closed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "loadnode_client_endpoints_closed_total",
			Help: "Connections to client endpoints closed: the client went away, or stopped reading and missed the keepalive pings (its queued replies are dropped).",
		}),
	}
	e.mu.addrs = make(map[string]struct{})
	reg.MustRegister(e.open, e.closed)
	return e
}

// watch subscribes to system's remote endpoint events until stop.
func (e *endpoints) watch(system *actor.ActorSystem) {
	e.es = system.EventStream
	e.sub = system.EventStream.SubscribeWithPredicate(e.event, func(m any) bool {
		switch m.(type) {
		case *remote.EndpointConnectedEvent, *remote.EndpointTerminatedEvent:
			return true
		}
		return false
	})
}

func (e *endpoints) event(m any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev := m.(type) {
	case *remote.EndpointConnectedEvent:
		e.mu.addrs[ev.Address] = struct{}{}
	case *remote.EndpointTerminatedEvent:
		// A connection's end can be published more than once.
		if _, ok := e.mu.addrs[ev.Address]; !ok {
			return
		}
		delete(e.mu.addrs, ev.Address)
		e.closed.Inc()
	}
	e.open.Set(float64(len(e.mu.addrs)))
}

func (e *endpoints) stop() {
	if e.sub != nil {
		e.es.Unsubscribe(e.sub)
	}
}
