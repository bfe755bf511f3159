package persistence

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// TestCreateJobsBatch: one call, one synced batch; each job gets its own
// answer and a refused job leaves nothing behind.
func TestCreateJobsBatch(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s, err := Open(Options{Dir: "db", FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}
	tbl2 := &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_STRING}}}
	job := func(id uint64, name string, table *api.TableSpec) NewJob {
		return NewJob{Record: &api.JobRecord{Id: id, Name: name}, First: &api.Transition{To: api.JobState_NEED_SCHEDULE}, NewTable: table}
	}
	errs := s.CreateJobs([]NewJob{
		job(1, "a", tbl),
		job(2, "a", nil),  // name twice in one call
		job(3, "b", tbl2), // same table, another schema
		job(1, "c", nil),  // id twice
		job(4, "d", nil),  // fine
		{Record: nil},     // invalid
	})
	want := []bool{true, false, false, false, true, false}
	for i, ok := range want {
		if (errs[i] == nil) != ok {
			t.Fatalf("job %d: err = %v, want ok=%v", i, errs[i], ok)
		}
	}
	if !errors.Is(errs[1], ErrNameTaken) || !errors.Is(errs[2], ErrTableExists) {
		t.Fatalf("errors: %v, %v", errs[1], errs[2])
	}
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	s.Close()
	s2, err := Open(Options{Dir: "db", FS: clone})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	recs, err := s2.JobRecords()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].GetName() != "a" || recs[1].GetName() != "d" {
		t.Fatalf("durable jobs = %v, want a and d", recs)
	}
	if last, _ := s2.LastJobID(); last != 4 {
		t.Fatalf("last job id = %d, want 4", last)
	}
	if _, err := s2.LoadJob(3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused job 3 left something: %v", err)
	}
}
