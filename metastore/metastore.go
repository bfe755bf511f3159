// Package metastore defines the metadata store: job create snapshots, the
// state journal and the table catalog. The manager writes a job's create
// snapshot to it durably and only then spawns the job actor; recovery reads
// it back. The embedded Pebble store implements it on one node
// (persistence); etcd implements it in cluster mode, where a quorum write
// is the durable write. metastoretest holds the conformance suite.
//
// Concurrency: a Store is safe for concurrent use. A job's journal has one
// writer at a time (its job actor, or the manager when the actor is gone);
// the store checks each entry's sequence number so that a second writer
// fails instead of forking the journal.
package metastore

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

var (
	// ErrNotFound: no such job or table.
	ErrNotFound = errors.New("metastore: not found")
	// ErrNameTaken: a job of that name exists.
	ErrNameTaken = errors.New("metastore: job name taken")
	// ErrTableExists: a table of that name exists with another schema.
	ErrTableExists = errors.New("metastore: table exists")
)

// JobState is what the metadata store holds of a job.
type JobState struct {
	Record *api.JobRecord
	// Last is the newest journal entry (nil only if the journal is empty,
	// which CreateJobs never leaves).
	Last *api.Transition
	// SinkProgress is the job's sink progress, set only by LoadAllJobs of
	// a metadata store that is also the embedded sink (the node's Pebble
	// store), which reads it in the same scan: a job respawned from it
	// need not read it again. The manager sets it empty for a job it has
	// just created: a new id has no progress in that store. A job uses it
	// only when its sink is that store; nil: read it from the sink.
	SinkProgress *api.SinkProgress
}

// NewJob is one job for CreateJobs: its record, its first journal entry
// (stored with seq 1; Seq must be 0 or 1) and, if the job creates its
// table, the table's schema.
type NewJob struct {
	Record   *api.JobRecord
	First    *api.Transition
	NewTable *api.TableSpec
}

// Check checks j's arguments as every Store's CreateJobs does before it
// reads the store: a record with an id and a name, a first transition of
// seq 0 or 1, a named table if one is given. It returns the transition to
// store: First with seq 1 (a copy if First has seq 0). Its errors read
// "create job ..."; the store puts its own prefix before them.
func (j NewJob) Check() (*api.Transition, error) {
	rec, first := j.Record, j.First
	switch {
	case rec == nil:
		return nil, errors.New("create job: nil record")
	case rec.GetId() == 0:
		return nil, errors.New("create job: id 0")
	case rec.GetName() == "":
		return nil, fmt.Errorf("create job %d: empty name", rec.GetId())
	case first == nil:
		return nil, fmt.Errorf("create job %q: nil first transition", rec.GetName())
	case first.GetSeq() > 1:
		return nil, fmt.Errorf("create job %q: first transition seq %d, want 1", rec.GetName(), first.GetSeq())
	case j.NewTable != nil && j.NewTable.GetName() == "":
		return nil, fmt.Errorf("create job %q: empty table name", rec.GetName())
	}
	if first.GetSeq() != 1 {
		first = proto.CloneOf(first)
		first.Seq = 1
	}
	return first, nil
}

// JobTransition is one journal entry of one job, for AppendTransitions.
type JobTransition struct {
	JobID uint64
	T     *api.Transition
}

// Store is the metadata store.
type Store interface {
	// LastJobID returns the largest job id written, 0 if none.
	LastJobID() (uint64, error)
	// CreateJobs writes every job that passes its checks durably, together,
	// and returns one error per job (nil: durable). A job whose name is
	// taken gets ErrNameTaken; one whose table exists with another schema
	// gets ErrTableExists.
	CreateJobs(jobs []NewJob) []error
	// Table returns a table's schema, or ErrNotFound.
	Table(name string) (*api.TableSpec, error)
	// CreateTable adds a table to the catalog; created is false when an
	// identical table exists, and ErrTableExists wraps a different one.
	CreateTable(spec *api.TableSpec) (created bool, err error)
	// Tables returns every table of the catalog, by name.
	Tables() ([]*api.TableSpec, error)
	// DropTable removes a table from the catalog durably (and, where the
	// store also holds the table's rows, the rows); ErrNotFound if there is
	// no such table.
	DropTable(name string) error
	// LoadAllJobs calls fn for every job, in id order.
	LoadAllJobs(fn func(st *JobState) error) error
	// LoadJob reads one job, or ErrNotFound. Its record and newest
	// transition are of one write (never half of a concurrent alter).
	LoadJob(id uint64) (*JobState, error)
	// Journal returns a job's transitions, oldest first.
	Journal(id uint64) ([]*api.Transition, error)
	// History returns a job's newest max transitions, oldest first.
	History(id uint64, max int) ([]*api.Transition, error)
	// AppendTransition journals t durably; t.Seq must follow the newest.
	AppendTransition(id uint64, t *api.Transition) error
	// AppendTransitions journals entries of many jobs in one durable write.
	AppendTransitions(ts []JobTransition) error
	// AlterJob replaces a job's snapshot with rec and journals t, in one
	// durable write; t.Seq must follow the newest.
	AlterJob(rec *api.JobRecord, t *api.Transition) error
	// DeleteJob removes a job's snapshot, journal and name; its table stays.
	DeleteJob(id uint64, name string) error
}
