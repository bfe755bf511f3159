package node

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// CrashEnv is the environment variable that arms a named crash point in a
// `loadnode serve` process, for crash tests: the process kills itself with
// SIGKILL when it reaches the point. Values:
//
//	after-create-sync     after a create snapshot is synced, before the spawn
//	after-commit[:N]      after the N-th batch commit (default 1), before its ack
//	after-transition[:S]  after a transition to state S (default any) is journaled
//	hang-after-commit     the job actor that committed a batch blocks forever
//	                      (a store call that never returns), for shutdown tests
const CrashEnv = "LOADNODE_CRASH_AT"

// CrashHooks returns hooks that SIGKILL the process at the named point.
func CrashHooks(spec string) (actors.Hooks, error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(spec), ":")
	die := func() {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never return: the signal is on its way
	}
	var h actors.Hooks
	switch name {
	case "":
		return h, nil
	case "after-create-sync":
		h.AfterCreateSynced = func(uint64) { die() }
	case "after-commit":
		n := int64(1)
		if arg != "" {
			v, err := strconv.ParseInt(arg, 10, 64)
			if err != nil || v < 1 {
				return h, fmt.Errorf("node: %s: after-commit:%s: want a positive count", CrashEnv, arg)
			}
			n = v
		}
		var seen atomic.Int64
		h.AfterCommit = func(uint64) {
			if seen.Add(1) == n {
				die()
			}
		}
	case "after-transition":
		want := api.JobState_JOB_STATE_UNSPECIFIED
		if arg != "" {
			v, ok := api.JobState_value[strings.ToUpper(arg)]
			if !ok {
				return h, fmt.Errorf("node: %s: after-transition:%s: unknown state", CrashEnv, arg)
			}
			want = api.JobState(v)
		}
		h.AfterTransition = func(_ uint64, t *api.Transition) {
			if want == api.JobState_JOB_STATE_UNSPECIFIED || t.To == want {
				die()
			}
		}
	case "hang-after-commit":
		var once sync.Once
		h.AfterCommit = func(uint64) {
			once.Do(func() { fmt.Fprintln(os.Stderr, "node: crash point hang-after-commit reached") })
			select {}
		}
	default:
		return h, fmt.Errorf("node: %s=%q: unknown crash point (after-create-sync, after-commit[:N], after-transition[:STATE], hang-after-commit)", CrashEnv, spec)
	}
	return h, nil
}
