package cluster

// pairer joins the two halves of a job's write that the member's watches
// of rec/ and head/ deliver apart. Every write of a record (a create, an
// alter) writes the job's head in the same transaction, so at the same
// revision: a record waits for the head of its revision, and a new head
// (Version 1: a create) waits for its record, so that the handler gets
// both in one change and need not read the job back. A half whose other
// half can no longer come (its watch delivered a later revision) goes
// alone. Deletions and heads of transitions go at once.
//
// Not safe for concurrent use: the watch goroutine owns it.
type pairer struct {
	recs, heads map[uint64]halfChange // waiting for the other half
	// recRev and headRev are the newest revisions each watch delivered:
	// events come in revision order, so nothing older comes after.
	recRev, headRev int64
}

type halfChange struct {
	c   JobChange
	rev int64
}

func newPairer() *pairer {
	return &pairer{recs: map[uint64]halfChange{}, heads: map[uint64]halfChange{}}
}

// record takes a rec/ event; emit gets what is ready.
func (p *pairer) record(id uint64, value []byte, rev int64, deleted bool, emit func(JobChange)) {
	p.recRev = max(p.recRev, rev)
	if old, ok := p.recs[id]; ok {
		delete(p.recs, id)
		emit(old.c)
	}
	switch h, ok := p.heads[id]; {
	case deleted:
		emit(JobChange{ID: id, Deleted: true})
	case ok && h.rev == rev:
		delete(p.heads, id)
		emit(JobChange{ID: id, Record: value, Head: h.c.Head})
	case rev <= p.headRev:
		emit(JobChange{ID: id, Record: value}) // its head went before
	default:
		p.recs[id] = halfChange{c: JobChange{ID: id, Record: value}, rev: rev}
	}
	p.expire(p.heads, p.recRev, emit)
}

// head takes a head/ event (created: the key's Version is 1); emit gets
// what is ready.
func (p *pairer) head(id uint64, value []byte, rev int64, deleted, created bool, emit func(JobChange)) {
	p.headRev = max(p.headRev, rev)
	if old, ok := p.heads[id]; ok {
		delete(p.heads, id)
		emit(old.c)
	}
	switch r, ok := p.recs[id]; {
	case deleted:
		emit(JobChange{ID: id, Deleted: true})
	case ok && r.rev == rev:
		delete(p.recs, id)
		emit(JobChange{ID: id, Record: r.c.Record, Head: value})
	case created && rev > p.recRev:
		p.heads[id] = halfChange{c: JobChange{ID: id, Head: value}, rev: rev}
	default:
		emit(JobChange{ID: id, Head: value})
	}
	p.expire(p.recs, p.headRev, emit)
}

// expire emits the halves of waiting whose other half, at their
// revision, can no longer come (the other watch is past it).
func (p *pairer) expire(waiting map[uint64]halfChange, past int64, emit func(JobChange)) {
	for id, h := range waiting {
		if h.rev < past {
			delete(waiting, id)
			emit(h.c)
		}
	}
}
