package testdeps

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records what a helper did; Fatalf and Skipf end the goroutine, as
// testing's do.
type fakeTB struct {
	did string // "", "fatal", "skip" or "log"
	msg string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Logf(format string, args ...any) {
	f.did, f.msg = "log", fmt.Sprintf(format, args...)
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.did, f.msg = "fatal", fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.did, f.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn on a fake in its own goroutine and returns the fake and
// whether fn returned (rather than ending the goroutine).
func run(fn func(TB)) (*fakeTB, bool) {
	f := &fakeTB{}
	returned := make(chan bool, 1)
	go func() {
		defer func() { returned <- false }()
		fn(f)
		returned <- true
	}()
	return f, <-returned
}

func TestRequireAndLeaveOut(t *testing.T) {
	missing := errors.New("pgtest: no PostgreSQL server binaries (apt-get install -y postgresql)")
	for _, tc := range []struct {
		name     string
		missing  error
		variable string
		leaveOut bool // call LeaveOut, not Require

		did      string
		returned bool
		left     bool // LeaveOut's result
	}{
		{name: "present", did: "", returned: true},
		{name: "present, variable set", variable: "1", did: "", returned: true},
		{name: "missing", missing: missing, did: "fatal"},
		{name: "missing, variable 0", missing: missing, variable: "0", did: "fatal"},
		{name: "missing, variable 1", missing: missing, variable: "1", did: "skip"},
		{name: "part present", leaveOut: true, did: "", returned: true},
		{name: "part missing", leaveOut: true, missing: missing, did: "fatal"},
		{name: "part missing, variable 1", leaveOut: true, missing: missing, variable: "1", did: "log", returned: true, left: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(string(Postgres), tc.variable)
			var left bool
			f, returned := run(func(tb TB) {
				if tc.leaveOut {
					left = LeaveOut(tb, Postgres, tc.missing)
				} else {
					Require(tb, Postgres, tc.missing)
				}
			})
			if f.did != tc.did || returned != tc.returned || left != tc.left {
				t.Fatalf("did %q (returned %v, left out %v), want %q (%v, %v); message %q", f.did, returned, left, tc.did, tc.returned, tc.left, f.msg)
			}
			if tc.missing != nil && (!strings.Contains(f.msg, tc.missing.Error()) || !strings.Contains(f.msg, "LOADNODE_SKIP_POSTGRES=1")) {
				t.Errorf("message %q does not say what is missing and the variable", f.msg)
			}
		})
	}
}
