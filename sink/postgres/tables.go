package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// The columns loadnode adds to every table, before the spec's.
const (
	keyColumn       = "_loadnode_key"
	jobColumn       = "_loadnode_job"
	partitionColumn = "_loadnode_partition"
	offsetColumn    = "_loadnode_offset"
	reservedPrefix  = "_loadnode_"
)

// systemColumns are the added columns and their PostgreSQL types.
var systemColumns = []struct{ name, typ string }{
	{keyColumn, "bytea"},
	{jobColumn, "bigint"},
	{partitionColumn, "integer"},
	{offsetColumn, "bigint"},
}

// tableInfo is what the sink knows of one table.
type tableInfo struct {
	schema *table.Schema
	ident  pgx.Identifier
	// cols are every column COPY writes, the added ones first.
	cols []string
	// shape is the table's columns as loadnode last checked them.
	shape *shapeCell
}

func newTableInfo(pgSchema string, sc *table.Schema) *tableInfo {
	ti := &tableInfo{schema: sc, ident: pgx.Identifier{pgSchema, sc.Name()}, shape: &shapeCell{}}
	for _, c := range systemColumns {
		ti.cols = append(ti.cols, c.name)
	}
	for _, c := range sc.StoredColumns() {
		ti.cols = append(ti.cols, c.GetName())
	}
	return ti
}

// IncompatibleError says why an existing PostgreSQL table cannot hold a
// spec's rows.
type IncompatibleError struct {
	Table  string // schema.table
	Column string // "" when the table as a whole
	Msg    string
}

func (e *IncompatibleError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("postgres: table %s: %s", e.Table, e.Msg)
	}
	return fmt.Sprintf("postgres: table %s column %s: %s", e.Table, e.Column, e.Msg)
}

// SpecField names the spec field the error is about.
func (e *IncompatibleError) SpecField() string { return "table.columns" }

// ChangedError says that a table loadnode prepared for a spec was altered
// in PostgreSQL since, so that it no longer holds the spec's rows: a
// column loadnode writes has another type, was made NOT NULL or is gone.
// It wraps sink.ErrTableChanged (a job pauses SINK_TABLE_CHANGED) and is
// never a spec refusal (*IncompatibleError): loadnode accepted this spec
// for this table before.
type ChangedError struct {
	Table  string // "schema"."table"
	Column string // "" when the table as a whole
	// Msg is what PostgreSQL has now against what the spec needs, as an
	// IncompatibleError says it ("is character varying(30) in
	// PostgreSQL, the spec has STRING (text)").
	Msg string
}

func (e *ChangedError) Error() string {
	what := "table " + e.Table
	if e.Column != "" {
		what += " column " + e.Column
	}
	return fmt.Sprintf("postgres: %s was altered in PostgreSQL since loadnode prepared it: %s "+
		"(restore it, then resume the job)", what, e.Msg)
}

func (e *ChangedError) Unwrap() error { return sink.ErrTableChanged }

// changed makes ie, a check of a table loadnode prepared for this spec
// before, a ChangedError.
func changed(ie *IncompatibleError) *ChangedError {
	return &ChangedError{Table: ie.Table, Column: ie.Column, Msg: ie.Msg}
}

// CreateTable is PrepareTable for a table the node's catalog is about to
// record (the table is made or checked first), refusing a table or column
// name longer than PostgreSQL keeps (NameError; names.go). PrepareTable
// alone, at a job's start, accepts a table an earlier release created
// under such a name.
func (s *Sink) CreateTable(spec *api.TableSpec) error {
	sc, err := table.NewSchema(spec)
	if err != nil {
		return fmt.Errorf("postgres: create table: %w", err)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	if err := checkNames(s.opts.Schema, sc, s.maxIdentBytes()); err != nil {
		return err
	}
	return s.PrepareTable(spec)
}

// PrepareTable creates the table if it does not exist, else checks that
// its columns can hold the spec's rows, and records the spec in
// loadnode.tables.
func (s *Sink) PrepareTable(spec *api.TableSpec) error {
	b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(spec)
	if err != nil || spec == nil {
		return s.prepareTable(spec)
	}
	// Every job's first tasks prepare its table: the spec prepared last
	// (the same bytes: NewSchema keeps a copy of spec) passed every check
	// of prepareTable, so it needs no schema built or bootstrap checked
	// again. The jobs that start together (a burst of creates) wait for
	// one preparation of their spec instead of queueing each its own on
	// the table's advisory lock.
	name := spec.GetName()
	s.mu.Lock()
	if bytes.Equal(s.mu.prepared[name], b) {
		s.mu.Unlock()
		return nil
	}
	if f := s.mu.preparing[name]; f != nil && bytes.Equal(f.spec, b) {
		s.mu.Unlock()
		<-f.done
		return f.err
	}
	f := &preparation{spec: b, done: make(chan struct{})}
	s.mu.preparing[name] = f
	s.mu.Unlock()
	f.err = s.prepareTable(spec)
	close(f.done)
	s.mu.Lock()
	if s.mu.preparing[name] == f {
		delete(s.mu.preparing, name)
	}
	s.mu.Unlock()
	return f.err
}

// preparation is a PrepareTable in flight, which the calls for the same
// spec (bytes) wait for and share the answer of.
type preparation struct {
	spec []byte
	done chan struct{} // closed once err is set
	err  error
}

// prepareTable is PrepareTable's work.
func (s *Sink) prepareTable(spec *api.TableSpec) error {
	sc, err := table.NewSchema(spec)
	if err != nil {
		return fmt.Errorf("postgres: prepare table: %w", err)
	}
	for _, c := range sc.Columns() {
		if strings.HasPrefix(strings.ToLower(c.GetName()), reservedPrefix) {
			return &IncompatibleError{Table: s.opts.Schema + "." + sc.Name(), Column: c.GetName(),
				Msg: "names starting with " + reservedPrefix + " are loadnode's own"}
		}
		if pgType(c.GetType()) == "" {
			return &IncompatibleError{Table: s.opts.Schema + "." + sc.Name(), Column: c.GetName(),
				Msg: "type " + c.GetType().String() + " is not supported by the PostgreSQL sink"}
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	ti := newTableInfo(s.opts.Schema, sc)
	specBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(sc.Spec())
	if err != nil {
		return fmt.Errorf("postgres: prepare table %s: %w", sc.Name(), err)
	}
	s.mu.Lock()
	done := bytes.Equal(s.mu.prepared[sc.Name()], specBytes)
	s.mu.Unlock()
	if done {
		return nil
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One preparer of a table at a time (two jobs' first loads).
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7400812519388))`,
			ti.ident.Sanitize()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.opts.Schema}.Sanitize()); err != nil {
			return err
		}
		existing, err := columnsOf(ctx, tx, s.opts.Schema, sc.Name())
		if err != nil {
			return err
		}
		// The spec loadnode prepared the table for, if it did.
		var recorded []byte
		err = tx.QueryRow(ctx, `SELECT spec FROM loadnode.tables WHERE schema_name = $1 AND table_name = $2`,
			s.opts.Schema, sc.Name()).Scan(&recorded)
		known := err == nil
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if len(existing) == 0 {
			// A table loadnode made before and that is gone was dropped
			// by someone: making it again would hide that its rows are
			// gone. A person decides (delete its row in loadnode.tables
			// to have it made again).
			if known {
				return fmt.Errorf("postgres: table %s was created by loadnode and has been dropped (%w); "+
					"to have it created again, DELETE FROM loadnode.tables WHERE schema_name = '%s' AND table_name = '%s'",
					ti.ident.Sanitize(), sink.ErrTableChanged, s.opts.Schema, sc.Name())
			}
			if _, err := tx.Exec(ctx, createTableSQL(ti)); err != nil {
				return err
			}
		} else if err := checkColumns(ti, existing); err != nil {
			var ie *IncompatibleError
			if errors.As(err, &ie) && known && bytes.Equal(recorded, specBytes) {
				// This very spec was prepared on this table before:
				// someone altered the table since (issue 25, D15).
				return changed(ie)
			}
			return err
		}
		if sc.Keyed() {
			if err := ensureKeyConstraints(ctx, tx, ti); err != nil {
				return err
			}
		}
		shape, err := readShape(tx.Query(ctx, shapeQuery, ti.ident.Sanitize()))
		if err != nil {
			return err
		}
		ti.shape.set(shape)
		_, err = tx.Exec(ctx, `INSERT INTO loadnode.tables (schema_name, table_name, spec) VALUES ($1, $2, $3)
			ON CONFLICT (schema_name, table_name) DO UPDATE SET spec = EXCLUDED.spec`, s.opts.Schema, sc.Name(), specBytes)
		return err
	})
	if err != nil {
		var ie *IncompatibleError
		if errors.As(err, &ie) || errors.Is(err, sink.ErrTableChanged) {
			return err
		}
		return fmt.Errorf("postgres: prepare table %s: %w", ti.ident.Sanitize(), classify(err))
	}
	s.mu.Lock()
	s.mu.tables[sc.Name()] = ti
	s.mu.prepared[sc.Name()] = specBytes
	s.mu.Unlock()
	return nil
}

// forgetPrepared makes the next PrepareTable of the table check it again.
func (s *Sink) forgetPrepared(name string) {
	s.mu.Lock()
	delete(s.mu.prepared, name)
	s.mu.Unlock()
}

func createTableSQL(ti *tableInfo) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(ti.ident.Sanitize())
	b.WriteString(" (")
	for i, c := range systemColumns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{c.name}.Sanitize() + " " + c.typ + " NOT NULL")
		if c.name == keyColumn && !ti.schema.Keyed() {
			b.WriteString(" PRIMARY KEY")
		}
	}
	for _, c := range ti.schema.StoredColumns() {
		b.WriteString(", " + pgx.Identifier{c.GetName()}.Sanitize() + " " + columnDDL(c))
	}
	if ti.schema.Keyed() {
		b.WriteString(keyConstraintsSQL(ti.schema))
	}
	b.WriteString(")")
	return b.String()
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

// pgColumn is a column of an existing table.
type pgColumn struct {
	typ       string
	maxLen    *int32
	nullable  bool
	hasDefult bool
	key       bool // part of the primary key
	numPrec   *int32
	numScale  *int32
	dtPrec    *int32
}

func columnsOf(ctx context.Context, tx querier, schema, name string) (map[string]pgColumn, error) {
	rows, err := tx.Query(ctx, `
		SELECT c.column_name, c.data_type, c.character_maximum_length, c.is_nullable = 'YES', c.column_default IS NOT NULL,
			EXISTS (SELECT 1 FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
				WHERE tc.table_schema = c.table_schema AND tc.table_name = c.table_name
				AND tc.constraint_type = 'PRIMARY KEY' AND k.column_name = c.column_name),
			c.numeric_precision, c.numeric_scale, c.datetime_precision
		FROM information_schema.columns c
		WHERE c.table_schema = $1 AND c.table_name = $2`, schema, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := make(map[string]pgColumn)
	for rows.Next() {
		var n string
		var c pgColumn
		if err := rows.Scan(&n, &c.typ, &c.maxLen, &c.nullable, &c.hasDefult, &c.key, &c.numPrec, &c.numScale, &c.dtPrec); err != nil {
			return nil, err
		}
		cols[n] = c
	}
	return cols, rows.Err()
}

// checkColumns: every column loadnode writes exists with a type that holds
// its values, the row key is the primary key, and every other column may
// be left out of a COPY.
func checkColumns(ti *tableInfo, existing map[string]pgColumn) error {
	name := ti.ident.Sanitize()
	bad := func(col, format string, args ...any) error {
		return &IncompatibleError{Table: name, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	for _, c := range systemColumns {
		have, ok := existing[c.name]
		switch {
		case !ok:
			return &IncompatibleError{Table: name, Msg: fmt.Sprintf("exists without loadnode's column %s %s (not a table loadnode created)", c.name, c.typ)}
		case have.typ != c.typ:
			return bad(c.name, "is %s in PostgreSQL, loadnode needs %s", have.typ, c.typ)
		}
	}
	if !existing[keyColumn].key && !ti.schema.Keyed() {
		return bad(keyColumn, "is not the primary key")
	}
	keyCol := map[string]bool{}
	for _, k := range ti.schema.KeyColumns() {
		keyCol[ti.schema.Columns()[k].GetName()] = true
	}
	written := map[string]bool{}
	for _, c := range systemColumns {
		written[c.name] = true
	}
	for _, c := range ti.schema.StoredColumns() {
		written[c.GetName()] = true
		have, ok := existing[c.GetName()]
		want := columnDDL(c)
		known, typedOK := typedCompatible(c, have)
		switch {
		case !ok:
			return bad(c.GetName(), "is missing in PostgreSQL; the spec has it as %s (%s)", c.GetType(), want)
		case known && !typedOK:
			t := have.typ
			if have.numPrec != nil && have.numScale != nil {
				t = fmt.Sprintf("numeric(%d,%d)", *have.numPrec, *have.numScale)
			} else if have.dtPrec != nil && strings.HasPrefix(t, "timestamp") {
				t = fmt.Sprintf("%s(%d)", t, *have.dtPrec)
			}
			return bad(c.GetName(), "is %s in PostgreSQL, the spec has %s (%s)", t, table.TypeString(c), want)
		case !known && (!compatible(c.GetType(), have.typ) || (have.maxLen != nil)):
			t := have.typ
			if have.maxLen != nil {
				t = fmt.Sprintf("%s(%d)", t, *have.maxLen)
			}
			return bad(c.GetName(), "is %s in PostgreSQL, the spec has %s (%s)", t, c.GetType(), want)
		case !have.nullable && !(keyCol[c.GetName()] && c.GetNotNull()):
			// (A key column the spec makes NOT NULL is, in the primary key.)
			return bad(c.GetName(), "is NOT NULL in PostgreSQL; loadnode may write NULL")
		}
	}
	for n, have := range existing {
		if !written[n] && !have.nullable && !have.hasDefult {
			return bad(n, "is NOT NULL without a default in PostgreSQL and not in the spec")
		}
	}
	return nil
}

// table returns the table's info: from PrepareTable, else from
// loadnode.tables (a restarted node reading a table before any job
// prepared it).
func (s *Sink) table(ctx context.Context, name string) (*tableInfo, error) {
	s.mu.Lock()
	ti := s.mu.tables[name]
	s.mu.Unlock()
	if ti != nil {
		return ti, nil
	}
	if err := s.bootstrap(ctx); err != nil {
		return nil, err
	}
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT spec FROM loadnode.tables WHERE schema_name = $1 AND table_name = $2`,
		s.opts.Schema, name).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: table %s.%s: %w", s.opts.Schema, name, ErrNoTable)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: table %s.%s: %w", s.opts.Schema, name, err)
	}
	spec := &api.TableSpec{}
	if err := proto.Unmarshal(b, spec); err != nil {
		return nil, fmt.Errorf("postgres: table %s.%s: corrupt spec in loadnode.tables: %w", s.opts.Schema, name, err)
	}
	sc, err := table.NewSchema(spec)
	if err != nil {
		return nil, fmt.Errorf("postgres: table %s.%s: spec in loadnode.tables: %w", s.opts.Schema, name, err)
	}
	ti = newTableInfo(s.opts.Schema, sc)
	s.mu.Lock()
	s.mu.tables[name] = ti
	s.mu.Unlock()
	return ti, nil
}

// ErrNoTable is wrapped when a table was never prepared in the database.
var ErrNoTable = errors.New("postgres: no such table")

// A table's shape: what a commit checks, in the round trip that reads the
// job's progress, to see that no column it writes was altered since the
// table was checked (issue 25, D15). A COPY alone would not see it while
// the values still fit (a text column made varchar(30), then a longer
// string, a failure far from its cause).

// shapeQuery reads every column of table $1 (a quoted "schema"."table")
// with its type as format_type names it and whether it is NOT NULL; no
// rows when the table does not exist.
const shapeQuery = `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a
	WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`

// columnShape is a table's columns: name -> type, " NOT NULL" appended
// when the column is.
type columnShape map[string]string

// shapeCell holds the shape a table had when loadnode last found it could
// hold the spec's rows; nil before the first check.
type shapeCell struct {
	mu    sync.Mutex
	shape columnShape
}

func (c *shapeCell) set(s columnShape) {
	c.mu.Lock()
	c.shape = s
	c.mu.Unlock()
}

func (c *shapeCell) get() columnShape {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shape
}

// readShape reads shapeQuery's rows.
func readShape(rows pgx.Rows, err error) (columnShape, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	shape := columnShape{}
	for rows.Next() {
		var name, typ string
		var notNull bool
		if err := rows.Scan(&name, &typ, &notNull); err != nil {
			return nil, err
		}
		if notNull {
			typ += " NOT NULL"
		}
		shape[name] = typ
	}
	return shape, rows.Err()
}

// checkShape checks a commit's table against the shape it now has in
// PostgreSQL (read in the commit's transaction): unchanged since the last
// check, it holds the spec's rows; changed, it is checked as PrepareTable
// checks it, and a table that no longer holds them is a *ChangedError.
// A missing table is left to the write, which names it.
func checkShape(ctx context.Context, tx querier, ti *tableInfo, now columnShape) error {
	if len(now) == 0 || maps.Equal(now, ti.shape.get()) {
		return nil
	}
	existing, err := columnsOf(ctx, tx, ti.ident[0], ti.ident[1])
	if err != nil {
		return err
	}
	if err := checkColumns(ti, existing); err != nil {
		var ie *IncompatibleError
		if errors.As(err, &ie) {
			return changed(ie)
		}
		return err
	}
	ti.shape.set(now) // altered, and still holds every value (text to varchar)
	return nil
}
