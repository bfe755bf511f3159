package node_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/remoteauth"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/node"
)

const testToken = "0123456789abcdef-right-token"

// lockedBuffer is a log sink tests read while the node writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startLocked starts a node on loopback with a token, TLS and the HTTP
// endpoint.
func startLocked(t *testing.T) (*node.Node, testcert.Files, *lockedBuffer) {
	t.Helper()
	certs := testcert.Write(t, t.TempDir(), "node")
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.AuthToken = testToken
	cfg.TLSCertFile, cfg.TLSKeyFile = certs.CertFile, certs.KeyFile
	logs := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n, certs, logs
}

func dialNode(ctx context.Context, addr string, opts ...client.Option) (*client.Client, error) {
	return client.Dial(ctx, addr, append([]client.Option{client.WithTimeout(5 * time.Second)}, opts...)...)
}

func testJob(name string) *api.JobSpec {
	spec := &api.JobSpec{Name: name, Format: "csv",
		Table: &api.TableSpec{Name: "t_" + name, Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}},
		Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Topic: "x"}}
	config.ApplyDefaults(spec)
	return spec
}

// TestRemoteAuth: over TLS, a client without the token or with a wrong one
// is refused at Dial with the node's reason (not a timeout); the right token
// works end to end; a TLS mismatch is an error naming TLS.
func TestRemoteAuth(t *testing.T) {
	n, certs, logs := startLocked(t)
	ctx := context.Background()
	withCA := client.WithTLS(&tls.Config{RootCAs: certs.Pool})

	for _, tc := range []struct {
		name string
		opts []client.Option
		want string
	}{
		{"no token", []client.Option{withCA}, "refused the connection: authentication failed: no token (this client has no token)"},
		{"wrong token", []client.Option{withCA, client.WithToken("0123456789abcdef-wrong-token")}, "refused the connection: authentication failed: wrong token"},
	} {
		start := time.Now()
		c, err := dialNode(ctx, n.Addr(), tc.opts...)
		if err == nil {
			c.Close()
			t.Fatalf("%s: dial succeeded", tc.name)
		}
		if !errors.Is(err, client.ErrUnauthenticated) || !strings.Contains(err.Error(), "client: node "+n.Addr()+" "+tc.want) {
			t.Fatalf("%s: got %v, want ErrUnauthenticated with %q", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: refused after %s; want an immediate answer", tc.name, d)
		}
	}
	if !strings.Contains(logs.String(), "remote: refused a client") {
		t.Errorf("no log of the refusals:\n%s", logs)
	}
	if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), "wrong-token") {
		t.Errorf("a token is in the logs:\n%s", logs)
	}

	// TLS mismatches.
	_, err := dialNode(ctx, n.Addr(), client.WithToken(testToken))
	if err == nil || !strings.Contains(err.Error(), "did not take a plaintext connection") || !strings.Contains(err.Error(), "WithTLS") {
		t.Fatalf("plaintext to a TLS node: %v", err)
	}
	_, err = dialNode(ctx, n.Addr(), client.WithToken(testToken), client.WithTLS(nil))
	if err == nil || !strings.Contains(err.Error(), "TLS with node at "+n.Addr()+" failed") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("unknown CA: %v", err)
	}

	// The right token: create, show, pause, list.
	c, err := dialNode(ctx, n.Addr(), withCA, client.WithToken(testToken))
	if err != nil {
		t.Fatalf("right token: %v", err)
	}
	defer c.Close()
	if _, err := c.CreateJob(ctx, testJob("locked")); err != nil {
		t.Fatal(err)
	}
	info, err := c.PauseJob(ctx, "locked")
	if err != nil || info.GetSummary().GetState() != api.JobState_PAUSED {
		t.Fatalf("pause: %v %v", info.GetSummary().GetState(), err)
	}
	if info, err := c.ShowJob(ctx, "locked"); err != nil || info.GetSummary().GetState() != api.JobState_PAUSED {
		t.Fatalf("show: %v %v", info.GetSummary().GetState(), err)
	}
	// localhost works too: the certificate names it and the client verifies
	// the name it dialed.
	_, port, _ := strings.Cut(n.Addr(), ":")
	c2, err := dialNode(ctx, "localhost:"+port, withCA, client.WithToken(testToken))
	if err != nil {
		t.Fatalf("localhost: %v", err)
	}
	c2.Close()
}

// rawPeer is a protoactor peer that skips the client's checks: it talks
// TLS to the node with a token of its choice, naming its endpoint's
// certificate as the client does, and sends requests straight to the
// manager.
func rawPeer(t *testing.T, certs testcert.Files, token string) *actor.ActorSystem {
	t.Helper()
	cert, fp, err := remoteauth.EphemeralCert()
	if err != nil {
		t.Fatal(err)
	}
	creds := &remoteauth.TokenCreds{Token: token, Secure: true}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) }))
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0,
		remote.WithServerOptions(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAnyClientCert}))),
		remote.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: certs.Pool})), grpc.WithPerRPCCredentials(creds)),
	))
	r.Start()
	creds.SetReply(sys.Address(), fp)
	t.Cleanup(func() { r.Shutdown(false); sys.Shutdown() })
	return sys
}

// TestRefusalChangesNothing: requests sent straight to the manager with a
// wrong token (no Dial check in the way) get no answer and change nothing,
// as seen with the right token; the same peer with the right token is
// answered.
func TestRefusalChangesNothing(t *testing.T) {
	n, certs, logs := startLocked(t)
	ctx := context.Background()
	c, err := dialNode(ctx, n.Addr(), client.WithTLS(&tls.Config{RootCAs: certs.Pool}), client.WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateJob(ctx, testJob("kept")); err != nil {
		t.Fatal(err)
	}
	before, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}

	mgr := actor.NewPID(n.Addr(), api.ManagerName)
	bad := rawPeer(t, certs, "0123456789abcdef-wrong-token")
	for _, req := range []any{
		&api.CreateJobRequest{Spec: testJob("intruder")},
		&api.PauseJobRequest{Name: "kept"},
		&api.StopJobRequest{Name: "kept"},
	} {
		// The stream is refused before it is read: the request is never
		// delivered (protoactor reports a dead letter or no answer).
		if res, err := bad.Root.RequestFuture(mgr, req, time.Second).Result(); err == nil {
			t.Fatalf("%T with a wrong token was answered: %v", req, res)
		}
	}
	after, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || len(after) != 1 || after[0].GetName() != "kept" || after[0].GetState() != before[0].GetState() {
		t.Fatalf("jobs changed by refused requests: before %v, after %v", before, after)
	}

	good := rawPeer(t, certs, testToken)
	// A PID caches the process (the remote endpoint) it was first sent
	// through: a fresh one for the other peer.
	res, err := good.Root.RequestFuture(actor.NewPID(n.Addr(), api.ManagerName), &api.PauseJobRequest{Name: "kept"}, 10*time.Second).Result()
	if err != nil {
		t.Fatalf("right token, raw peer: %v\n%s", err, logs)
	}
	if jr, ok := res.(*api.JobResponse); !ok || jr.GetJob().GetSummary().GetState() != api.JobState_PAUSED {
		t.Fatalf("right token, raw peer: %v", res)
	}
}

// TestAdminAuth: over TLS, /healthz is open; every other path needs the
// token; plain HTTP gets nothing.
func TestAdminAuth(t *testing.T) {
	n, certs, _ := startLocked(t)
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool}}}
	base := "https://" + n.AdminAddr()
	get := func(path, auth string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz", ""); code != 200 || !strings.Contains(body, "ok") {
		t.Fatalf("/healthz without a token = %d %q", code, body)
	}
	for _, path := range []string{"/metrics", "/v1/jobs", "/v1/jobs/x", "/readyz", "/debug/pprof/heap", "/nope"} {
		for auth, want := range map[string]string{
			"":                              "no token",
			"Bearer wrong-wrong-wrong-0000": "wrong token",
			"Basic " + testToken:            "not a bearer token",
		} {
			code, body := get(path, auth)
			if code != http.StatusUnauthorized || !strings.Contains(body, want) {
				t.Errorf("%s with %q = %d %q, want 401 %q", path, auth, code, body, want)
			}
		}
	}
	for path, want := range map[string]int{"/metrics": 200, "/v1/jobs": 200, "/readyz": 200, "/v1/jobs/x": 404} {
		if code, body := get(path, "Bearer "+testToken); code != want {
			t.Errorf("%s with the token = %d %q, want %d", path, code, body, want)
		}
	}
	// Plain HTTP to the TLS endpoint is not served.
	resp, err := http.Get("http://" + n.AdminAddr() + "/v1/jobs")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Fatal("plain HTTP served /v1/jobs")
		}
	}
}

// TestStartRefusals: a node does not start on an address beyond loopback
// without a token and TLS (refused before it listens), nor with an empty or
// short token, nor with a certificate it cannot load; the errors say what is
// missing.
func TestStartRefusals(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	empty := filepath.Join(dir, "empty")
	short := filepath.Join(dir, "short")
	good := filepath.Join(dir, "good")
	for f, content := range map[string]string{empty: " \n", short: "abc\n", good: testToken + "\n"} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name          string
		listen, http  string
		token, cert   string
		key           string
		want          []string
		wantNotInside string
	}{
		{name: "any interface, nothing", listen: "0.0.0.0:0", want: []string{"listen", "not a loopback address", "a token", "TLS"}},
		{name: "empty host, token only", listen: ":0", token: good, want: []string{"listen", "requires TLS"}, wantNotInside: "a token"},
		{name: "ipv6 any, TLS only", listen: "[::]:0", cert: certs.CertFile, key: certs.KeyFile, want: []string{"requires a token"}, wantNotInside: "TLS ("},
		{name: "http beyond loopback", listen: "127.0.0.1:0", http: "0.0.0.0:0", want: []string{"http", "not a loopback address", "a token", "TLS"}},
		{name: "empty token file", listen: "127.0.0.1:0", token: empty, want: []string{"auth_token_file", "is empty"}},
		{name: "short token", listen: "127.0.0.1:0", token: short, want: []string{"has 3 characters", "at least 16"}},
		{name: "missing cert", listen: "127.0.0.1:0", cert: filepath.Join(dir, "nope.crt"), key: certs.KeyFile, want: []string{"tls_cert_file", "nope.crt"}},
		{name: "key is not a key", listen: "127.0.0.1:0", cert: certs.CertFile, key: certs.CertFile, want: []string{"tls_key_file"}},
	} {
		cfg := config.DefaultNode()
		cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), tc.listen, tc.http
		cfg.AuthTokenFile, cfg.TLSCertFile, cfg.TLSKeyFile = tc.token, tc.cert, tc.key
		n, err := node.Start(context.Background(), node.Config{Node: cfg})
		if err == nil {
			n.Close()
			t.Fatalf("%s: started", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want %q in it", tc.name, err, w)
			}
		}
		if tc.wantNotInside != "" && strings.Contains(err.Error(), tc.wantNotInside) {
			t.Errorf("%s: %v names %q, which is configured", tc.name, err, tc.wantNotInside)
		}
		if strings.Contains(err.Error(), testToken) {
			t.Errorf("%s: the error shows the token: %v", tc.name, err)
		}
	}
}

// TestLoopbackTokenWithoutTLS: on loopback a token alone is honoured.
func TestLoopbackTokenWithoutTLS(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.AuthToken = testToken
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := context.Background()
	if _, err := dialNode(ctx, n.Addr()); !errors.Is(err, client.ErrUnauthenticated) {
		t.Fatalf("no token: %v", err)
	}
	c, err := dialNode(ctx, n.Addr(), client.WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CreateJob(ctx, testJob("plain")); err != nil {
		t.Fatal(err)
	}
}
