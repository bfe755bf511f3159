package persistence

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

func TestScanRowsAfterPages(t *testing.T) {
	s, err := Open(Options{Dir: "db", FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tbl := &api.TableSpec{Name: "pages", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}
	rec := &api.JobRecord{Id: 1, Name: "j", Spec: &api.JobSpec{Name: "j", Table: tbl}}
	if err := s.CreateJob(rec, &api.Transition{Seq: 1, To: api.JobState_NEED_SCHEDULE}, tbl); err != nil {
		t.Fatal(err)
	}
	if err := s.InitProgress(1, map[int32]int64{0: 0}); err != nil {
		t.Fatal(err)
	}
	const n = 25
	rows := make([]KV, n)
	for i := range rows {
		k := binary.BigEndian.AppendUint64(nil, uint64(i))
		rows[i] = KV{Key: k, Value: k}
	}
	if err := s.CommitBatch(&Commit{JobID: 1, Table: "pages", Rows: rows, Ranges: []Range{{Partition: 0, From: 0, To: n}}, Stats: &api.JobStats{LoadedRows: n}}); err != nil {
		t.Fatal(err)
	}
	var after []byte
	seen := 0
	for pages := 0; ; pages++ {
		got := 0
		err := s.ScanRowsAfter("pages", after, 10, func(k, _ []byte) error {
			if v := binary.BigEndian.Uint64(k); v != uint64(seen) {
				t.Fatalf("row %d: got key %d", seen, v)
			}
			seen++
			got++
			after = k
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got == 0 {
			break
		}
		if pages > 5 {
			t.Fatal("too many pages")
		}
	}
	if seen != n {
		t.Fatalf("paged through %d rows, want %d", seen, n)
	}
}

func TestCreateTable(t *testing.T) {
	s, err := Open(Options{Dir: "db", FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tbl := &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}
	if created, err := s.CreateTable(tbl); err != nil || !created {
		t.Fatalf("create: %v, %v", created, err)
	}
	if created, err := s.CreateTable(tbl); err != nil || created {
		t.Fatalf("identical again: %v, %v", created, err)
	}
	other := &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_STRING}}}
	if _, err := s.CreateTable(other); !errors.Is(err, ErrTableExists) {
		t.Fatalf("different schema: %v", err)
	}
	got, err := s.Table("t")
	if err != nil || got.Columns[0].Type != api.ColumnType_INT64 {
		t.Fatalf("stored %v, %v", got, err)
	}
}

func TestDeleteJob(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s, err := Open(Options{Dir: "db", FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	tbl := &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}
	for id, name := range map[uint64]string{1: "a", 2: "b"} {
		if err := s.CreateJob(&api.JobRecord{Id: id, Name: name}, &api.Transition{To: api.JobState_NEED_SCHEDULE}, tbl); err != nil {
			t.Fatal(err)
		}
		if err := s.InitProgress(id, map[int32]int64{0: 0}); err != nil {
			t.Fatal(err)
		}
		if err := s.CommitBatch(&Commit{JobID: id, Table: "t", Rows: []KV{{Key: []byte{byte(id)}, Value: []byte("x")}},
			Ranges: []Range{{Partition: 0, From: 0, To: 1}}, Stats: &api.JobStats{LoadedRows: 1},
			ErrorRows: []*api.ErrorRow{{Offset: 0, Reason: "r"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteJob(1, "b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete with the wrong name: %v", err)
	}
	if err := s.DeleteJob(1, "a"); err != nil {
		t.Fatal(err)
	}
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	s.Close()
	s, err = Open(Options{Dir: "db", FS: clone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.LoadJob(1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted job loads: %v", err)
	}
	if rows, _ := s.ErrorRows(1, 10); len(rows) != 0 {
		t.Fatalf("deleted job's error rows remain: %v", rows)
	}
	if st, err := s.LoadJob(2); err != nil || st.Progress[0] != 1 {
		t.Fatalf("the other job was disturbed: %v %v", st, err)
	}
	if n, _ := s.CountRows("t"); n != 2 {
		t.Fatalf("table rows = %d, want 2 (the table stays)", n)
	}
	if err := s.CreateJob(&api.JobRecord{Id: 3, Name: "a"}, &api.Transition{To: api.JobState_NEED_SCHEDULE}, nil); err != nil {
		t.Fatalf("the name is not free after delete: %v", err)
	}
}

func TestLastTransition(t *testing.T) {
	s, err := Open(Options{Dir: "db", FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.LastTransition(9); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
	if err := s.CreateJob(&api.JobRecord{Id: 1, Name: "a"}, &api.Transition{To: api.JobState_NEED_SCHEDULE}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendTransition(1, &api.Transition{Seq: 2, To: api.JobState_PAUSED, Reason: api.Reason_USER_PAUSE}); err != nil {
		t.Fatal(err)
	}
	if last, err := s.LastTransition(1); err != nil || last.Seq != 2 || last.Reason != api.Reason_USER_PAUSE {
		t.Fatalf("last = %v, %v", last, err)
	}
}
