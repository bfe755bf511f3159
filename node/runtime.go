package node

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// DefaultGCPercent is the Go garbage collector's target (GOGC) a loadnode
// process runs with, while its live heap is small, unless its environment
// sets GOGC.
//
// Go's default, 100, starts a collection each time the heap has grown by
// as much as survived the last one. A node's live heap is mostly its jobs
// (about 50 KiB each when active), which every collection marks again:
// with 10,000 jobs a cluster member spent 15-20% of its CPU in the
// collector while creating jobs. At 200 collections come half as often,
// for a heap up to three times the live one instead of two (the cluster
// bench: 47-49 KiB of RSS per active job at 100, 63-73 KiB at 200;
// docs/operations.md).
const DefaultGCPercent = 200

// LargeHeapGCPercent is the target once the live heap passed
// largeHeapBytes: a node that big is one of many idle jobs (100,000 idle
// jobs hold about 650 MiB: 1.3 GiB of RSS at 100), which allocate little, so collections are rare
// at any target, and the extra heap of 200 would be memory alone: 16.8 KiB
// of RSS per idle job at 100,000 jobs against 13.8 at 100 (the bench's
// scale scenario; the target is 16).
const LargeHeapGCPercent = 100

// largeHeapBytes and smallHeapBytes are the live heap (after a collection)
// above which the target drops to LargeHeapGCPercent and below which it
// goes back to DefaultGCPercent; the gap keeps a heap near one bound from
// switching at every collection. A loading node's live heap (memtables,
// batch buffers; Pebble's memory is on the Go heap in a CGO_ENABLED=0
// build) stays under 300 MiB in the end-to-end bench.
const (
	largeHeapBytes = 512 << 20
	smallHeapBytes = 384 << 20
)

// gcPercentFor is the target for a live heap of live bytes when the target
// in force is cur.
func gcPercentFor(live uint64, cur int) int {
	switch {
	case live > largeHeapBytes:
		return LargeHeapGCPercent
	case live < smallHeapBytes:
		return DefaultGCPercent
	default:
		return cur
	}
}

// TuneRuntime sets the process's GC target to DefaultGCPercent, and has it
// follow the live heap after every collection (gcPercentFor), unless
// getenv("GOGC") names one (GOGC=off included): that one is left to the
// runtime. It returns the target now in force (-1: off). serve, dev and
// the bench call it once at start; later calls set the target again but
// start no second follower.
func TuneRuntime(getenv func(string) string) int {
	if v := getenv("GOGC"); v != "" {
		gcTuner.mu.Lock()
		gcTuner.following = false
		gcTuner.mu.Unlock()
		if v == "off" {
			return -1
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		// The runtime ignores a GOGC it cannot parse (100); so do we.
		return 100
	}
	gcTuner.mu.Lock()
	gcTuner.cur, gcTuner.following = DefaultGCPercent, true
	debug.SetGCPercent(DefaultGCPercent)
	gcTuner.mu.Unlock()
	gcTuner.once.Do(func() { armGCTick(gcTuner.afterGC) })
	return DefaultGCPercent
}

// gcTuner follows the live heap for TuneRuntime.
var gcTuner = &heapTuner{liveHeap: liveHeapBytes}

type heapTuner struct {
	once     sync.Once
	liveHeap func() uint64
	mu       sync.Mutex
	cur      int
	// following: TuneRuntime set the target (no GOGC); a GOGC given
	// later is left alone too.
	following bool
}

// afterGC sets the target the live heap calls for, if it changed, and
// returns it; it changes nothing unless t is following.
func (t *heapTuner) afterGC() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.following {
		return t.cur
	}
	if next := gcPercentFor(t.liveHeap(), t.cur); next != t.cur {
		t.cur = next
		debug.SetGCPercent(next)
	}
	return t.cur
}

// liveHeapBytes is the heap the last collection marked live.
func liveHeapBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// gcTick is an object nothing refers to: its finalizer runs after the
// collection that found it unreachable. It is 16 bytes: a smaller object
// without pointers may share a block of the runtime's tiny allocator, and
// its finalizer might never run.
type gcTick struct{ _ [16]byte }

// armGCTick calls fn after every garbage collection from now on, on the
// runtime's finalizer goroutine (fn must be quick and must not block).
// The next tick exists before fn runs, so a collection that fn's effects
// start finds it.
func armGCTick(fn func() int) {
	runtime.SetFinalizer(&gcTick{}, func(*gcTick) {
		armGCTick(fn)
		fn()
	})
}
