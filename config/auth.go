package config

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"
)

// MinTokenLen is the shortest token a node accepts (`openssl rand -hex 32`
// makes a good one).
const MinTokenLen = 16

// TokenEnv is the environment variable holding the token, read by `loadnode
// serve` (the node's token) and by the client commands (the token they
// present).
const TokenEnv = "LOADNODE_AUTH_TOKEN"

// ReadTokenFile reads a token from a file: its content trimmed of
// surrounding white space, which must be a well-formed token (CheckToken).
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	if err := CheckToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// CheckToken checks a token's form: printable ASCII without spaces (it
// travels in a gRPC metadata value and an HTTP header). It never puts the
// token in its error.
func CheckToken(tok string) error {
	if tok == "" {
		return fmt.Errorf("token is empty")
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c > '~' {
			return fmt.Errorf("token has a character at byte %d that is not printable ASCII (or is a space)", i)
		}
	}
	return nil
}

// Token returns the node's token: AuthToken ($LOADNODE_AUTH_TOKEN) if set,
// else the content of AuthTokenFile, else "" (no authentication). A token
// shorter than MinTokenLen is refused. The error names where the token came
// from, never the token.
func (n Node) Token() (string, error) {
	tok, src := n.AuthToken, "$"+TokenEnv
	if tok == "" {
		if n.AuthTokenFile == "" {
			return "", nil
		}
		var err error
		if tok, err = ReadTokenFile(n.AuthTokenFile); err != nil {
			return "", fieldErr("auth_token_file", "%v", err)
		}
		src = "auth_token_file " + n.AuthTokenFile
	} else if err := CheckToken(tok); err != nil {
		return "", fmt.Errorf("config: %s: %w", src, err)
	}
	if len(tok) < MinTokenLen {
		return "", fmt.Errorf("config: the token from %s has %d characters; at least %d are required (try: openssl rand -hex 32)", src, len(tok), MinTokenLen)
	}
	return tok, nil
}

// TokenSource describes where Token comes from, for --check-config: never
// the token itself.
func (n Node) TokenSource() string {
	switch {
	case n.AuthToken != "":
		return "$" + TokenEnv
	case n.AuthTokenFile != "":
		return "auth_token_file"
	}
	return "none"
}

// LoadTLS loads TLSCertFile and TLSKeyFile; nil when TLS is off.
func (n Node) LoadTLS() (*tls.Certificate, error) {
	if n.TLSCertFile == "" && n.TLSKeyFile == "" {
		return nil, nil
	}
	if n.TLSCertFile == "" || n.TLSKeyFile == "" {
		return nil, fieldErr("tls_cert_file", "tls_cert_file and tls_key_file go together")
	}
	cert, err := tls.LoadX509KeyPair(n.TLSCertFile, n.TLSKeyFile)
	if err != nil {
		return nil, fieldErr("tls_cert_file", "tls_cert_file %s / tls_key_file %s: %v", n.TLSCertFile, n.TLSKeyFile, err)
	}
	return &cert, nil
}
