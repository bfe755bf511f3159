// Package chaos is loadnode's chaos suite: it proves exactly-once loading
// under faults and measures it.
//
// The non-test files hold the two reusable halves. A producer Ledger
// records, from the broker's produce acknowledgements, which payload (a
// writer id "w" and a per-writer sequence number "seq") sits at which
// position; Check compares a loaded table, a job's progress and its
// statistics against it and counts lost, duplicated, inconsistent and torn
// rows, order violations and a loaded-rows statistic that disagrees with
// the rows (a batch committed twice). A ProgressTracker counts progress
// regressions across restarts and faults; JobsInvariant checks the job
// registry after a restart.
//
// The tests (TestChaosInProcess, TestChaosProcess) inject the faults; see
// README.md for what each injects and for the long run.
//
// Concurrency: a Ledger and a ProgressTracker are safe for concurrent use;
// Check is a pure function.
package chaos
