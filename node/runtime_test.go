package node

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestTuneRuntime: without GOGC the process starts at LoadGCPercent; a
// GOGC in the environment is left to the runtime.
func TestTuneRuntime(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := TuneRuntime(getenv); got != LoadGCPercent {
		t.Errorf("TuneRuntime without GOGC = %d, want %d", got, LoadGCPercent)
	}
	if now := debug.SetGCPercent(100); now != LoadGCPercent {
		t.Errorf("GC percent after TuneRuntime without GOGC: %d, want %d", now, LoadGCPercent)
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

// TestGCPercentFor: 400 while the live heap is small, 200 past
// midHeapBytes, 100 once it passed largeHeapBytes, and no switch inside
// the gaps between the bounds.
func TestGCPercentFor(t *testing.T) {
	const load, def, large = LoadGCPercent, DefaultGCPercent, LargeHeapGCPercent
	for _, c := range []struct {
		live      uint64
		cur, want int
	}{
		{0, large, load},
		{0, def, load},
		{100 << 20, load, load},
		{loadHeapBytes - 1, def, load},
		{loadHeapBytes, def, def},
		{loadHeapBytes, load, load},
		{midHeapBytes, load, load},
		{midHeapBytes, def, def},
		{midHeapBytes, large, def},
		{midHeapBytes + 1, load, def},
		{300 << 20, load, def},
		{smallHeapBytes - 1, large, def},
		{smallHeapBytes, large, large},
		{450 << 20, def, def},
		{450 << 20, load, load}, // not met: the heap passes midHeapBytes at some collection first
		{450 << 20, large, large},
		{largeHeapBytes, def, def},
		{largeHeapBytes + 1, def, large},
		{largeHeapBytes + 1, load, large},
		{700 << 20, large, large},
	} {
		if got := gcPercentFor(c.live, c.cur); got != c.want {
			t.Errorf("gcPercentFor(%d MiB, %d) = %d, want %d", c.live>>20, c.cur, got, c.want)
		}
	}
}

// TestHeapTunerFollowsLiveHeap: after each collection the process's GC
// target follows the live heap: 200 past midHeapBytes, down to 100 past
// largeHeapBytes (100,000 idle jobs), back to 200 under smallHeapBytes and
// to 400 under loadHeapBytes.
func TestHeapTunerFollowsLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(LoadGCPercent)
	defer debug.SetGCPercent(old)
	var live uint64
	tu := &heapTuner{cur: LoadGCPercent, following: true, liveHeap: func() uint64 { return live }}
	for _, step := range []struct {
		live uint64
		want int
	}{
		{64 << 20, LoadGCPercent},
		{220 << 20, LoadGCPercent},
		{300 << 20, DefaultGCPercent},
		{220 << 20, DefaultGCPercent},
		{700 << 20, LargeHeapGCPercent},
		{450 << 20, LargeHeapGCPercent},
		{300 << 20, DefaultGCPercent},
		{450 << 20, DefaultGCPercent},
		{100 << 20, LoadGCPercent},
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
