package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/internal/testcert"
)

func TestToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  0123456789abcdef\n")
	for _, tc := range []struct {
		name      string
		n         Node
		want, err string
		src       string
	}{
		{name: "none", src: "none"},
		{name: "file trimmed", n: Node{AuthTokenFile: good}, want: "0123456789abcdef", src: "auth_token_file"},
		{name: "env wins", n: Node{AuthTokenFile: good, AuthToken: "fedcba9876543210"}, want: "fedcba9876543210", src: "$LOADNODE_AUTH_TOKEN"},
		{name: "empty file", n: Node{AuthTokenFile: write("empty", "\n \n")}, err: "auth_token_file: token file " + dir + "/empty is empty"},
		{name: "missing file", n: Node{AuthTokenFile: filepath.Join(dir, "nope")}, err: "no such file"},
		{name: "short", n: Node{AuthTokenFile: write("short", "abc")}, err: "has 3 characters; at least 16"},
		{name: "inner space", n: Node{AuthTokenFile: write("space", "0123456789 abcdef")}, err: "not printable ASCII (or is a space)"},
		{name: "env control char", n: Node{AuthToken: "0123456789abcdef\x01"}, err: "$LOADNODE_AUTH_TOKEN: token has a character at byte 16"},
	} {
		got, err := tc.n.Token()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %q, %v; want error %q", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if s := tc.n.TokenSource(); s != tc.src {
			t.Errorf("%s: source %q, want %q", tc.name, s, tc.src)
		}
	}
}

func TestLoadTLS(t *testing.T) {
	dir := t.TempDir()
	f := testcert.Write(t, dir, "n")
	if c, err := (Node{}).LoadTLS(); c != nil || err != nil {
		t.Fatalf("no TLS: %v %v", c, err)
	}
	if c, err := (Node{TLSCertFile: f.CertFile, TLSKeyFile: f.KeyFile}).LoadTLS(); c == nil || err != nil {
		t.Fatalf("good pair: %v", err)
	}
	_, err := Node{TLSCertFile: f.CertFile, TLSKeyFile: filepath.Join(dir, "nope.key")}.LoadTLS()
	if err == nil || !strings.Contains(err.Error(), "tls_key_file "+dir+"/nope.key") {
		t.Fatalf("missing key: %v", err)
	}
}
