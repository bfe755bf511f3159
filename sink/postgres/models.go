package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Keyed tables (UNIQUE, AGGREGATE) in PostgreSQL: _loadnode_key, the
// primary key, is the key columns' encoding (table.AppendRowKey). A
// commit's rows merge inside the batch's transaction, after its progress
// check: the stored rows of the batch's keys are read, merged in source
// order with table.Schema.Merge (the rules every sink shares), and written
// back: gone keys with one DELETE, the others with a binary COPY into a
// staging table and one INSERT ... ON CONFLICT DO UPDATE. A replayed batch
// is refused by the progress check, so it never merges twice. Merging
// commits of one table are serialized by a transaction-scoped advisory
// lock (two jobs loading one table read and write the same keys). A
// UNIQUE table with a sequence column keeps its deletes' tombstones in
// loadnode.tombstones, so the table holds only live rows.

// modelsSQL is bootstrapped with bootstrapSQL.
var modelsSQL = []string{
	`CREATE TABLE IF NOT EXISTS loadnode.tombstones (
		schema_name text NOT NULL,
		table_name text NOT NULL,
		key bytea NOT NULL,
		row bytea NOT NULL,
		PRIMARY KEY (schema_name, table_name, key))`,
}

// keyedTable returns the schema keyed rows merge by (with the load's
// sequence column), or nil for a DUPLICATE table.
func keyedTable(ti *tableInfo, u *table.Update) (*table.Schema, error) {
	if ti == nil || !ti.schema.Keyed() {
		return nil, nil
	}
	if u != nil {
		return ti.schema.WithSequence(u.Sequence)
	}
	return ti.schema, nil
}

// mergeRows merges c's rows into the keyed table ti, in tx.
func (s *Sink) mergeRows(ctx context.Context, tx pgx.Tx, ti *tableInfo, sc *table.Schema, c *sink.Commit) error {
	name := ti.ident.Sanitize()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7400812519389))`, name); err != nil {
		return err
	}
	index := make(map[string]int, len(c.Rows))
	var keys [][]byte
	for _, kv := range c.Rows {
		if _, ok := index[string(kv.Key)]; !ok {
			index[string(kv.Key)] = len(keys)
			keys = append(keys, kv.Key)
		}
	}
	states := make([]*table.RowState, len(keys))
	if err := s.readStates(ctx, tx, ti, sc, keys, index, states); err != nil {
		return err
	}
	for _, kv := range c.Rows {
		i := index[string(kv.Key)]
		vals, pos, err := table.DecodeValue(sc, kv.Value, nil)
		if err != nil {
			return fmt.Errorf("row %x: %w", kv.Key, err)
		}
		if states[i], err = sc.Merge(states[i], vals, pos, kv.Delete, c.Update); err != nil {
			return err
		}
	}
	var gone, tombKeys, tombRows [][]byte
	var live []sink.KV
	for i, st := range states {
		switch {
		case st == nil:
			gone = append(gone, keys[i])
		case st.Deleted:
			gone = append(gone, keys[i])
			tombKeys = append(tombKeys, keys[i])
			tombRows = append(tombRows, table.AppendValue(nil, sc, st.Pos, st.Vals))
		default:
			live = append(live, sink.KV{Key: keys[i], Value: table.AppendValue(nil, sc, st.Pos, st.Vals)})
		}
	}
	if len(gone) > 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM `+name+` WHERE `+pgx.Identifier{keyColumn}.Sanitize()+` = ANY($1)`, gone); err != nil {
			return err
		}
	}
	if sc.SequenceColumn() >= 0 {
		if _, err := tx.Exec(ctx, `DELETE FROM loadnode.tombstones WHERE schema_name = $1 AND table_name = $2 AND key = ANY($3)`,
			s.opts.Schema, ti.schema.Name(), keys); err != nil {
			return err
		}
		if len(tombKeys) > 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO loadnode.tombstones (schema_name, table_name, key, row)
				SELECT $1, $2, * FROM unnest($3::bytea[], $4::bytea[])`, s.opts.Schema, ti.schema.Name(), tombKeys, tombRows); err != nil {
				return err
			}
		}
	}
	if len(live) == 0 {
		return nil
	}
	data, err := encodeCopy(ti, live)
	if err != nil {
		return err
	}
	return writeRows(ctx, tx, ti, data, true)
}

// readStates fills states[index[key]] with the stored row, else the
// tombstone, of each key.
func (s *Sink) readStates(ctx context.Context, tx pgx.Tx, ti *tableInfo, sc *table.Schema, keys [][]byte, index map[string]int, states []*table.RowState) error {
	quoted := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	rows, err := tx.Query(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+ti.ident.Sanitize()+
		` WHERE `+pgx.Identifier{keyColumn}.Sanitize()+` = ANY($1)`, keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols := sc.Columns()
	dest := make([]any, len(ti.cols))
	var k []byte
	var job, off int64
	var part int32
	dest[0], dest[1], dest[2], dest[3] = &k, &job, &part, &off
	cells := make([]cell, len(cols))
	for i := range cols {
		dest[len(systemColumns)+i] = cells[i].target(cols[i].GetType())
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		vals := make([]table.Value, len(cols))
		for i := range cols {
			if vals[i], err = cells[i].value(cols[i]); err != nil {
				return fmt.Errorf("row %x: %w", k, err)
			}
		}
		if i, ok := index[string(k)]; ok {
			states[i] = &table.RowState{Vals: vals, Pos: table.Pos{JobID: uint64(job), Partition: part, Offset: off}}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	if sc.SequenceColumn() < 0 {
		return nil
	}
	trows, err := tx.Query(ctx, `SELECT key, row FROM loadnode.tombstones WHERE schema_name = $1 AND table_name = $2 AND key = ANY($3)`,
		s.opts.Schema, ti.schema.Name(), keys)
	if err != nil {
		return err
	}
	defer trows.Close()
	for trows.Next() {
		var key, row []byte
		if err := trows.Scan(&key, &row); err != nil {
			return err
		}
		i, ok := index[string(key)]
		if !ok || states[i] != nil {
			continue
		}
		vals, pos, err := table.DecodeValue(sc, row, nil)
		if err != nil {
			return fmt.Errorf("tombstone %x: %w", key, err)
		}
		states[i] = &table.RowState{Vals: vals, Pos: pos, Deleted: true}
	}
	return trows.Err()
}

// InsertRows writes rows outside a job in one transaction, merged into a
// keyed table as a commit's are.
func (s *Sink) InsertRows(name string, rows []sink.KV) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	ti, err := s.table(ctx, name)
	if err != nil {
		return fmt.Errorf("postgres: insert into %s: %w", name, err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if ti.schema.Keyed() {
			return s.mergeRows(ctx, tx, ti, ti.schema, &sink.Commit{Table: name, Rows: rows})
		}
		data, err := encodeCopy(ti, rows)
		if err != nil {
			return err
		}
		return writeRows(ctx, tx, ti, data, true)
	})
	if err != nil {
		return fmt.Errorf("postgres: insert into %s: %w", ti.ident.Sanitize(), unavailable(err))
	}
	return nil
}

var _ sink.Inserter = (*Sink)(nil)
