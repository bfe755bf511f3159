package node

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestTuneRuntime: without GOGC the process runs at DefaultGCPercent; a
// GOGC in the environment is left to the runtime.
func TestTuneRuntime(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := TuneRuntime(getenv); got != DefaultGCPercent {
		t.Errorf("TuneRuntime without GOGC = %d, want %d", got, DefaultGCPercent)
	}
	if now := debug.SetGCPercent(100); now != DefaultGCPercent {
		t.Errorf("GC percent after TuneRuntime without GOGC: %d, want %d", now, DefaultGCPercent)
	}
	for v, want := range map[string]int{"50": 50, "off": -1} {
		env["GOGC"] = v
		if got := TuneRuntime(getenv); got != want {
			t.Errorf("TuneRuntime with GOGC=%s = %d, want %d", v, got, want)
		}
		if now := debug.SetGCPercent(100); now != 100 {
			t.Errorf("GOGC=%s: TuneRuntime changed the GC percent to %d", v, now)
		}
	}
}

// TestGCPercentFor: 200 while the live heap is small, 100 once it passed
// largeHeapBytes, and no switch between the two bounds.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live      uint64
		cur, want int
	}{
		{0, 100, DefaultGCPercent},
		{100 << 20, DefaultGCPercent, DefaultGCPercent},
		{smallHeapBytes - 1, LargeHeapGCPercent, DefaultGCPercent},
		{smallHeapBytes, LargeHeapGCPercent, LargeHeapGCPercent},
		{450 << 20, DefaultGCPercent, DefaultGCPercent},
		{450 << 20, LargeHeapGCPercent, LargeHeapGCPercent},
		{largeHeapBytes, DefaultGCPercent, DefaultGCPercent},
		{largeHeapBytes + 1, DefaultGCPercent, LargeHeapGCPercent},
		{700 << 20, LargeHeapGCPercent, LargeHeapGCPercent},
	} {
		if got := gcPercentFor(c.live, c.cur); got != c.want {
			t.Errorf("gcPercentFor(%d MiB, %d) = %d, want %d", c.live>>20, c.cur, got, c.want)
		}
	}
}

// TestHeapTunerFollowsLiveHeap: after each collection the process's GC
// target follows the live heap: down to 100 past largeHeapBytes (100,000
// idle jobs), back to 200 under smallHeapBytes.
func TestHeapTunerFollowsLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(DefaultGCPercent)
	defer debug.SetGCPercent(old)
	var live uint64
	tu := &heapTuner{cur: DefaultGCPercent, following: true, liveHeap: func() uint64 { return live }}
	for _, step := range []struct {
		live uint64
		want int
	}{
		{64 << 20, DefaultGCPercent},
		{700 << 20, LargeHeapGCPercent},
		{450 << 20, LargeHeapGCPercent},
		{300 << 20, DefaultGCPercent},
		{450 << 20, DefaultGCPercent},
	} {
		live = step.live
		if got := tu.afterGC(); got != step.want {
			t.Errorf("live heap %d MiB: target %d, want %d", step.live>>20, got, step.want)
		}
		if now := debug.SetGCPercent(step.want); now != step.want {
			t.Errorf("live heap %d MiB: the process's GC percent is %d, want %d", step.live>>20, now, step.want)
		}
	}
	// GOGC given (TuneRuntime stops following): the target is left alone.
	tu.following = false
	debug.SetGCPercent(50)
	live = 700 << 20
	tu.afterGC()
	if now := debug.SetGCPercent(DefaultGCPercent); now != 50 {
		t.Errorf("not following: the GC percent became %d, want the 50 set", now)
	}
}

// TestGCTickRunsAfterEachCollection: armGCTick's function runs after
// collections, again and again (the follower of TuneRuntime), and the live
// heap reads as something.
func TestGCTickRunsAfterEachCollection(t *testing.T) {
	ticks := make(chan struct{}, 16)
	armGCTick(func() int {
		select {
		case ticks <- struct{}{}:
		default:
		}
		return 0
	})
	for i := range 3 {
		runtime.GC()
		select {
		case <-ticks:
		case <-time.After(10 * time.Second): // a hang guard, not a timing
			t.Fatalf("no tick after collection %d", i+1)
		}
	}
	if liveHeapBytes() == 0 {
		t.Error("live heap reads 0")
	}
}
