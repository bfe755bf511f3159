// Package ledger is the exactly-once checker of loadnode's black-box tests
// (tests/e2e, tests/chaos).
//
// A Ledger records, from the broker's produce acknowledgements, which
// payload (a writer id "w" and the writer's sequence number "seq") sits at
// which position; Check compares a loaded table, a job's progress and its
// loaded-rows statistic against it and counts lost, duplicated,
// inconsistent and torn rows, order violations, and a loaded-rows statistic
// that disagrees with the rows (a batch committed twice cannot hide behind
// rows that overwrite themselves at their position keys). A
// ProgressTracker counts progress regressions across restarts and faults.
// A Producer writes ledger records (JSON {"w","seq","pad"}) from writers
// pinned to partitions; ReadLog reads a topic back so that records whose
// acknowledgement was lost are reconciled into the ledger.
//
// Concurrency: a Ledger and a ProgressTracker are safe for concurrent use;
// Check is a pure function; a Producer's Produce is called from one
// goroutine at a time.
package ledger
