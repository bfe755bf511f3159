package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

func openOwner(t *testing.T, dsn, owner string) *Sink {
	t.Helper()
	s, err := Open(Options{DSN: dsn, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestOwnersSeparateJobs: two sinks of different owners on one database
// keep job 1's progress, statistics and error rows apart, and a commit of
// one never moves the other's.
func TestOwnersSeparateJobs(t *testing.T) {
	needServer(t)
	dsn := server.CreateDatabase(t)
	a, b := openOwner(t, dsn, "node-a"), openOwner(t, dsn, "node-b")
	for _, s := range []*Sink{a, b} {
		if err := s.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
			t.Fatalf("InitStarts of %s: %v", s.opts.Owner, err)
		}
	}
	commit := func(s *Sink, from, to int64, base int64) error {
		return s.Commit(&sink.Commit{JobID: 1, Fence: 1, Ranges: []sink.Range{{Partition: 0, From: from, To: to}},
			Stats: &api.JobStats{CommittedBatches: base + 1, LoadedRows: to}, StatsBase: base,
			ErrorRows: []*api.ErrorRow{{Partition: 0, Offset: from, Reason: s.opts.Owner}}})
	}
	if err := commit(a, 0, 10, 0); err != nil {
		t.Fatal(err)
	}
	// b's job 1 is still at 0: a commit from 10 is stale, from 0 is not.
	if err := commit(b, 10, 20, 1); !errors.Is(err, sink.ErrStaleCommit) {
		t.Fatalf("b's commit from a's position: %v; want ErrStaleCommit", err)
	}
	if err := commit(b, 0, 5, 0); err != nil {
		t.Fatal(err)
	}
	for s, want := range map[*Sink]int64{a: 10, b: 5} {
		p, err := s.Progress(1)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.ErrorRows(1, 10)
		if err != nil {
			t.Fatal(err)
		}
		if p.Positions[0] != want || p.Stats.GetLoadedRows() != want || len(rows) != 1 || rows[0].GetReason() != s.opts.Owner {
			t.Fatalf("%s: progress %v, stats %v, error rows %v; want position %d and its own error row", s.opts.Owner, p.Positions, p.Stats, rows, want)
		}
	}
	if err := a.DropJob(1); err != nil {
		t.Fatal(err)
	}
	if p, err := b.Progress(1); err != nil || p.Positions[0] != 5 {
		t.Fatalf("b's job 1 after a dropped its job 1: %v, %v", p, err)
	}
}

// TestOwnerMigration: a loadnode schema made before owners (tables keyed
// by job alone) is migrated by the first sink that opens it; its rows are
// that sink's owner's, and another owner starts empty.
func TestOwnerMigration(t *testing.T) {
	needServer(t)
	dsn := server.CreateDatabase(t)
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// The schema as the sink made it before owners.
	for _, q := range []string{
		`CREATE SCHEMA loadnode`,
		`CREATE TABLE loadnode.jobs (job bigint PRIMARY KEY, fence bigint NOT NULL DEFAULT 0, committed_batches bigint NOT NULL DEFAULT 0,
			loaded_rows bigint NOT NULL DEFAULT 0, error_rows bigint NOT NULL DEFAULT 0, stats bytea, error_seq bigint NOT NULL DEFAULT 0,
			updated_at timestamptz NOT NULL DEFAULT now())`,
		`CREATE TABLE loadnode.progress (job bigint NOT NULL, partition integer NOT NULL, position bigint NOT NULL, checkpoint bytea, PRIMARY KEY (job, partition))`,
		`CREATE TABLE loadnode.error_rows (job bigint NOT NULL, seq bigint NOT NULL, partition integer NOT NULL, "offset" bigint NOT NULL,
			reason text NOT NULL, row bytea NOT NULL, PRIMARY KEY (job, seq))`,
		`INSERT INTO loadnode.jobs (job, fence) VALUES (1, 3)`,
		`INSERT INTO loadnode.progress VALUES (1, 0, 42, NULL), (1, 1, 7, NULL)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	first := openOwner(t, dsn, "first")
	p, err := first.Progress(1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Positions[0] != 42 || p.Positions[1] != 7 || p.Fence != 3 {
		t.Fatalf("first owner after the migration: %+v; want the old rows", p)
	}
	second := openOwner(t, dsn, "second")
	if p, err := second.Progress(1); err != nil || len(p.Positions) != 0 {
		t.Fatalf("second owner: %v, %v; want no progress", p, err)
	}
	if err := second.InitStarts(1, map[int32]int64{0: 0}, nil); err != nil {
		t.Fatalf("second owner's job 1: %v", err)
	}
}
