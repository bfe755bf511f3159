package persistence

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// Tables returns every table of the catalog, by name. It reads the schema
// keys only: the scan seeks past each table's rows.
func (s *Store) Tables() (out []*api.TableSpec, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	lower := []byte(tablePrefix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, fmt.Errorf("persistence: tables: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; {
		k := it.Key()
		rest := k[len(tablePrefix):]
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			ok = it.Next()
			continue
		}
		name := string(rest[:i])
		// A table's blocks and rows ("\x00b/...", "\x00r/...") sort
		// before its schema ("\x00s"):
		// from a row, seek to the schema.
		if spec := tableSpecKey(name); bytes.Compare(k, spec) < 0 {
			ok = it.SeekGE(spec)
			continue
		}
		if len(rest) == i+2 && rest[i+1] == tableSpecSuffix {
			spec := &api.TableSpec{}
			if err := proto.Unmarshal(it.Value(), spec); err != nil {
				return nil, fmt.Errorf("persistence: table %q: %w", name, err)
			}
			out = append(out, spec)
		}
		ok = it.SeekGE(prefixEnd(tableKeyPrefix(name)))
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: tables: %w", err)
	}
	return out, nil
}

// DropTable removes a table from the catalog and every row it has in the
// embedded store, in one batch committed with pebble.Sync; ErrNotFound if
// the catalog has no such table. The caller (the manager) refuses it while
// a job loads into the table.
func (s *Store) DropTable(name string) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if err := validateTableName(name); err != nil {
		return err
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	defer s.recoverFatal(&err)
	if _, ok, err := s.get(tableSpecKey(name)); err != nil {
		return fmt.Errorf("persistence: drop table %q: %w", name, err)
	} else if !ok {
		return fmt.Errorf("persistence: drop table %q: %w", name, ErrNotFound)
	}
	b := s.db.NewBatch()
	p := tableKeyPrefix(name)
	_ = b.DeleteRange(p, prefixEnd(p), nil)
	return s.commit(b, fmt.Sprintf("drop table %q", name))
}

// DropRows deletes every row of a table of the embedded store (not its
// catalog entry), in one synced batch: the embedded sink's face of DROP
// TABLE. A table without rows is not an error.
func (s *Store) DropRows(name string) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit(&err)
	p := tableRowPrefix(name)
	b := s.db.NewBatch()
	_ = b.DeleteRange(p, prefixEnd(p), nil)
	bp := tableBlockPrefix(name)
	_ = b.DeleteRange(bp, prefixEnd(bp), nil)
	return s.commit(b, fmt.Sprintf("drop the rows of table %q", name))
}

// Tables implements metastore.Store.
func (m *Meta) Tables() ([]*api.TableSpec, error) { return m.s.Tables() }

// DropTable implements metastore.Store: the catalog entry and the
// embedded rows go together (the node's sink for an embedded table is this
// store).
func (m *Meta) DropTable(name string) error { return m.s.DropTable(name) }

// DropTable implements sink.Dropper.
func (k *Sink) DropTable(name string) error { return k.s.DropRows(name) }
