package api

import (
	"fmt"
	"slices"
	"strings"
)

// Facts of the wire that both sides must agree on and that the protobuf
// messages cannot say: where a client sends its requests, how large a page
// is, which sort keys a listing takes. The node (package actors) enforces
// them; the client and the CLI check a request against them before sending
// it. Declared here only.

// ManagerName is the well-known actor name of a node's manager: a client
// addresses every request to (node address, ManagerName).
const ManagerName = "manager"

// Page sizes of ListJobsRequest.limit: 0 asks for DefaultListPage jobs; a
// node answers at most MaxListPage.
const (
	DefaultListPage = 1000
	MaxListPage     = 10000
)

// MaxScanPage is the most rows a node answers to one TableScanRequest
// (MaxScanPageBytes bounds the page's bytes, so it may hold fewer).
const MaxScanPage = 10000

// MaxListFilter is the longest ListJobsRequest.filter, in bytes.
const MaxListFilter = 1024

// ListSortKeys are the keys ListJobsRequest.sort takes ("" is id).
var ListSortKeys = []string{"id", "name", "state", "reason", "health", "lag", "rows_per_sec", "loaded_rows", "sink", "table"}

// ValidListSort checks a ListJobsRequest.sort key, naming the allowed ones.
func ValidListSort(key string) error {
	if key == "" || slices.Contains(ListSortKeys, key) {
		return nil
	}
	return fmt.Errorf("sort %q must be one of %s", key, strings.Join(ListSortKeys, ", "))
}

// MaxCommittedWaitMs bounds JobCommittedRequest.wait_ms, the long poll of a
// job's committed positions: well within a client's default time-out and
// a cluster member's forward of a request to the job's owner.
const MaxCommittedWaitMs = 5000

// MaxCommittedHistory bounds the commits a node keeps per job for
// JobCommittedRequest.history (the answer's commits): a watcher that
// asks again within that many commits misses none.
const MaxCommittedHistory = 64
