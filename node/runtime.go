package node

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// LoadGCPercent is the Go garbage collector's target (GOGC) a loadnode
// process runs with while its live heap is small (under loadHeapBytes),
// unless its environment sets GOGC.
//
// A loading node allocates its input as fast as it reads it (the fetched
// records, their decompressed bytes, each batch's slots and rows: about
// 450 MB per million json records of 200 bytes) while little of it
// survives, so with a small live heap it collected over ten times a second
// (the end-to-end bench: a heap of 100-300 MB live). At 400 it collects
// half as often as at 200 for a heap up to five times the live one: at most
// about 1 GiB below loadHeapBytes. Measured alternately with 200, three
// pairs on 2026-12-05 (`loadnode bench`, json, 8 partitions, 1,000,000
// records): 0.85-0.88 CPU s per million records against 0.91-1.03, with
// 0.004-0.018 page faults per record against 0.045-0.063; the cluster
// bench (10,000 jobs) 93 KiB of RSS per active job against 77 (the
// target is 150); 100,000 idle jobs 13.5 KiB each (they run at 100).
const LoadGCPercent = 400

// DefaultGCPercent is the target once the live heap passed midHeapBytes,
// while it is under largeHeapBytes. A node's live heap is then mostly its
// jobs (about 50 KiB each when active), which every collection marks
// again: with 10,000 jobs a cluster member spent 15-20% of its CPU in the
// collector while creating jobs at Go's default of 100. At 200 collections
// come half as often, for a heap up to three times the live one.
const DefaultGCPercent = 200

// LargeHeapGCPercent is the target once the live heap passed
// largeHeapBytes: a node that big is one of many idle jobs (100,000 idle
// jobs hold about 650 MiB: 1.3 GiB of RSS at 100), which allocate little, so collections are rare
// at any target, and the extra heap of 200 would be memory alone: 16.8 KiB
// of RSS per idle job at 100,000 jobs against 13.8 at 100 (the bench's
// scale scenario; the target is 16).
const LargeHeapGCPercent = 100

// The live heap (after a collection) bounds of the targets: under
// loadHeapBytes LoadGCPercent; over midHeapBytes DefaultGCPercent (and
// under smallHeapBytes, coming down from LargeHeapGCPercent); over
// largeHeapBytes LargeHeapGCPercent. Between loadHeapBytes and midHeapBytes,
// and between smallHeapBytes and largeHeapBytes, the target in force stays:
// the gaps keep a heap near one bound from switching at every collection.
const (
	loadHeapBytes  = 192 << 20
	midHeapBytes   = 256 << 20
	smallHeapBytes = 384 << 20
	largeHeapBytes = 512 << 20
)

// gcPercentFor is the target for a live heap of live bytes when the target
// in force is cur.
func gcPercentFor(live uint64, cur int) int {
	switch {
	case live > largeHeapBytes:
		return LargeHeapGCPercent
	case live < loadHeapBytes:
		return LoadGCPercent
	case live > midHeapBytes && live < smallHeapBytes:
		return DefaultGCPercent
	case live <= midHeapBytes && cur == LargeHeapGCPercent:
		return DefaultGCPercent // down from a large heap: 100 holds only above smallHeapBytes
	default:
		return cur
	}
}

// TuneRuntime sets the process's GC target to LoadGCPercent (a starting
// process's live heap is small), and has it follow the live heap after
// every collection (gcPercentFor), unless
// getenv("GOGC") names one (GOGC=off included): that one is left to the
// runtime. It returns the target now in force (-1: off). serve, dev and
// the bench call it once at start; later calls set the target again but
// start no second follower. It also gives the runtime a soft memory limit
// of 90% of the process's cgroup memory limit, if it has one and
// getenv("GOMEMLIMIT") names none (tuneMemoryLimit).
func TuneRuntime(getenv func(string) string) int {
	limit, from := tuneMemoryLimit(getenv, os.ReadFile, debug.SetMemoryLimit)
	memLimit.Store(&memoryLimit{bytes: limit, from: from})
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
	gcTuner.cur, gcTuner.following = LoadGCPercent, true
	debug.SetGCPercent(LoadGCPercent)
	gcTuner.mu.Unlock()
	gcTuner.once.Do(func() { armGCTick(gcTuner.afterGC) })
	return LoadGCPercent
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
