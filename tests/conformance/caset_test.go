package conformance

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/loadnode/loadnode/internal/testnode"
)

// caseT is what a case runs under in place of its *testing.T. It keeps the
// case's failures instead of failing the test at once, so that the runner
// can hold them against the known-failing table: an unlisted case that
// fails fails the test, a listed one that fails is logged, and a listed
// one that passes fails the test. It has no Skip: a case passes, fails, or
// is listed.
//
// Logs, cleanups and temporary directories are the subtest's. Fatalf ends
// the goroutine that calls it, as testing.T's does, and like it must be
// called from the goroutine running the case (run starts that goroutine).
type caseT struct {
	t      *testing.T
	root   *caseT // the whole case; the caseT itself at the top
	prefix string // "pos: " before a Run part's failures, "" at the top
	failed bool   // REQUIRES: root.mu is held

	// mu is the root's: the case's failures and helpers.
	mu struct {
		sync.Mutex
		failures []string
		helpers  map[string]bool // function names
	}
}

var _ testnode.TB = (*caseT)(nil)

func newCaseT(t *testing.T) *caseT {
	c := &caseT{t: t}
	c.root = c
	c.mu.helpers = map[string]bool{}
	return c
}

// run runs f on a goroutine of its own (where Fatalf may end it) and
// returns when f returns, calls Fatalf or panics; a panic is a failure.
func (c *caseT) run(f func(*caseT)) {
	done := make(chan struct{})
	go func() {
		completed := false
		defer close(done)
		defer func() {
			// recover is nil after Fatalf's runtime.Goexit.
			if r := recover(); r != nil {
				c.fail(fmt.Sprintf("panic: %v\n%s", r, debug.Stack()))
			} else if !completed && !c.Failed() {
				c.fail("the case stopped (runtime.Goexit) without reporting a failure")
			}
		}()
		f(c)
		completed = true
	}()
	<-done
}

// Run runs f as a part of the case named name, to its end even when an
// earlier part failed; its failures are the case's, prefixed with name.
// A part is not a subtest: the case has one verdict.
func (c *caseT) Run(name string, f func(*caseT)) {
	sub := &caseT{t: c.t, root: c.root, prefix: c.prefix + name + ": "}
	sub.run(f)
}

// failures returns the case's failures, in order.
func (c *caseT) failures() []string {
	r := c.root
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.mu.failures...)
}

// fail records msg as a failure of c and of the case.
func (c *caseT) fail(msg string) {
	r := c.root
	r.mu.Lock()
	defer r.mu.Unlock()
	c.failed = true
	r.failed = true
	r.mu.failures = append(r.mu.failures, c.prefix+msg)
}

// Helper marks the calling function as a helper: a failure is reported at
// the line that called into the helpers, as testing.T reports it.
func (c *caseT) Helper() {
	var pc [1]uintptr
	if runtime.Callers(2, pc[:]) == 0 {
		return
	}
	frame, _ := runtime.CallersFrames(pc[:]).Next()
	r := c.root
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.helpers[frame.Function] = true
}

// where is "file:line: " of the first caller outside caseT's methods and
// the helpers ("" when there is none).
func (c *caseT) where() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	r := c.root
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		frame, more := frames.Next()
		if !r.mu.helpers[frame.Function] && !strings.Contains(frame.Function, ".(*caseT).") {
			return fmt.Sprintf("%s:%d: ", filepath.Base(frame.File), frame.Line)
		}
		if !more {
			return ""
		}
	}
}

// Errorf records a failure and lets the case go on.
func (c *caseT) Errorf(format string, args ...any) { c.fail(c.where() + fmt.Sprintf(format, args...)) }

// Fatalf records a failure and ends the case (or the Run part).
func (c *caseT) Fatalf(format string, args ...any) {
	c.fail(c.where() + fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Fatal is Fatalf with Sprint's formatting.
func (c *caseT) Fatal(args ...any) {
	c.fail(c.where() + fmt.Sprint(args...))
	runtime.Goexit()
}

// Failed reports whether c (a Run part, or the whole case at the top) has
// failed.
func (c *caseT) Failed() bool {
	c.root.mu.Lock()
	defer c.root.mu.Unlock()
	return c.failed
}

func (c *caseT) Logf(format string, args ...any) {
	c.t.Helper()
	c.t.Logf("%s", c.prefix+fmt.Sprintf(format, args...))
}

func (c *caseT) Cleanup(f func()) { c.t.Cleanup(f) }

func (c *caseT) TempDir() string { return c.t.TempDir() }

// TestCaseT checks the recorder the verdicts rest on: a failure is kept
// with the line of the case that led to it, Fatalf ends only its part, a
// panic is a failure, and a case that reports nothing has no failures.
func TestCaseT(t *testing.T) {
	line := func() int { _, _, l, _ := runtime.Caller(1); return l }
	helper := func(c *caseT) {
		c.Helper()
		c.Fatalf("from a helper")
	}
	var fatalLine, helperLine, errLine int
	ran := []string{}
	c := newCaseT(t)
	c.run(func(c *caseT) {
		c.Run("a", func(c *caseT) {
			errLine = line() + 1
			c.Errorf("error %d", 1)
			ran = append(ran, "a after Errorf")
			fatalLine = line() + 1
			c.Fatalf("fatal")
			ran = append(ran, "a after Fatalf")
		})
		c.Run("b", func(c *caseT) {
			helperLine = line() + 1
			helper(c)
		})
		c.Run("c", func(c *caseT) { panic("boom") })
		c.Run("d", func(c *caseT) { ran = append(ran, "d") })
		ran = append(ran, "end")
	})
	if want := []string{"a after Errorf", "d", "end"}; strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Errorf("ran %q, want %q", ran, want)
	}
	got := c.failures()
	want := []string{
		fmt.Sprintf("a: caset_test.go:%d: error 1", errLine),
		fmt.Sprintf("a: caset_test.go:%d: fatal", fatalLine),
		fmt.Sprintf("b: caset_test.go:%d: from a helper", helperLine),
		"c: panic: boom",
	}
	if len(got) != len(want) {
		t.Fatalf("failures %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("failure %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !c.Failed() {
		t.Error("Failed() = false after failures")
	}

	ok := newCaseT(t)
	ok.run(func(c *caseT) { c.Logf("nothing wrong") })
	if ok.Failed() || len(ok.failures()) != 0 {
		t.Errorf("a case that reports nothing: Failed %v, failures %q", ok.Failed(), ok.failures())
	}
}
