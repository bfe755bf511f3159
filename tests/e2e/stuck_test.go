package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testnode"
)

// stuckClientEnv makes TestStuckClientHelper a scanning client of the node
// at its address (the test binary run again as a child process).
const stuckClientEnv = "LOADNODE_E2E_STUCK_CLIENT"

// TestStuckClientDropped (issue 12, defect 5): a client that asked for
// scans and then stopped reading (SIGSTOP: its process, gRPC included, is
// frozen; its kernel keeps the TCP connection open) loses its connection
// within the keepalive bound: the node's /metrics count it closed while
// the client is still stopped, and the node keeps serving others. Without
// the node's keepalive pings the connection and the replies queued behind
// it stay as long as the client is stopped.
func TestStuckClientDropped(t *testing.T) {
	const topic, name, tbl, n = "stuck", "stuck_load", "stuck_rows", 40
	b := testnode.StartBroker(t, 1, topic)
	note := strings.Repeat("s", 500<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := range n {
		rec := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"id":%d,"note":"%s"}`, i, note)}
		if err := b.Client().ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true})
	c := p.Client(t)
	if _, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)
	open0, closed0 := endpointMetrics(t, p)

	child := exec.Command(os.Args[0], "-test.run", "^TestStuckClientHelper$", "-test.v")
	child.Env = append(os.Environ(), stuckClientEnv+"="+p.Addr()+","+tbl)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = child.Process.Signal(syscall.SIGCONT)
		_ = child.Process.Kill()
		_ = child.Wait()
	})
	scanning := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "scanning" {
				close(scanning)
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-scanning:
	case <-time.After(60 * time.Second):
		t.Fatal("the scanning client did not start scanning within 60s")
	}
	waitFor(t, 30*time.Second, "the child's endpoint connected", func() (bool, string) {
		o, _ := endpointMetrics(t, p)
		return o > open0, fmt.Sprintf("open %v (before the child %v)", o, open0)
	})
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	rss0 := rssKB(p.PID())
	// The bound: a ping after replyKeepalive (10 s) without an answer, and
	// replyKeepalive more for its answer; the rest is a loaded machine.
	waitFor(t, 90*time.Second, "the stopped client's connection closed", func() (bool, string) {
		o, cl := endpointMetrics(t, p)
		return cl > closed0 && o <= open0, fmt.Sprintf("open %v, closed %v (before the child: %v, %v)", o, cl, open0, closed0)
	})
	if st := childState(child.Process.Pid); st != "T" {
		t.Fatalf("the client is in state %q, not stopped: the connection did not close because of the keepalive", st)
	}
	t.Logf("stopped client dropped %s after SIGSTOP; node RSS %d kB when stopped, %d kB now",
		time.Since(stopped).Round(time.Second), rss0, rssKB(p.PID()))
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	if got, err := c.Count(cctx, tbl); err != nil || got != n {
		t.Fatalf("count after the drop: %d, %v; want %d", got, err, n)
	}
}

// TestStuckClientHelper is the scanning client of TestStuckClientDropped:
// four scanners of the whole table, over and over, until killed.
func TestStuckClientHelper(t *testing.T) {
	arg := os.Getenv(stuckClientEnv)
	if arg == "" {
		t.Skip("the child process of TestStuckClientDropped")
	}
	addr, tbl, _ := strings.Cut(arg, ",")
	ctx := context.Background()
	c, err := client.Dial(ctx, addr, client.WithTimeout(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{}, 4)
	for range 4 {
		go func() {
			for {
				if _, _, err := c.Scan(ctx, tbl, 0); err != nil {
					fmt.Fprintln(os.Stderr, "stuck client: scan:", err)
				}
				select {
				case first <- struct{}{}:
				default:
				}
			}
		}()
	}
	<-first
	fmt.Println("scanning")
	select {}
}

// endpointMetrics reads loadnode_client_endpoints and
// loadnode_client_endpoints_closed_total from p's /metrics.
func endpointMetrics(t *testing.T, p *testnode.Proc) (open, closed float64) {
	t.Helper()
	resp, err := http.Get("http://" + p.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "loadnode_client_endpoints":
			open, found = v, found+1
		case "loadnode_client_endpoints_closed_total":
			closed, found = v, found+1
		}
	}
	if found != 2 {
		t.Fatalf("/metrics has no loadnode_client_endpoints or loadnode_client_endpoints_closed_total:\n%.2000s", body)
	}
	return open, closed
}

// childState is the state letter of /proc/PID/stat (T: stopped).
func childState(pid int) string {
	return statState("/proc/" + strconv.Itoa(pid) + "/stat")
}

// statState is the state letter of a /proc stat file (a process's, or a
// thread's under /proc/PID/task); "" when it cannot be read.
func statState(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}
