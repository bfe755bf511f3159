// Package bench is loadnode's benchmark harness (`loadnode bench`): it runs,
// in one process run and on the same data, the raw franz-go consumer ceiling,
// a plain kcat consume (a child process, when kcat is installed), real
// loadnode jobs end to end, the Pebble store ceiling, job create latency
// next to a bare synced Pebble commit, and the scale of idle jobs, and reports
// them side by side (text table, JSON, SVG chart).
//
// The broker is a separate `loadnode kfake` process by default, so that it
// does not share the measured process's CPU; Options.Brokers points at a real
// cluster instead. The end-to-end node runs in this process (so that its
// allocations can be counted); the scale scenario runs `loadnode serve` as a
// child process (internal/testnode, on port 0, its address read back from
// --addr-file) so that its resident memory is its own.
//
// Concurrency: Run is called from one goroutine and runs the scenarios one
// after the other; nothing here is shared between runs.
package bench
