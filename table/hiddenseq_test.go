package table

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

// seqTable is test_stream_load's test_unique_key_with_delete: UNIQUE KEY
// (k1, k2), "function_column.sequence_type" = "int".
func seqTable(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema(seqSpec())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func seqSpec() *api.TableSpec {
	return &api.TableSpec{Name: "test_unique_key_with_delete", Model: api.TableModel_UNIQUE, KeyColumns: []string{"k1", "k2"},
		HiddenSequenceType: api.ColumnType_INT32,
		Columns: []*api.Column{
			{Name: "k1", Type: api.ColumnType_INT32},
			{Name: "k2", Type: api.ColumnType_INT8},
			{Name: "v1", Type: api.ColumnType_VARCHAR, Length: 1024},
		}}
}

// TestHiddenSequenceSchema: the hidden sequence is no column; a row has
// one more value (Width), which a sink stores as its last column.
func TestHiddenSequenceSchema(t *testing.T) {
	s := seqTable(t)
	if s.NumColumns() != 3 || s.Width() != 4 || !s.HiddenSequence() || s.SequenceColumn() != 3 {
		t.Fatalf("NumColumns %d, Width %d, HiddenSequence %v, SequenceColumn %d; want 3, 4, true, 3", s.NumColumns(), s.Width(), s.HiddenSequence(), s.SequenceColumn())
	}
	if len(s.Columns()) != 3 {
		t.Fatalf("Columns = %d, want 3", len(s.Columns()))
	}
	st := s.StoredColumns()
	if len(st) != 4 || st[3].GetName() != HiddenSequenceStored || st[3].GetType() != api.ColumnType_INT32 {
		t.Fatalf("StoredColumns = %v", st)
	}
	vals := []Value{{Int: 1}, {Int: 2}, {Str: "x"}, {Int: 7}}
	got, _, err := DecodeValue(s, AppendValue(nil, s, Pos{}, vals), nil)
	if err != nil || len(got) != 4 || got[3].Int != 7 {
		t.Fatalf("DecodeValue = %v, %v", got, err)
	}
	if row := ToProto(s, vals, Pos{}); len(row.GetValues()) != 3 {
		t.Fatalf("ToProto gave %d values, want the 3 columns", len(row.GetValues()))
	}
	other := seqSpec()
	other.HiddenSequenceType = api.ColumnType_DATE
	if err := Compare(seqSpec(), other); err == nil || !strings.Contains(err.Error(), "hidden sequence type is INT, spec says DATE") {
		t.Fatalf("Compare = %v", err)
	}
}

// TestHiddenSequenceRefused: a hidden sequence needs a UNIQUE table,
// an integer, DATE or DATETIME type, no sequence column beside it and no
// column with its name.
func TestHiddenSequenceRefused(t *testing.T) {
	for _, tc := range []struct {
		change func(*api.TableSpec)
		want   string
	}{
		{func(s *api.TableSpec) { s.Model, s.KeyColumns = api.TableModel_DUPLICATE, nil }, "only a UNIQUE table has a sequence"},
		{func(s *api.TableSpec) { s.SequenceColumn = "v1" }, "not both"},
		{func(s *api.TableSpec) { s.HiddenSequenceType = api.ColumnType_STRING }, "want an integer type, DATE or DATETIME"},
		{func(s *api.TableSpec) { s.HiddenSequenceType = api.ColumnType_DECIMAL }, "want an integer type, DATE or DATETIME"},
		{func(s *api.TableSpec) { s.Columns[2].Name = "__doris_sequence_col__" }, "cannot have a column named"},
	} {
		spec := seqSpec()
		tc.change(spec)
		_, err := NewSchema(spec)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "table.sequence_type" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSchema = %v, want table.sequence_type: %s", err, tc.want)
		}
	}
}

// TestHiddenSequenceLoad is test_stream_load__all91: a MERGE load
// (del=1 deletes) whose sequence column seq is a field of the record, not
// of the table: per key the row with the highest seq wins, (1,2) and
// (2,2) end deleted, (3,2) keeps its row of seq 3 (the later row of seq 0
// is older).
func TestHiddenSequenceLoad(t *testing.T) {
	s := seqTable(t)
	spec := &api.JobSpec{ColumnsMapping: []string{"k1", "k2", "v1", "del", "seq"}, MergeType: api.MergeType_MERGE, DeleteOn: "del=1", SequenceColumn: "seq"}
	u, err := UpdateOf(s, spec)
	if err != nil {
		t.Fatal(err)
	}
	if u != nil && u.Sequence != "" {
		t.Fatalf("Update.Sequence = %q: the load's name is no column", u.Sequence)
	}
	if err := CheckSequenceNamed(s, spec); err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(s, FormatOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]*RowState{}
	for i, rec := range []string{"1,2,1,0,1", "2,2,1,0,2", "3,2,1,0,3", "1,2,2,1,4", "2,2,1,1,5", "3,2,2,0,0"} {
		vals, err := p.Parse([]byte(rec), nil)
		if err != nil {
			t.Fatalf("%s: %v", rec, err)
		}
		if len(vals) != 4 {
			t.Fatalf("%s: %d values, want 4", rec, len(vals))
		}
		key := string(AppendRowKey(nil, s, Pos{}, vals))
		if states[key], err = s.Merge(states[key], vals, Pos{Offset: int64(i)}, p.Deleted(), u, nil); err != nil {
			t.Fatal(err)
		}
	}
	live := 0
	for _, st := range states {
		if st == nil || st.Deleted {
			continue
		}
		live++
		if st.Vals[0].Int != 3 || st.Vals[2].Str != "1" || st.Vals[3].Int != 3 {
			t.Errorf("live row %v, want (3, 2, 1) of seq 3", st.Vals)
		}
	}
	if live != 1 {
		t.Fatalf("%d live rows, want 1", live)
	}
}

// TestHiddenSequenceFromColumn: the sequence column may be a table column
// (loaded as is, or computed), as in Doris; a name that is neither a
// field nor a column is refused naming sequence_column.
func TestHiddenSequenceFromColumn(t *testing.T) {
	s := seqTable(t)
	for _, tc := range []struct {
		mapping []string
		seq     string
		rec     string
		want    int64
	}{
		{nil, "k1", "5,2,x", 5},
		{[]string{"k1", "k2", "tmp", "v1 = tmp"}, "v1", "5,2,42", 42},
		{[]string{"k1", "k2", "tmp", "v1 = tmp"}, "TMP", "5,2,43", 43},
	} {
		spec := &api.JobSpec{ColumnsMapping: tc.mapping, SequenceColumn: tc.seq}
		p, err := NewParser(s, FormatOf(spec))
		if err != nil {
			t.Fatal(err)
		}
		vals, err := p.Parse([]byte(tc.rec), nil)
		if err != nil || vals[3].Null || vals[3].Int != tc.want {
			t.Errorf("%v ORDER BY %s: %v, %v; want sequence %d", tc.mapping, tc.seq, vals, err, tc.want)
		}
		if m := p.Mapped(); len(m) != 4 || !m[3] {
			t.Errorf("Mapped = %v: the sequence is named", m)
		}
	}
	_, err := UpdateOf(s, &api.JobSpec{SequenceColumn: "nope"})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "sequence_column" {
		t.Fatalf("UpdateOf(ORDER BY nope) = %v, want a sequence_column error", err)
	}
}

// TestHiddenSequenceNeedsLoadSequence: a load into a table with a hidden
// sequence names its sequence column, but a partial update (which keeps
// the stored one); an INSERT names __DORIS_SEQUENCE_COL__, as Doris's.
func TestHiddenSequenceNeedsLoadSequence(t *testing.T) {
	s := seqTable(t)
	err := CheckSequenceNamed(s, &api.JobSpec{})
	if err == nil || !strings.Contains(err.Error(), "has sequence column, need to specify the sequence column") {
		t.Fatalf("CheckSequenceNamed(no ORDER BY) = %v", err)
	}
	if err := CheckSequenceNamed(s, &api.JobSpec{PartialColumns: true, ColumnsMapping: []string{"k1", "k2", "v1"}}); err != nil {
		t.Fatalf("CheckSequenceNamed(partial update) = %v", err)
	}
	p, err := NewParser(s, FormatOf(&api.JobSpec{PartialColumns: true, ColumnsMapping: []string{"k1", "k2", "v1"}}))
	if err != nil {
		t.Fatal(err)
	}
	if m := p.Mapped(); m[3] {
		t.Fatalf("Mapped = %v: a partial update without ORDER BY keeps the stored sequence", m)
	}
	cells := func(texts ...string) []*api.InsertCell {
		var out []*api.InsertCell
		for _, x := range texts {
			out = append(out, &api.InsertCell{Text: x})
		}
		return out
	}
	if _, err := s.RowOf(nil, cells("1", "2", "x"), time.Now()); err == nil || !strings.Contains(err.Error(), "need to specify the sequence column") {
		t.Fatalf("RowOf without the sequence = %v", err)
	}
	vals, err := s.RowOf([]string{"k1", "k2", "v1", "__doris_sequence_col__"}, cells("1", "2", "x", "9"), time.Now())
	if err != nil || len(vals) != 4 || vals[3].Int != 9 {
		t.Fatalf("RowOf = %v, %v", vals, err)
	}
}
