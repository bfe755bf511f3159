package kafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"maps"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/loadnode/loadnode/sources"
)

func TestParseOffset(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"0", true}, {"42", true}, {"9223372036854775807", true},
		{"OFFSET_BEGINNING", true}, {"OFFSET_END", true}, {"offset_beginning", true}, {"offset_end", true},
		{"", false}, {"-1", false}, {"-2", false}, {"Offset_End", false}, {"latest", false},
		{"earliest", false}, {"1.5", false}, {" 1", false}, {"9223372036854775808", false},
	} {
		if err := ParseOffset(tt.in); (err == nil) != tt.ok {
			t.Errorf("ParseOffset(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}

func TestValidateProperties(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	sasl := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "u", "sasl.password": "p"}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := make(map[string]string)
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<delete>" {
				delete(m, kv[i])
				continue
			}
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name  string
		props map[string]string
		field string // "" means valid
	}{
		{"empty", nil, ""},
		{"plaintext tuned", map[string]string{"client.id": "x", "security.protocol": "PLAINTEXT", "fetch.max.bytes": "1048576",
			"max.partition.fetch.bytes": "65536", "fetch.min.bytes": "1", "fetch.max.wait.ms": "500", "request.timeout.ms": "30000",
			"metadata.max.age.ms": "60000", "connections.max.idle.ms": "60000", "socket.connection.setup.timeout.ms": "5000"}, ""},
		{"sasl ssl", sasl, ""},
		{"sasl plaintext plain", with(sasl, "security.protocol", "SASL_PLAINTEXT", "sasl.mechanism", "PLAIN"), ""},
		{"ssl no host check", map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "none"}, ""},
		{"unknown", map[string]string{"bootstrap.servers": "x"}, "bootstrap.servers"},
		{"group id", map[string]string{"group.id": "g"}, "group.id"},
		{"first unknown in order", map[string]string{"zzz": "1", "aaa": "1"}, "aaa"},
		{"protocol", map[string]string{"security.protocol": "ssl"}, "security.protocol"},
		{"mechanism", with(sasl, "sasl.mechanism", "GSSAPI"), "sasl.mechanism"},
		{"mechanism missing", with(sasl, "sasl.mechanism", "<delete>"), "sasl.mechanism"},
		{"password missing", with(sasl, "sasl.password", "<delete>"), "sasl.password"},
		{"sasl without sasl protocol", map[string]string{"sasl.username": "u"}, "sasl.username"},
		{"ssl without ssl protocol", map[string]string{"ssl.ca.location": ca}, "ssl.ca.location"},
		{"endpoint algorithm", map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "dns"}, "ssl.endpoint.identification.algorithm"},
		{"ca not pem", map[string]string{"security.protocol": "SSL", "ssl.ca.location": ca}, "ssl.ca.location"},
		{"ca missing", map[string]string{"security.protocol": "SSL", "ssl.ca.location": filepath.Join(dir, "nope")}, "ssl.ca.location"},
		{"key without cert", map[string]string{"security.protocol": "SSL", "ssl.key.location": ca}, "ssl.certificate.location"},
		{"cert without key", map[string]string{"security.protocol": "SSL", "ssl.certificate.location": ca}, "ssl.key.location"},
		{"cert not pem", map[string]string{"security.protocol": "SSL", "ssl.certificate.location": ca, "ssl.key.location": ca}, "ssl.certificate.location"},
		{"fetch bytes word", map[string]string{"fetch.max.bytes": "lots"}, "fetch.max.bytes"},
		{"fetch bytes zero", map[string]string{"fetch.max.bytes": "0"}, "fetch.max.bytes"},
		{"fetch bytes huge", map[string]string{"fetch.max.bytes": "3000000000"}, "fetch.max.bytes"},
		{"partition above fetch", map[string]string{"fetch.max.bytes": "100", "max.partition.fetch.bytes": "200"}, "max.partition.fetch.bytes"},
		{"wait negative", map[string]string{"fetch.max.wait.ms": "-5"}, "fetch.max.wait.ms"},
		{"timeout unit", map[string]string{"request.timeout.ms": "30s"}, "request.timeout.ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateProperties(tt.props)
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *sources.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err %v, want *sources.ConfigError", err)
			}
			if ce.Field != "kafka.properties."+tt.field || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err %q (field %q) does not name %s", err, ce.Field, tt.field)
			}
		})
	}
}

// TestTLS runs a TLS kfake with a certificate for "broker.test" only: the
// host-name check fails on 127.0.0.1 (a ConfigError), "none" verifies the
// chain only and works.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	serverTLS, caFile := testCA(t, dir)
	e := newEnvWith(t, 1, map[string]string{"security.protocol": "SSL", "ssl.ca.location": caFile,
		"ssl.endpoint.identification.algorithm": "none"}, kfake.TLS(serverTLS))
	ps, err := e.cluster.Partitions(testCtx(t), e.topic)
	if err != nil || !slices.Equal(ps, []int32{0}) {
		t.Fatalf("partitions %v, err %v", ps, err)
	}
	strict := e.newCluster(t, map[string]string{"security.protocol": "SSL", "ssl.ca.location": caFile})
	var ce *sources.ConfigError
	if _, err := strict.Partitions(testCtx(t), e.topic); !errors.As(err, &ce) {
		t.Fatalf("host name mismatch: %v, want ConfigError", err)
	}
	untrusted := e.newCluster(t, map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "none"})
	if _, err := untrusted.Partitions(testCtx(t), e.topic); !errors.As(err, &ce) {
		t.Fatalf("unknown CA: %v, want ConfigError", err)
	}
}

// testCA writes a CA to dir and returns a server config with a leaf
// certificate it signed for "broker.test".
func testCA(t *testing.T, dir string) (*tls.Config, string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker.test"},
		DNSNames: []string{"broker.test"}, IPAddresses: []net.IP{net.ParseIP("10.255.255.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}, caFile
}

// TestPasswordFile: sasl.password_file is read instead of an inline
// sasl.password (one trailing line break dropped); giving both, or
// neither with SASL, is refused.
func TestPasswordFile(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(base)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	c, err := parseProperties(with("sasl.password_file", pw))
	if err != nil {
		t.Fatal(err)
	}
	if c.password != "s3cret" || c.sasl == nil {
		t.Fatalf("password %q, sasl %v", c.password, c.sasl)
	}
	for name, props := range map[string]map[string]string{
		"both":    with("sasl.password_file", pw, "sasl.password", "x"),
		"neither": with(),
		"missing": with("sasl.password_file", filepath.Join(dir, "absent")),
		"no sasl": {"sasl.password_file": pw},
	} {
		if _, err := parseProperties(props); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
