package etcdmeta

import (
	"fmt"
	"strconv"
	"strings"
)

// Keys spells the keys of one cluster's metadata under its prefix
// (Options.Prefix, ending in "/"): the layout in the package doc. Every
// key of the layout, the store's and package cluster's (membership, the
// leader, assignments), is built here and nowhere else.
type Keys struct{ Prefix string }

// ID spells a job id or a journal seq as a key part: 20 zero-padded
// decimal digits, so that byte order is numeric order.
func ID(id uint64) string { return fmt.Sprintf("%020d", id) }

// ParseID returns the id that key holds under prefix (Records, Heads or
// Assignments), and whether key is one.
func ParseID(key, prefix string) (uint64, bool) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	return id, err == nil
}

// LastJobID is the greatest job id CreateJobs wrote.
func (k Keys) LastJobID() string { return k.Prefix + "meta/last_job_id" }

// NextJobID is the next id AllocJobIDs hands out.
func (k Keys) NextJobID() string { return k.Prefix + "meta/next_job_id" }

// Name is the name index entry of a job.
func (k Keys) Name(job string) string { return k.Prefix + "name/" + job }

// Records is the prefix of the job records.
func (k Keys) Records() string { return k.Prefix + "rec/" }

// Record is a job's record.
func (k Keys) Record(id uint64) string { return k.Records() + ID(id) }

// Heads is the prefix of the journal heads.
func (k Keys) Heads() string { return k.Prefix + "head/" }

// Head is a job's newest transition.
func (k Keys) Head(id uint64) string { return k.Heads() + ID(id) }

// Log is the prefix of a job's journal.
func (k Keys) Log(id uint64) string { return k.Prefix + "log/" + ID(id) + "/" }

// LogEntry is one transition of a job's journal.
func (k Keys) LogEntry(id, seq uint64) string { return k.Log(id) + ID(seq) }

// Tables is the prefix of the table catalog.
func (k Keys) Tables() string { return k.Prefix + "table/" }

// Table is one table of the catalog.
func (k Keys) Table(name string) string { return k.Tables() + name }

// Members is the prefix of the live members' records (package cluster).
func (k Keys) Members() string { return k.Prefix + "members/" }

// Member is one member's record, under its lease.
func (k Keys) Member(name string) string { return k.Members() + name }

// Verifier holds the verifier of the members' token (package cluster).
func (k Keys) Verifier() string { return k.Prefix + "auth/verifier" }

// Leader is the prefix of the leader election (concurrency.Election).
func (k Keys) Leader() string { return k.Prefix + "leader/" }

// Assignments is the prefix of the job assignments the leader writes.
func (k Keys) Assignments() string { return k.Prefix + "assign/" }

// Assignment is a job's owner; its ModRevision is the job's epoch.
func (k Keys) Assignment(id uint64) string { return k.Assignments() + ID(id) }
