package ledger

import (
	"testing"
)

// TestCheckCanFail: every anomaly the checker counts is counted when it is
// there, and a clean table counts nothing.
func TestCheckCanFail(t *testing.T) {
	// Partition 0: writer 1 seqs 0..3 at offsets 0..3; partition 1: writer
	// 2 seqs 0..1 at offsets 0..1.
	expected := map[PartOff]Payload{
		{0, 0}: {1, 0}, {0, 1}: {1, 1}, {0, 2}: {1, 2}, {0, 3}: {1, 3},
		{1, 0}: {2, 0}, {1, 1}: {2, 1},
	}
	clean := func() []Row {
		var rows []Row
		for po, p := range expected {
			rows = append(rows, Row{Job: 7, Partition: po.Partition, Offset: po.Offset, Payload: p})
		}
		return rows
	}
	view := func() JobView {
		return JobView{Name: "j", ID: 7, Progress: map[int32]int64{0: 4, 1: 2}, LoadedRows: 6}
	}
	tests := []struct {
		name  string
		rows  func() []Row
		view  func() JobView
		opts  CheckOptions
		check func(Counts) bool
	}{
		{"clean", clean, view, CheckOptions{Final: true}, func(c Counts) bool { return c.Anomalies() == 0 && c.Rows == 6 && c.Records == 6 }},
		{"lost", func() []Row { return clean()[1:] }, func() JobView { v := view(); v.LoadedRows = 5; return v },
			CheckOptions{Final: true}, func(c Counts) bool { return c.Lost == 1 && c.Torn == 1 }},
		{"missing row not lost before the end", func() []Row { return drop(clean(), 1, 1) },
			func() JobView { v := view(); v.Progress[1] = 1; v.LoadedRows = 5; return v },
			CheckOptions{}, func(c Counts) bool { return c.Anomalies() == 0 }},
		{"duplicated", func() []Row { r := clean(); return append(r, r[0]) }, view, CheckOptions{Final: true},
			func(c Counts) bool { return c.Duplicated == 1 }},
		{"batch committed twice", clean, func() JobView { v := view(); v.LoadedRows = 8; return v }, CheckOptions{Final: true},
			func(c Counts) bool { return c.StatsDelta == 2 && c.Anomalies() == 2 }},
		{"two payloads at one position", func() []Row {
			r := clean()
			x := r[0]
			x.Payload.Seq += 100
			return append(r, x)
		}, view, CheckOptions{Final: true}, func(c Counts) bool { return c.Inconsistent == 1 }},
		{"payload differs from the ledger", func() []Row {
			r := clean()
			r[0].Payload.W = 99
			return r
		}, view, CheckOptions{Final: true}, func(c Counts) bool { return c.Inconsistent == 1 }},
		{"row the ledger does not know", func() []Row {
			return append(clean(), Row{Job: 7, Partition: 1, Offset: 2, Payload: Payload{2, 2}})
		}, func() JobView { v := view(); v.Progress[1] = 3; v.LoadedRows = 7; return v }, CheckOptions{},
			func(c Counts) bool { return c.Inconsistent == 1 }},
		{"row the partial ledger does not know yet", func() []Row {
			return append(clean(), Row{Job: 7, Partition: 1, Offset: 2, Payload: Payload{2, 2}})
		}, func() JobView { v := view(); v.Progress[1] = 3; v.LoadedRows = 7; return v }, CheckOptions{PartialLedger: true},
			func(c Counts) bool { return c.Anomalies() == 0 && c.Pending == 1 }},
		{"row beyond progress", clean, func() JobView { v := view(); v.Progress[0] = 3; return v }, CheckOptions{},
			func(c Counts) bool { return c.Torn == 1 }},
		{"progress beyond rows", func() []Row { return drop(clean(), 0, 3) }, func() JobView { v := view(); v.LoadedRows = 5; return v },
			CheckOptions{}, func(c Counts) bool { return c.Torn == 1 && c.Lost == 0 }},
		{"order", func() []Row {
			r := clean()
			for i := range r {
				if r[i].Partition == 0 && r[i].Offset == 1 {
					r[i].Payload.Seq = 5
				}
			}
			return r
		}, view, CheckOptions{}, func(c Counts) bool { return c.Order == 1 }},
		{"bad values", func() []Row { r := clean(); r[0].Bad = true; return r }, view, CheckOptions{},
			func(c Counts) bool { return c.Inconsistent == 1 }},
		{"other job's rows ignored", func() []Row { return append(clean(), Row{Job: 8, Partition: 0, Offset: 0, Payload: Payload{1, 0}}) },
			view, CheckOptions{Final: true}, func(c Counts) bool { return c.Anomalies() == 0 }},
		{"frozen: records past a data-loss pause are not lost", func() []Row { return drop(clean(), 0, 3) },
			func() JobView { v := view(); v.Progress[0] = 3; v.LoadedRows = 5; return v },
			CheckOptions{Final: true, Frozen: map[int32]int64{0: 3}}, func(c Counts) bool { return c.Anomalies() == 0 && c.Records == 5 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Check(expected, tt.rows(), tt.view(), tt.opts)
			if !tt.check(c) {
				t.Fatalf("counts %s; details %v", c, c.Details)
			}
		})
	}
}

func drop(rows []Row, p int32, off int64) []Row {
	var out []Row
	for _, r := range rows {
		if r.Partition != p || r.Offset != off {
			out = append(out, r)
		}
	}
	return out
}

func TestProgressTracker(t *testing.T) {
	tr := NewProgressTracker()
	if n := tr.Observe("j", map[int32]int64{0: 10, 1: 5}, "a"); n != 0 {
		t.Fatalf("first sample: %d regressions", n)
	}
	if n := tr.Observe("j", map[int32]int64{0: 12, 1: 5}, "b"); n != 0 {
		t.Fatalf("forward: %d regressions", n)
	}
	if n := tr.Observe("j", map[int32]int64{0: 11}, "c"); n != 2 {
		t.Fatalf("back and missing: %d regressions, want 2", n)
	}
	if tr.Regressions() != 2 || len(tr.Details()) != 2 {
		t.Fatalf("regressions %d details %v", tr.Regressions(), tr.Details())
	}
}
