package postgres

import (
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// TestCommitEncoded: rows encoded ahead (sink.Encoder), one encoding per
// batch of a group, are what a commit writes; an encoding that does not
// cover the commit's rows, or is another table's, is not used.
func TestCommitEncoded(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("encoded", col("n", api.ColumnType_INT64), col("s", api.ColumnType_STRING))
	sc, err := table.NewSchema(sp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	if s.EncodeBatch("not_prepared", 1, 1) != nil {
		t.Fatal("EncodeBatch of a table the sink has not prepared is not nil")
	}
	if err := s.InitStarts(1, map[int32]int64{0: 0, 1: 0}, nil); err != nil {
		t.Fatal(err)
	}
	// batch is partition p's rows [from, to), its values n = offset*10+m
	// (m tells the encoded from the plain rows), interleaved with nothing.
	batch := func(p int32, from, to, m int64, enc sink.Encoding) []sink.KV {
		var kvs []sink.KV
		for o := to - 1; o >= from; o-- { // backwards: Seal puts them in key order
			pos := table.Pos{JobID: 1, Partition: p, Offset: o}
			vals := []table.Value{{Int: o*10 + m}, {Str: "row"}}
			key := table.AppendKey(nil, sp.Model, pos, vals)
			kvs = append(kvs, sink.KV{Key: key, Value: table.AppendValue(nil, sc, pos, vals)})
			if enc != nil {
				if err := enc.Add(key, pos, vals); err != nil {
					t.Fatal(err)
				}
			}
		}
		return kvs
	}
	stored := func() map[string]int64 {
		t.Helper()
		got := map[string]int64{}
		err := s.ScanRowsAfter("encoded", nil, 1000, func(k, v []byte) error {
			vals, _, err := table.DecodeValue(sc, v, nil)
			got[string(k)] = vals[0].Int
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	// A group of two batches, each encoded with values that differ from
	// Rows' (m = 1 against 0): the encodings are what is written.
	e0, e1 := s.EncodeBatch("encoded", 4, 100), s.EncodeBatch("encoded", 4, 100)
	rows := append(batch(0, 0, 5, 0, nil), batch(1, 0, 3, 0, nil)...)
	batch(0, 0, 5, 1, e0)
	batch(1, 0, 3, 1, e1)
	e0.Seal()
	e1.Seal()
	c := &sink.Commit{JobID: 1, Table: "encoded", Fence: 1, Rows: rows, Encoded: []sink.Encoding{e0, e1},
		Ranges: []sink.Range{{Partition: 0, From: 0, To: 5}, {Partition: 1, From: 0, To: 3}}}
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	got := stored()
	if len(got) != 8 {
		t.Fatalf("%d rows stored, want 8", len(got))
	}
	for _, kv := range rows {
		vals, _, _ := table.DecodeValue(sc, kv.Value, nil)
		if got[string(kv.Key)] != vals[0].Int+1 {
			t.Errorf("row %x = %d, want the encoded %d", kv.Key, got[string(kv.Key)], vals[0].Int+1)
		}
	}
	// An encoding of fewer rows than the commit's is not used: Rows are.
	e2 := s.EncodeBatch("encoded", 4, 100)
	rows = batch(0, 5, 9, 0, nil)
	batch(0, 5, 8, 1, e2)
	c = &sink.Commit{JobID: 1, Table: "encoded", Fence: 1, Rows: rows, Encoded: []sink.Encoding{e2},
		Ranges: []sink.Range{{Partition: 0, From: 5, To: 9}}}
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	// Nor one of another table (here: one prepared again since; a
	// PrepareTable of an unchanged spec is remembered, so forget it first,
	// as a commit that finds the table changed does).
	e3 := s.EncodeBatch("encoded", 4, 100)
	s.forgetPrepared("encoded")
	if err := s.PrepareTable(sp); err != nil {
		t.Fatal(err)
	}
	rows2 := batch(1, 3, 6, 0, nil)
	batch(1, 3, 6, 1, e3)
	c = &sink.Commit{JobID: 1, Table: "encoded", Fence: 1, Rows: rows2, Encoded: []sink.Encoding{e3},
		Ranges: []sink.Range{{Partition: 1, From: 3, To: 6}}}
	if err := s.Commit(c); err != nil {
		t.Fatal(err)
	}
	got = stored()
	for _, kv := range append(rows, rows2...) {
		vals, _, _ := table.DecodeValue(sc, kv.Value, nil)
		if got[string(kv.Key)] != vals[0].Int {
			t.Errorf("row %x = %d, want Rows' %d (the encoding did not fit)", kv.Key, got[string(kv.Key)], vals[0].Int)
		}
	}
	if p, err := s.Progress(1); err != nil || p.Positions[0] != 9 || p.Positions[1] != 6 {
		t.Fatalf("progress %v, %v; want 0:9 1:6", p, err)
	}
}
