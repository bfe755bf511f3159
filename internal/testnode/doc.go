// Package testnode runs `loadnode serve` as a child process for the
// black-box tests (tests/e2e, tests/chaos) and the benchmark harness
// (tests/bench), like nats-server's RunServer: one way to build the binary,
// start a node, learn its addresses, kill it, restart it and dial it.
//
// A node listens on 127.0.0.1:0 and reports the ports it bound through
// `serve --addr-file` (written once the node has recovered and answers), so
// no port is ever picked by one process and bound by another. Its stdout and
// stderr go into a LogRing that a test dumps when it fails. Waiting is a
// poll with a deadline or a channel, never a bare sleep.
//
// The package does not import "testing" (tests/bench runs inside the
// loadnode binary): Launch and the Proc methods return errors, and Start,
// Client and StartBroker take a TB (which *testing.T satisfies), fail the
// test and register cleanups.
//
// Concurrency: a Proc's methods are safe for concurrent use; Restart
// replaces the process under a lock, and Addr, AdminAddr and Dial reach the
// current one. A Broker's Stop and Restart are called from one goroutine.
package testnode
