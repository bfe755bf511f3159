package postgres

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
)

// Options configure a Sink. Zero fields take the defaults of
// defaultOptions.
type Options struct {
	// Name is the database's name in the node config, for Describe.
	// Default "postgres".
	Name string
	// DSN is the connection string (URL or key=value). Required.
	DSN string
	// Password, when set, overrides the DSN's.
	Password string
	// Schema is the schema of the loaded tables. Default "public"; at
	// most 63 bytes (PostgreSQL's identifier limit), no NUL.
	Schema string
	// Owner namespaces the job state this sink reads and writes in
	// loadnode's schema (progress, statistics, fences, error rows): job
	// ids are a node's own, so nodes sharing a database each give their
	// own owner (the node's id, or databases.NAME.owner). An existing
	// schema from before owners is migrated: its rows become the first
	// opener's. Default "" (one namespace); at most 200 bytes.
	Owner string
	// Incarnation, when set, names this process among the incarnations
	// of Owner (copies of one node share its id: a restored backup, a
	// copied data directory): the sink's first use claims Owner for it,
	// and from then on every write of a job's state or of rows is refused
	// (sink.ErrSuperseded) once another incarnation has claimed Owner
	// (incarnation.go). Sinks of one process give the same. Default ""
	// (claim nothing: cluster members share one owner and fence by
	// epoch); at most 200 bytes.
	Incarnation string
	// MaxErrorRowsKept is how many error rows are kept per job (the
	// newest). Default 1000; >= 1.
	MaxErrorRowsKept int
	// MaxConns bounds the pool. Default 16; >= 1.
	MaxConns int32
	// Timeout bounds each call (a commit is one call). Default 2m; > 0.
	Timeout time.Duration
	// Logger receives the sink's log lines. Default: discarded.
	Logger *slog.Logger
}

// maxOwnerBytes bounds Options.Owner and Options.Incarnation.
const maxOwnerBytes = 200

func defaultOptions() Options {
	return Options{
		Schema:           "public",
		MaxErrorRowsKept: 1000,
		MaxConns:         16,
		Timeout:          2 * time.Minute,
		Logger:           slog.New(slog.DiscardHandler),
	}
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	d := defaultOptions()
	if o.Schema == "" {
		o.Schema = d.Schema
	}
	if o.MaxErrorRowsKept == 0 {
		o.MaxErrorRowsKept = d.MaxErrorRowsKept
	}
	if o.MaxConns == 0 {
		o.MaxConns = d.MaxConns
	}
	if o.Timeout == 0 {
		o.Timeout = d.Timeout
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	return o
}

// Validate reports the first invalid field.
func (o Options) Validate() error {
	switch {
	case o.DSN == "":
		return errors.New("postgres: DSN is required")
	case len(o.Schema) > stockMaxIdentBytes || strings.ContainsRune(o.Schema, 0):
		return fmt.Errorf("postgres: Schema %s is not a PostgreSQL identifier (at most %d bytes, no NUL)", api.Quote(o.Schema), stockMaxIdentBytes)
	case len(o.Owner) > maxOwnerBytes:
		return fmt.Errorf("postgres: Owner is %d bytes, want at most %d", len(o.Owner), maxOwnerBytes)
	case len(o.Incarnation) > maxOwnerBytes:
		return fmt.Errorf("postgres: Incarnation is %d bytes, want at most %d", len(o.Incarnation), maxOwnerBytes)
	case o.MaxErrorRowsKept < 1:
		return fmt.Errorf("postgres: MaxErrorRowsKept is %d, want >= 1", o.MaxErrorRowsKept)
	case o.MaxConns < 1:
		return fmt.Errorf("postgres: MaxConns is %d, want >= 1", o.MaxConns)
	case o.Timeout <= 0:
		return fmt.Errorf("postgres: Timeout is %v, want > 0", o.Timeout)
	}
	return nil
}
