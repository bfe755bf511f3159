package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// TestColumnTypeChanged (issue 25, D15): a column whose type is changed
// in PostgreSQL under a running job fails the job's next commit with
// sink.ErrTableChanged naming the table, the column, the type PostgreSQL
// has now and the one the spec needs, writing nothing, even when the
// rows would still fit (a short string into varchar(30)); a PrepareTable
// of the job's table (its resume) says the same, not a spec refusal. A
// change that still holds every value (text to varchar without a length)
// is accepted; the type changed back, the job loads again.
func TestColumnTypeChanged(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("typed", col("n", api.ColumnType_INT64), col("s", api.ColumnType_STRING))
	sc, _ := table.NewSchema(sp)
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatal(err)
	}
	at := int64(0)
	commit := func() error {
		pos := table.Pos{JobID: 1, Offset: at}
		vals := []table.Value{{Int: at}, {Str: "short"}}
		err := s.Commit(&sink.Commit{JobID: 1, Table: "typed", Fence: 1, Ranges: []sink.Range{{Partition: 0, From: at, To: at + 1}},
			Rows: []sink.KV{{Key: table.AppendKey(nil, sp.Model, pos, vals), Value: table.AppendValue(nil, sc, pos, vals)}}})
		if err == nil {
			at++
		}
		return err
	}
	if err := commit(); err != nil {
		t.Fatalf("first commit: %v", err)
	}

	exec(t, s, `ALTER TABLE public.typed ALTER COLUMN s TYPE varchar(30)`)
	err := commit()
	for _, w := range []string{`"public"."typed"`, "column s", "character varying(30)", "text"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("commit after ALTER COLUMN s TYPE varchar(30) = %v, want it to say %q", err, w)
		}
	}
	t.Logf("commit after the type change: %v", err)
	if !errors.Is(err, sink.ErrTableChanged) {
		t.Fatalf("commit after the type change = %v, want sink.ErrTableChanged", err)
	}
	if p, _ := s.Progress(1); p.Positions[0] != 1 {
		t.Fatalf("a refused commit moved the progress to %d, want 1", p.Positions[0])
	}
	var rows int
	if err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM public.typed`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("rows after the refused commit: %d (%v), want 1", rows, err)
	}
	// The job resumed: its table is prepared again, and refused as changed.
	err = s.PrepareTable(sp)
	var ie *IncompatibleError
	if !errors.Is(err, sink.ErrTableChanged) || errors.As(err, &ie) || !strings.Contains(err.Error(), "character varying(30)") {
		t.Fatalf("PrepareTable of the changed table = %v, want sink.ErrTableChanged naming the type, not a spec refusal", err)
	}

	// A change that holds every value is no change to pause for.
	exec(t, s, `ALTER TABLE public.typed ALTER COLUMN s TYPE text`)
	if err := s.PrepareTable(sp); err != nil {
		t.Fatalf("PrepareTable once the type is back: %v", err)
	}
	exec(t, s, `ALTER TABLE public.typed ALTER COLUMN s TYPE varchar`)
	if err := commit(); err != nil {
		t.Fatalf("commit into varchar without a length (holds every text): %v", err)
	}
	// A column loadnode writes NULL into made NOT NULL, or dropped.
	for _, c := range []struct{ alter, want string }{
		{`ALTER TABLE public.typed ALTER COLUMN s SET NOT NULL`, "NOT NULL"},
		{`ALTER TABLE public.typed DROP COLUMN s`, "missing"},
		{`ALTER TABLE public.typed ALTER COLUMN n TYPE integer`, "integer"},
	} {
		exec(t, s, c.alter)
		if err := commit(); !errors.Is(err, sink.ErrTableChanged) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("commit after %s = %v, want sink.ErrTableChanged saying %q", c.alter, err, c.want)
		}
		exec(t, s, `DROP TABLE public.typed`)
		exec(t, s, `DELETE FROM loadnode.tables WHERE table_name = 'typed'`)
		if err := s.PrepareTable(sp); err != nil {
			t.Fatalf("PrepareTable of the table made again: %v", err)
		}
	}
	if err := commit(); err != nil {
		t.Fatalf("commit into the table made again: %v", err)
	}
}

// TestSpecRefusalNotTableChanged: a table that exists in PostgreSQL and
// cannot hold a spec's rows is the spec's refusal (*IncompatibleError,
// INVALID_ARGUMENT at create), never sink.ErrTableChanged: loadnode never
// accepted that spec for that table. That holds for a table loadnode did
// not make, and for one it made for another spec.
func TestSpecRefusalNotTableChanged(t *testing.T) {
	s, _ := open(t, false)
	exec(t, s, `CREATE TABLE public.theirs (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL,
		_loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL, s varchar(30))`)
	if err := s.PrepareTable(spec("made", col("n", api.ColumnType_INT64))); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []*api.TableSpec{
		spec("theirs", col("s", api.ColumnType_STRING)),
		spec("made", col("n", api.ColumnType_STRING)),
		spec("made", col("n", api.ColumnType_INT64), col("m", api.ColumnType_INT64)),
	} {
		for name, call := range map[string]func(*api.TableSpec) error{"CreateTable": s.CreateTable, "PrepareTable": s.PrepareTable} {
			err := call(sp)
			var ie *IncompatibleError
			if !errors.As(err, &ie) || errors.Is(err, sink.ErrTableChanged) {
				t.Errorf("%s(%s %v) = %v, want a spec refusal (*IncompatibleError), not sink.ErrTableChanged", name, sp.GetName(), sp.GetColumns(), err)
			}
		}
	}
}
