package persistence

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/metastore/metastoretest"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sink/sinktest"
)

// seamErrorRowsKept is MaxErrorRowsKept of the sink suite's stores.
const seamErrorRowsKept = 5

// openCrashable opens a Store on a crashable in-memory filesystem and
// returns it with crash, which simulates a power loss of the newest Store:
// it opens a Store on a crash clone of its filesystem (only synced data
// survives) and closes the one before.
func openCrashable(t *testing.T, opts Options) (*Store, func(t *testing.T) *Store) {
	t.Helper()
	fs := vfs.NewCrashableMem()
	cur := openStore(t, fs, opts)
	return cur, func(t *testing.T) *Store {
		t.Helper()
		clone := fs.CrashClone(vfs.CrashCloneCfg{})
		_ = cur.Close()
		fs, cur = clone, openStore(t, clone, opts)
		return cur
	}
}

func TestSinkConformance(t *testing.T) {
	sinktest.Run(t, sinktest.Harness{
		Open: func(t *testing.T) (sink.Sink, func(*testing.T) sink.Sink) {
			s, crash := openCrashable(t, Options{MaxErrorRowsKept: seamErrorRowsKept})
			return s.Sink(), func(t *testing.T) sink.Sink { return crash(t).Sink() }
		},
		// The embedded sink's catalog is the metadata store: a job and its
		// table exist there before the job loads.
		Setup: func(t *testing.T, k sink.Sink, job uint64, table *api.TableSpec) {
			t.Helper()
			name := fmt.Sprintf("sinktest-%d", job)
			rec := &api.JobRecord{Id: job, Name: name, Spec: &api.JobSpec{Name: name, Table: table}}
			if err := k.(*Sink).s.CreateJob(rec, createdTransition(), table); err != nil {
				t.Fatalf("CreateJob: %v", err)
			}
		},
		MaxErrorRowsKept: seamErrorRowsKept,
	})
}

func TestMetaConformance(t *testing.T) {
	metastoretest.Run(t, metastoretest.Harness{
		Open: func(t *testing.T) (metastore.Store, func(*testing.T) metastore.Store) {
			s, crash := openCrashable(t, Options{})
			return s.Meta(), func(t *testing.T) metastore.Store { return crash(t).Meta() }
		},
	})
}
