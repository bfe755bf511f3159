package table

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// flexTable is test_routine_load_flex_update_default's table: UNIQUE KEY
// (id), v2 DEFAULT 9876, v3 NOT NULL, v4 NOT NULL DEFAULT 1234, with
// Doris's enable_unique_key_skip_bitmap_column.
func flexTable(t *testing.T, skip bool) *Schema {
	t.Helper()
	s, err := NewSchema(&api.TableSpec{Name: "flex", Model: api.TableModel_UNIQUE, KeyColumns: []string{"id"}, SkipBitmapColumn: skip,
		Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT32, NotNull: true},
			{Name: "v1", Type: api.ColumnType_INT64},
			{Name: "v2", Type: api.ColumnType_INT64, DefaultValue: proto.String("9876")},
			{Name: "v3", Type: api.ColumnType_INT64, NotNull: true},
			{Name: "v4", Type: api.ColumnType_INT64, NotNull: true, DefaultValue: proto.String("1234")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFlexiblePartialUpdate: with UPDATE_FLEXIBLE_COLUMNS each JSON row
// names the columns it has a key for; a stored key keeps the others, a
// new key takes their defaults (NULL without one), as Doris's
// select_after_flex_update2; a row without its key column is an error
// row, and a new key that leaves a NOT NULL column without a default
// empty is refused naming it.
func TestFlexiblePartialUpdate(t *testing.T) {
	s := flexTable(t, true)
	spec := &api.JobSpec{Format: "json", UniqueKeyUpdateMode: "update_flexible_columns"}
	u, err := UpdateOf(s, spec)
	if err != nil || u == nil || !u.Flexible {
		t.Fatalf("UpdateOf = %+v, %v; want a flexible update", u, err)
	}
	p, err := NewParser(s, FormatOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	stored := map[int64]*RowState{}
	for _, r := range [][]int64{{1, 10, 20, 30, 40}, {2, 100, 200, 300, 400}, {3, 1000, 2000, 3000, 4000}} {
		vals := make([]Value, len(r))
		for i, v := range r {
			vals[i] = Value{Int: v}
		}
		stored[r[0]] = &RowState{Vals: vals}
	}
	for _, rec := range []string{`{"id": 1, "v1": 11}`, `{"id": 2, "v2": 222, "v3": 333}`, `{"id": 4, "v3": 4444}`} {
		vals, err := p.Parse([]byte(rec), nil)
		if err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		st, err := s.Merge(stored[vals[0].Int], vals, Pos{}, false, u, p.Named())
		if err != nil {
			t.Fatalf("%s: Merge: %v", rec, err)
		}
		stored[vals[0].Int] = st
	}
	want := map[int64]string{1: "1 11 20 30 40", 2: "2 100 222 333 400", 3: "3 1000 2000 3000 4000", 4: "4 NULL 9876 4444 1234"}
	for id, w := range want {
		var got []string
		for _, v := range stored[id].Vals {
			if v.Null {
				got = append(got, "NULL")
			} else {
				got = append(got, strconv.FormatInt(v.Int, 10))
			}
		}
		if g := strings.Join(got, " "); g != w {
			t.Errorf("key %d: %s, want %s", id, g, w)
		}
	}
	if _, err := p.Parse([]byte(`{"v1": 5}`), nil); err == nil || !strings.Contains(err.Error(), "key column") {
		t.Errorf("a row without its key column: %v, want an error row naming the key", err)
	}
	vals, err := p.Parse([]byte(`{"id": 9, "v1": 5}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var nk *NewKeyError
	if _, err := s.Merge(nil, vals, Pos{}, false, u, p.Named()); !errors.As(err, &nk) || nk.Column != "v3" {
		t.Errorf("a new key without NOT NULL v3: %v, want a NewKeyError naming v3", err)
	}
}

// TestFlexibleRefused: flexible partial updates are refused by name where
// Doris refuses them: without the skip-bitmap table property, csv, a
// COLUMNS list, together with partial_columns; an unknown mode too.
func TestFlexibleRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		skip bool
		spec *api.JobSpec
		want string
	}{
		{"no skip bitmap", false, &api.JobSpec{Format: "json", UniqueKeyUpdateMode: UpdateFlexible}, "enable_unique_key_skip_bitmap_column"},
		{"csv", true, &api.JobSpec{Format: "csv", UniqueKeyUpdateMode: UpdateFlexible}, "json"},
		{"columns", true, &api.JobSpec{Format: "json", ColumnsMapping: []string{"id", "v3"}, UniqueKeyUpdateMode: UpdateFlexible}, "COLUMNS"},
		{"with partial_columns", true, &api.JobSpec{Format: "json", PartialColumns: true, UniqueKeyUpdateMode: UpdateFlexible}, "partial_columns"},
		{"unknown", true, &api.JobSpec{Format: "json", UniqueKeyUpdateMode: "SOMETIMES"}, "want UPSERT"},
	} {
		_, err := UpdateOf(flexTable(t, c.skip), c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
	// UPDATE_FIXED_COLUMNS is partial_columns.
	u, err := UpdateOf(flexTable(t, false), &api.JobSpec{Format: "json", ColumnsMapping: []string{"id", "v3"}, UniqueKeyUpdateMode: UpdateFixed})
	if err != nil || u == nil || u.Columns == nil || !u.Columns[3] || u.Columns[1] {
		t.Errorf("UPDATE_FIXED_COLUMNS: %+v, %v; want the columns id and v3", u, err)
	}
}
