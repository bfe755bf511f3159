package testnode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/loadnode/loadnode/client"
)

// Options says how to run `loadnode serve`.
type Options struct {
	// Binary is the loadnode binary; "" builds it (BuildBinary).
	Binary string
	// DataDir is the node's data directory (--data). Required.
	DataDir string
	// HTTP turns the admin endpoint on, on 127.0.0.1:0 (AdminAddr).
	HTTP bool
	// MySQL turns the MySQL-protocol endpoint on, on 127.0.0.1:0
	// (MySQLAddr).
	MySQL bool
	// Args are more `serve` arguments, after the harness's own (a flag given
	// twice takes the last value).
	Args []string
	// Env is added to the test process's environment (KEY=VALUE).
	Env []string
	// NoWait: Launch and Restart return once the process started, without
	// waiting for it to be ready (a node armed to crash during recovery);
	// WaitReady waits.
	NoWait bool
	// Log also receives the process's output; nil: only the ring.
	Log io.Writer
	// LogLines is how many lines of output the ring keeps; default 2000.
	LogLines int
	// DumpLines is how many of them Start logs when the test failed;
	// default 400.
	DumpLines int
	// ReadyTimeout bounds the wait for readiness when the context has no
	// deadline; default 60 s.
	ReadyTimeout time.Duration
}

// withDefaults fills in the defaults of every field that has one.
func (o Options) withDefaults() Options {
	if o.LogLines <= 0 {
		o.LogLines = 2000
	}
	if o.DumpLines <= 0 {
		o.DumpLines = 400
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	return o
}

// Proc is a `loadnode serve` process, restarted in place by Restart.
type Proc struct {
	opts Options
	dir  string // holds the addr file
	ring *LogRing

	mu struct {
		sync.Mutex
		cmd   *exec.Cmd
		done  chan struct{} // closed when cmd exited
		err   error         // cmd.Wait's result, set before done is closed
		addr  string        // "" until ready
		admin string
		mysql string
		env   []string // this incarnation's extra environment
		n     int      // incarnations started
	}
}

// ErrExited is returned by WaitReady when the process exited before it was
// ready.
var ErrExited = errors.New("testnode: loadnode exited before it was ready")

// addrs is what `serve --addr-file` writes (cmd/loadnode/addrfile.go).
type addrs struct {
	Addr  string `json:"addr"`
	HTTP  string `json:"http"`
	MySQL string `json:"mysql"`
	PID   int    `json:"pid"`
}

// launchTail is how much output a failed Launch reports.
const launchTail = 100

// Launch starts `loadnode serve` and, unless o.NoWait, waits until it is
// ready (its addresses known). Close kills it and removes its files.
func Launch(ctx context.Context, o Options) (*Proc, error) {
	if o.DataDir == "" {
		return nil, errors.New("testnode: Options.DataDir is required")
	}
	if o.Binary == "" {
		bin, err := BuildBinary()
		if err != nil {
			return nil, err
		}
		o.Binary = bin
	}
	o = o.withDefaults()
	dir, err := os.MkdirTemp("", "loadnode-testnode-")
	if err != nil {
		return nil, fmt.Errorf("testnode: %w", err)
	}
	p := &Proc{opts: o, dir: dir, ring: NewLogRing(o.LogLines)}
	if err := p.start(ctx, nil); err != nil {
		p.Close()
		return nil, fmt.Errorf("%w; its output:\n%s", err, p.Tail(launchTail))
	}
	return p, nil
}

func (p *Proc) addrFile() string { return filepath.Join(p.dir, "addrs.json") }

// start runs a new incarnation with env added.
func (p *Proc) start(ctx context.Context, env []string) error {
	// A SIGKILLed node leaves its file behind.
	if err := os.Remove(p.addrFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("testnode: %w", err)
	}
	args := []string{"serve", "--data", p.opts.DataDir, "--listen", "127.0.0.1:0", "--log-level", "info", "--addr-file", p.addrFile()}
	if p.opts.MySQL {
		args = append(args, "--mysql", "127.0.0.1:0")
	}
	if p.opts.HTTP {
		args = append(args, "--http", "127.0.0.1:0")
	}
	args = append(args, p.opts.Args...)
	cmd := exec.Command(p.opts.Binary, args...)
	cmd.Env = append(append(os.Environ(), p.opts.Env...), env...)
	var out io.Writer = p.ring
	if p.opts.Log != nil {
		out = io.MultiWriter(p.ring, p.opts.Log)
	}
	cmd.Stdout, cmd.Stderr = out, out

	p.mu.Lock()
	p.mu.n++
	fmt.Fprintf(p.ring, "=== testnode: incarnation %d: %v env %v\n", p.mu.n, args[1:], append(append([]string(nil), p.opts.Env...), env...))
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		return fmt.Errorf("testnode: start loadnode: %w", err)
	}
	done := make(chan struct{})
	p.mu.cmd, p.mu.done, p.mu.err, p.mu.addr, p.mu.admin, p.mu.env = cmd, done, nil, "", "", env
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		if p.mu.cmd == cmd {
			p.mu.err = err
		}
		p.mu.Unlock()
		fmt.Fprintf(p.ring, "=== testnode: pid %d exited: %v\n", cmd.Process.Pid, err)
		close(done)
	}()
	if p.opts.NoWait {
		return nil
	}
	return p.WaitReady(ctx)
}

// WaitReady waits until the current process wrote its addresses, and
// returns ErrExited (wrapped, with the exit status) if it exits first.
func (p *Proc) WaitReady(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.ReadyTimeout)
		defer cancel()
	}
	p.mu.Lock()
	cmd, done := p.mu.cmd, p.mu.done
	ready := p.mu.addr != ""
	p.mu.Unlock()
	if ready {
		return nil
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(p.addrFile())
		if err == nil {
			var a addrs
			if err := json.Unmarshal(b, &a); err != nil {
				return fmt.Errorf("testnode: addr file %q: %w", b, err)
			}
			if a.PID == cmd.Process.Pid && a.Addr != "" {
				p.mu.Lock()
				if p.mu.cmd == cmd {
					p.mu.addr, p.mu.admin, p.mu.mysql = a.Addr, a.HTTP, a.MySQL
				}
				p.mu.Unlock()
				return nil
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("testnode: %w", err)
		}
		select {
		case <-done:
			return fmt.Errorf("%w: %v", ErrExited, p.exitErr())
		case <-ctx.Done():
			return fmt.Errorf("testnode: loadnode (pid %d) not ready: %w", cmd.Process.Pid, ctx.Err())
		case <-tick.C:
		}
	}
}

func (p *Proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.err
}

// Addr is the current process's client endpoint ("" until it is ready).
func (p *Proc) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.addr
}

// AdminAddr is the current process's admin endpoint ("" when Options.HTTP
// is off or until it is ready).
func (p *Proc) AdminAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.admin
}

// MySQLAddr is the current process's MySQL-protocol endpoint ("" when
// Options.MySQL is off or until it is ready).
func (p *Proc) MySQLAddr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.mysql
}

// PID is the current process's id.
func (p *Proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.cmd.Process.Pid
}

// Incarnations is the number of processes started (1 + restarts).
func (p *Proc) Incarnations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.n
}

// Done is closed when the current process has exited.
func (p *Proc) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.done
}

// Exited reports whether the current process has exited, and its Wait
// error (nil for exit code 0).
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.Done():
		return true, p.exitErr()
	default:
		return false, nil
	}
}

// Wait waits up to d for the current process to exit by itself and returns
// its Wait error; exited is false if it still runs.
func (p *Proc) Wait(d time.Duration) (exited bool, err error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.Done():
		return true, p.exitErr()
	case <-t.C:
		return false, nil
	}
}

// Signal sends sig to the current process.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.mu.cmd
	p.mu.Unlock()
	return cmd.Process.Signal(sig)
}

// killWait bounds the wait for a SIGKILLed process.
const killWait = 10 * time.Second

// Kill sends SIGKILL (after SIGCONT, in case it is stopped) and waits for
// the process to be gone. A process that already exited is left alone.
func (p *Proc) Kill() error {
	if ok, _ := p.Exited(); ok {
		return nil
	}
	_ = p.Signal(syscall.SIGCONT)
	_ = p.Signal(syscall.SIGKILL)
	if ok, _ := p.Wait(killWait); !ok {
		return fmt.Errorf("testnode: loadnode (pid %d) still running %s after SIGKILL", p.PID(), killWait)
	}
	return nil
}

// Stop sends SIGTERM and waits up to grace for a clean exit; then it
// SIGKILLs the process and says so. It returns the exit error of a process
// that did not exit cleanly.
func (p *Proc) Stop(grace time.Duration) error {
	if ok, err := p.Exited(); ok {
		return err
	}
	_ = p.Signal(syscall.SIGTERM)
	if ok, err := p.Wait(grace); ok {
		return err
	}
	kerr := p.Kill()
	return errors.Join(fmt.Errorf("testnode: loadnode (pid %d) did not stop within %s of SIGTERM; killed", p.PID(), grace), kerr)
}

// Restart SIGKILLs the current process if it still runs and starts a new one
// on the same data directory and options, with env added for this
// incarnation only; unless Options.NoWait it waits until the new one is
// ready. Its addresses are new.
func (p *Proc) Restart(ctx context.Context, env ...string) error {
	if err := p.Kill(); err != nil {
		return err
	}
	return p.start(ctx, env)
}

// Dial connects a client to the current process (10 s per request unless
// opts say otherwise); the caller closes it.
func (p *Proc) Dial(ctx context.Context, opts ...client.Option) (*client.Client, error) {
	addr := p.Addr()
	if addr == "" {
		return nil, errors.New("testnode: loadnode is not ready (no address yet)")
	}
	return client.Dial(ctx, addr, append([]client.Option{client.WithTimeout(10 * time.Second)}, opts...)...)
}

// Log returns the output kept of every incarnation, with a line marking
// each start and exit.
func (p *Proc) Log() string { return p.ring.String() }

// Tail returns the last n lines of output.
func (p *Proc) Tail(n int) string { return p.ring.Tail(n) }

// Close kills the process and removes the harness's files (not the data
// directory).
func (p *Proc) Close() error {
	var err error
	p.mu.Lock()
	started := p.mu.cmd != nil
	p.mu.Unlock()
	if started {
		err = p.Kill()
	}
	if rerr := os.RemoveAll(p.dir); err == nil {
		err = rerr
	}
	return err
}
