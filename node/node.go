// Package node assembles one loadnode process: the Pebble store, the sinks
// of the node config's PostgreSQL databases, the actor system with its
// scheduler and manager, the Kafka and Kinesis sources, cluster membership
// on etcd when the config has a cluster section, the remote endpoint that
// clients reach, the admin endpoint (metrics, health, the HTTP/JSON API
// under /v1, pprof, the web console) and the MySQL-protocol endpoint
// (mysql.go). cmd/loadnode and the end-to-end tests drive the same code.
//
// Concurrency: Start and Close are called once each, from one goroutine;
// Addr is safe at any time after Start.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/alerts"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/formats/registry"
	"github.com/loadnode/loadnode/internal/remoteauth"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/persistence"
)

// Config is what a node is started with.
type Config struct {
	// Node is the node configuration (data dir, listen address, limits).
	Node config.Node
	// Logger receives the node's logs; nil discards them.
	Logger *slog.Logger
	// FS is the store's filesystem; nil is the OS filesystem. Tests inject
	// errorfs or a crashable in-memory FS.
	FS vfs.FS
	// OnStoreFatal is called when the store hits a fatal error (a failed
	// WAL write or fsync). nil means: log and exit the process with code 70,
	// which is what a daemon must do (Pebble cannot continue).
	OnStoreFatal func(error)
	// Hooks are test and crash points; see actors.Hooks.
	Hooks actors.Hooks
	// AcceptWALLoss starts on a store whose write-ahead log is damaged
	// before intact records, dropping them (persistence.Options); `serve
	// --accept-wal-loss`.
	AcceptWALLoss bool
}

// Node is a running loadnode.
type Node struct {
	cfg       Config
	logger    *slog.Logger
	store     *persistence.Store
	system    *actor.ActorSystem
	remote    *remote.Remote
	sources   *sourceSet
	manager   *actor.PID
	scheduler *actor.PID
	addr      string
	closed    bool
	admin     *admin
	ready     atomic.Bool
	dbs       *databases
	alerts    *alerts.Dispatcher
	cluster   *clusterMode   // nil on a single node
	mysql     *mysqlEndpoint // nil when the node key mysql is off
}

// MySQLAddr is the MySQL-protocol endpoint's host:port, "" when it is off.
func (n *Node) MySQLAddr() string {
	if n.mysql == nil {
		return ""
	}
	return n.mysql.Addr()
}

// AdminAddr is the HTTP admin endpoint's host:port, "" when it is off.
func (n *Node) AdminAddr() string {
	if n.admin == nil {
		return ""
	}
	return n.admin.addr
}

// Start opens the store, starts the actors and the remote endpoint, and
// returns once the manager has recovered every job from the store: each is
// listed and answers from then on (the job actors are respawned after, in
// batches between requests; a command to a job not respawned yet spawns
// it first).
func Start(ctx context.Context, cfg Config) (*Node, error) {
	if err := cfg.Node.Validate(); err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	n := &Node{cfg: cfg, logger: logger}
	sec, err := loadSecurity(cfg.Node, logger)
	if err != nil {
		return nil, err
	}
	onFatal := cfg.OnStoreFatal
	if onFatal == nil {
		onFatal = func(err error) {
			logger.Error("loadnode: fatal store error; stopping the process: "+persistence.FatalAdvice(err, cfg.Node.DataDir), "err", err)
			os.Exit(70)
		}
	}
	st, err := persistence.Open(persistence.Options{
		Dir: cfg.Node.DataDir, FS: cfg.FS, Logger: logger.With("component", "store"),
		OnFatal: onFatal, MaxErrorRowsKept: cfg.Node.MaxErrorRowsKept, AcceptWALLoss: cfg.AcceptWALLoss,
	})
	if err != nil {
		return nil, fmt.Errorf("node: open store: %w", err)
	}
	n.store = st
	// Watermarks fresher than half the refresh interval are shared between
	// jobs on one topic.
	n.sources = newSourceSet(logger, cfg.Node.WatermarkInterval/2)

	host, portStr, err := net.SplitHostPort(cfg.Node.Listen)
	if err != nil {
		n.closeStore()
		return nil, fmt.Errorf("node: listen %q: %w", cfg.Node.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		n.closeStore()
		return nil, fmt.Errorf("node: listen %q: bad port", cfg.Node.Listen)
	}
	if !remoteauth.Loopback(host) && (sec.token == "" || sec.cert == nil) {
		// Validate refuses this already; a second lock on the same door.
		n.closeStore()
		return nil, fmt.Errorf("node: listen %q: not a loopback address; binding it requires a token and TLS", cfg.Node.Listen)
	}
	// Try the address first so that a taken one (or a host that is not
	// ours) is an error, not a panic inside protoactor's Start. Port 0 is
	// passed on as 0: protoactor binds a port itself and reports it, so
	// that no other process can take the port between this probe and its
	// bind.
	if l, err := net.Listen("tcp", cfg.Node.Listen); err != nil {
		n.closeStore()
		return nil, fmt.Errorf("node: listen %s: %w", cfg.Node.Listen, err)
	} else {
		l.Close()
	}

	n.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return QuietLogger(logger)
	}))
	ropts := []remote.ConfigOption{remote.WithServerOptions(sec.serverOptions(n.system)...)}
	dial := sec.dialOptions()
	if dial == nil {
		dial = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	// Replies to a client that stopped reading (a stopped or wedged
	// process) would queue behind a full flow-control window for as long
	// as the connection lives: keepalive pings that go unanswered close it
	// after replyKeepalive*2, and the endpoint drops what it held.
	dial = append(dial, grpc.WithKeepaliveParams(keepalive.ClientParameters{
		Time: replyKeepalive, Timeout: replyKeepalive, PermitWithoutStream: true}))
	// A cluster member forwarding to a job's owner authenticates as a
	// client would, with the members' shared token (peers.go).
	peers := newPeerAuth(sec)
	if cfg.Node.Cluster.Enabled() && peers.needed() {
		dial = append(dial, grpc.WithPerRPCCredentials(peers))
	}
	ropts = append(ropts, remote.WithDialOptions(dial...))
	// protoactor's default endpoint queues start at 1,000,000 slots (16 MB
	// per connected client); they grow on demand, so start them small.
	ropts = append(ropts, remote.WithEndpointWriterQueueSize(endpointQueueSize), remote.WithEndpointManagerQueueSize(endpointQueueSize))
	rcfg := remote.Configure(host, port, ropts...)
	n.remote = remote.NewRemote(n.system, rcfg)
	n.remote.Start()
	n.addr = net.JoinHostPort(host, strconv.Itoa(port))
	if port == 0 {
		// The address protoactor bound (it advertises the listener's).
		_, bound, err := net.SplitHostPort(n.system.Address())
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("node: remote bound %q: %w", n.system.Address(), err)
		}
		n.addr = net.JoinHostPort(host, bound)
	}

	var adm *admin
	if cfg.Node.HTTP != "" {
		adm = newAdmin(logger.With("component", "admin"), sec.token, sec.serverTLS())
		adm.hosts = newHostNames(cfg.Node.HTTP, cfg.Node.HTTPAllowedHosts)
		adm.endpoints.watch(n.system)
	}
	// One node, one Pebble store: it is the metadata store and the sink
	// of every table that names no database of the node config.
	var observe commitObserver
	if adm != nil {
		observe = adm.sinkCommitDone
	}
	dbs, err := openDatabases(cfg.Node, st.FS(), st.Sink(), logger, observe)
	if err != nil {
		n.Close()
		return nil, err
	}
	n.dbs = dbs
	var meta metastore.Store = st.Meta()
	if cfg.Node.Cluster.Enabled() {
		// Cluster mode: the metadata lives in etcd; the member starts once
		// the manager has recovered.
		peers.setSelf(n.addr)
		nodeID, err := st.NodeID()
		if err != nil {
			n.Close()
			return nil, fmt.Errorf("node: cluster: %w", err)
		}
		cm, err := openCluster(cfg.Node.Cluster, n.addr, nodeID, logger, peers)
		if err != nil {
			n.Close()
			return nil, err
		}
		n.cluster, meta = cm, cm.meta
	}
	deps := &actors.Deps{
		Meta:    meta,
		Sinks:   dbs.sink,
		Sources: n.sources.open,
		Specs:   specRules{maps: newMappingCache()},
		// Jobs naming the same schema registry share its client and cache.
		Decoders: registry.NewRegistries().Decoder,
		Logger:   logger,
		Hooks:    cfg.Hooks,
		// cfg.Node was validated above; see node/settings.go.
		Settings: actorSettings(cfg.Node),
	}
	obs := &observer{admin: adm}
	var reg prometheus.Registerer
	if adm != nil {
		reg = adm.reg
		obs.timelines = newTimelines(timelineSpan, cfg.Node.WatermarkInterval)
		adm.console = newConsole(adm, obs.timelines)
	}
	if obs.alerts, err = startAlerts(cfg.Node.Alerts, logger.With("component", "alerts"), reg); err != nil {
		n.Close()
		return nil, err
	}
	n.alerts = obs.alerts
	deps.Observer = obs // before any actor can read deps
	if n.cluster != nil {
		deps.Cluster = n.cluster
	}
	n.scheduler, err = n.system.Root.SpawnNamed(actors.NewSchedulerProps(cfg.Node.MaxConcurrentTasks, logger), actors.SchedulerName)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("node: spawn scheduler: %w", err)
	}
	props, err := actors.NewManagerProps(deps, n.scheduler)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("node: %w", err)
	}
	n.manager, err = n.system.Root.SpawnNamed(props, api.ManagerName)
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("node: spawn manager: %w", err)
	}
	if adm != nil {
		// /healthz answers from now on; /readyz once recovery is done.
		if err := adm.start(cfg.Node.HTTP, n.system, n.manager, n.ready.Load); err != nil {
			n.Close()
			return nil, err
		}
		n.admin = adm
	}
	if err := n.awaitRecovery(ctx); err != nil {
		// Logged before Close, and Close's own failure is added to it, so
		// that nothing in the close can hide why the start failed.
		logger.Error("loadnode: start failed", "err", err)
		if cerr := n.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("node: close after the failed start: %w", cerr))
		}
		return nil, err
	}
	if n.cluster != nil {
		// Refused when another live member holds the name or the token is
		// not the cluster's: the node takes no work and does not start.
		if err := n.cluster.member.Start(ctx, toManager{root: n.system.Root, manager: n.manager}); err != nil {
			err = fmt.Errorf("node: join the cluster: %w", err)
			logger.Error("loadnode: start failed", "err", err)
			if cerr := n.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("node: close after the failed start: %w", cerr))
			}
			return nil, err
		}
	}
	if cfg.Node.MySQL != "" {
		// Last: its statements go through the node's own endpoint, which
		// answers from now on.
		m, err := startMySQL(ctx, cfg.Node, sec, n.addr, logger.With("component", "mysql"))
		if err != nil {
			logger.Error("loadnode: start failed", "err", err)
			if cerr := n.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("node: close after the failed start: %w", cerr))
			}
			return nil, err
		}
		n.mysql = m
	}
	n.ready.Store(true)
	logger.Info("loadnode: node started", "addr", n.addr, "mysql", n.MySQLAddr(), "data", cfg.Node.DataDir, "tls", sec.cert != nil, "token", sec.token != "")
	return n, nil
}

// awaitRecovery waits until the manager has recovered every job, or until
// ctx is done. Recovery has no time limit of its own: at 100,000 jobs on a
// loaded machine it can take longer than any fixed bound (a 60 s one made
// slow but healthy restarts fail), and serve's ctx ends on a stop signal.
func (n *Node) awaitRecovery(ctx context.Context) error {
	f := n.system.Root.RequestFuture(n.manager, &actors.AwaitRecovery{}, recoveryWaitMax)
	type result struct {
		res any
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := f.Result()
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return fmt.Errorf("node: recovery not finished when the start was abandoned: %w", context.Cause(ctx))
	}
	if r.err != nil {
		return fmt.Errorf("node: recovery: %w", r.err)
	}
	res, ok := r.res.(*actors.RecoveryDone)
	if !ok {
		return fmt.Errorf("node: recovery: unexpected answer %T", r.res)
	}
	if res.Err != nil {
		return fmt.Errorf("node: %w", res.Err)
	}
	return nil
}

// recoveryWaitMax only bounds the future's life (a protoactor future needs
// one); ctx is what ends the wait.
const recoveryWaitMax = 24 * time.Hour

// Addr is the remote endpoint's host:port.
func (n *Node) Addr() string { return n.addr }

// System is the node's actor system (for in-process tests and tools).
func (n *Node) System() *actor.ActorSystem { return n.system }

// Manager is the manager's PID.
func (n *Node) Manager() *actor.PID { return n.manager }

// Scheduler is the scheduler's PID.
func (n *Node) Scheduler() *actor.PID { return n.scheduler }

// replyKeepalive is the keepalive interval and timeout of the node's
// connections to client endpoints: a client that does not answer a ping
// within it loses its connection and its queued replies (docs/limits.md).
const replyKeepalive = 10 * time.Second

// Close stops the actors, the remote endpoint and the store. Calling it
// again does nothing. An actor still busy when its stop wait ends (a
// manager in the middle of recovering 100,000 jobs) cannot crash the
// close: the store waits for the calls in flight and refuses later ones.
func (n *Node) Close() error {
	if n.closed {
		return nil
	}
	n.closed = true
	if n.mysql != nil {
		n.mysql.close()
	}
	if n.admin != nil {
		n.admin.stop()
	}
	if n.cluster != nil {
		// Leave first: the lease is revoked and the jobs move at once.
		n.cluster.close()
	}
	if n.system != nil && n.manager != nil {
		_ = n.system.Root.StopFuture(n.manager).Wait()
	}
	if n.system != nil && n.scheduler != nil {
		_ = n.system.Root.StopFuture(n.scheduler).Wait()
	}
	if n.remote != nil {
		n.remote.Shutdown(false)
	}
	if n.system != nil {
		n.system.Shutdown()
	}
	if n.sources != nil {
		n.sources.closeAll()
	}
	if n.dbs != nil {
		n.dbs.close()
	}
	n.alerts.Close()
	return n.closeStore()
}

func (n *Node) closeStore() error {
	if n.store == nil {
		return nil
	}
	err := n.store.Close()
	n.store = nil
	return err
}

// RecoverStream guards protoactor's gRPC stream: a remote message that
// makes protoactor's endpoint reader panic (answerUnknown answers those of
// an unknown type before it reads them) would otherwise kill the process.
// The stream is closed with an error instead and the peer reconnects.
func RecoverStream(logger *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				logger.Warn("remote: refused a message the node cannot decode", "method", info.FullMethod, "panic", fmt.Sprint(r))
				logger.Debug("remote: panic stack", "stack", string(debug.Stack()))
				err = status.Errorf(codes.InvalidArgument, "loadnode: message refused: %v", r)
			}
		}()
		return handler(srv, ss)
	}
}

// RecoverUnary is RecoverStream for unary calls.
func RecoverUnary(logger *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				logger.Warn("remote: unary call panicked", "method", info.FullMethod, "panic", fmt.Sprint(r))
				err = status.Errorf(codes.Internal, "loadnode: call refused: %v", r)
			}
		}()
		return handler(ctx, req)
	}
}

// QuietLogger returns the logger protoactor uses: ours, at WARN and above.
func QuietLogger(l *slog.Logger) *slog.Logger {
	return slog.New(&minLevel{h: l.Handler(), min: slog.LevelWarn}).With("component", "protoactor")
}

type minLevel struct {
	h   slog.Handler
	min slog.Level
}

func (m *minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m *minLevel) Handle(ctx context.Context, r slog.Record) error {
	// A peer that goes away (every client that closes) is not an error of
	// ours; protoactor reports it at ERROR.
	if r.Message == "EndpointWriter lost connection" || r.Message == "EndpointReader failed to read" {
		return nil
	}
	return m.h.Handle(ctx, r)
}
func (m *minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return &minLevel{h: m.h.WithAttrs(a), min: m.min}
}
func (m *minLevel) WithGroup(g string) slog.Handler {
	return &minLevel{h: m.h.WithGroup(g), min: m.min}
}

// endpointQueueSize is the initial size of protoactor remote's endpoint
// queues, which grow as needed.
const endpointQueueSize = 1024
