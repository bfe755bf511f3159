// Package testdeps decides what a test does when something it needs from
// the machine is missing: a server or program (PostgreSQL, etcd,
// kinesalite, Chromium, kcat, the mysql client) or a capability (mounting a
// tmpfs, an address beyond loopback). No test passes by skipping: the test
// fails, naming what to install, unless the variable of that family,
// LOADNODE_SKIP_<FAMILY>=1, says to skip it. `make test` installs
// everything (`make deps`) and sets none of the variables.
//
// A variable only excuses an absence: where the program is present, the
// tests that need it run whatever the variable says.
//
// The package has no state; its functions may be called from any
// goroutine that may call the TB's methods.
package testdeps

import (
	"fmt"
	"os"
)

// Family is a group of tests that need the same thing from the machine.
// Its value is the variable that, set to 1, lets those tests skip when the
// thing is missing.
type Family string

// The families. docs/testing.md lists them with what installs each.
const (
	// Postgres: the PostgreSQL server binaries (internal/pgtest).
	Postgres Family = "LOADNODE_SKIP_POSTGRES"
	// Etcd: the etcd server (internal/etcdtest).
	Etcd Family = "LOADNODE_SKIP_ETCD"
	// Kinesis: node and kinesalite's node_modules
	// (sources/kinesis/kinesistest).
	Kinesis Family = "LOADNODE_SKIP_KINESIS"
	// Browser: Chromium (tests/e2e.TestConsoleInChromium).
	Browser Family = "LOADNODE_SKIP_BROWSER"
	// Kcat: kcat, a librdkafka client (tests/e2e, tests/bench).
	Kcat Family = "LOADNODE_SKIP_KCAT"
	// MySQL: the mysql client (Debian's mariadb-client; tests/e2e's
	// MySQL-protocol session).
	MySQL Family = "LOADNODE_SKIP_MYSQL"
	// Tmpfs: mounting a tmpfs, which needs root (tests/e2e's disk-full
	// tests).
	Tmpfs Family = "LOADNODE_SKIP_TMPFS"
	// Network: an IP address of the machine beyond loopback (client's
	// plaintext-token test).
	Network Family = "LOADNODE_SKIP_NETWORK"
	// DorisCorpus: the Doris conformance corpus, at
	// ../shared/conformance/doris-corpus beside the repository or
	// $LOADNODE_DORIS_CORPUS (tests/conformance).
	DorisCorpus Family = "LOADNODE_SKIP_DORIS_CORPUS"
)

// Var is the family's variable.
func (f Family) Var() string { return string(f) }

// Skips reports whether the family's variable is 1.
func (f Family) Skips() bool { return os.Getenv(string(f)) == "1" }

// TB is the part of testing.TB the package uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
}

// Require does nothing when missing is nil. Otherwise missing says what of
// family f is absent and how to get it (`make deps` installs the
// programs): Require skips t when the family's variable is 1, and fails t
// otherwise.
func Require(t TB, f Family, missing error) {
	t.Helper()
	if missing == nil {
		return
	}
	if f.Skips() {
		t.Skipf("%v (skipped: %s=1)", missing, f)
	}
	t.Fatalf("%s", failure(f, missing))
}

// LeaveOut is Require for a part of t: it reports whether to leave out the
// part that needs family f. With missing nil it returns false; otherwise
// it logs and returns true when the family's variable is 1, and fails t
// otherwise.
func LeaveOut(t TB, f Family, missing error) bool {
	t.Helper()
	if missing == nil {
		return false
	}
	if f.Skips() {
		t.Logf("%v (left out: %s=1)", missing, f)
		return true
	}
	t.Fatalf("%s", failure(f, missing))
	return true
}

// failure is the message of a failing test: missing says what to install
// (or how to run the test); the variable is the other way out.
func failure(f Family, missing error) string {
	return fmt.Sprintf("%v (or set %s=1 to skip the tests that need it)", missing, f)
}
