// Package chaos is loadnode's chaos suite: it proves exactly-once loading
// under faults and measures it.
//
// The exactly-once ledger and checker are internal/ledger's, the node
// processes internal/testnode's. What is the suite's own: a Registry of
// create outcomes checked against the job listing after every restart, a
// StallWatch for jobs RUNNING without tasks, and the Summary of a run.
//
// The tests (TestChaosInProcess, TestChaosProcess, and TestChaosCluster,
// three cluster-mode members on a real etcd) inject the faults; see
// README.md for what each injects and for the long run.
//
// Concurrency: a Registry and a StallWatch are safe for concurrent use.
package chaos
