package persistence

import (
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

var _ sink.Inserter = (*Sink)(nil)

// Keyed tables (UNIQUE, AGGREGATE): a commit's rows merge into the stored
// rows (table.Schema.Merge) in source order, in the same synced batch as
// the progress, so a replayed batch, refused by the progress check, never
// merges twice. A UNIQUE table with a sequence column keeps a delete's
// tombstone under "t/<name>\x00d/<key>" (the encoded row of the delete),
// apart from the rows, so counts and scans see only live rows.

const tableTombSuffix = 'd'

// tableTombPrefix returns "t/<name>\x00d/".
func tableTombPrefix(name string) []byte {
	return append(tableKeyPrefix(name), tableTombSuffix, '/')
}

// modelLocks serializes the merging commits of one keyed table (two jobs
// loading it read and write the same keys). Striped by table name.
type modelLocks struct {
	seed    maphash.Seed
	once    sync.Once
	stripes [64]sync.Mutex
}

func (l *modelLocks) lock(table string) func() {
	l.once.Do(func() { l.seed = maphash.MakeSeed() })
	m := &l.stripes[maphash.String(l.seed, table)%uint64(len(l.stripes))]
	m.Lock()
	return m.Unlock
}

// keyedSchema returns the schema of a stored table spec when it is keyed
// (with the load's sequence column), else nil.
func keyedSchema(specBytes []byte, u *table.Update) (*table.Schema, error) {
	spec := &api.TableSpec{}
	if err := proto.Unmarshal(specBytes, spec); err != nil {
		return nil, fmt.Errorf("corrupt table spec: %w", err)
	}
	if spec.GetModel() == api.TableModel_DUPLICATE {
		return nil, nil
	}
	sc, err := table.NewSchema(spec)
	if err != nil {
		return nil, err
	}
	if u != nil {
		return sc.WithSequence(u.Sequence)
	}
	return sc, nil
}

// mergeRows merges c's rows into the keyed table sc, adding the result
// to b.
//
// REQUIRES: the job's lock and the table's model lock are held.
func (s *Store) mergeRows(b *pebble.Batch, c *Commit, sc *table.Schema) error {
	rowPrefix, tombPrefix := tableRowPrefix(c.Table), tableTombPrefix(c.Table)
	type entry struct {
		key   []byte
		state *table.RowState
	}
	states := make(map[string]int, len(c.Rows))
	var entries []entry
	var vals []table.Value
	for _, kv := range c.Rows {
		i, seen := states[string(kv.Key)]
		if !seen {
			old, err := s.storedState(sc, append(rowPrefix[:len(rowPrefix):len(rowPrefix)], kv.Key...),
				append(tombPrefix[:len(tombPrefix):len(tombPrefix)], kv.Key...))
			if err != nil {
				return fmt.Errorf("table %s row %x: %w", c.Table, kv.Key, err)
			}
			i = len(entries)
			states[string(kv.Key)] = i
			entries = append(entries, entry{key: kv.Key, state: old})
		}
		var pos table.Pos
		var err error
		vals, pos, err = table.DecodeValue(sc, kv.Value, nil)
		if err != nil {
			return fmt.Errorf("table %s row %x: %w", c.Table, kv.Key, err)
		}
		next, err := sc.Merge(entries[i].state, vals, pos, kv.Delete, c.Update, kv.Named)
		if err != nil {
			return err
		}
		entries[i].state = next
	}
	seq := sc.SequenceColumn() >= 0
	key := make([]byte, 0, len(rowPrefix)+64)
	var value []byte
	for _, e := range entries {
		rk := append(append(key[:0], rowPrefix...), e.key...)
		switch {
		case e.state == nil:
			_ = b.Delete(rk, nil)
		case e.state.Deleted:
			_ = b.Delete(rk, nil)
		default:
			value = table.AppendValue(value[:0], sc, e.state.Pos, e.state.Vals)
			_ = b.Set(rk, value, nil)
		}
		if seq {
			tk := append(append(key[:0], tombPrefix...), e.key...)
			if e.state != nil && e.state.Deleted {
				value = table.AppendValue(value[:0], sc, e.state.Pos, e.state.Vals)
				_ = b.Set(tk, value, nil)
			} else {
				_ = b.Delete(tk, nil)
			}
		}
	}
	return nil
}

// storedState reads a key's row, else its tombstone, else nil.
func (s *Store) storedState(sc *table.Schema, rowKey, tombKey []byte) (*table.RowState, error) {
	v, ok, err := s.get(rowKey)
	if err != nil {
		return nil, err
	}
	deleted := false
	if !ok && sc.SequenceColumn() >= 0 {
		if v, ok, err = s.get(tombKey); err != nil {
			return nil, err
		}
		deleted = ok
	}
	if !ok {
		return nil, nil
	}
	vals, pos, err := table.DecodeValue(sc, v, nil)
	if err != nil {
		return nil, err
	}
	return &table.RowState{Vals: vals, Pos: pos, Deleted: deleted}, nil
}

// InsertRows writes rows outside a job in one synced batch, merged into a
// keyed table as a commit's are.
func (s *Store) InsertRows(name string, rows []KV) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit(&err)
	v, ok, err := s.get(tableSpecKey(name))
	if err != nil {
		return fmt.Errorf("persistence: insert into %q: %w", name, err)
	}
	if !ok {
		return fmt.Errorf("persistence: insert into %q: %w", name, ErrNotFound)
	}
	keyed, err := keyedSchema(v, nil)
	if err != nil {
		return fmt.Errorf("persistence: insert into %q: %w", name, err)
	}
	b := s.db.NewBatch()
	if keyed != nil {
		defer s.models.lock(name)()
		if err := s.mergeRows(b, &Commit{Table: name, Rows: rows}, keyed); err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: insert into %q: %w", name, err)
		}
	} else {
		defer s.models.lock(name)() // its rows may meet a stored block
		if err := s.writeRowBlocks(b, name, rows); err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: insert into %q: %w", name, err)
		}
	}
	return s.commit(b, fmt.Sprintf("insert into %q", name))
}

// InsertRows implements sink.Inserter.
func (k *Sink) InsertRows(name string, rows []KV) error { return k.s.InsertRows(name, rows) }
