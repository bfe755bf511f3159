package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestClusterRefusesWrongTokenAndDuplicateName (issue 25, D9 and D11),
// through the binary: beside a live member m0 with the cluster's token, a
// process with another token and a process named m0 (another data
// directory, the right token) both exit at start with an error naming
// the cause; m0 stays the one member named m0, at its own address, and a
// member with the right token and its own name joins.
func TestClusterRefusesWrongTokenAndDuplicateName(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	etcd := etcdtest.Start(t)
	dir := t.TempDir()
	tokenFile, wrongFile := filepath.Join(dir, "token"), filepath.Join(dir, "wrong")
	if err := os.WriteFile(tokenFile, []byte(e2eToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrongFile, []byte("not-the-cluster-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(name, token string) []string {
		a, err := testnode.WriteClusterConfig(t.TempDir(), testnode.ClusterMember{Name: name, Etcd: etcd.Endpoints(), Lease: clusterLease,
			RequestTimeout: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return append(a, "--auth-token-file", token)
	}
	m0 := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: args("m0", tokenFile)})
	c0 := m0.Client(t, client.WithToken(e2eToken))

	refused := func(what string, a []string, want ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		p, err := testnode.Launch(ctx, testnode.Options{DataDir: t.TempDir(), Args: a})
		if err == nil {
			p.Close()
			t.Fatalf("%s started beside the live m0", what)
		}
		if !errors.Is(err, testnode.ErrExited) {
			t.Fatalf("%s: %v, want an exit at start", what, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: its output does not say %q:\n%v", what, w, err)
			}
		}
	}
	refused("a member with another token", args("m1", wrongFile), "auth token", "auth_token_file")
	refused("a second process named m0", args("m0", tokenFile), `"m0"`, "live member", m0.Addr())

	st := clusterStatus(t, c0)
	if len(st.GetMembers()) != 1 || st.GetMembers()[0].GetName() != "m0" || st.GetMembers()[0].GetAddr() != m0.Addr() {
		t.Fatalf("after the refusals, cluster status lists %v; want m0 alone at %s", st.GetMembers(), m0.Addr())
	}
	testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: args("m1", tokenFile)})
	waitFor(t, 30*time.Second, "m0 and m1 members", func() (bool, string) {
		st := clusterStatus(t, c0)
		return len(st.GetMembers()) == 2, fmt.Sprint(st.GetMembers())
	})
}

// TestClusterListShowsOwnersFigures (issue 25, D14): `job list` through a
// member shows the rows and lag of the jobs another member owns as their
// owner has them, not 0 and unknown.
func TestClusterListShowsOwnersFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const perJob = 500
	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	topics := []string{"lf0", "lf1", "lf2", "lf3"}
	b := testnode.StartBroker(t, 2, topics...)
	l := ledger.New()
	ms := startMembers(t, 2, etcd.Endpoints(), dsn)
	var names []string
	for _, tp := range topics {
		produce(t, l, b, tp, 0, perJob)
		spec := jsonSpec("lj_"+tp, "lt_"+tp, tp, b.Addrs())
		spec.Table.Database = "analytics"
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := ms[0].c.CreateJob(ctx, spec)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, spec.Name)
	}
	own := waitOwned(t, ms[0].c, names, []string{"m0", "m1"}, 60*time.Second)
	var far []string // owned by m1, listed through m0
	for _, n := range names {
		if own[n] == "m1" {
			far = append(far, n)
		}
	}
	if len(far) == 0 {
		t.Fatalf("m1 owns no job: %v", own)
	}
	// Every job loaded, as its owner lists it.
	waitFor(t, 120*time.Second, "every job loaded by its owner", func() (bool, string) {
		for _, m := range ms {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			jobs, err := m.c.ListJobs(ctx)
			cancel()
			if err != nil {
				return false, err.Error()
			}
			for _, j := range jobs {
				if j.GetOwner() == m.name && (j.GetLoadedRows() != perJob || j.GetTotalLag() != 0) {
					return false, fmt.Sprintf("%s on its owner %s: rows %d lag %d", j.GetName(), m.name, j.GetLoadedRows(), j.GetTotalLag())
				}
			}
		}
		return true, ""
	})
	// Through m0, m1's jobs show m1's figures.
	waitFor(t, 60*time.Second, "m1's jobs listed through m0 with their figures", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		jobs, err := ms[0].c.ListJobs(ctx)
		cancel()
		if err != nil {
			return false, err.Error()
		}
		for _, j := range jobs {
			if j.GetOwner() == "m1" && (j.GetLoadedRows() != perJob || j.GetTotalLag() != 0 || j.GetHealth() != "healthy") {
				return false, fmt.Sprintf("%s (owner m1) through m0: rows %d lag %d health %s", j.GetName(), j.GetLoadedRows(), j.GetTotalLag(), j.GetHealth())
			}
		}
		return true, ""
	})
	// And so does the CLI: ROWS and LAG of m1's jobs through m0.
	waitFor(t, 60*time.Second, "`job list` through m0 showing m1's figures", func() (bool, string) {
		code, out := cli(t, ms[0].p, "job", "list")
		if code != 0 {
			return false, out
		}
		for _, n := range far {
			found := false
			for line := range strings.Lines(out) {
				f := strings.Fields(line)
				if len(f) > 5 && f[0] == n {
					found = true
					// NAME STATE REASON HEALTH LAG ROWS ...
					if f[4] != "0" || f[5] != strconv.Itoa(perJob) {
						return false, fmt.Sprintf("%s: LAG %s ROWS %s in\n%s", n, f[4], f[5], out)
					}
				}
			}
			if !found {
				return false, n + " not listed:\n" + out
			}
		}
		return true, ""
	})
}
