package postgres

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Keyed tables (UNIQUE, AGGREGATE) in PostgreSQL: the key columns are
// the conflict target (keyConstraintsSQL: a primary key, or UNIQUE NULLS
// NOT DISTINCT while a key column may be NULL); _loadnode_key, their
// encoding (table.AppendRowKey), stays unique for scans. A commit's rows
// merge inside the batch's transaction, after its progress check
// (mergeRows): folded per key in source order, staged by COPY, applied
// with SQL. A replayed batch is refused by the progress check, so it
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

// mergeRowsRead merges c's rows into the keyed table ti, in tx, by
// reading the stored rows of the batch's keys and merging them in Go with
// table.Schema.Merge: the path of partial updates and of the value
// columns SQL cannot merge exactly as loadnode does (sqlMergeable).
// REQUIRES: the table's merge lock is held (mergeRows).
func (s *Sink) mergeRowsRead(ctx context.Context, tx pgx.Tx, ti *tableInfo, sc *table.Schema, c *sink.Commit) error {
	name := ti.ident.Sanitize()
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
		if states[i], err = sc.Merge(states[i], vals, pos, kv.Delete, c.Update, kv.Named); err != nil {
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
	if err := copyStage(ctx, tx, ti, stageUp, data); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, upsertSQL(ti, sc, nil, false))
	return err
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
		if err := s.checkClaimTx(ctx, tx); err != nil {
			return err
		}
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

// Staging tables of a keyed commit (temporary, dropped at commit).
const (
	stageUp  = "loadnode_stage_up"  // the batch's rows, one per key
	stageDel = "loadnode_stage_del" // the batch's deletes, one per key
)

// mergeRows merges c's rows into the keyed table ti, in tx: the batch's
// rows are folded per key in source order (table.Schema.Merge, the rules
// every sink shares: within a batch they are associative), then applied
// to the stored rows in SQL. UNIQUE: deletes by the staged keys, the rows
// with INSERT ... ON CONFLICT (key columns) DO UPDATE, both under the
// sequence condition (a row or delete wins when its sequence is >= the
// stored one, NULL the smallest); with a sequence column, deletes leave
// tombstones in loadnode.tombstones that a later row must beat.
// AGGREGATE: INSERT ... ON CONFLICT DO UPDATE with each value column's
// arithmetic (aggregateSQL). Partial updates, and value columns SQL cannot
// merge exactly as loadnode does, take mergeRowsRead. A replayed batch is
// refused by the progress check before this runs, so it never merges
// twice.
func (s *Sink) mergeRows(ctx context.Context, tx pgx.Tx, ti *tableInfo, sc *table.Schema, c *sink.Commit) error {
	name := ti.ident.Sanitize()
	// Writers of one table serialize: two jobs' commits touch the same
	// keys, and the tombstones are read before they are written.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7400812519389))`, name); err != nil {
		return err
	}
	if !sqlMergeable(sc, c.Update) {
		return s.mergeRowsRead(ctx, tx, ti, sc, c)
	}
	index := make(map[string]int, len(c.Rows))
	var keys [][]byte
	var states []*table.RowState
	var deleted []bool // a key's fold ends in a delete
	unique := sc.Spec().GetModel() == api.TableModel_UNIQUE
	for _, kv := range c.Rows {
		i, ok := index[string(kv.Key)]
		if !ok {
			i = len(keys)
			index[string(kv.Key)] = i
			keys, states, deleted = append(keys, kv.Key), append(states, nil), append(deleted, false)
		}
		vals, pos, err := table.DecodeValue(sc, kv.Value, nil)
		if err != nil {
			return fmt.Errorf("row %x: %w", kv.Key, err)
		}
		st, err := sc.Merge(states[i], vals, pos, kv.Delete, c.Update, nil)
		if err != nil {
			return err
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
			return err
		}
		for i, tb := range tombs {
			if tb == nil {
				continue
			}
			st, err := sc.Merge(tb, states[i].Vals, states[i].Pos, deleted[i], c.Update, nil)
			if err != nil {
				return err
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
	key := pgx.Identifier{keyColumn}.Sanitize()
	if len(dels) > 0 {
		data, err := encodeCopy(ti, dels)
		if err != nil {
			return err
		}
		if err := copyStage(ctx, tx, ti, stageDel, data); err != nil {
			return err
		}
		cond := ""
		if seq {
			cond = " AND " + sequenceCond(sc, "cur", "d")
		}
		if _, err := tx.Exec(ctx, `DELETE FROM `+name+` AS cur USING `+stageDel+` AS d WHERE cur.`+key+` = d.`+key+cond); err != nil {
			return err
		}
		if seq {
			// A delete that won leaves a tombstone: its key has no row now.
			if _, err := tx.Exec(ctx, `INSERT INTO loadnode.tombstones (schema_name, table_name, key, row)
				SELECT $1, $2, u.k, u.r FROM unnest($3::bytea[], $4::bytea[]) AS u(k, r)
				WHERE NOT EXISTS (SELECT 1 FROM `+name+` AS cur WHERE cur.`+key+` = u.k)
				ON CONFLICT (schema_name, table_name, key) DO UPDATE SET row = EXCLUDED.row`,
				s.opts.Schema, ti.schema.Name(), tombKeys, tombRows); err != nil {
				return err
			}
		}
	}
	if len(ups) > 0 {
		data, err := encodeCopy(ti, ups)
		if err != nil {
			return err
		}
		if err := copyStage(ctx, tx, ti, stageUp, data); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, upsertSQL(ti, sc, c.Update, true)); err != nil {
			return err
		}
		if seq {
			// A key with a row has no tombstone.
			upKeys := make([][]byte, len(ups))
			for i, kv := range ups {
				upKeys[i] = kv.Key
			}
			if _, err := tx.Exec(ctx, `DELETE FROM loadnode.tombstones tb WHERE tb.schema_name = $1 AND tb.table_name = $2
				AND tb.key = ANY($3) AND EXISTS (SELECT 1 FROM `+name+` AS cur WHERE cur.`+key+` = tb.key)`,
				s.opts.Schema, ti.schema.Name(), upKeys); err != nil {
				return err
			}
		}
	}
	return nil
}

// tombstones returns the tombstone of each key that has one (by index).
func (s *Sink) tombstones(ctx context.Context, tx pgx.Tx, ti *tableInfo, sc *table.Schema, keys [][]byte, index map[string]int) ([]*table.RowState, error) {
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

// copyStage creates the temporary table stage shaped as ti's table and
// fills it with rows by binary COPY.
func copyStage(ctx context.Context, tx pgx.Tx, ti *tableInfo, stage string, rows *copyData) error {
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE `+stage+` (LIKE `+ti.ident.Sanitize()+`) ON COMMIT DROP`); err != nil {
		return err
	}
	quoted := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, rows.reader(),
		"COPY "+stage+" ("+strings.Join(quoted, ", ")+") FROM STDIN (FORMAT binary)")
	if err == nil && tag.RowsAffected() != int64(rows.rows) {
		err = fmt.Errorf("COPY wrote %d rows of %d", tag.RowsAffected(), rows.rows)
	}
	return err
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
func upsertSQL(ti *tableInfo, sc *table.Schema, u *table.Update, merge bool) string {
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

// keyConstraintsSQL are the constraints of a new keyed table, for CREATE
// TABLE: a primary key on the key columns when the spec makes them all
// NOT NULL, else a UNIQUE NULLS NOT DISTINCT constraint on them (a NULL
// key is one key, as in loadnode's encoding); and _loadnode_key, which
// scans page by, unique.
func keyConstraintsSQL(sc *table.Schema) string {
	names, notNull := keyNames(sc)
	kind := "UNIQUE NULLS NOT DISTINCT"
	if notNull {
		kind = "PRIMARY KEY"
	}
	return ", " + kind + " (" + strings.Join(names, ", ") + "), UNIQUE (" + pgx.Identifier{keyColumn}.Sanitize() + ")"
}

// keyNames are the quoted key columns, and whether all are NOT NULL.
func keyNames(sc *table.Schema) ([]string, bool) {
	notNull := true
	var names []string
	for _, k := range sc.KeyColumns() {
		c := sc.Columns()[k]
		names = append(names, pgx.Identifier{c.GetName()}.Sanitize())
		notNull = notNull && c.GetNotNull()
	}
	return names, notNull
}

// ensureKeyConstraints checks that a keyed table has a unique index on
// exactly its key columns (the conflict target of mergeRows) and one on
// _loadnode_key. A table made by a release before this one has neither
// on the key columns (its primary key is _loadnode_key): the constraint
// is added here, in the prepare's transaction, so such tables keep
// working. A unique index on the key columns that lets NULL keys repeat
// is refused while a key column may be NULL.
// REQUIRES: the table's prepare lock is held (PrepareTable).
func ensureKeyConstraints(ctx context.Context, tx pgx.Tx, ti *tableInfo) error {
	rows, err := tx.Query(ctx, `SELECT array_agg(a.attname::text ORDER BY a.attname), i.indisprimary OR i.indnullsnotdistinct
		FROM pg_index i
		CROSS JOIN LATERAL unnest(i.indkey) AS k(attnum)
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid, i.indisprimary, i.indnullsnotdistinct`, ti.ident.Sanitize())
	if err != nil {
		return err
	}
	defer rows.Close()
	var want []string
	for _, k := range ti.schema.KeyColumns() {
		want = append(want, ti.schema.Columns()[k].GetName())
	}
	slices.Sort(want)
	_, notNull := keyNames(ti.schema)
	haveKeys, haveRowKey, nullsDistinct := false, false, false
	for rows.Next() {
		var cols []string
		var nullsOne bool
		if err := rows.Scan(&cols, &nullsOne); err != nil {
			return err
		}
		switch {
		case slices.Equal(cols, want) && (nullsOne || notNull):
			haveKeys = true
		case slices.Equal(cols, want):
			nullsDistinct = true
		case slices.Equal(cols, []string{keyColumn}):
			haveRowKey = true
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	names, _ := keyNames(ti.schema)
	switch {
	case !haveRowKey:
		return &IncompatibleError{Table: ti.ident.Sanitize(), Column: keyColumn, Msg: "has no unique index (not a table loadnode created)"}
	case !haveKeys && nullsDistinct:
		return &IncompatibleError{Table: ti.ident.Sanitize(), Msg: fmt.Sprintf(
			"its unique index on the key columns (%s) lets NULL keys repeat; make it UNIQUE NULLS NOT DISTINCT", strings.Join(names, ", "))}
	case !haveKeys:
		// Made by an earlier release: merges now conflict on the key
		// columns, so they get their constraint (once; it takes the
		// table's lock while it is built).
		_, err := tx.Exec(ctx, `ALTER TABLE `+ti.ident.Sanitize()+` ADD UNIQUE NULLS NOT DISTINCT (`+strings.Join(names, ", ")+`)`)
		return err
	}
	return nil
}
