package node

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/remoteauth"
)

// admin is the node's HTTP admin endpoint: /metrics (Prometheus), /healthz,
// /readyz, the HTTP API under /v1, /debug/pprof and the console at /ui, on
// its own ServeMux. Handlers ask
// the manager and job actors through their mailboxes, like any client.
// Every request but /healthz passes checkHost (hosts.go), then
// authenticate; every connection has the timeouts of httpTimeouts.
type admin struct {
	system  *actor.ActorSystem
	manager *actor.PID
	logger  *slog.Logger
	ready   func() bool
	reg     *prometheus.Registry
	commits *prometheus.HistogramVec
	// sinkCommits is the commit latency per sink (embedded, postgres:NAME).
	sinkCommits *prometheus.HistogramVec
	// endpoints counts the connections to client endpoints.
	endpoints *endpoints
	srv       *http.Server
	addr      string
	token     string      // "" is no authentication
	tls       *tls.Config // nil is plain HTTP
	console   *console    // the web console at /ui; nil is none
	// hosts are the names the endpoint answers to beyond IP addresses and
	// localhost (hosts.go); nil is none.
	hosts hostNames
	// timeouts bound each connection; tests shorten them before start.
	timeouts httpTimeouts
}

// httpTimeouts bound the admin endpoint's connections, so that clients
// (authenticated or not) cannot hold connections, and their goroutines
// and file descriptors, for as long as they like (docs/limits.md).
type httpTimeouts struct {
	// readHeader bounds reading a request's line and headers (and a TLS
	// handshake).
	readHeader time.Duration
	// read bounds reading a whole request, body included.
	read time.Duration
	// write bounds the time from the end of a request's headers to the end
	// of its answer. A CPU profile or trace of N seconds (or a delta
	// profile over N seconds) gets N more: net/http/pprof extends its
	// connection's write deadline (TestAdminProfileOutlivesTimeouts).
	write time.Duration
	// idle bounds how long a keep-alive connection waits for its next
	// request.
	idle time.Duration
}

// defaultHTTPTimeouts are the admin endpoint's timeouts.
func defaultHTTPTimeouts() httpTimeouts {
	return httpTimeouts{readHeader: 10 * time.Second, read: 30 * time.Second, write: 60 * time.Second, idle: 60 * time.Second}
}

// maxProfileSeconds bounds the seconds=N of /debug/pprof (a CPU profile,
// a trace, a delta profile): each holds its connection for N seconds.
const maxProfileSeconds = 3600

func newAdmin(logger *slog.Logger, token string, tlsCfg *tls.Config) *admin {
	a := &admin{logger: logger, reg: prometheus.NewRegistry(), token: token, tls: tlsCfg, timeouts: defaultHTTPTimeouts()}
	a.commits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "loadnode_batch_commit_seconds",
		Help:    "Latency of a job's synced batch commit (rows + progress + statistics).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16), // 100µs .. ~3.3s
	}, []string{"job"})
	a.sinkCommits = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "loadnode_sink_commit_seconds",
		Help:    "Latency of one commit call to a sink (embedded, or postgres:NAME for a database of the node config), failed ones included.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"sink"})
	a.reg.MustRegister(a.commits, a.sinkCommits, &jobsCollector{a: a})
	a.endpoints = newEndpoints(a.reg)
	return a
}

// sinkCommitDone records one commit call to a sink.
func (a *admin) sinkCommitDone(sink string, d time.Duration) {
	a.sinkCommits.WithLabelValues(sink).Observe(d.Seconds())
}

// CommitDone records one synced batch commit of a job (the node's observer
// calls it).
func (a *admin) CommitDone(job string, _ int, d time.Duration) {
	a.commits.WithLabelValues(job).Observe(d.Seconds())
}

// start listens on addr (port 0 picks one) and serves until stop.
func (a *admin) start(addr string, system *actor.ActorSystem, manager *actor.PID, ready func() bool) error {
	a.system, a.manager, a.ready = system, manager, ready
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", a.readyz)
	(&httpAPI{a: a, c: client.Local(system, manager, client.WithTimeout(apiTimeout))}).routes(mux) // /v1 (httpapi.go)
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{ErrorLog: slog.NewLogLogger(a.logger.Handler(), slog.LevelWarn)}))
	// Go profiles, behind the same token as everything but /healthz:
	// /debug/pprof/profile?seconds=N, heap, goroutine, ...
	mux.Handle("GET /debug/pprof/", boundSeconds(http.HandlerFunc(pprof.Index)))
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.Handle("GET /debug/pprof/profile", boundSeconds(http.HandlerFunc(pprof.Profile)))
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.Handle("GET /debug/pprof/trace", boundSeconds(http.HandlerFunc(pprof.Trace)))
	if a.console != nil {
		a.console.routes(mux) // /ui: authenticated by its own sessions (console.go)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("node: admin endpoint %s: %w", addr, err)
	}
	a.addr = l.Addr().String()
	if a.tls != nil {
		l = tls.NewListener(l, a.tls)
	}
	a.srv = &http.Server{Handler: a.checkHost(a.authenticate(mux)),
		ReadHeaderTimeout: a.timeouts.readHeader, ReadTimeout: a.timeouts.read,
		WriteTimeout: a.timeouts.write, IdleTimeout: a.timeouts.idle,
		ErrorLog: slog.NewLogLogger(a.logger.Handler(), slog.LevelDebug)}
	go func() {
		if err := a.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("admin endpoint stopped", "err", err)
		}
	}()
	return nil
}

// boundSeconds refuses a profile's seconds=N over maxProfileSeconds, naming
// the limit; pprof answers the rest (a bad N included).
func boundSeconds(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sec, err := strconv.ParseFloat(r.URL.Query().Get("seconds"), 64); err == nil && sec > maxProfileSeconds {
			http.Error(w, fmt.Sprintf("loadnode: seconds=%g: at most %d", sec, maxProfileSeconds), http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authenticate requires the token ("Authorization: Bearer TOKEN") on every
// path but /healthz, which says only that the process is up, and the
// console's, which checks its own sessions. On /v1 the bearer of a live
// console session is accepted too: the console's page calls /v1 with it
// (console.go).
func (a *admin) authenticate(next http.Handler) http.Handler {
	if a.token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && !consolePath(r.URL.Path) {
			if err := remoteauth.CheckHeader(r.Header.Get("Authorization"), a.token); err != nil &&
				!(a.console != nil && strings.HasPrefix(r.URL.Path, "/v1/") && a.console.sessionBearer(r.Header.Get("Authorization"))) {
				a.logger.Warn("admin: refused a request", "peer", r.RemoteAddr, "path", r.URL.Path, "reason", status.Convert(err).Message())
				w.Header().Set("WWW-Authenticate", `Bearer realm="loadnode"`)
				if strings.HasPrefix(r.URL.Path, "/v1/") {
					writeAPIError(w, &apiError{code: api.ErrorCode_UNAUTHENTICATED, msg: status.Convert(err).Message() + ` (send "Authorization: Bearer TOKEN")`})
					return
				}
				http.Error(w, "loadnode: "+status.Convert(err).Message()+` (send "Authorization: Bearer TOKEN")`, http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (a *admin) stop() {
	a.endpoints.stop()
	if a.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = a.srv.Shutdown(ctx)
	}
}

// ask sends a request to the manager and waits for the answer.
func (a *admin) ask(ctx context.Context, req proto.Message) (any, error) {
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	return a.system.Root.RequestFuture(a.manager, req, timeout).Result()
}

func (a *admin) readyz(w http.ResponseWriter, _ *http.Request) {
	if a.ready == nil || !a.ready() {
		http.Error(w, "recovering", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ready")
}

// listJSON is a listing as protojson, except that "jobs", "total" and
// "matched" are always there: a filter that matches nothing is
// `"jobs": []`, not a missing key a script (jq '.jobs[]') trips on.
func listJSON(resp *api.ListJobsResponse) ([]byte, error) {
	b, err := protojson.Marshal(resp)
	if err == nil && (len(resp.GetJobs()) == 0 || resp.GetTotal() == 0 || resp.GetMatched() == 0) {
		var m map[string]json.RawMessage
		if err = json.Unmarshal(b, &m); err == nil {
			for k, zero := range map[string]string{"jobs": "[]", "total": `"0"`, "matched": `"0"`} {
				if _, ok := m[k]; !ok {
					m[k] = json.RawMessage(zero)
				}
			}
			b, err = json.Marshal(m)
		}
	}
	return b, err
}

// jobsCollector turns every job's `job show` into metrics at scrape time.
type jobsCollector struct{ a *admin }

var (
	descRows    = prometheus.NewDesc("loadnode_job_loaded_rows_total", "Rows loaded by the job (committed).", []string{"job", "table"}, nil)
	descErrors  = prometheus.NewDesc("loadnode_job_error_rows_total", "Error rows of the job.", []string{"job"}, nil)
	descBytes   = prometheus.NewDesc("loadnode_job_received_bytes_total", "Source bytes received by the job (committed).", []string{"job"}, nil)
	descBatches = prometheus.NewDesc("loadnode_job_committed_batches_total", "Batches committed by the job.", []string{"job"}, nil)
	descRefused = prometheus.NewDesc("loadnode_job_refused_commits_total", "Commits of the job's actor on this node that the sink refused as stale (another writer moved the job's progress, fence or statistics), since the actor started.", []string{"job"}, nil)
	descLag     = prometheus.NewDesc("loadnode_job_lag_records", "Records between the job's progress and the partition's high watermark.", []string{"job", "partition"}, nil)
	descBehind  = prometheus.NewDesc("loadnode_job_millis_behind", "Kinesis: MillisBehindLatest of the shard's reads.", []string{"job", "partition", "shard"}, nil)
	descState   = prometheus.NewDesc("loadnode_job_state", "1 for the job's current state and reason.", []string{"job", "state", "reason"}, nil)
	descHealth  = prometheus.NewDesc("loadnode_job_health", "1 for the job's health verdict.", []string{"job", "health"}, nil)

	descGroupCommits  = prometheus.NewDesc("loadnode_job_group_commits_total", "kafka.commit_group: offset commits the group accepted since the job's source was opened.", []string{"job", "group"}, nil)
	descGroupFailures = prometheus.NewDesc("loadnode_job_group_commit_failures_total", "kafka.commit_group: offset commits that failed since the job's source was opened (the load goes on).", []string{"job", "group"}, nil)
	descDLQProduced   = prometheus.NewDesc("loadnode_job_dead_letters_total", "error_topic: error rows produced to the dead-letter topic since the job's source was opened.", []string{"job", "topic"}, nil)
	descDLQFailures   = prometheus.NewDesc("loadnode_job_dead_letter_failures_total", "error_topic: failed produce attempts (retried) and error rows no longer kept to produce, since the job's source was opened.", []string{"job", "topic"}, nil)
	descDLQPending    = prometheus.NewDesc("loadnode_job_dead_letters_pending", "error_topic: committed error rows not yet acknowledged by the dead-letter topic.", []string{"job", "topic"}, nil)
)

// Describe sends nothing: the job set changes, so this is an unchecked
// collector.
func (c *jobsCollector) Describe(chan<- *prometheus.Desc) {}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	jobs, err := c.a.listAll(ctx)
	if err != nil {
		c.a.logger.Warn("metrics: list jobs", "err", err)
		return
	}
	for _, s := range jobs {
		name := s.GetName()
		ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, 1, name, s.GetState().String(), s.GetReason().String())
		res, err := c.a.ask(ctx, &api.ShowJobRequest{Name: name})
		if err != nil {
			continue
		}
		info := res.(*api.JobResponse).GetJob()
		if info == nil {
			continue
		}
		if st := info.GetStats(); info.GetProgressUnavailable() == "" {
			// (A stopped job's counters whose sink did not answer are left
			// out, not sent as 0: a counter that drops reads as a reset.)
			ch <- prometheus.MustNewConstMetric(descRows, prometheus.CounterValue, float64(st.GetLoadedRows()), name, s.GetTable())
			ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(st.GetErrorRows()), name)
			ch <- prometheus.MustNewConstMetric(descBytes, prometheus.CounterValue, float64(st.GetReceivedBytes()), name)
			ch <- prometheus.MustNewConstMetric(descBatches, prometheus.CounterValue, float64(st.GetCommittedBatches()), name)
		}
		ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(info.GetRefusedCommits()), name)
		if h := info.GetHealth(); h != "" {
			ch <- prometheus.MustNewConstMetric(descHealth, prometheus.GaugeValue, 1, name, h)
		}
		if pub := info.GetPublish(); pub != nil {
			if g := pub.GetCommitGroup(); g != "" {
				ch <- prometheus.MustNewConstMetric(descGroupCommits, prometheus.CounterValue, float64(pub.GetGroupCommits()), name, g)
				ch <- prometheus.MustNewConstMetric(descGroupFailures, prometheus.CounterValue, float64(pub.GetGroupFailures()), name, g)
			}
			if tp := pub.GetErrorTopic(); tp != "" {
				ch <- prometheus.MustNewConstMetric(descDLQProduced, prometheus.CounterValue, float64(pub.GetDeadLettersProduced()), name, tp)
				ch <- prometheus.MustNewConstMetric(descDLQFailures, prometheus.CounterValue, float64(pub.GetDeadLetterFailures()), name, tp)
				ch <- prometheus.MustNewConstMetric(descDLQPending, prometheus.GaugeValue, float64(pub.GetDeadLettersPending()), name, tp)
			}
		}
		for _, p := range info.GetPartitions() {
			if p.GetLag() >= 0 {
				ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, float64(p.GetLag()), name, strconv.Itoa(int(p.GetPartition())))
			}
			if p.GetShardId() != "" && p.GetMillisBehind() >= 0 {
				ch <- prometheus.MustNewConstMetric(descBehind, prometheus.GaugeValue, float64(p.GetMillisBehind()), name, strconv.Itoa(int(p.GetPartition())), p.GetShardId())
			}
		}
	}
}
