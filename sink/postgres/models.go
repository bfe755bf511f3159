package postgres

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// The table models: how a commit's rows reach a table of each model, each
// model's SQL built here. model picks the way; each makes the rows into
// copies to stage and statements that apply them (a modelWrite), which
// writeTable (commit.go) runs in the commit's transaction:
//
//	DUPLICATE           duplicateRows: COPY into the table; when a key is
//	                    already stored (a replay after a reset), COPY into
//	                    a staging table and INSERT ... ON CONFLICT
//	                    (_loadnode_key) DO UPDATE
//	UNIQUE, AGGREGATE   mergeRows: folded per key in source order
//	                    (table.Schema.Merge), staged, then UNIQUE: DELETE by
//	                    the staged deletes' keys and INSERT ... ON CONFLICT
//	                    (key columns) DO UPDATE, both under the sequence
//	                    condition, with tombstones (a column sequence or
//	                    the hidden one); AGGREGATE: INSERT ... ON CONFLICT
//	                    DO UPDATE with each value column's arithmetic
//	partial, flexible   mergeRowsRead: the stored rows (and tombstones) of
//	updates; values SQL the batch's keys read and merged in Go, staged, then
//	cannot merge        INSERT ... ON CONFLICT (_loadnode_key) DO UPDATE
//
// Keyed tables (UNIQUE, AGGREGATE) in PostgreSQL: the key columns are
// the conflict target (keyConstraintsSQL, tables.go: a primary key, or
// UNIQUE NULLS NOT DISTINCT while a key column may be NULL);
// _loadnode_key, their encoding (table.AppendRowKey), stays unique for
// scans. A keyed commit's rows merge inside the batch's transaction,
// after its progress check, so a replayed batch, refused by that check,
// never merges twice. Merging commits of one table are serialized by a
// transaction-scoped advisory lock. A UNIQUE table with a sequence column
// keeps its deletes' tombstones in loadnode.tombstones, so the table holds
// only live rows.

// modelsSQL is bootstrapped with bootstrapSQL.
var modelsSQL = []string{
	`CREATE TABLE IF NOT EXISTS loadnode.tombstones (
		schema_name text NOT NULL,
		table_name text NOT NULL,
		key bytea NOT NULL,
		row bytea NOT NULL,
		PRIMARY KEY (schema_name, table_name, key))`,
}

// Staging tables of a commit (temporary, dropped at commit).
const (
	stageRows = "loadnode_staging"   // a DUPLICATE table's replayed rows
	stageUp   = "loadnode_stage_up"  // a keyed batch's rows, one per key
	stageDel  = "loadnode_stage_del" // a keyed batch's deletes, one per key
)

// modelWrite is what a table model makes of a table's rows: copies to
// stage, then the statements that apply them, in order.
type modelWrite struct {
	stage []staged
	apply []statement
}

// staged is rows to COPY into the temporary table into, made LIKE the
// table; into the table itself when into is "".
type staged struct {
	into string
	rows *copyData
}

// statement is one SQL statement and its arguments.
type statement struct {
	sql  string
	args []any
}

func (m *modelWrite) copy(into string, rows *copyData) {
	m.stage = append(m.stage, staged{into: into, rows: rows})
}

func (m *modelWrite) exec(sql string, args ...any) {
	m.apply = append(m.apply, statement{sql: sql, args: args})
}

// model makes w's rows a modelWrite by the table's model (the table
// above). With upsert, a DUPLICATE table's rows replace those stored
// under the same keys. A keyed table's rows are folded and merged here,
// in tx: they read what they merge with.
func (s *Sink) model(ctx context.Context, tx querier, w *tableWrite, upsert bool) (*modelWrite, error) {
	if w.keyed == nil {
		return duplicateRows(w.ti, w.rows, upsert), nil
	}
	// Writers of one table serialize: two jobs' commits touch the same
	// keys, and the tombstones are read before they are written.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7400812519389))`, w.ti.ident.Sanitize()); err != nil {
		return nil, err
	}
	if !sqlMergeable(w.keyed, w.update) {
		return s.mergeRowsRead(ctx, tx, w.ti, w.keyed, w.kvs, w.update)
	}
	return s.mergeRows(ctx, tx, w.ti, w.keyed, w.kvs, w.update)
}

// DUPLICATE

// duplicateRows copies rows into the table; with upsert, through a
// staging table whose rows replace those stored under the same keys.
func duplicateRows(ti *tableInfo, rows *copyData, upsert bool) *modelWrite {
	m := &modelWrite{}
	if !upsert {
		m.copy("", rows)
		return m
	}
	m.copy(stageRows, rows)
	quoted := make([]string, len(ti.cols))
	set := make([]string, 0, len(ti.cols)-1)
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
		if c != keyColumn {
			set = append(set, quoted[i]+" = EXCLUDED."+quoted[i])
		}
	}
	list := strings.Join(quoted, ", ")
	m.exec(`INSERT INTO ` + ti.ident.Sanitize() + ` (` + list + `) SELECT ` + list + ` FROM ` + stageRows + `
		ON CONFLICT (` + pgx.Identifier{keyColumn}.Sanitize() + `) DO UPDATE SET ` + strings.Join(set, ", "))
	// A multi-table commit stages each of its tables in turn.
	m.exec(`DROP TABLE ` + stageRows)
	return m
}

// UNIQUE and AGGREGATE, merged in SQL

// mergeRows merges the rows kvs into the keyed table ti: they are folded
// per key in source order (table.Schema.Merge, the rules every sink
// shares: within a batch they are associative), then applied to the
// stored rows in SQL. UNIQUE: deletes by the staged keys, the rows with
// INSERT ... ON CONFLICT (key columns) DO UPDATE, both under the sequence
// condition (a row or delete wins when its sequence is >= the stored one,
// NULL the smallest); with a sequence column, deletes leave tombstones in
// loadnode.tombstones that a later row must beat. AGGREGATE: INSERT ...
// ON CONFLICT DO UPDATE with each value column's arithmetic
// (aggregateSQL).
// REQUIRES: the table's merge lock is held (model).
func (s *Sink) mergeRows(ctx context.Context, tx querier, ti *tableInfo, sc *table.Schema, kvs []sink.KV, u *table.Update) (*modelWrite, error) {
	name := ti.ident.Sanitize()
	index := make(map[string]int, len(kvs))
	var keys [][]byte
	var states []*table.RowState
	var deleted []bool // a key's fold ends in a delete
	unique := sc.Spec().GetModel() == api.TableModel_UNIQUE
	for _, kv := range kvs {
		i, ok := index[string(kv.Key)]
		if !ok {
			i = len(keys)
			index[string(kv.Key)] = i
			keys, states, deleted = append(keys, kv.Key), append(states, nil), append(deleted, false)
		}
		vals, pos, err := table.DecodeValue(sc, kv.Value, nil)
		if err != nil {
			return nil, fmt.Errorf("row %x: %w", kv.Key, err)
		}
		st, err := sc.Merge(states[i], vals, pos, kv.Delete, u, nil)
		if err != nil {
			return nil, err
		}
		if states[i] != nil && st == states[i] {
			continue // older than the batch's earlier row of its key
		}
		deleted[i] = kv.Delete && unique
		if st == nil {
			// Without a sequence column a delete folds to nothing: the
			// staged delete keeps its row.
			st = &table.RowState{Vals: vals, Pos: pos, Deleted: true}
		}
		states[i] = st
	}
	seq := sc.SequenceColumn() >= 0
	if seq {
		// A row or delete older than the key's tombstone loses to it.
		tombs, err := s.tombstones(ctx, tx, ti, sc, keys, index)
		if err != nil {
			return nil, err
		}
		for i, tb := range tombs {
			if tb == nil {
				continue
			}
			st, err := sc.Merge(tb, states[i].Vals, states[i].Pos, deleted[i], u, nil)
			if err != nil {
				return nil, err
			}
			if st == tb {
				states[i] = nil // lost: nothing to apply
			}
		}
	}
	var ups, dels []sink.KV
	var tombKeys, tombRows [][]byte
	for i, st := range states {
		if st == nil {
			continue
		}
		kv := sink.KV{Key: keys[i], Value: table.AppendValue(nil, sc, st.Pos, st.Vals)}
		if deleted[i] {
			dels = append(dels, kv)
			tombKeys, tombRows = append(tombKeys, kv.Key), append(tombRows, kv.Value)
		} else {
			ups = append(ups, kv)
		}
	}
	m := &modelWrite{}
	key := pgx.Identifier{keyColumn}.Sanitize()
	if len(dels) > 0 {
		data, err := encodeCopy(ti, dels)
		if err != nil {
			return nil, err
		}
		m.copy(stageDel, data)
		cond := ""
		if seq {
			cond = " AND " + sequenceCond(sc, "cur", "d")
		}
		m.exec(`DELETE FROM ` + name + ` AS cur USING ` + stageDel + ` AS d WHERE cur.` + key + ` = d.` + key + cond)
		if seq {
			// A delete that won leaves a tombstone: its key has no row now.
			m.exec(`INSERT INTO loadnode.tombstones (schema_name, table_name, key, row)
				SELECT $1, $2, u.k, u.r FROM unnest($3::bytea[], $4::bytea[]) AS u(k, r)
				WHERE NOT EXISTS (SELECT 1 FROM `+name+` AS cur WHERE cur.`+key+` = u.k)
				ON CONFLICT (schema_name, table_name, key) DO UPDATE SET row = EXCLUDED.row`,
				s.opts.Schema, ti.schema.Name(), tombKeys, tombRows)
		}
	}
	if len(ups) > 0 {
		data, err := encodeCopy(ti, ups)
		if err != nil {
			return nil, err
		}
		m.copy(stageUp, data)
		m.exec(upsertSQL(ti, sc, true))
		if seq {
			// A key with a row has no tombstone.
			upKeys := make([][]byte, len(ups))
			for i, kv := range ups {
				upKeys[i] = kv.Key
			}
			m.exec(`DELETE FROM loadnode.tombstones tb WHERE tb.schema_name = $1 AND tb.table_name = $2
				AND tb.key = ANY($3) AND EXISTS (SELECT 1 FROM `+name+` AS cur WHERE cur.`+key+` = tb.key)`,
				s.opts.Schema, ti.schema.Name(), upKeys)
		}
	}
	return m, nil
}

// tombstones returns the tombstone of each key that has one (by index).
func (s *Sink) tombstones(ctx context.Context, tx querier, ti *tableInfo, sc *table.Schema, keys [][]byte, index map[string]int) ([]*table.RowState, error) {
	out := make([]*table.RowState, len(keys))
	rows, err := tx.Query(ctx, `SELECT key, row FROM loadnode.tombstones WHERE schema_name = $1 AND table_name = $2 AND key = ANY($3)`,
		s.opts.Schema, ti.schema.Name(), keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var key, row []byte
		if err := rows.Scan(&key, &row); err != nil {
			return nil, err
		}
		i, ok := index[string(key)]
		if !ok {
			continue
		}
		vals, pos, err := table.DecodeValue(sc, row, nil)
		if err != nil {
			return nil, fmt.Errorf("tombstone %x: %w", key, err)
		}
		out[i] = &table.RowState{Vals: vals, Pos: pos, Deleted: true}
	}
	return out, rows.Err()
}

// sqlMergeable reports whether SQL merges the table's rows exactly as
// table.Schema.Merge does: not for partial updates, fixed or flexible (the read-merge path
// keeps their new-key rules), nor for MIN, MAX or SUM of a type whose SQL
// order or arithmetic differs (JSON; SUM of anything but numbers), nor
// for a sequence column without an SQL order.
func sqlMergeable(sc *table.Schema, u *table.Update) bool {
	if u != nil && (u.Columns != nil || u.Flexible) {
		return false
	}
	cols := sc.StoredColumns()
	if i := sc.SequenceColumn(); i >= 0 && !ordered(cols[i].GetType()) {
		return false
	}
	if sc.Spec().GetModel() != api.TableModel_AGGREGATE {
		return true
	}
	for _, c := range cols {
		switch c.GetAggregation() {
		case api.Aggregation_MIN, api.Aggregation_MAX:
			if !ordered(c.GetType()) {
				return false
			}
		case api.Aggregation_SUM:
			if sumSQL(c, "a", "b") == "" {
				return false
			}
		}
	}
	return true
}

// ordered reports whether PostgreSQL orders t's values as loadnode does
// (text compared byte-wise with COLLATE "C").
func ordered(t api.ColumnType) bool {
	switch stored(t) {
	case api.ColumnType_INT64, api.ColumnType_FLOAT64, api.ColumnType_STRING, api.ColumnType_BOOL,
		api.ColumnType_TIMESTAMP, api.ColumnType_DECIMAL, api.ColumnType_INT128, api.ColumnType_DATE, api.ColumnType_DATETIME:
		return true
	}
	return false
}

// colRef is alias.column, with COLLATE "C" for text (byte order, as
// loadnode compares).
func colRef(c *api.Column, alias string) string {
	ref := alias + "." + pgx.Identifier{c.GetName()}.Sanitize()
	if stored(c.GetType()) == api.ColumnType_STRING {
		ref += ` COLLATE "C"`
	}
	return ref
}

// sequenceCond is "the new row (alias nu) wins over the stored one (cur)":
// its sequence is >= the stored one, NULL the smallest.
func sequenceCond(sc *table.Schema, cur, nu string) string {
	c := sc.StoredColumns()[sc.SequenceColumn()] // a column, or the hidden sequence's
	return "(" + colRef(c, cur) + " IS NULL OR " + colRef(c, nu) + " >= " + colRef(c, cur) + ")"
}

// upsertSQL inserts the staged rows (stageUp) into ti's table, replacing
// or merging the stored row of a key: UNIQUE replaces it (under the
// sequence condition when merge is set and the table has one), AGGREGATE
// merges each value column (aggregateSQL). Conflicts are on the key
// columns (merge) or on _loadnode_key (the read-merge path, whose rows are
// already merged).
func upsertSQL(ti *tableInfo, sc *table.Schema, merge bool) string {
	quoted := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	isKey := map[int]bool{}
	var target []string
	for _, k := range sc.KeyColumns() {
		isKey[k] = true
		target = append(target, pgx.Identifier{sc.Columns()[k].GetName()}.Sanitize())
	}
	var set []string
	for _, c := range systemColumns[1:] {
		q := pgx.Identifier{c.name}.Sanitize()
		set = append(set, q+" = EXCLUDED."+q)
	}
	agg := merge && sc.Spec().GetModel() == api.TableModel_AGGREGATE
	for i, c := range sc.StoredColumns() {
		if isKey[i] {
			continue
		}
		q := pgx.Identifier{c.GetName()}.Sanitize()
		v := "EXCLUDED." + q
		if agg {
			v = aggregateSQL(c, "cur."+q, "EXCLUDED."+q)
		}
		set = append(set, q+" = "+v)
	}
	conflict := strings.Join(target, ", ")
	if !merge {
		conflict = pgx.Identifier{keyColumn}.Sanitize()
	}
	q := `INSERT INTO ` + ti.ident.Sanitize() + ` AS cur (` + list + `) SELECT ` + list + ` FROM ` + stageUp +
		` ON CONFLICT (` + conflict + `) DO UPDATE SET ` + strings.Join(set, ", ")
	if merge && !agg && sc.SequenceColumn() >= 0 {
		q += " WHERE " + sequenceCond(sc, "cur", "EXCLUDED")
	}
	return q
}

// aggregateSQL merges the stored value a with the batch's b as
// table.Schema.Merge does: a NULL side yields the other (REPLACE takes b
// as it is), MIN and MAX by PostgreSQL's order, SUM by sumSQL.
func aggregateSQL(c *api.Column, a, b string) string {
	switch c.GetAggregation() {
	case api.Aggregation_REPLACE:
		return b
	case api.Aggregation_REPLACE_IF_NOT_NULL:
		return "COALESCE(" + b + ", " + a + ")"
	case api.Aggregation_MIN, api.Aggregation_MAX:
		fn := "LEAST"
		if c.GetAggregation() == api.Aggregation_MAX {
			fn = "GREATEST"
		}
		if stored(c.GetType()) == api.ColumnType_STRING {
			return fn + "(" + a + ` COLLATE "C", ` + b + ` COLLATE "C")` // NULLs ignored, as in Merge
		}
		return fn + "(" + a + ", " + b + ")"
	case api.Aggregation_SUM:
		return "CASE WHEN " + a + " IS NULL THEN " + b + " WHEN " + b + " IS NULL THEN " + a + " ELSE " + sumSQL(c, a, b) + " END"
	}
	return b
}

// sumSQL adds two non-NULL values as table.Schema.Merge does: integers
// wrap at their type's width, a DECIMAL sum is held within its precision,
// FLOAT is summed in float32. "" for a type it cannot add.
func sumSQL(c *api.Column, a, b string) string {
	wrap := func(bits uint) string {
		half := new(big.Int).Lsh(big.NewInt(1), bits-1).String()
		full := new(big.Int).Lsh(big.NewInt(1), bits).String()
		x := "(" + a + "::numeric + " + b + "::numeric + " + half + ")"
		return "(((" + x + " % " + full + ") + " + full + ") % " + full + " - " + half + ")"
	}
	switch c.GetType() {
	case api.ColumnType_INT8:
		return wrap(8) + "::bigint"
	case api.ColumnType_INT16:
		return wrap(16) + "::bigint"
	case api.ColumnType_INT32:
		return wrap(32) + "::bigint"
	case api.ColumnType_INT64:
		return wrap(64) + "::bigint"
	case api.ColumnType_INT128:
		return wrap(128)
	case api.ColumnType_FLOAT64:
		return "(" + a + " + " + b + ")"
	case api.ColumnType_FLOAT32:
		return "((" + a + " + " + b + ")::real::double precision)"
	case api.ColumnType_DECIMAL:
		p, s := decimalOf(c)
		limit := new(big.Rat).SetFrac(new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(p)), nil), big.NewInt(1)),
			new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)).FloatString(s)
		return "LEAST(GREATEST(" + a + " + " + b + ", -" + limit + "), " + limit + ")"
	}
	return ""
}

// Partial and flexible updates; value columns SQL cannot merge

// mergeRowsRead merges the rows kvs into the keyed table ti by reading the
// stored rows of the batch's keys and merging them in Go with
// table.Schema.Merge: the path of partial updates and of the value
// columns SQL cannot merge exactly as loadnode does (sqlMergeable).
// REQUIRES: the table's merge lock is held (model).
func (s *Sink) mergeRowsRead(ctx context.Context, tx querier, ti *tableInfo, sc *table.Schema, kvs []sink.KV, u *table.Update) (*modelWrite, error) {
	name := ti.ident.Sanitize()
	index := make(map[string]int, len(kvs))
	var keys [][]byte
	for _, kv := range kvs {
		if _, ok := index[string(kv.Key)]; !ok {
			index[string(kv.Key)] = len(keys)
			keys = append(keys, kv.Key)
		}
	}
	states := make([]*table.RowState, len(keys))
	if err := s.readStates(ctx, tx, ti, sc, keys, index, states); err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		i := index[string(kv.Key)]
		vals, pos, err := table.DecodeValue(sc, kv.Value, nil)
		if err != nil {
			return nil, fmt.Errorf("row %x: %w", kv.Key, err)
		}
		if states[i], err = sc.Merge(states[i], vals, pos, kv.Delete, u, kv.Named); err != nil {
			return nil, err
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
	m := &modelWrite{}
	if len(gone) > 0 {
		m.exec(`DELETE FROM `+name+` WHERE `+pgx.Identifier{keyColumn}.Sanitize()+` = ANY($1)`, gone)
	}
	if sc.SequenceColumn() >= 0 {
		m.exec(`DELETE FROM loadnode.tombstones WHERE schema_name = $1 AND table_name = $2 AND key = ANY($3)`,
			s.opts.Schema, ti.schema.Name(), keys)
		if len(tombKeys) > 0 {
			m.exec(`INSERT INTO loadnode.tombstones (schema_name, table_name, key, row)
				SELECT $1, $2, * FROM unnest($3::bytea[], $4::bytea[])`, s.opts.Schema, ti.schema.Name(), tombKeys, tombRows)
		}
	}
	if len(live) == 0 {
		return m, nil
	}
	data, err := encodeCopy(ti, live)
	if err != nil {
		return nil, err
	}
	m.copy(stageUp, data)
	m.exec(upsertSQL(ti, sc, false))
	return m, nil
}

// readStates fills states[index[key]] with the stored row, else the
// tombstone, of each key.
func (s *Sink) readStates(ctx context.Context, tx querier, ti *tableInfo, sc *table.Schema, keys [][]byte, index map[string]int, states []*table.RowState) error {
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
	cols := sc.StoredColumns()
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
