package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/node"
)

const cliToken = "0123456789abcdef-cli-token"

// TestCommandsWithAuth: against a node with a token and TLS, commands
// without the token (or with a wrong one) are refused with a clear error and
// change nothing; --token-file / $LOADNODE_AUTH_TOKEN with --tls-ca /
// $LOADNODE_TLS_CA (or --tls-insecure) work.
func TestCommandsWithAuth(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
	cfg.AuthToken = cliToken
	cfg.TLSCertFile, cfg.TLSKeyFile = certs.CertFile, certs.KeyFile
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	tokenFile := filepath.Join(dir, "token")
	wrongFile := filepath.Join(dir, "wrong")
	specFile := filepath.Join(dir, "spec.yaml")
	for f, content := range map[string]string{tokenFile: cliToken + "\n", wrongFile: "0123456789abcdef-wrong\n", specFile: testSpec} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := map[string]string{envAddr: n.Addr()}
	withEnv := map[string]string{envAddr: n.Addr(), config.TokenEnv: cliToken, envTLSCA: certs.CertFile}
	ca := []string{"--tls-ca", certs.CertFile}

	for _, tc := range []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantOut  string
		wantErr  []string
	}{
		{"no token", addr, append([]string{"job", "create", "-f", specFile}, ca...), 1, "",
			[]string{"loadnode: client: node " + n.Addr() + " refused the connection: authentication failed: no token", "--token-file FILE or $LOADNODE_AUTH_TOKEN"}},
		{"wrong token", addr, append([]string{"job", "create", "-f", specFile, "--token-file", wrongFile}, ca...), 1, "",
			[]string{"authentication failed: wrong token"}},
		{"sql with a wrong token", addr, append([]string{"sql", "PAUSE ROUTINE LOAD FOR orders_load", "--token-file", wrongFile}, ca...), 1, "",
			[]string{"wrong token"}},
		{"token but no TLS", addr, []string{"job", "list", "--token-file", tokenFile}, 1, "",
			[]string{"did not take a plaintext connection", "WithTLS"}},
		{"refusals changed nothing", addr, append([]string{"job", "list", "--token-file", tokenFile}, ca...), 0, "NAME", nil},
		{"token file and CA", addr, append([]string{"job", "create", "-f", specFile, "--token-file", tokenFile}, ca...), 0, "created job orders_load", nil},
		{"environment", withEnv, []string{"job", "pause", "orders_load"}, 0, "PAUSED", nil},
		{"flag beats the environment", withEnv, []string{"job", "show", "orders_load", "--token-file", wrongFile}, 1, "", []string{"wrong token"}},
		{"insecure TLS", addr, []string{"job", "show", "orders_load", "--token-file", tokenFile, "--tls-insecure"}, 0, "PAUSED", nil},
		{"both TLS flags", addr, append([]string{"job", "list", "--tls-insecure"}, ca...), 2, "", []string{"exclude each other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.env, tc.args...)
			if code != tc.wantCode || !strings.Contains(out, tc.wantOut) {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
			if tc.name == "refusals changed nothing" && strings.Contains(out, "orders_load") {
				t.Fatalf("a refused create made a job:\n%s", out)
			}
		})
	}
}

// TestServeAuthConfig: serve takes the token from a file or the
// environment only, --check-config says where it comes from without
// showing it, and an address beyond loopback needs a token and TLS.
func TestServeAuthConfig(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.Write(t, dir, "node")
	tokenFile := filepath.Join(dir, "token")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(tokenFile, []byte(cliToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tlsFlags := []string{"--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     []string // in stdout (exit 0) or stderr
	}{
		{"file", nil, append([]string{"serve", "--check-config", "--listen", "0.0.0.0:7070", "--auth-token-file", tokenFile}, tlsFlags...), 0,
			[]string{`listen: "0.0.0.0:7070"`, `auth_token_file: "` + tokenFile + `"`, `tls_cert_file: "` + certs.CertFile + `"`, "# token from: auth_token_file"}},
		{"environment", map[string]string{config.TokenEnv: cliToken}, append([]string{"serve", "--check-config", "--listen", "0.0.0.0:7070"}, tlsFlags...), 0,
			[]string{"# token from: $LOADNODE_AUTH_TOKEN"}},
		{"no token, no TLS", nil, []string{"serve", "--check-config", "--listen", "0.0.0.0:7070"}, 1,
			[]string{"listen", "not a loopback address", "a token", "TLS"}},
		{"http beyond loopback, no TLS", map[string]string{config.TokenEnv: cliToken}, []string{"serve", "--check-config", "--http", ":9090"}, 1,
			[]string{"http", "requires TLS"}},
		{"empty token file", nil, []string{"serve", "--check-config", "--auth-token-file", empty}, 1, []string{"auth_token_file", "is empty"}},
		{"short token", map[string]string{config.TokenEnv: "short"}, []string{"serve", "--check-config"}, 1, []string{"$LOADNODE_AUTH_TOKEN has 5 characters"}},
		{"bad key", nil, []string{"serve", "--check-config", "--tls-cert", certs.CertFile, "--tls-key", certs.CertFile}, 1, []string{"tls_key_file"}},
		{"no token flag", nil, []string{"serve", "--auth-token", cliToken}, 2, []string{"flag provided but not defined: -auth-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.env, tc.args...)
			where := errOut
			if tc.wantCode == 0 {
				where = out
			}
			if code != tc.wantCode {
				t.Fatalf("exit %d (want %d), stdout %q, stderr %q", code, tc.wantCode, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(where, w) {
					t.Errorf("%q lacks %q", where, w)
				}
			}
			if tc.name != "no token flag" && (strings.Contains(out, cliToken) || strings.Contains(errOut, cliToken)) {
				t.Errorf("the token is in the output: %q %q", out, errOut)
			}
		})
	}
}
