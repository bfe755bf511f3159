package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/sink"
)

// Incarnations of an owner.
//
// Copies of a node share its id, and so its owner here: a node started on
// a restored backup or on a copied data directory, two nodes started from
// one backup, the original left running after a restore. Each process is
// one incarnation of the owner (Options.Incarnation). The sink's first use
// claims the owner for its incarnation in loadnode.owners (claimOwner):
// the owner's counter grows, its holder becomes this incarnation, and the
// claim waits for every job row of the owner, so that a write of the
// former incarnation in flight ends first. Every later write of a job's
// state or of rows reads the owner's holder after it has locked the job's
// row (checkClaim) and is refused with sink.ErrSuperseded when another
// incarnation has claimed the owner since.
//
// INVARIANT: once an incarnation has claimed its owner, no write of a
// former incarnation to a job whose row existed at the claim commits: the
// newest incarnation wins, whichever copy it started from. (A job's first
// row, inserted by a former incarnation while the claim runs, can land
// after it; the progress check still refuses whatever does not continue
// the stored progress.)
//
// A claim that PostgreSQL lost (the database restored from a dump taken
// before it: the owner's row older than the claim, or gone) is made again
// by the next write; sinks of one process share an incarnation (two
// database entries on one database), so they never fence each other.

// ownersSQL creates loadnode.owners: the incarnation that holds each owner.
const ownersSQL = `CREATE TABLE IF NOT EXISTS loadnode.owners (
		owner text PRIMARY KEY,
		incarnation bigint NOT NULL,
		holder text NOT NULL,
		claimed_at timestamptz NOT NULL DEFAULT now())`

// ownerQuery reads the owner's claim (incarnation, holder, claimed_at).
const ownerQuery = `SELECT incarnation, holder, claimed_at FROM loadnode.owners WHERE owner = $1`

// claim is an owner's row in loadnode.owners.
type claim struct {
	incarnation int64
	holder      string
	at          time.Time
}

// claimOwner claims the owner for this sink's incarnation and returns the
// owner's new counter (see "Incarnations of an owner").
// REQUIRES: tx holds the bootstrap's advisory lock; Options.Incarnation set.
func (s *Sink) claimOwner(ctx context.Context, tx pgx.Tx) (int64, error) {
	var prev claim
	err := tx.QueryRow(ctx, ownerQuery+` FOR UPDATE`, s.opts.Owner).Scan(&prev.incarnation, &prev.holder, &prev.at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return 0, err
	case prev.holder == s.opts.Incarnation:
		// Another sink of this process claimed it.
		return prev.incarnation, nil
	}
	n := prev.incarnation + 1
	if _, err := tx.Exec(ctx, `INSERT INTO loadnode.owners (owner, incarnation, holder) VALUES ($1, $2, $3)
		ON CONFLICT (owner) DO UPDATE SET incarnation = EXCLUDED.incarnation, holder = EXCLUDED.holder, claimed_at = now()`,
		s.opts.Owner, n, s.opts.Incarnation); err != nil {
		return 0, err
	}
	// A write of the former incarnation in flight holds its job's row:
	// wait for it, so that none commits after this claim.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM loadnode.jobs WHERE owner = $1 FOR UPDATE`, s.opts.Owner); err != nil {
		return 0, err
	}
	if prev.holder != "" {
		s.opts.Logger.Info("postgres: claimed the owner's job state for this process; an earlier process with this owner can no longer write here",
			"owner", s.opts.Owner, "incarnation", n, "holder", s.opts.Incarnation,
			"former_holder", prev.holder, "former_claimed_at", prev.at.UTC().Format(time.RFC3339))
	}
	return n, nil
}

// incarnation is the counter this sink claimed, 0 before bootstrap or
// without Options.Incarnation.
func (s *Sink) incarnation() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.incarnation
}

// checkClaim refuses a write (sink.ErrSuperseded) when another incarnation
// has claimed the owner since this sink did. got and err are ownerQuery's
// answer, read in tx after the write locked its job's row.
// REQUIRES: tx has locked the row of the job it writes (a write that is
// not a job's, DropTable and InsertRows, reads the claim alone).
func (s *Sink) checkClaim(ctx context.Context, tx querier, got claim, err error) error {
	if s.opts.Incarnation == "" {
		return nil
	}
	if err == nil && got.holder == s.opts.Incarnation {
		return nil
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	mine := s.incarnation()
	if err == nil && got.incarnation >= mine {
		return s.superseded(got, mine)
	}
	// The owner's row is gone or older than our claim: the database was
	// restored from a dump taken before it. Claim again; a concurrent
	// claim of a later incarnation wins.
	err = tx.QueryRow(ctx, `INSERT INTO loadnode.owners AS o (owner, incarnation, holder) VALUES ($1, $2, $3)
		ON CONFLICT (owner) DO UPDATE SET incarnation = EXCLUDED.incarnation, holder = EXCLUDED.holder, claimed_at = now()
		WHERE o.incarnation < EXCLUDED.incarnation OR o.holder = EXCLUDED.holder
		RETURNING incarnation`, s.opts.Owner, mine, s.opts.Incarnation).Scan(new(int64))
	if errors.Is(err, pgx.ErrNoRows) {
		if err = tx.QueryRow(ctx, ownerQuery, s.opts.Owner).Scan(&got.incarnation, &got.holder, &got.at); err == nil {
			return s.superseded(got, mine)
		}
	}
	if err == nil {
		s.opts.Logger.Warn("postgres: claimed the owner's job state again (its row in loadnode.owners was older than this process's claim: the database restored from a dump?)",
			"owner", s.opts.Owner, "incarnation", mine)
	}
	return err
}

// checkClaimTx reads the owner's claim in tx and checks it (checkClaim).
func (s *Sink) checkClaimTx(ctx context.Context, tx pgx.Tx) error {
	if s.opts.Incarnation == "" {
		return nil
	}
	var got claim
	err := tx.QueryRow(ctx, ownerQuery, s.opts.Owner).Scan(&got.incarnation, &got.holder, &got.at)
	return s.checkClaim(ctx, tx, got, err)
}

// superseded is the refusal of a write of a former incarnation.
func (s *Sink) superseded(got claim, mine int64) error {
	name := s.opts.Name
	if name == "" {
		name = "postgres"
	}
	return fmt.Errorf("database %s: another process with owner %s claimed this node's job state at %s (incarnation %d, %s; this process is %d, %s): "+
		"a node started on a copy of this node's data directory or on a restored backup loads these jobs now, and this one no longer writes to the database: "+
		"stop one of the two; restart this node to take the jobs back: %w: %w",
		name, s.opts.Owner, got.at.UTC().Format(time.RFC3339), got.incarnation, got.holder, mine, s.opts.Incarnation, sink.ErrSuperseded, sink.ErrStaleCommit)
}
