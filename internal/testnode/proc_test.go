package testnode

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	RemoveBinary()
	os.Exit(code)
}

// TestProcLifecycle: a node on port 0 reports both addresses, answers on
// them, survives SIGKILL and a restart on the same data (new addresses),
// and stops cleanly on SIGTERM.
func TestProcLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs child processes")
	}
	p := Start(t, Options{DataDir: t.TempDir(), HTTP: true})
	first := p.Addr()
	if !strings.HasPrefix(first, "127.0.0.1:") || strings.HasSuffix(first, ":0") || !strings.HasPrefix(p.AdminAddr(), "127.0.0.1:") {
		t.Fatalf("addresses %q %q", first, p.AdminAddr())
	}
	list := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := p.Dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ListJobs(ctx); err != nil {
			t.Fatal(err)
		}
	}
	list()
	resp, err := http.Get("http://" + p.AdminAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/readyz = %d", resp.StatusCode)
	}

	p.MustKill(t)
	if ok, err := p.Exited(); !ok || err == nil {
		t.Fatalf("after Kill: exited %v, %v", ok, err)
	}
	p.MustRestart(t)
	list()
	if p.Incarnations() != 2 {
		t.Errorf("incarnations %d", p.Incarnations())
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.Log())
	}
	for _, want := range []string{"=== testnode: incarnation 1", "=== testnode: incarnation 2", `msg="loadnode: stopped"`} {
		if !strings.Contains(p.Log(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// TestLaunchExits: a node that exits before it is ready is reported at
// once with ErrExited, not after the ready timeout.
func TestLaunchExits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs child processes")
	}
	start := time.Now()
	p, err := Launch(context.Background(), Options{DataDir: t.TempDir(), Args: []string{"--log-level", "loud"}})
	if !errors.Is(err, ErrExited) {
		t.Fatalf("Launch: %v", err)
	}
	if p != nil {
		t.Fatal("Launch returned a Proc with its error")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestLogRing(t *testing.T) {
	r := NewLogRing(2)
	r.Write([]byte("a\nb\nc"))
	r.Write([]byte("d\ne\n"))
	if got := r.Tail(5); got != "b\ncd\ne"[0:0]+"cd\ne" {
		t.Fatalf("tail %q", got)
	}
}
