package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testcert"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestClusterForwardWithAuth: two members, each with its own TLS
// certificate and the cluster's shared token. A client of m0 (TLS to m0,
// the token) shows and pauses a job that m1 owns: m0 forwards the command
// to m1 authenticated (token, its endpoint's certificate, m1's pinned
// from etcd) and m1's answer comes back through m0.
func TestClusterForwardWithAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(e2eToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type locked struct {
		name  string
		p     *testnode.Proc
		c     *client.Client
		certs testcert.Files
	}
	var ms []*locked
	for i := range 2 {
		name := fmt.Sprintf("m%d", i)
		certs := testcert.Write(t, t.TempDir(), name)
		args := append(clusterArgs(t, name, etcd.Endpoints(), dsn),
			"--auth-token-file", tokenFile, "--tls-cert", certs.CertFile, "--tls-key", certs.KeyFile)
		p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: args})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := p.Dial(ctx, client.WithTimeout(45*time.Second), client.WithToken(e2eToken), client.WithTLS(&tls.Config{RootCAs: certs.Pool}))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ms = append(ms, &locked{name: name, p: p, c: c, certs: certs})
	}
	var names []string
	for i := range 6 {
		spec := jsonSpec(fmt.Sprintf("fwd%d", i), "fwd_rows", "fwd", []string{"127.0.0.1:1"})
		spec.Table.Database = "analytics"
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := ms[0].c.CreateJob(ctx, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, spec.Name)
	}
	o := waitOwned(t, ms[0].c, names, []string{"m0", "m1"}, 60*time.Second)
	remote := ""
	for _, n := range names {
		if o[n] == "m1" {
			remote = n
			break
		}
	}
	if remote == "" {
		t.Fatalf("no job owned by m1: %v", o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	info, err := ms[0].c.ShowJob(ctx, remote)
	if err != nil {
		t.Fatalf("job show %s (owned by m1) through m0 with auth and TLS: %v", remote, err)
	}
	if got := info.GetSummary().GetOwner(); got != "m1" {
		t.Fatalf("job show %s through m0: owner %q, want m1", remote, got)
	}
	if _, err := ms[0].c.PauseJob(ctx, remote); err != nil {
		t.Fatalf("job pause %s (owned by m1) through m0 with auth and TLS: %v", remote, err)
	}
	waitFor(t, 30*time.Second, remote+" PAUSED, as m1 shows it", func() (bool, string) {
		info, err := ms[1].c.ShowJob(ctx, remote)
		if err != nil {
			return false, err.Error()
		}
		return info.GetSummary().GetState() == api.JobState_PAUSED, info.GetSummary().GetState().String()
	})
}
