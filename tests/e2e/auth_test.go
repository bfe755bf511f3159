package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/internal/testnode"
)

const e2eToken = "e2e-0123456789abcdef-token"

const authSpec = `name: locked_load
table:
  name: locked
  columns:
    - {name: id, type: int64}
format: csv
kafka:
  brokers: ["127.0.0.1:1"]
  topic: locked
`

// lockedNode is a `loadnode serve` process with a token file, TLS and the
// HTTP endpoint, all on loopback.
type lockedNode struct {
	*testnode.Proc
	certs     testcert.Files
	tokenFile string
}

func startLockedNode(t *testing.T) *lockedNode {
	t.Helper()
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(e2eToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testnode.Start(t, testnode.Options{DataDir: filepath.Join(dir, "data"), HTTP: true,
		Args: []string{"--auth-token-file", tokenFile, "--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile}})
	return &lockedNode{Proc: p, certs: certs, tokenFile: tokenFile}
}

func (n *lockedNode) dial(ctx context.Context, token string) (*client.Client, error) {
	opts := []client.Option{client.WithTimeout(5 * time.Second), client.WithTLS(&tls.Config{RootCAs: n.certs.Pool})}
	if token != "" {
		opts = append(opts, client.WithToken(token))
	}
	return n.Dial(ctx, opts...)
}

// cli runs the loadnode binary as a client command against n.
func (n *lockedNode) cli(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, loadnodeBinary(t), append(args, "--addr", n.Addr())...)
	// The test process's own environment must not leak a token in.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out)
}

// TestAuthBinary: a real `loadnode serve` with a token file and TLS. The
// token is not in its command line; clients and CLI commands without the
// token or with a wrong one are refused at once with the node's reason and
// change nothing; the right token creates, pauses and shows a job; the HTTP
// endpoint serves /healthz to anyone and the rest only with the token.
func TestAuthBinary(t *testing.T) {
	n := startLockedNode(t)
	ctx := context.Background()

	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(n.PID()) + "/cmdline")
	if err == nil && strings.Contains(string(cmdline), e2eToken) {
		t.Fatalf("the token is in the process's command line: %q", cmdline)
	}

	// Go client.
	for token, want := range map[string]string{"": "no token", "e2e-0123456789abcdef-wrong": "wrong token"} {
		start := time.Now()
		_, err := n.dial(ctx, token)
		if !errors.Is(err, client.ErrUnauthenticated) || !strings.Contains(err.Error(), "refused the connection: authentication failed: "+want) {
			t.Fatalf("token %q: %v", token, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("token %q: refused after %s", token, d)
		}
	}

	// CLI.
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	wrong := filepath.Join(dir, "wrong")
	for f, c := range map[string]string{spec: authSpec, wrong: "e2e-0123456789abcdef-wrong\n"} {
		if err := os.WriteFile(f, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ca := "LOADNODE_TLS_CA=" + n.certs.CertFile
	if code, out := n.cli(t, []string{ca}, "job", "create", "-f", spec); code != 1 ||
		!strings.Contains(out, "refused the connection: authentication failed: no token") || !strings.Contains(out, "$LOADNODE_AUTH_TOKEN") {
		t.Fatalf("create without a token: exit %d\n%s", code, out)
	}
	if code, out := n.cli(t, []string{ca}, "job", "create", "-f", spec, "--token-file", wrong); code != 1 || !strings.Contains(out, "wrong token") {
		t.Fatalf("create with a wrong token: exit %d\n%s", code, out)
	}
	good := []string{ca, "LOADNODE_AUTH_TOKEN=" + e2eToken}
	if code, out := n.cli(t, good, "job", "list"); code != 0 || strings.Contains(out, "locked_load") {
		t.Fatalf("list after the refusals: exit %d\n%s", code, out)
	}
	if code, out := n.cli(t, good, "job", "create", "-f", spec); code != 0 || !strings.Contains(out, "created job locked_load") {
		t.Fatalf("create with the token: exit %d\n%s", code, out)
	}
	if code, out := n.cli(t, []string{ca}, "job", "pause", "locked_load", "--token-file", wrong); code != 1 || !strings.Contains(out, "wrong token") {
		t.Fatalf("pause with a wrong token: exit %d\n%s", code, out)
	}
	if code, out := n.cli(t, []string{ca}, "job", "pause", "locked_load", "--token-file", n.tokenFile); code != 0 || !strings.Contains(out, "PAUSED (USER_PAUSE") {
		t.Fatalf("pause with the token file: exit %d\n%s", code, out)
	}
	c, err := n.dial(ctx, e2eToken)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.ShowJob(ctx, "locked_load")
	if err != nil || info.GetSummary().GetState() != api.JobState_PAUSED {
		t.Fatalf("show: %v %v", info.GetSummary().GetState(), err)
	}
	// One pause, the one with the token: the refused one left no trace.
	pauses := 0
	for _, tr := range info.GetHistory() {
		switch tr.GetReason() {
		case api.Reason_USER_PAUSE:
			pauses++
		case api.Reason_CREATED, api.Reason_SCHEDULED:
		default:
			t.Errorf("unexpected transition %v", tr)
		}
	}
	if pauses != 1 {
		t.Errorf("%d USER_PAUSE transitions, want 1: %v", pauses, info.GetHistory())
	}

	// HTTP.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: n.certs.Pool}}}
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", "https://"+n.AdminAddr()+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	if code := get("/healthz", ""); code != 200 {
		t.Errorf("/healthz without a token = %d", code)
	}
	for _, path := range []string{"/metrics", "/v1/jobs", "/v1/jobs/locked_load"} {
		if code := get(path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a token = %d, want 401", path, code)
		}
		if code := get(path, "e2e-0123456789abcdef-wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token = %d, want 401", path, code)
		}
		if code := get(path, e2eToken); code != 200 {
			t.Errorf("%s with the token = %d, want 200", path, code)
		}
	}
	if strings.Contains(n.Log(), e2eToken) {
		t.Errorf("the token is in the node's logs")
	}
}

// TestAuthBinaryRefusesExposedListen: `loadnode serve` on every interface
// without a token or TLS exits with an error that names what is missing,
// before it listens.
func TestAuthBinaryRefusesExposedListen(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	for _, tc := range []struct {
		args []string
		env  []string
		want []string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, nil, []string{`listen: "0.0.0.0:0" is not a loopback address`, "a token", "TLS"}},
		{[]string{"--listen", "0.0.0.0:0"}, []string{"LOADNODE_AUTH_TOKEN=" + e2eToken}, []string{"requires TLS"}},
		{[]string{"--listen", "0.0.0.0:0", "--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile}, nil, []string{"requires a token"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, loadnodeBinary(t), append([]string{"serve", "--data", filepath.Join(dir, "data")}, tc.args...)...)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, tc.env...)
		out, err := cmd.CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("%v: %v\n%s", tc.args, err, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}
