package cluster

import (
	"fmt"
	"slices"
	"testing"
)

// TestPairer: a job's record and head written in one transaction reach
// the handler as one change, whichever watch delivers first; a half whose
// other half cannot come any more goes alone; nothing is held for ever.
func TestPairer(t *testing.T) {
	type ev struct {
		rec          bool // rec/ event, else head/
		id           uint64
		rev          int64
		del, created bool
	}
	show := func(c JobChange) string {
		return fmt.Sprintf("%d r=%s h=%s d=%v", c.ID, c.Record, c.Head, c.Deleted)
	}
	for _, tc := range []struct {
		name string
		evs  []ev
		want []string
	}{
		{"create, record first", []ev{{rec: true, id: 1, rev: 5}, {id: 1, rev: 5, created: true}},
			[]string{"1 r=r1@5 h=h1@5 d=false"}},
		{"create, head first", []ev{{id: 1, rev: 5, created: true}, {rec: true, id: 1, rev: 5}},
			[]string{"1 r=r1@5 h=h1@5 d=false"}},
		{"transition goes at once", []ev{{id: 1, rev: 7}},
			[]string{"1 r= h=h1@7 d=false"}},
		{"alter, head first: both alone", []ev{{id: 1, rev: 9}, {rec: true, id: 1, rev: 9}},
			[]string{"1 r= h=h1@9 d=false", "1 r=r1@9 h= d=false"}},
		{"alter, record first", []ev{{rec: true, id: 1, rev: 9}, {id: 1, rev: 9}},
			[]string{"1 r=r1@9 h=h1@9 d=false"}},
		{"delete goes at once", []ev{{rec: true, id: 1, rev: 11, del: true}, {id: 1, rev: 11, del: true}},
			[]string{"1 r= h= d=true", "1 r= h= d=true"}},
		{"a held record goes alone once the heads are past it", []ev{{rec: true, id: 1, rev: 5}, {id: 2, rev: 6}},
			[]string{"2 r= h=h2@6 d=false", "1 r=r1@5 h= d=false"}},
		{"a held new head goes alone once the records are past it", []ev{{id: 1, rev: 5, created: true}, {rec: true, id: 2, rev: 6}, {id: 2, rev: 6, created: true}},
			[]string{"1 r= h=h1@5 d=false", "2 r=r2@6 h=h2@6 d=false"}},
		{"two creates interleaved", []ev{{rec: true, id: 1, rev: 5}, {rec: true, id: 2, rev: 6}, {id: 1, rev: 5, created: true}, {id: 2, rev: 6, created: true}},
			[]string{"1 r=r1@5 h=h1@5 d=false", "2 r=r2@6 h=h2@6 d=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPairer()
			var got []string
			emit := func(c JobChange) { got = append(got, show(c)) }
			for _, e := range tc.evs {
				if e.rec {
					var v []byte
					if !e.del {
						v = fmt.Appendf(nil, "r%d@%d", e.id, e.rev)
					}
					p.record(e.id, v, e.rev, e.del, emit)
				} else {
					var v []byte
					if !e.del {
						v = fmt.Appendf(nil, "h%d@%d", e.id, e.rev)
					}
					p.head(e.id, v, e.rev, e.del, e.created, emit)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
