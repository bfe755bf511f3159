package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/remoteauth"
)

// maxReplyBytes bounds one reply on the client's endpoint (gRPC's default of
// 4 MiB is too small for a page of wide rows).
const maxReplyBytes = 64 << 20

// scanPage is the number of rows asked for per TableScanRequest.
const scanPage = 1000

// Client talks to one node. See the package documentation.
type Client struct {
	addr    string
	opts    options
	logger  *slog.Logger
	system  *actor.ActorSystem
	remote  *remote.Remote
	manager *actor.PID

	// creds are the per-RPC credentials of every call to the node (token,
	// reply endpoint); transport is TLS or plaintext; peers are the node
	// certificates seen on verified connections to the node, the only ones
	// the client's endpoint accepts replies from.
	creds     *remoteauth.TokenCreds
	transport credentials.TransportCredentials
	peers     remoteauth.PeerSet

	// local: the system is the caller's (Local); Close leaves it running.
	local bool

	closeOnce sync.Once
	done      chan struct{} // closed by Close
	// closing mutes protoactor's logs once Close has begun: the connections
	// it then reports lost are the ones we are closing.
	closing atomic.Bool
}

// Dial starts the client's actor system and endpoint and checks that the
// node at addr (host:port) answers (a PingRequest) before returning.
// ctx bounds the whole of Dial; each of its steps (a TCP connection, the
// authentication check, the ping) is also bounded by the
// per-request timeout.
//
// Before anything reaches the node's actors, Dial asks the node whether it
// accepts the client's token (WithToken) over the client's transport
// (WithTLS): a refusal is an error matching ErrUnauthenticated that says
// why ("no token", "wrong token"), and a TLS mismatch is an error naming
// TLS, instead of a timeout.
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	o := buildOptions(opts)
	if err := o.validate(); err != nil {
		return nil, err
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, errorf("address %q must be host:port: %w", addr, err)
	}
	// A plain TCP connection first: an address nobody listens on is an
	// immediate, clear error instead of protoactor's connect retries. Its
	// local address is also the interface the node can reach us on.
	d := net.Dialer{Timeout: o.timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, errorf("cannot reach node at %s: %w", addr, err)
	}
	host := listenHost(conn.LocalAddr())
	// The manager's PID must carry the address the node knows itself by
	// (its listener's ip:port): a node treats any other address as a remote
	// one and forwards the message there. So "localhost:7070" becomes
	// "127.0.0.1:7070".
	nodeAddr := conn.RemoteAddr().String()
	conn.Close()
	if o.token != "" && o.tls == nil && !loopbackAddr(conn.RemoteAddr()) {
		return nil, errorf("refusing to send the token to %s in plaintext: the node is not on this machine; give WithTLS", addr)
	}

	c := &Client{addr: addr, opts: o, logger: o.logger, done: make(chan struct{})}
	c.creds = &remoteauth.TokenCreds{Token: o.token, Secure: o.tls != nil}
	c.transport = c.transportCreds(addr)
	if err := c.checkAuth(ctx, nodeAddr); err != nil {
		return nil, err
	}
	if err := c.start(host); err != nil {
		return nil, err
	}
	c.manager = actor.NewPID(nodeAddr, api.ManagerName)
	if _, err := c.Ping(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.logger.Debug("client: connected", "addr", addr, "local", c.system.Address())
	return c, nil
}

// listenHost is the host the client's endpoint listens on: the local side of
// the connection that reached the node (127.0.0.1 for a local node).
func listenHost(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || ta.IP == nil {
		return "127.0.0.1"
	}
	if ta.IP.To4() != nil {
		return ta.IP.String()
	}
	// remote.Config joins host and port with "%v:%v".
	return "[" + ta.IP.String() + "]"
}

// loopbackAddr reports whether a is a loopback TCP address.
func loopbackAddr(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// transportCreds are the credentials of the connections to the node: TLS
// (verified with the caller's configuration, the server name defaulting to
// the host in addr) recording the node's certificate, or plaintext.
func (c *Client) transportCreds(addr string) credentials.TransportCredentials {
	if c.opts.tls == nil {
		return insecure.NewCredentials()
	}
	cfg := c.opts.tls.Clone()
	if cfg.MinVersion == 0 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if cfg.ServerName == "" {
		// The connections go to the resolved address (the node's own
		// ip:port), but the certificate names what the user dialed.
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	verify := cfg.VerifyConnection
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if verify != nil {
			if err := verify(cs); err != nil {
				return err
			}
		}
		if len(cs.PeerCertificates) > 0 {
			c.peers.Add(cs.PeerCertificates[0].Raw)
		}
		return nil
	}
	return credentials.NewTLS(cfg)
}

// checkAuth asks the node (remoteauth.CheckMethod) whether it takes the
// client's token over the client's transport. A protoactor endpoint that is
// not a loadnode node answers Unimplemented, which passes.
func (c *Client) checkAuth(ctx context.Context, nodeAddr string) error {
	cc, err := grpc.NewClient("passthrough:///"+nodeAddr, grpc.WithTransportCredentials(c.transport), grpc.WithPerRPCCredentials(c.creds))
	if err != nil {
		return errorf("connect to %s: %w", c.addr, err)
	}
	defer cc.Close()
	cctx, cancel := context.WithTimeout(ctx, c.opts.timeout)
	defer cancel()
	err = cc.Invoke(cctx, remoteauth.CheckMethod, &emptypb.Empty{}, &emptypb.Empty{})
	st := status.Convert(err)
	switch st.Code() {
	case codes.OK, codes.Unimplemented:
		return nil
	case codes.Unauthenticated:
		return &authError{addr: c.addr, msg: st.Message(), noToken: c.opts.token == ""}
	case codes.DeadlineExceeded, codes.Canceled:
		if ctx.Err() != nil {
			return fmt.Errorf("client: connect to %s: %w", c.addr, ctx.Err())
		}
		return &noAnswerError{addr: c.addr, timeout: c.opts.timeout}
	}
	if c.opts.tls == nil {
		switch sniff(ctx, c.addr) {
		case "http":
			return errorf("%s is an HTTP server, not a loadnode node's client port (is it the --http admin port?)", c.addr)
		case "tls":
			return errorf("node at %s serves TLS; give WithTLS (CLI: --tls-ca FILE)", c.addr)
		}
		// A Go TLS server closes a plaintext connection without a word.
		return errorf("node at %s did not take a plaintext connection (%s); if it serves TLS, give WithTLS (CLI: --tls-ca FILE)", c.addr, st.Message())
	}
	return errorf("TLS with node at %s failed: %s", c.addr, st.Message())
}

// start creates the actor system and its remote endpoint on host:0.
// protoactor panics when it cannot listen; that becomes an error. With TLS,
// the endpoint serves a throwaway certificate, named to the node in every
// call's metadata, and takes connections only from the node's certificate.
func (c *Client) start(host string) (err error) {
	quiet := slog.New(&minLevel{h: c.logger.Handler(), min: slog.LevelWarn, mute: &c.closing}).With("component", "protoactor")
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	serverOpts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxReplyBytes),
		// The node pings the client's endpoint every 10 s to find clients
		// that stopped reading; gRPC's default policy (5 min) would
		// answer those pings by closing the connection.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true})}
	fingerprint := ""
	if c.opts.tls != nil {
		cert, fp, err := remoteauth.EphemeralCert()
		if err != nil {
			return errorf("endpoint certificate: %w", err)
		}
		fingerprint = fp
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(&tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAnyClientCert,
			VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
				if len(raw) == 0 || !c.peers.Has(raw[0]) {
					return errors.New("loadnode client: the peer's certificate is not the node's")
				}
				return nil
			},
		})))
	}
	r := remote.NewRemote(system, remote.Configure(host, 0,
		remote.WithServerOptions(serverOpts...),
		remote.WithDialOptions(grpc.WithTransportCredentials(c.transport), grpc.WithPerRPCCredentials(c.creds)),
		// The defaults start at 1,000,000 slots (16 MB); the queues grow.
		remote.WithEndpointWriterQueueSize(1024), remote.WithEndpointManagerQueueSize(1024),
	))
	defer func() {
		if p := recover(); p != nil {
			system.Shutdown()
			err = errorf("start endpoint on %s: %v", host, p)
		}
	}()
	r.Start()
	c.creds.SetReply(system.Address(), fingerprint)
	c.system, c.remote = system, r
	return nil
}

// Addr is the node address the client talks to.
func (c *Client) Addr() string { return c.addr }

// Close stops the client's endpoint and actor system. It is safe to call
// more than once; calls in flight return ErrClosed.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.closing.Store(true)
		if c.remote != nil {
			c.shutdownRemote()
		}
		if c.system != nil && !c.local {
			c.system.Shutdown()
		}
	})
	return nil
}

// closeGrace bounds the graceful stop of the client's endpoint.
const closeGrace = time.Second

// stopRemote is one Remote.Shutdown. A hard stop after a graceful one timed
// out runs beside it, and protoactor's endpoint manager can then send on an
// endpoint reader's channel that the other stop (or the stream's end)
// closed: "send on closed channel", seen under load in the e2e tests. At
// close that is harmless, and it must not take the caller's process down.
func (c *Client) stopRemote(graceful bool) {
	defer func() {
		if r := recover(); r != nil {
			c.logger.Debug("client: protoactor panicked while stopping the endpoint (ignored at close)", "addr", c.addr, "panic", r)
		}
	}()
	c.remote.Shutdown(graceful)
}

// shutdownRemote stops the endpoint gracefully, which tells the node to drop
// its connection back to us (so neither side logs a lost connection). A
// graceful gRPC stop waits for the node's stream to end; if the node does not
// end it within closeGrace (e.g. it was still connecting), the server is
// stopped hard, which also ends the graceful stop.
func (c *Client) shutdownRemote() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.stopRemote(true)
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	c.logger.Debug("client: endpoint did not stop gracefully; stopping it hard", "addr", c.addr)
	c.stopRemote(false)
	t.Reset(closeGrace)
	select {
	case <-done:
	case <-t.C:
		// protoactor is still stopping its endpoint actors; let it finish in
		// the background rather than block the caller.
	}
}

// request sends req to the manager and waits for the reply, at most the
// client's timeout or until ctx ends, whichever is first.
func (c *Client) request(ctx context.Context, op string, req proto.Message) (any, error) {
	select {
	case <-c.done:
		return nil, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("client: %s at %s: %w", op, c.addr, err)
	}
	if err := checkRequest(op, req); err != nil {
		return nil, err
	}
	wait, byCtx := c.opts.timeout, false
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); d < wait {
			wait, byCtx = d, true
		}
	}
	f := c.system.Root.RequestFuture(c.manager, req, wait)
	type result struct {
		v   any
		err error
	}
	res := make(chan result, 1)
	go func() {
		v, err := f.Result()
		res <- result{v, err}
	}()
	select {
	case r := <-res:
		switch {
		case r.err == nil:
			return r.v, nil
		case errors.Is(r.err, actor.ErrTimeout):
			if byCtx {
				return nil, fmt.Errorf("client: %s at %s: %w", op, c.addr, context.DeadlineExceeded)
			}
			return nil, &noAnswerError{addr: c.addr, timeout: wait}
		case errors.Is(r.err, actor.ErrDeadLetter):
			return nil, &unreachableError{addr: c.addr}
		default:
			return nil, fmt.Errorf("client: %s: %w", op, r.err)
		}
	case <-ctx.Done():
		c.system.Root.Stop(f.PID()) // completes the future; the goroutine ends
		return nil, fmt.Errorf("client: %s at %s: %w", op, c.addr, ctx.Err())
	case <-c.done:
		return nil, ErrClosed
	}
}

// call is request with the reply's type checked. A node that does not know
// the request answers a JobResponse with UNKNOWN_MESSAGE; that error is
// returned whatever T is.
func call[T proto.Message](ctx context.Context, c *Client, op string, req proto.Message) (T, error) {
	var zero T
	v, err := c.request(ctx, op, req)
	if err != nil {
		return zero, err
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	if jr, ok := v.(*api.JobResponse); ok {
		if err := fromAPI(jr.GetError()); err != nil {
			return zero, err
		}
	}
	return zero, errorf("%s: unexpected reply %T", op, v)
}

func (c *Client) job(ctx context.Context, op string, req proto.Message) (*api.JobInfo, error) {
	resp, err := call[*api.JobResponse](ctx, c, op, req)
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	if resp.GetJob() == nil {
		return nil, errorf("%s: reply has no job", op)
	}
	return resp.GetJob(), nil
}

// CreateJob asks the node to create a job. The node validates the spec
// (INVALID_ARGUMENT names the field at fault) and persists it before it
// answers.
func (c *Client) CreateJob(ctx context.Context, spec *api.JobSpec) (*api.JobInfo, error) {
	if spec == nil {
		return nil, errorf("create job: nil spec")
	}
	return c.job(ctx, "create job", &api.CreateJobRequest{Spec: spec})
}

// PauseJob pauses a job (reason USER_PAUSE).
func (c *Client) PauseJob(ctx context.Context, name string) (*api.JobInfo, error) {
	return c.job(ctx, "pause job", &api.PauseJobRequest{Name: name})
}

// ResumeJob resumes a paused job.
func (c *Client) ResumeJob(ctx context.Context, name string) (*api.JobInfo, error) {
	return c.job(ctx, "resume job", &api.ResumeJobRequest{Name: name})
}

// StopJob stops a job for good.
func (c *Client) StopJob(ctx context.Context, name string) (*api.JobInfo, error) {
	return c.job(ctx, "stop job", &api.StopJobRequest{Name: name})
}

// ShowJob returns a job's state, history, progress and statistics.
func (c *Client) ShowJob(ctx context.Context, name string) (*api.JobInfo, error) {
	return c.job(ctx, "show job", &api.ShowJobRequest{Name: name})
}

// Ping checks that the node's manager answers and returns the number of
// jobs the node knows. It costs the node the same at any number of jobs.
func (c *Client) Ping(ctx context.Context) (int64, error) {
	resp, err := call[*api.PingResponse](ctx, c, "ping", &api.PingRequest{})
	if err != nil {
		return 0, err
	}
	return resp.GetJobs(), nil
}

// ListJobs returns a summary of every job the node knows, with its
// status (health, lag, rows, rate, sink), by name. It reads the listing
// page by page (ListJobsPage with api.MaxListPage jobs a page), each page one
// request with its own timeout: a job created meanwhile may or may not be
// in it, and no job is in it twice.
func (c *Client) ListJobs(ctx context.Context) ([]*api.JobSummary, error) {
	var all []*api.JobSummary
	var after uint64
	for {
		page, next, err := c.ListJobsPage(ctx, api.MaxListPage, after)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == 0 || len(page) == 0 || next <= after {
			break
		}
		after = next
	}
	slices.SortFunc(all, func(a, b *api.JobSummary) int { return strings.Compare(a.GetName(), b.GetName()) })
	return all, nil
}

// ListJobsPage returns one page of job summaries in id (creation) order:
// at most limit jobs (0: api.DefaultListPage) whose id is above afterID (0:
// from the first job). next is the afterID of the next page, 0 after the
// last page.
func (c *Client) ListJobsPage(ctx context.Context, limit int, afterID uint64) (jobs []*api.JobSummary, next uint64, err error) {
	if limit < 0 || limit > api.MaxListPage {
		return nil, 0, errorf("list jobs: limit %d must be 0..%d", limit, api.MaxListPage)
	}
	resp, err := call[*api.ListJobsResponse](ctx, c, "list jobs", &api.ListJobsRequest{Limit: int32(limit), AfterId: afterID})
	if err != nil {
		return nil, 0, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, 0, err
	}
	return resp.GetJobs(), resp.GetNextAfterId(), nil
}

// ListQuery is a sorted or filtered listing (ListJobsQuery).
type ListQuery struct {
	// Sort is the key of the order: name, state, reason, health, lag,
	// rows_per_sec, loaded_rows, sink, table or id ("": id). Text keys
	// sort by their text; an unknown lag sorts after every known one.
	Sort string
	// Descending reverses the order (ties stay in id order).
	Descending bool
	// Filter keeps the jobs whose name, state, reason, health, sink,
	// table, source or reason message holds it, case-insensitively.
	Filter string
	// Offset skips that many jobs of the sorted, filtered listing.
	Offset int
	// Limit is the page size (0: api.DefaultListPage; at most api.MaxListPage).
	Limit int
}

// ListJobsQuery returns one page of the jobs matching q.Filter, sorted by
// q.Sort over every job the node knows (ties in id order), from q.Offset
// on, and the number of jobs matching. The next page is at q.Offset +
// len(jobs) while that is below matched; figures that move between two
// pages can move a job in the order, so a job may be seen twice or not
// at all across pages.
func (c *Client) ListJobsQuery(ctx context.Context, q ListQuery) (jobs []*api.JobSummary, matched int64, err error) {
	switch {
	case q.Limit < 0 || q.Limit > api.MaxListPage:
		return nil, 0, errorf("list jobs: limit %d must be 0..%d", q.Limit, api.MaxListPage)
	case q.Offset < 0 || q.Offset > math.MaxInt32:
		return nil, 0, errorf("list jobs: offset %d must be 0..%d", q.Offset, math.MaxInt32)
	}
	req := &api.ListJobsRequest{Limit: int32(q.Limit), Sort: q.Sort, Descending: q.Descending, Filter: q.Filter, Offset: int32(q.Offset)}
	if !listQueried(req) {
		req.Sort = "id" // the id order paged by offset, not by cursor
	}
	resp, err := call[*api.ListJobsResponse](ctx, c, "list jobs", req)
	if err != nil {
		return nil, 0, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, 0, err
	}
	return resp.GetJobs(), resp.GetMatched(), nil
}

func listQueried(req *api.ListJobsRequest) bool {
	return req.GetSort() != "" || req.GetDescending() || req.GetFilter() != "" || req.GetOffset() != 0
}

// ClusterStatus returns the cluster's members, leader, jobs per member and
// lease ages, as the member at the client's address reads them from etcd.
// A single node answers FAILED_PRECONDITION.
func (c *Client) ClusterStatus(ctx context.Context) (*api.ClusterStatusResponse, error) {
	resp, err := call[*api.ClusterStatusResponse](ctx, c, "cluster status", &api.ClusterStatusRequest{})
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	return resp, nil
}

// Count returns the number of rows in a table.
func (c *Client) Count(ctx context.Context, table string) (int64, error) {
	resp, err := call[*api.TableCountResponse](ctx, c, "count", &api.TableCountRequest{Table: table})
	if err != nil {
		return 0, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return 0, err
	}
	return resp.GetCount(), nil
}

// InsertRows adds rows to a table in one atomic write (Doris INSERT INTO
// ... VALUES); a UNIQUE or AGGREGATE table merges them. It returns the
// number of rows written.
func (c *Client) InsertRows(ctx context.Context, req *api.TableInsertRequest) (int64, error) {
	resp, err := call[*api.TableInsertResponse](ctx, c, "insert", req)
	if err != nil {
		return 0, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return 0, err
	}
	return resp.GetRows(), nil
}

// TruncateTable deletes every row of a table; the jobs loading into it go
// on from where they were.
func (c *Client) TruncateTable(ctx context.Context, table string) error {
	resp, err := call[*api.TableTruncateResponse](ctx, c, "truncate", &api.TableTruncateRequest{Table: table})
	if err != nil {
		return err
	}
	return fromAPI(resp.GetError())
}

// ScanPage reads one page of a table in storage order: at most limit rows
// (at most api.MaxScanPage; the node may answer fewer, to bound a page's
// bytes) after the cursor after (nil: from the first row). next is the
// cursor of the following page, empty after the last. One request, with
// the client's timeout; ScanTable and Scan read page after page.
func (c *Client) ScanPage(ctx context.Context, table string, after []byte, limit int) (schema *api.TableSpec, rows []*api.Row, next []byte, err error) {
	resp, err := call[*api.TableScanResponse](ctx, c, "scan", &api.TableScanRequest{Table: table, Limit: int64(limit), After: after})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, nil, nil, err
	}
	return resp.GetSchema(), resp.GetRows(), resp.GetNext(), nil
}

// QueryTable asks the node to answer a SELECT over table in the table's
// database (a PostgreSQL table's query runs in PostgreSQL, read-only).
// fallback, when not empty, says why the node did not answer it (the
// table is not in PostgreSQL, a part of the query has no PostgreSQL
// equivalent): the caller runs the query over the scan (ScanPage).
func (c *Client) QueryTable(ctx context.Context, table, statement string) (result *api.ResultSet, fallback string, err error) {
	resp, err := call[*api.TableQueryResponse](ctx, c, "query", &api.TableQueryRequest{Table: table, Statement: statement})
	if err != nil {
		return nil, "", err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, "", err
	}
	if resp.GetFallback() != "" {
		return nil, resp.GetFallback(), nil
	}
	return resp.GetResult(), "", nil
}

// Scan returns a table's schema and its first limit rows in storage order;
// limit <= 0 means every row. Large scans are read page by page; each page
// is one request with its own timeout.
func (c *Client) Scan(ctx context.Context, table string, limit int) (*api.TableSpec, []*api.Row, error) {
	var (
		schema *api.TableSpec
		rows   []*api.Row
		after  []byte
	)
	for {
		page := scanPage
		if limit > 0 {
			page = min(page, limit-len(rows))
		}
		sc, got, next, err := c.ScanPage(ctx, table, after, page)
		if err != nil {
			return nil, nil, err
		}
		if schema == nil {
			schema = sc
		}
		if len(got) > page {
			got = got[:page] // a node that ignores the limit
		}
		rows = append(rows, got...)
		if len(next) == 0 || len(got) == 0 || string(next) == string(after) || (limit > 0 && len(rows) >= limit) {
			break
		}
		after = next
	}
	if schema == nil {
		return nil, nil, errorf("scan %s: reply has no schema", table)
	}
	return schema, rows, nil
}

// minLevel passes on records at min and above (protoactor logs much at
// INFO), and none once mute is set.
type minLevel struct {
	h    slog.Handler
	min  slog.Level
	mute *atomic.Bool
}

func (m *minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && !m.mute.Load() && m.h.Enabled(ctx, l)
}

func (m *minLevel) Handle(ctx context.Context, r slog.Record) error {
	if m.mute.Load() {
		return nil
	}
	return m.h.Handle(ctx, r)
}

func (m *minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return &minLevel{h: m.h.WithAttrs(a), min: m.min, mute: m.mute}
}

func (m *minLevel) WithGroup(g string) slog.Handler {
	return &minLevel{h: m.h.WithGroup(g), min: m.min, mute: m.mute}
}

// DeleteJob removes a STOPPED or CANCELLED job (its snapshot, journal,
// progress, statistics and error rows); its table and rows stay, and the
// name can be used again. A job that is not final is refused with
// FAILED_PRECONDITION.
func (c *Client) DeleteJob(ctx context.Context, name string) (*api.JobInfo, error) {
	return c.job(ctx, "delete job", &api.DeleteJobRequest{Name: name})
}

// AlterJob changes a job: spec (may be nil) is the whole new spec, of which
// only the batch limits, concurrency, error budget, kafka.properties and
// kafka.default_offset may differ; resetOffsets (may be nil) moves the
// given partitions' progress to a number, OFFSET_BEGINNING or OFFSET_END and
// is allowed only while the job is PAUSED. Every alter is journaled (reason
// USER_ALTER, with old and new positions) before it is answered.
func (c *Client) AlterJob(ctx context.Context, name string, spec *api.JobSpec, resetOffsets map[int32]string) (*api.JobInfo, error) {
	return c.job(ctx, "alter job", &api.AlterJobRequest{Name: name, Spec: spec, ResetOffsets: resetOffsets})
}

// Create sends a CreateJobRequest as it is (use_stored_table: the job
// loads the catalog's table of its spec's name, as CREATE ROUTINE LOAD ...
// ON does): see api.CreateJobRequest. CreateJob is the common case.
func (c *Client) Create(ctx context.Context, req *api.CreateJobRequest) (*api.JobInfo, error) {
	if req.GetSpec() == nil {
		return nil, errorf("create job: nil spec")
	}
	return c.job(ctx, "create job", req)
}

// Alter sends an AlterJobRequest as it is (an update mask, Kinesis
// reset_positions): see api.AlterJobRequest.
func (c *Client) Alter(ctx context.Context, req *api.AlterJobRequest) (*api.JobInfo, error) {
	return c.job(ctx, "alter job", req)
}

// CreateTable creates a table in the node's catalog. With ifNotExists an
// existing table is not an error (existed is then true).
func (c *Client) CreateTable(ctx context.Context, spec *api.TableSpec, ifNotExists bool) (existed bool, err error) {
	resp, err := call[*api.CreateTableResponse](ctx, c, "create table", &api.CreateTableRequest{Spec: spec, IfNotExists: ifNotExists})
	if err != nil {
		return false, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return false, err
	}
	return resp.GetExisted(), nil
}

// checkRequest refuses, before anything is sent, a request the node could
// not take: one that does not serialize (a string that is not valid UTF-8:
// protoactor would drop it and the call would wait for its timeout) or one
// over api.MaxRequestBytes (gRPC on the node would refuse it, and again
// nothing would answer).
func checkRequest(op string, req proto.Message) error {
	b, err := proto.Marshal(req)
	if err != nil {
		if strings.Contains(err.Error(), "UTF-8") {
			return errorf("%s: an argument is not valid UTF-8: %v", op, err)
		}
		return errorf("%s: the request cannot be serialized: %v", op, err)
	}
	if len(b) > api.MaxRequestBytes {
		return errorf("%s: the request is %d bytes, over the node's limit of %d bytes (fewer properties, partitions or a shorter statement)", op, len(b), api.MaxRequestBytes)
	}
	return nil
}

// sniff tells what answers a plaintext HTTP/2 preface at addr: "http" (an
// HTTP/1 server answers "HTTP/1.x 400"), "tls" (a TLS server answers with
// an alert record) or "" (anything else, or nothing within a second). It
// only names the cause of a failed connect.
func sniff(ctx context.Context, addr string) string {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")); err != nil {
		return ""
	}
	buf := make([]byte, 5)
	n, _ := io.ReadAtLeast(conn, buf, 1)
	switch {
	case n >= 5 && string(buf[:5]) == "HTTP/":
		return "http"
	case n >= 1 && buf[0] == 0x15: // TLS alert record
		return "tls"
	}
	return ""
}

// Backup asks the node for a backup in dir, a directory on the node's
// machine: absolute, and new or empty. It holds a consistent online copy
// of the node's embedded store (job snapshots, journals, the table
// catalog, and the rows, progress and statistics of the embedded tables),
// the node's id and a manifest (backup.json). `loadnode serve --data dir`
// on the copy resumes every job from its sink's progress: the copy's for
// embedded tables, PostgreSQL's for tables there. Give ctx (or
// WithTimeout) room for a large store: the node answers when the backup
// is written.
func (c *Client) Backup(ctx context.Context, dir string) (*api.BackupResponse, error) {
	resp, err := call[*api.BackupResponse](ctx, c, "backup", &api.BackupRequest{Dir: dir})
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	return resp, nil
}
