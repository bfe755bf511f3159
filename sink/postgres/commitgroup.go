package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/loadnode/loadnode/sink"
)

// Concurrent small commits of different jobs share one transaction through
// a jobgroup.Group: many jobs that each commit a few rows (a burst of new
// jobs' first batches, the jobs a member takes over, thousands of quiet
// jobs) cost PostgreSQL a transaction and a WAL flush each, and this
// process a BEGIN and a COMMIT each; a group of n costs one. Large commits
// and commits into UNIQUE or AGGREGATE tables (staged through temporary
// tables) keep a transaction of their own, and so run in parallel on the
// pool's connections as before.
//
// INVARIANT: a grouped commit is exactly the commit alone: the group's
// transaction runs each job's checks (checkJob) and writes in it, in job
// order (every other writer locks one job's row, InitStarts locks its
// group's in job order too); if any of them fails, or PostgreSQL refuses
// the COMMIT, nothing of the group is written and each commit is done
// again alone, so that each job gets its own answer. Only when the
// COMMIT was sent and its answer lost (the connection failed) does every
// job of the group get that error, as a commit alone would.
// Guarded by TestCommitGroup.

const (
	// maxCommitGroup bounds the jobs of one grouped transaction.
	maxCommitGroup = 64
	// A commit is grouped when its rows are at most maxGroupedRows rows
	// and maxGroupedBytes bytes of COPY data.
	maxGroupedRows  = 4096
	maxGroupedBytes = 1 << 20
)

// commitCall is one grouped Commit waiting for its answer.
type commitCall struct {
	c      *sink.Commit
	writes []*tableWrite
	done   chan error // buffered (1): the writer never blocks on it
}

// groupable reports whether c may share a transaction with other jobs'
// commits: small, and every table it writes DUPLICATE.
func groupable(c *sink.Commit, writes []*tableWrite) bool {
	rows, size := 0, 0
	for _, w := range writes {
		if w.keyed != nil || w.rows == nil {
			return false
		}
		rows += w.rows.rows
		for _, b := range w.rows.bodies {
			size += len(b)
		}
	}
	return rows <= maxGroupedRows && size <= maxGroupedBytes
}

// commitGrouped commits c with whatever other jobs commit meanwhile.
func (s *Sink) commitGrouped(c *sink.Commit, writes []*tableWrite) error {
	call := &commitCall{c: c, writes: writes, done: make(chan error, 1)}
	s.commits.Add(c.JobID, call, maxCommitGroup, s.writeCommits)
	return <-call.done
}

// writeCommits writes a group of calls (jobgroup.Group) and answers each.
func (s *Sink) writeCommits(calls []*commitCall) {
	if len(calls) > 1 {
		ctx, cancel := s.ctx()
		sent, err := s.commitGroupTx(ctx, calls)
		cancel()
		if err == nil || (sent && !rolledBack(err)) {
			for _, call := range calls {
				call.done <- err
			}
			return
		}
	}
	for _, call := range calls {
		ctx, cancel := s.ctx()
		call.done <- s.commitAlone(ctx, call.c, call.writes)
		cancel()
	}
}

// rolledBack reports whether err, the answer to a group's last pipeline
// (its COMMIT), says the transaction did not commit: PostgreSQL reported
// an error, or answered COMMIT with ROLLBACK.
func rolledBack(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) || errors.Is(err, pgx.ErrTxCommitRollback)
}

// commitGroupTx commits calls in one transaction on one connection of the
// pool, in three round trips and one more per further table: BEGIN, every
// job's row locked (in job order) with the reads its checks need, the
// owner's claim and each table's shape, in one pipeline; one COPY per
// table of every job's rows; every job's progress, statistics, fence and
// error rows and COMMIT in one pipeline. sent reports whether the COMMIT
// was sent. A connection left in the transaction is rolled back, or closed
// when that fails, before it goes back to the pool.
func (s *Sink) commitGroupTx(ctx context.Context, calls []*commitCall) (sent bool, err error) {
	conn, release, err := s.acquireTx(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	order := slices.SortedFunc(slices.Values(calls), func(a, b *commitCall) int { return cmp.Compare(a.c.JobID, b.c.JobID) })
	// The tables the group writes, each once, with every job's rows in
	// job order. A table is one *tableInfo: commits that resolved a table
	// before and after it was prepared again (other columns) copy apart.
	var tables []*tableWrite
	byInfo := map[*tableInfo]*tableWrite{}
	for _, call := range order {
		for _, w := range call.writes {
			t := byInfo[w.ti]
			if t == nil {
				t = &tableWrite{ti: w.ti, rows: &copyData{}}
				byInfo[w.ti] = t
				tables = append(tables, t)
			}
			t.rows.bodies = append(t.rows.bodies, w.rows.bodies...)
			t.rows.rows += w.rows.rows
		}
	}

	pb := &pgx.Batch{}
	pb.Queue(`BEGIN`)
	for _, call := range order {
		s.queueJobCheck(pb, call.c)
	}
	tis := make([]*tableInfo, len(tables))
	for i, t := range tables {
		tis[i] = t.ti
	}
	br, claimed, err := s.sendChecks(ctx, conn, pb, tis)
	if err != nil {
		return false, err
	}
	checks := make([]jobCheck, len(order))
	for i, call := range order {
		if checks[i], err = readJobCheck(br, call.c); err != nil {
			br.Close()
			return false, err
		}
	}
	err = s.readChecks(ctx, conn, br, claimed, tis, func() error {
		for i, call := range order {
			if err := verifyJob(call.c, checks[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}

	for _, t := range tables {
		if err := s.writeTable(ctx, conn, t, false); err != nil {
			return false, tableChanged(err, t.ti.ident.Sanitize())
		}
	}
	b := &pgx.Batch{}
	for i, call := range order {
		if err := s.queueCommitProgress(b, call.c, checks[i].errSeq); err != nil {
			return false, err
		}
	}
	b.Queue(`COMMIT`)
	return true, execBatch(ctx, conn, b)
}
