package node

import (
	"runtime/debug"
	"strconv"
)

// DefaultGCPercent is the Go garbage collector's target (GOGC) a loadnode
// process runs with unless its environment sets GOGC.
//
// Go's default, 100, starts a collection each time the heap has grown by
// as much as survived the last one. A node's live heap is mostly its jobs
// (about 50 KiB each when idle), which every collection marks again: with
// 10,000 jobs a cluster member spent 15-20% of its CPU in the collector
// while creating jobs. At 200 collections come half as often, for a heap
// up to three times the live one instead of two (the cluster bench: 47-49
// KiB of RSS per active job at 100, 70-71 KiB at 200; docs/operations.md).
const DefaultGCPercent = 200

// TuneRuntime sets the process's GC target to DefaultGCPercent unless
// getenv("GOGC") names one (GOGC=off included). It returns the target now
// in force (-1: off). serve, dev and the bench call it once at start.
func TuneRuntime(getenv func(string) string) int {
	if v := getenv("GOGC"); v != "" {
		if v == "off" {
			return -1
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		// The runtime ignores a GOGC it cannot parse (100); so do we.
		return 100
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
