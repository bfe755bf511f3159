package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sink/postgres"
)

// databases are the node config's databases, each opened as a sink. Pools
// connect on first use: a node starts while a database is down, and the
// jobs that load into it wait for it.
type databases struct {
	embedded sink.Sink
	sinks    map[string]*postgres.Sink
	// timed are the sinks the actors get: sinks (and embedded) timing their
	// commits when observe is set.
	timed map[string]sink.Sink
	cfg   map[string]config.Database
}

// commitObserver receives the latency of every commit call, by sink.
type commitObserver func(sink string, d time.Duration)

// timedPostgres is a postgres sink whose commits are timed; the embedded
// pointer keeps its optional interfaces (RowChecker, Describer,
// TableCreator).
type timedPostgres struct {
	*postgres.Sink
	label   string
	observe commitObserver
}

func (t timedPostgres) Commit(c *sink.Commit) error {
	began := time.Now()
	err := t.Sink.Commit(c)
	t.observe(t.label, time.Since(began))
	return err
}

// timedSink is timedPostgres for the embedded store. It embeds the
// store's concrete sink, not the sink.Sink interface: an interface would
// hide the optional ones (Inserter, Truncater, Dropper, the journaled
// starts), and a node with an admin endpoint refused INSERT and TRUNCATE
// and left a dropped table's rows behind.
type timedSink struct {
	*persistence.Sink
	label   string
	observe commitObserver
}

func (t timedSink) Commit(c *sink.Commit) error {
	began := time.Now()
	err := t.Sink.Commit(c)
	t.observe(t.label, time.Since(began))
	return err
}

// openDatabases opens a sink per configured database.
// observe, when not nil, receives every commit's latency.
func openDatabases(cfg config.Node, fsys vfs.FS, embedded *persistence.Sink, logger *slog.Logger, observe commitObserver) (*databases, error) {
	owner, incarnation := "", ""
	switch {
	case cfg.Cluster.Enabled():
		// Job ids are cluster-wide (allocated in etcd under the cluster's
		// prefix): every member reads and writes a job's progress under
		// the cluster's name, so a job that moves finds its positions.
		owner = "cluster:" + cfg.Cluster.Prefix
	case len(cfg.Databases) > 0:
		id, err := persistence.NodeID(fsys, cfg.DataDir)
		if err != nil {
			return nil, err
		}
		// Copies of this node (a restored backup, a copied data
		// directory) have its id: each process claims the id's job state
		// for itself, and a former one's writes are refused
		// (postgres.Options.Incarnation).
		owner, incarnation = id, newIncarnation()
	}
	d := &databases{sinks: map[string]*postgres.Sink{}, timed: map[string]sink.Sink{}, cfg: cfg.Databases}
	if embedded != nil {
		d.embedded = embedded
	}
	if embedded != nil && observe != nil {
		d.embedded = timedSink{Sink: embedded, label: "embedded", observe: observe}
	}
	for _, name := range cfg.DatabaseNames() {
		s, err := openDatabase(cfg, name, owner, incarnation, logger)
		if err != nil {
			d.close()
			return nil, err
		}
		d.sinks[name] = s
		d.timed[name] = s
		if observe != nil {
			d.timed[name] = timedPostgres{Sink: s, label: "postgres:" + name, observe: observe}
		}
	}
	return d, nil
}

// openDatabase opens the named database's sink; its job state is owned by
// the database's configured owner, or else by nodeOwner (the node's id),
// claimed for this process as incarnation ("": claimed by none).
func openDatabase(cfg config.Node, name, nodeOwner, incarnation string, logger *slog.Logger) (*postgres.Sink, error) {
	db := cfg.Databases[name]
	owner := db.Owner
	if owner == "" {
		owner = nodeOwner
	}
	pw, err := db.ReadPassword("databases." + name)
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	s, err := postgres.Open(postgres.Options{
		Name: name, DSN: db.DSN, Password: pw, Schema: db.Schema, Owner: owner, Incarnation: incarnation,
		MaxErrorRowsKept: cfg.MaxErrorRowsKept,
		MaxConns:         int32(min(max(cfg.MaxConcurrentTasks, 4), 64)),
		Logger:           logger.With("component", "postgres", "database", name),
	})
	if err != nil {
		return nil, fmt.Errorf("node: database %s: %w", name, err)
	}
	return s, nil
}

// newIncarnation names this process among the incarnations of its node id:
// host, process id and 8 random hex digits (the host and pid say, in a
// refusal, which process took the jobs).
func newIncarnation() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "?"
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%.64s pid %d %s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

func (d *databases) close() {
	for _, s := range d.sinks {
		s.Close()
	}
}

// UnknownDatabaseError refuses a table whose database the node config
// does not name.
type UnknownDatabaseError struct {
	Name  string
	Known []string
}

func (e *UnknownDatabaseError) Error() string {
	const hint = "; without table.database (or a Doris db. qualifier) a table is in the embedded store"
	if len(e.Known) == 0 {
		return fmt.Sprintf("table.database: database %q is not in the node config, which names no databases%s", e.Name, hint)
	}
	return fmt.Sprintf("table.database: database %q is not in the node config (databases: %s)%s", e.Name, strings.Join(e.Known, ", "), hint)
}

// SpecField is the job spec field at fault.
func (e *UnknownDatabaseError) SpecField() string { return "table.database" }

// sink is the actors' SinkFactory: the table's database, or the embedded
// store when the table names none.
func (d *databases) sink(t *api.TableSpec) (sink.Sink, error) {
	name := t.GetDatabase()
	if name == "" {
		return d.embedded, nil
	}
	s, ok := d.timed[name]
	if !ok {
		return nil, &UnknownDatabaseError{Name: name, Known: slices.Sorted(maps.Keys(d.cfg))}
	}
	return s, nil
}

// DatabaseProbe is whether one configured database answered.
type DatabaseProbe struct {
	Name string
	// Err is why it is not reachable; nil when it is.
	Err error
}

// ProbeDatabases connects to every database of cfg (at most timeout each,
// all at once) and reports, in name order, which answered.
func ProbeDatabases(ctx context.Context, cfg config.Node, timeout time.Duration) []DatabaseProbe {
	names := cfg.DatabaseNames()
	out := make([]DatabaseProbe, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		out[i].Name = name
		wg.Go(func() {
			s, err := openDatabase(cfg, name, "", "", slog.New(slog.DiscardHandler))
			if err != nil {
				out[i].Err = err
				return
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			out[i].Err = s.Ping(ctx)
		})
	}
	wg.Wait()
	return out
}
