// Package e2e holds black-box end-to-end tests: they build the loadnode
// binary, run it as a real process against an in-process kfake broker, and
// talk to it only through the Go client.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "loadnode-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "loadnode")
	build := exec.Command("go", "build", "-o", binary, "../../cmd/loadnode")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build loadnode:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a process's output for failure reports.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a loadnode process.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	out  *syncBuffer
	done chan error
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNode runs `loadnode serve` on dataDir and waits until a client can
// list jobs.
func startNode(t *testing.T, dataDir string, env ...string) *proc {
	t.Helper()
	return startNodeArgs(t, dataDir, nil, env...)
}

// startNodeArgs is startNode with extra `serve` arguments.
func startNodeArgs(t *testing.T, dataDir string, args []string, env ...string) *proc {
	t.Helper()
	return startServe(t, dataDir, args, env, func(ctx context.Context, addr string) (*client.Client, error) {
		return client.Dial(ctx, addr, client.WithTimeout(2*time.Second))
	})
}

// startServe starts `loadnode serve` on dataDir with extra arguments and
// environment, and returns once dial reaches it.
func startServe(t *testing.T, dataDir string, args, env []string, dial func(ctx context.Context, addr string) (*client.Client, error)) *proc {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	out := &syncBuffer{}
	cmd := exec.Command(binary, append([]string{"serve", "--data", dataDir, "--listen", addr, "--log-level", "info"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, addr: addr, out: out, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.kill() })
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := dial(ctx, addr)
		cancel()
		if err == nil {
			c.Close()
			return p
		}
		select {
		case werr := <-p.done:
			p.done <- werr
			t.Fatalf("loadnode exited before it was ready: %v\n%s", werr, out.String())
		case <-deadline:
			t.Fatalf("loadnode not ready at %s: %v\n%s", addr, err, out.String())
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(10 * time.Second):
		p.t.Errorf("loadnode did not die after SIGKILL")
	}
}

// wait waits for the process to exit by itself.
func (p *proc) wait(d time.Duration) error {
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		return fmt.Errorf("loadnode still running after %s", d)
	}
}

func (p *proc) client(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, p.addr, client.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatalf("dial %s: %v\n%s", p.addr, err, p.out.String())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// broker is an in-process kfake cluster; it outlives the loadnode
// processes that the tests kill.
type broker struct {
	c     *kfake.Cluster
	addrs []string
	cl    *kgo.Client
	adm   *kadm.Client
}

func startBroker(t *testing.T, partitions int32, topics ...string) *broker {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerLinger(5*time.Millisecond), kgo.DefaultProduceTopic(topics[0]))
	if err != nil {
		t.Fatal(err)
	}
	b := &broker{c: c, addrs: c.ListenAddrs(), cl: cl, adm: kadm.NewClient(cl)}
	t.Cleanup(func() { cl.Close(); c.Close() })
	return b
}

// produce writes n records to topic, spread over partitions by the default
// partitioner, with value(i) as the payload.
func (b *broker) produce(t *testing.T, topic string, from, n int, value func(i int) []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := from; i < from+n; i++ {
		wg.Add(1)
		b.cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: value(i)}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("produce: %v", firstErr)
	}
}

// endOffsets returns the high watermark of every partition of topic.
func (b *broker) endOffsets(t *testing.T, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := b.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

func jsonSpec(name, tableName, topic string, brokers []string) *api.JobSpec {
	return &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: tableName, Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
		}},
		Format:                  "json",
		DesiredConcurrentNumber: 2,
		MaxBatchIntervalMs:      200,
		MaxBatchRows:            5000,
		MaxBatchSize:            4 << 20,
		Kafka: &api.KafkaSpec{
			Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING",
		},
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		if state != "" {
			last = state
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", d, what, last)
		}
		<-tick.C
	}
}

// scanAll reads every row of a table through the client (which pages).
func scanAll(t *testing.T, c *client.Client, tableName string) []*api.Row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, rows, err := c.Scan(ctx, tableName, 0)
	if err != nil {
		t.Fatalf("scan %s: %v", tableName, err)
	}
	return rows
}
