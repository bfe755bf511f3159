// Package pgtest runs a private PostgreSQL server for tests: it finds the
// Debian PostgreSQL binaries, initdb's a cluster in a temporary directory,
// starts it on 127.0.0.1 and a free port (as the postgres user when the
// test runs as root), waits until it accepts connections and stops it when
// the test ends. Databases on it are created per test (CreateDatabase), so
// one server serves a whole test binary. Without the binaries a test that
// needs them fails, naming what to install, unless
// $LOADNODE_SKIP_POSTGRES=1 (package testdeps).
//
// Concurrency: a Server's methods may be called from several goroutines;
// Restart and Stop serialize on the server's lock.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/internal/testdeps"
)

// BinEnv names a directory holding initdb, pg_ctl and postgres; it takes
// precedence over the Debian locations.
const BinEnv = "LOADNODE_PG_BIN"

// TB is the part of testing.TB the package uses.
type TB interface {
	testdeps.TB
	Cleanup(func())
}

// Server is one running PostgreSQL cluster.
type Server struct {
	bin  string // directory of initdb, pg_ctl, postgres
	dir  string // the temporary directory: data/ and server.log
	port int
	run  []string // prefix that runs a command as the cluster's owner

	dbs atomic.Int64

	mu struct {
		sync.Mutex
		running bool
	}
}

// FindBin returns the directory of the PostgreSQL server binaries: $BinEnv,
// else the newest /usr/lib/postgresql/<version>/bin that has pg_ctl,
// preferring version 15.
func FindBin() (string, error) {
	if d := os.Getenv(BinEnv); d != "" {
		if ok(d) {
			return d, nil
		}
		return "", fmt.Errorf("pgtest: $%s=%s has no initdb, pg_ctl and postgres", BinEnv, d)
	}
	if d := "/usr/lib/postgresql/15/bin"; ok(d) {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if ok(d) {
			return d, nil
		}
	}
	return "", errors.New("pgtest: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin " +
		"(install the Debian package: apt-get install -y postgresql, which `make deps` does) and $" + BinEnv + " is not set")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func ok(dir string) bool {
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
			return false
		}
	}
	return true
}

// Bin returns FindBin's directory. When the binaries cannot be found it
// fails t, naming what to install, or skips t with
// $LOADNODE_SKIP_POSTGRES=1 (testdeps.Postgres).
func Bin(t TB) string {
	t.Helper()
	bin, err := FindBin()
	testdeps.Require(t, testdeps.Postgres, err)
	return bin
}

// Start starts a server for t and stops it when t ends. Missing binaries
// fail t (or skip it: see Bin); so does any other failure.
func Start(t TB) *Server {
	t.Helper()
	s, err := Launch(Bin(t))
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Logf("%v", err)
		}
	})
	return s
}

// Launch initdb's and starts a server with the binaries in bin. The caller
// must Close it.
func Launch(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: the cluster belongs to postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		s.run = []string{"runuser", "-u", "postgres", "--"}
	}
	if out, err := s.cmd("initdb", "-D", s.data(), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	// A free port can be taken between our probe and the server's bind:
	// try a few.
	for attempt := 0; ; attempt++ {
		if s.port, err = freePort(); err == nil {
			if err = s.start(); err == nil {
				return s, nil
			}
		}
		if attempt == 4 {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	argv := append(append(append([]string{}, s.run...), filepath.Join(s.bin, name)), args...)
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = s.dir
	c.Env = append(os.Environ(), "LC_ALL=C")
	return c
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs pg_ctl start -w: it returns once the server accepts
// connections.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.running {
		return nil
	}
	opts := strings.Join([]string{
		"-c listen_addresses=127.0.0.1",
		"-c port=" + strconv.Itoa(s.port),
		"-c unix_socket_directories=''",
		"-c max_connections=200",
		"-c shared_buffers=128MB",
		"-c max_wal_size=1GB",
		// Crash recovery first fsyncs the whole data directory, file by
		// file: with a test binary's hundreds of databases that was
		// thousands of fsyncs, 12-33 s a restart on a loaded machine
		// (sink/postgres took 400 s instead of 32). One syncfs instead.
		"-c recovery_init_sync_method=syncfs",
	}, " ")
	out, err := s.cmd("pg_ctl", "start", "-w", "-t", "60", "-D", s.data(),
		"-l", filepath.Join(s.dir, "server.log"), "-o", opts).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl start on port %d: %v\n%s\n%s", s.port, err, out, s.LogTail(20))
	}
	s.mu.running = true
	return s.ping()
}

// ping waits until a connection to the postgres database succeeds.
func (s *Server) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			_ = c.Close(ctx)
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("pgtest: server on port %d not ready: %v", s.port, last)
}

// stop runs pg_ctl stop in mode (fast, immediate).
func (s *Server) stop(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.mu.running {
		return nil
	}
	out, err := s.cmd("pg_ctl", "stop", "-w", "-t", "60", "-m", mode, "-D", s.data()).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
	s.mu.running = false
	return nil
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// DSN is the connection string of database db as the superuser postgres.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// CreateDatabase creates a new, empty database and returns its DSN.
func (s *Server) CreateDatabase(t TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d", s.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.DSN(name)
}

// Crash stops the server the way a crash does (pg_ctl stop -m immediate:
// no checkpoint, recovery from the WAL at the next start) and starts it
// again on the same port.
func (s *Server) Crash() error {
	if err := s.stop("immediate"); err != nil {
		return err
	}
	return s.start()
}

// Stop stops the server (fast shutdown) until Start.
func (s *Server) Stop() error { return s.stop("fast") }

// StartAgain starts a stopped server on its port (a running one: no-op).
func (s *Server) StartAgain() error { return s.start() }

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.stop("fast")
	if err != nil {
		err = errors.Join(err, s.stop("immediate"))
	}
	return errors.Join(err, os.RemoveAll(s.dir))
}

// PostmasterPID is the server's main process id (the first line of
// postmaster.pid).
func (s *Server) PostmasterPID() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.data(), "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("pgtest: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("pgtest: postmaster.pid: %w", err)
	}
	return pid, nil
}
