package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/loadnode/loadnode/internal/jobgroup"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// Sink is a PostgreSQL database seen as a loadnode sink.
type Sink struct {
	pool *pgxpool.Pool
	opts Options

	mu struct {
		sync.Mutex
		// bootstrapped: loadnode's schema and tables exist (and the owner
		// is claimed, with Options.Incarnation).
		bootstrapped bool
		// maxIdent is the server's max_identifier_length in bytes (read
		// at bootstrap; stockMaxIdentBytes until then).
		maxIdent int
		// incarnation is the owner's counter this sink claimed
		// (incarnation.go); 0 without Options.Incarnation.
		incarnation int64
		// tables caches what PrepareTable (or the catalog) said of each
		// table, by loadnode table name.
		tables map[string]*tableInfo
		// prepared holds, by table name, the spec PrepareTable last made
		// or checked the table for: preparing it again for the same spec
		// (every job's first tasks, every job a member takes over) is a
		// no-op until a commit finds the table changed or it is dropped.
		prepared map[string][]byte
		// preparing holds, by table name, the PrepareTable in flight.
		preparing map[string]*preparation
	}
	// starts groups concurrent InitStarts calls (initstarts.go).
	starts jobgroup.Group[*startsCall]
	// commits groups concurrent small commits (commitgroup.go).
	commits jobgroup.Group[*commitCall]
}

var (
	_ sink.Sink         = (*Sink)(nil)
	_ sink.RowChecker   = (*Sink)(nil)
	_ sink.Describer    = (*Sink)(nil)
	_ sink.TableCreator = (*Sink)(nil)
)

// Open returns a Sink over the database of o.DSN. It does not connect:
// the first call that needs the database does (so a node starts while its
// database is down); Ping checks it.
func Open(o Options) (*Sink, error) {
	o = o.withDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// pgx's message may quote the DSN, password included: say less.
		return nil, errors.New("postgres: cannot parse the DSN (want postgres://user@host:port/db?... or key=value pairs)")
	}
	if o.Password != "" {
		cfg.ConnConfig.Password = o.Password
	}
	cfg.MaxConns = o.MaxConns
	cfg.ConnConfig.RuntimeParams["application_name"] = "loadnode"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Sink{pool: pool, opts: o}
	s.mu.tables = make(map[string]*tableInfo)
	s.mu.prepared = make(map[string][]byte)
	s.mu.preparing = make(map[string]*preparation)
	s.mu.maxIdent = stockMaxIdentBytes
	return s, nil
}

// Close closes the pool; calls in flight end first.
func (s *Sink) Close() { s.pool.Close() }

// Describe names where a table's rows are: "postgres NAME SCHEMA.TABLE".
func (s *Sink) Describe(table string) string {
	name := s.opts.Name
	if name == "" {
		name = "postgres"
	}
	return "postgres " + name + " " + s.opts.Schema + "." + table
}

// Schema is the schema of the loaded tables.
func (s *Sink) Schema() string { return s.opts.Schema }

// Ping connects and runs a query.
func (s *Sink) Ping(ctx context.Context) error {
	var one int
	if err := s.pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// maxIdentBytes is the server's max_identifier_length (names.go).
func (s *Sink) maxIdentBytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.maxIdent
}

func (s *Sink) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.Timeout)
}

// bootstrapSQL creates loadnode's own schema. It runs under an advisory
// lock: CREATE ... IF NOT EXISTS races between sessions.
var bootstrapSQL = []string{
	`SELECT pg_advisory_xact_lock(7400812519388)`,
	`CREATE SCHEMA IF NOT EXISTS loadnode`,
	`CREATE TABLE IF NOT EXISTS loadnode.jobs (
		owner text NOT NULL,
		job bigint NOT NULL,
		fence bigint NOT NULL DEFAULT 0,
		committed_batches bigint NOT NULL DEFAULT 0,
		loaded_rows bigint NOT NULL DEFAULT 0,
		error_rows bigint NOT NULL DEFAULT 0,
		stats bytea,
		error_seq bigint NOT NULL DEFAULT 0,
		updated_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (owner, job))`,
	`CREATE TABLE IF NOT EXISTS loadnode.progress (
		owner text NOT NULL,
		job bigint NOT NULL,
		partition integer NOT NULL,
		position bigint NOT NULL,
		checkpoint bytea,
		PRIMARY KEY (owner, job, partition))`,
	`CREATE TABLE IF NOT EXISTS loadnode.error_rows (
		owner text NOT NULL,
		job bigint NOT NULL,
		seq bigint NOT NULL,
		partition integer NOT NULL,
		"offset" bigint NOT NULL,
		reason text NOT NULL,
		row bytea NOT NULL,
		PRIMARY KEY (owner, job, seq))`,
	`CREATE TABLE IF NOT EXISTS loadnode.tables (
		schema_name text NOT NULL,
		table_name text NOT NULL,
		spec bytea NOT NULL,
		PRIMARY KEY (schema_name, table_name))`,
	ownersSQL,
}

// bootstrap creates loadnode's schema and, with Options.Incarnation,
// claims the owner (incarnation.go), once per Sink (again after a
// failure).
func (s *Sink) bootstrap(ctx context.Context) error {
	s.mu.Lock()
	done := s.mu.bootstrapped
	s.mu.Unlock()
	if done {
		return nil
	}
	var maxIdent int
	var incarnation int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range append(bootstrapSQL[:len(bootstrapSQL):len(bootstrapSQL)], modelsSQL...) {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `SELECT current_setting('max_identifier_length')::int`).Scan(&maxIdent); err != nil {
			return err
		}
		if err := s.migrateOwners(ctx, tx); err != nil {
			return err
		}
		if s.opts.Incarnation == "" {
			return nil
		}
		var err error
		if incarnation, err = s.claimOwner(ctx, tx); err != nil {
			return fmt.Errorf("claim owner %s: %w", s.opts.Owner, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: create schema loadnode: %w", classify(err))
	}
	s.mu.Lock()
	s.mu.bootstrapped = true
	s.mu.maxIdent = maxIdent
	s.mu.incarnation = incarnation
	s.mu.Unlock()
	return nil
}

// ownerKeys are loadnode's tables of job state and their keys after the
// owner.
var ownerKeys = []struct{ table, key string }{
	{"jobs", "job"}, {"progress", "job, partition"}, {"error_rows", "job, seq"},
}

// migrateOwners adds the owner column to a loadnode schema made before
// owners (its tables keyed by job alone): the rows there become this
// sink's owner's, the first node to open the database after the upgrade.
// REQUIRES: tx holds the bootstrap's advisory lock.
func (s *Sink) migrateOwners(ctx context.Context, tx pgx.Tx) error {
	for _, t := range ownerKeys {
		var has bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns
			WHERE table_schema = 'loadnode' AND table_name = $1 AND column_name = 'owner')`, t.table).Scan(&has); err != nil {
			return err
		}
		if has {
			continue
		}
		ident := pgx.Identifier{"loadnode", t.table}.Sanitize()
		var pkey string
		if err := tx.QueryRow(ctx, `SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`, ident).Scan(&pkey); err != nil {
			return fmt.Errorf("primary key of %s: %w", ident, err)
		}
		tag, err := tx.Exec(ctx, `ALTER TABLE `+ident+` ADD COLUMN owner text`)
		if err == nil {
			tag, err = tx.Exec(ctx, `UPDATE `+ident+` SET owner = $1`, s.opts.Owner)
		}
		for _, q := range []string{
			`ALTER TABLE ` + ident + ` ALTER COLUMN owner SET NOT NULL`,
			`ALTER TABLE ` + ident + ` DROP CONSTRAINT ` + pgx.Identifier{pkey}.Sanitize(),
			`ALTER TABLE ` + ident + ` ADD PRIMARY KEY (owner, ` + t.key + `)`,
		} {
			if err != nil {
				break
			}
			_, err = tx.Exec(ctx, q)
		}
		if err != nil {
			return fmt.Errorf("migrate %s to owners: %w", ident, err)
		}
		s.opts.Logger.Warn("postgres: migrated loadnode's schema to owners: the rows there are now this node's",
			"table", "loadnode."+t.table, "rows", tag.RowsAffected(), "owner", s.opts.Owner)
	}
	return nil
}

// CheckRow refuses what PostgreSQL would: text with a NUL byte or that is
// not UTF-8 (the server encoding of every database loadnode creates
// tables in is assumed UTF-8). Values the table package admits are in
// PostgreSQL's ranges otherwise (timestamps in years 0000..9999).
func (s *Sink) CheckRow(sc *table.Schema, vals []table.Value) error {
	return checkRow(sc, vals)
}

// unavailable wraps err with sink.ErrUnavailable when it says the server
// could not be reached or went away: a connection refused, lost or timed
// out, or the server shutting down, starting or in recovery (SQLSTATE
// class 08 and 57P01..57P03).
func unavailable(err error) error {
	if err == nil || errors.Is(err, sink.ErrUnavailable) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" {
			return fmt.Errorf("%w: %w", sink.ErrUnavailable, err)
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", sink.ErrUnavailable, err)
	}
	// pgx reports a connection that died under a query without a type
	// that says so.
	if msg := err.Error(); strings.Contains(msg, "conn closed") || strings.Contains(msg, "unexpected EOF") {
		return fmt.Errorf("%w: %w", sink.ErrUnavailable, err)
	}
	return err
}

// classify is unavailable, and wraps with sink.ErrRefused, naming the
// cause, an error PostgreSQL answered that retrying cannot fix: every
// SQLSTATE but the transient ones (transient). An error of neither kind
// (a pgx error that is not the server's) is returned as it is.
func classify(err error) error {
	err = unavailable(err)
	if err == nil || errors.Is(err, sink.ErrUnavailable) || errors.Is(err, sink.ErrRefused) {
		return err
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || transient(pe.Code) {
		return err
	}
	if c := cause(pe.Code); c != "" {
		return fmt.Errorf("%w (%s): %w", sink.ErrRefused, c, err)
	}
	return fmt.Errorf("%w: %w", sink.ErrRefused, err)
}

// transient reports whether SQLSTATE code may pass on a retry: the
// connection (class 08), a serialization failure, deadlock or unknown
// completion (40001, 40P01, 40003), insufficient resources (class 53:
// disk, memory, connections), a lock or object busy (55P03, 55006), the
// server shutting down, starting or ending an idle session (57P01..57P03,
// 57P05), a system or internal error of the server (classes 58, XX).
func transient(code string) bool {
	switch code {
	case "40001", "40P01", "40003", "55P03", "55006", "57P01", "57P02", "57P03", "57P05":
		return true
	}
	switch code[:min(2, len(code))] {
	case "08", "53", "58", "XX":
		return true
	}
	return false
}

// cause names what to fix for the refusals people meet at a create.
func cause(code string) string {
	switch {
	case code == "42501":
		return "the role lacks a privilege loadnode needs: CREATE on the database (for schema loadnode), CREATE on the tables' schema, " +
			"or ownership of an existing table"
	case code == "25006":
		return "the role's transactions are read-only: default_transaction_read_only, or a standby server"
	case code == "57014":
		return "a statement was cancelled: the statement_timeout of the role or database, or pg_cancel_backend"
	case code == "3D000":
		return "the DSN's database does not exist"
	case strings.HasPrefix(code, "28"):
		return "the login was refused: the DSN's user or password"
	}
	return ""
}
