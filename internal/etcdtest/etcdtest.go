// Package etcdtest runs a private etcd server for tests: it finds the
// Debian etcd binary (package etcd-server, which `make deps` installs),
// starts a one-member cluster in a temporary directory on 127.0.0.1 with
// free client and peer ports, waits until it answers, and stops it when the
// test ends. Kill and Restart simulate an etcd outage: the data directory
// survives, so a restarted server has every acknowledged write. Without
// the binary a test that needs it fails, naming what to install, unless
// $LOADNODE_SKIP_ETCD=1 (package testdeps).
//
// Concurrency: a Server's methods may be called from several goroutines;
// Kill, Restart and Close serialize on the server's lock.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/loadnode/loadnode/internal/testdeps"
)

// BinEnv names an etcd binary; it takes precedence over $PATH.
const BinEnv = "LOADNODE_ETCD_BIN"

// TB is the part of testing.TB the package uses.
type TB interface {
	testdeps.TB
	Cleanup(func())
}

// Server is one running etcd member.
type Server struct {
	bin                  string
	dir                  string
	clientPort, peerPort int

	mu struct {
		sync.Mutex
		cmd  *exec.Cmd
		done chan struct{}
	}
}

// FindBin returns the etcd binary: $BinEnv, else etcd on $PATH.
func FindBin() (string, error) {
	if b := os.Getenv(BinEnv); b != "" {
		if st, err := os.Stat(b); err != nil || st.IsDir() {
			return "", fmt.Errorf("etcdtest: $%s=%s is not a file", BinEnv, b)
		}
		return b, nil
	}
	b, err := exec.LookPath("etcd")
	if err != nil {
		return "", errors.New("etcdtest: no etcd binary on $PATH (install the Debian package: apt-get install -y etcd-server, which `make deps` does) and $" + BinEnv + " is not set")
	}
	return b, nil
}

// Bin returns FindBin's binary. When there is none it fails t, naming
// what to install, or skips t with $LOADNODE_SKIP_ETCD=1 (testdeps.Etcd).
func Bin(t TB) string {
	t.Helper()
	bin, err := FindBin()
	testdeps.Require(t, testdeps.Etcd, err)
	return bin
}

// Start starts a server for t and stops it when t ends. A missing binary
// fails t (or skips it: see Bin); so does any other failure.
func Start(t TB) *Server {
	t.Helper()
	bin := Bin(t)
	dir, err := os.MkdirTemp("", "etcdtest-")
	if err != nil {
		t.Fatalf("etcdtest: %v", err)
	}
	s, err := Launch(bin, dir)
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Logf("%v", err)
		}
		os.RemoveAll(dir)
	})
	return s
}

// Launch starts etcd with its data in dir/data and its log in dir/etcd.log.
// The caller must Close it.
func Launch(bin, dir string) (*Server, error) {
	s := &Server{bin: bin, dir: dir}
	var err error
	if s.clientPort, err = freePort(); err != nil {
		return nil, err
	}
	if s.peerPort, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("etcdtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PID is the etcd process's id (0 when it is not running).
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cmd == nil || s.mu.cmd.Process == nil {
		return 0
	}
	return s.mu.cmd.Process.Pid
}

// Endpoint is the client address, host:port.
func (s *Server) Endpoint() string { return fmt.Sprintf("127.0.0.1:%d", s.clientPort) }

// Endpoints is Endpoint as a list, for clientv3.Config and node configs.
func (s *Server) Endpoints() []string { return []string{s.Endpoint()} }

// Client returns a client of the server, closed when t ends.
func (s *Server) Client(t TB) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: 5 * time.Second, Logger: nopLogger()})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// start runs etcd and waits until it answers a read.
// REQUIRES: s.mu is not held by the caller.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cmd != nil {
		return errors.New("etcdtest: already running")
	}
	logf, err := os.OpenFile(filepath.Join(s.dir, "etcd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("etcdtest: %w", err)
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", s.clientPort)
	peer := fmt.Sprintf("http://127.0.0.1:%d", s.peerPort)
	cmd := exec.Command(s.bin,
		"--name", "etcdtest",
		"--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "etcdtest="+peer,
		"--initial-cluster-state", "new",
		"--log-level", "warn",
	)
	// Debian's etcd 3.4 on arm64 refuses to start without this.
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+goarch())
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("etcdtest: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.cmd, s.mu.done = cmd, done
	if err := s.waitReady(done, 30*time.Second); err != nil {
		cmd.Process.Kill()
		<-done
		s.mu.cmd = nil
		tail, _ := os.ReadFile(filepath.Join(s.dir, "etcd.log"))
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return fmt.Errorf("%w; etcd.log ends:\n%s", err, tail)
	}
	return nil
}

// waitReady polls a read until it succeeds, the process exits, or the
// deadline passes.
func (s *Server) waitReady(exited <-chan struct{}, within time.Duration) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints(), DialTimeout: time.Second, Logger: nopLogger()})
	if err != nil {
		return fmt.Errorf("etcdtest: client: %w", err)
	}
	defer c.Close()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, "etcdtest-ready")
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcdtest: etcd on %s not ready after %v: %w", s.Endpoint(), within, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("etcdtest: etcd exited before it was ready")
		case <-tick.C:
		}
	}
}

// Kill stops the server abruptly (SIGKILL); its data stays for Restart.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.cmd == nil {
		return nil
	}
	s.mu.cmd.Process.Kill()
	<-s.mu.done
	s.mu.cmd = nil
	return nil
}

// Restart kills the server (if it runs) and starts it again on the same
// ports and data, waiting until it answers.
func (s *Server) Restart() error {
	if err := s.Kill(); err != nil {
		return err
	}
	return s.start()
}

// Close stops the server.
func (s *Server) Close() error { return s.Kill() }

func nopLogger() *zap.Logger { return zap.NewNop() }

func goarch() string { return runtime.GOARCH }
