package persistence

import (
	"errors"
	"testing"

	"github.com/loadnode/loadnode/api"
)

func TestTablesAndDrop(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []string{"b", "a", "a_b", "c"} {
		if _, err := s.CreateTable(&api.TableSpec{Name: n, Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Rows sort before their table's schema key: the listing must not
	// skip a table that has rows.
	b := s.db.NewBatch()
	_ = b.Set(append(tableRowPrefix("a"), 1), []byte("row"), nil)
	_ = b.Set(append(tableRowPrefix("b"), 1), []byte("row"), nil)
	if err := s.commit(b, "rows"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range got {
		names = append(names, g.GetName())
	}
	if len(names) != 4 || names[0] != "a" || names[1] != "a_b" || names[2] != "b" || names[3] != "c" {
		t.Fatalf("tables %v", names)
	}
	if err := s.DropTable("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Table("b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("dropped table: %v", err)
	}
	if err := s.DropTable("b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("drop twice: %v", err)
	}
	if got, _ := s.Tables(); len(got) != 3 {
		t.Fatalf("after the drop: %d tables", len(got))
	}
	if _, ok, err := s.get(append(tableRowPrefix("b"), 1)); ok || err != nil {
		t.Fatalf("a row of the dropped table is still there (%v)", err)
	}
	if _, ok, _ := s.get(append(tableRowPrefix("a"), 1)); !ok {
		t.Fatal("the drop of b took a row of a")
	}
}
