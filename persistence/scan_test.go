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
