package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// lockJob makes the job's row exist and locks it.
func lockJob(ctx context.Context, tx pgx.Tx, owner string, job int64) error {
	if _, err := tx.Exec(ctx, `INSERT INTO loadnode.jobs (owner, job) VALUES ($2, $1) ON CONFLICT (owner, job) DO NOTHING`, job, owner); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `SELECT 1 FROM loadnode.jobs WHERE owner = $2 AND job = $1 FOR UPDATE`, job, owner)
	return err
}

// execBatch runs b's statements in one round trip; the last one is COMMIT,
// which PostgreSQL answers with ROLLBACK in a failed transaction.
func execBatch(ctx context.Context, tx querier, b *pgx.Batch) error {
	tag, err := execAll(ctx, tx, b)
	if err == nil && tag.String() != "COMMIT" {
		err = pgx.ErrTxCommitRollback
	}
	return err
}

// execAll runs b's statements in one round trip, stopping at the first
// error, and returns the last one's tag.
func execAll(ctx context.Context, tx querier, b *pgx.Batch) (pgconn.CommandTag, error) {
	br := tx.SendBatch(ctx, b)
	var tag pgconn.CommandTag
	var err error
	for range b.Len() {
		if tag, err = br.Exec(); err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// upsertProgress writes the partitions' positions; a partition without a
// checkpoint in checkpoints keeps its stored one.
func upsertProgress(ctx context.Context, tx pgx.Tx, owner string, job int64, parts []int32, positions map[int32]int64, checkpoints map[int32][]byte) error {
	b := &pgx.Batch{}
	queueProgress(b, owner, job, parts, positions, checkpoints)
	if b.Len() == 0 {
		return nil
	}
	return tx.SendBatch(ctx, b).Close()
}

// queueProgress queues upsertProgress's statements in b.
func queueProgress(b *pgx.Batch, owner string, job int64, parts []int32, positions map[int32]int64, checkpoints map[int32][]byte) {
	if len(parts) == 0 {
		return
	}
	pos := make([]int64, len(parts))
	var ckParts []int32
	var cks [][]byte
	for i, p := range parts {
		pos[i] = positions[p]
		if ck, ok := checkpoints[p]; ok {
			ckParts, cks = append(ckParts, p), append(cks, ck)
		}
	}
	b.Queue(`INSERT INTO loadnode.progress (owner, job, partition, position)
		SELECT $4, $1, * FROM unnest($2::integer[], $3::bigint[])
		ON CONFLICT (owner, job, partition) DO UPDATE SET position = EXCLUDED.position`, job, parts, pos, owner)
	if len(ckParts) == 0 {
		return
	}
	b.Queue(`UPDATE loadnode.progress p SET checkpoint = u.checkpoint
		FROM unnest($2::integer[], $3::bytea[]) AS u(partition, checkpoint)
		WHERE p.owner = $4 AND p.job = $1 AND p.partition = u.partition`, job, ckParts, cks, owner)
}

// ResetStarts overwrites the partitions' progress (backwards too).
func (s *Sink) ResetStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) error {
	for p := range checkpoints {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("postgres: reset progress of job %d: checkpoint for partition %d without a position", job, p)
		}
	}
	if len(positions) == 0 {
		return nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	parts := slices.Sorted(maps.Keys(positions))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockJob(ctx, tx, s.opts.Owner, int64(job)); err != nil {
			return err
		}
		if err := s.checkClaimTx(ctx, tx); err != nil {
			return err
		}
		return upsertProgress(ctx, tx, s.opts.Owner, int64(job), parts, positions, checkpoints)
	})
	if err != nil {
		return fmt.Errorf("postgres: reset progress of job %d: %w", job, unavailable(err))
	}
	return nil
}

// RebaseStarts replaces the job's progress and raises its fence in one
// transaction, under the job's row lock (which every commit takes).
func (s *Sink) RebaseStarts(job, fence uint64, positions map[int32]int64, checkpoints map[int32][]byte) error {
	for p := range checkpoints {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("postgres: rebase progress of job %d: checkpoint for partition %d without a position", job, p)
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	parts := slices.Sorted(maps.Keys(positions))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockJob(ctx, tx, s.opts.Owner, int64(job)); err != nil {
			return err
		}
		if err := s.checkClaimTx(ctx, tx); err != nil {
			return err
		}
		var stored int64
		if err := tx.QueryRow(ctx, `SELECT fence FROM loadnode.jobs WHERE owner = $2 AND job = $1`, int64(job), s.opts.Owner).Scan(&stored); err != nil {
			return err
		}
		if uint64(stored) > fence {
			return fmt.Errorf("fence %d is older than the stored %d: %w", fence, stored, sink.ErrStaleCommit)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM loadnode.progress WHERE owner = $2 AND job = $1`, int64(job), s.opts.Owner); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE loadnode.jobs SET fence = $2 WHERE owner = $3 AND job = $1`, int64(job), int64(fence), s.opts.Owner); err != nil {
			return err
		}
		return upsertProgress(ctx, tx, s.opts.Owner, int64(job), parts, positions, checkpoints)
	})
	if err != nil {
		if errors.Is(err, sink.ErrStaleCommit) {
			return fmt.Errorf("postgres: rebase progress of job %d: %w", job, err)
		}
		return fmt.Errorf("postgres: rebase progress of job %d: %w", job, unavailable(err))
	}
	return nil
}

// Progress reads the job's state in one statement, so from one snapshot.
func (s *Sink) Progress(job uint64) (*sink.Progress, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return nil, err
	}
	p := &sink.Progress{Positions: map[int32]int64{}, Checkpoints: map[int32][]byte{}, Stats: &api.JobStats{}}
	rows, err := s.pool.Query(ctx, `SELECT j.fence, j.stats, p.partition, p.position, p.checkpoint
		FROM loadnode.jobs j LEFT JOIN loadnode.progress p ON p.owner = j.owner AND p.job = j.job
		WHERE j.owner = $2 AND j.job = $1`, int64(job), s.opts.Owner)
	if err != nil {
		return nil, fmt.Errorf("postgres: progress of job %d: %w", job, unavailable(err))
	}
	defer rows.Close()
	var stats []byte
	for rows.Next() {
		var fence int64
		var part *int32
		var pos *int64
		var ck []byte
		if err := rows.Scan(&fence, &stats, &part, &pos, &ck); err != nil {
			return nil, fmt.Errorf("postgres: progress of job %d: %w", job, unavailable(err))
		}
		p.Fence = uint64(fence)
		if part != nil {
			p.Positions[*part] = *pos
			if ck != nil {
				p.Checkpoints[*part] = ck
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: progress of job %d: %w", job, unavailable(err))
	}
	if stats != nil {
		if err := proto.Unmarshal(stats, p.Stats); err != nil {
			return nil, fmt.Errorf("postgres: progress of job %d: corrupt statistics: %w", job, err)
		}
	}
	return p, nil
}

// ErrorRows returns the job's newest limit error rows, oldest first.
func (s *Sink) ErrorRows(job uint64, limit int) ([]*api.ErrorRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT row FROM loadnode.error_rows WHERE owner = $3 AND job = $1 ORDER BY seq DESC LIMIT $2`, int64(job), limit, s.opts.Owner)
	if err != nil {
		return nil, fmt.Errorf("postgres: error rows of job %d: %w", job, err)
	}
	defer rows.Close()
	var out []*api.ErrorRow
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("postgres: error rows of job %d: %w", job, err)
		}
		r := &api.ErrorRow{}
		if err := proto.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("postgres: error rows of job %d: corrupt row: %w", job, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: error rows of job %d: %w", job, err)
	}
	slices.Reverse(out)
	return out, nil
}

// DropJob removes the job's progress, statistics, fence and error rows.
func (s *Sink) DropJob(job uint64) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM loadnode.jobs WHERE owner = $2 AND job = $1 FOR UPDATE`, int64(job), s.opts.Owner); err != nil {
			return err
		}
		if err := s.checkClaimTx(ctx, tx); err != nil {
			return err
		}
		for _, q := range []string{
			`DELETE FROM loadnode.progress WHERE owner = $2 AND job = $1`,
			`DELETE FROM loadnode.error_rows WHERE owner = $2 AND job = $1`,
			`DELETE FROM loadnode.jobs WHERE owner = $2 AND job = $1`,
		} {
			if _, err := tx.Exec(ctx, q, int64(job), s.opts.Owner); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: drop job %d: %w", job, err)
	}
	return nil
}

// CountRows counts the table's rows.
func (s *Sink) CountRows(name string) (int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	ti, err := s.table(ctx, name)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM `+ti.ident.Sanitize()).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count rows of %s: %w", ti.ident.Sanitize(), err)
	}
	return n, nil
}

// ScanRowsAfter reads up to limit rows after the key after, in key order
// (bytea compares as bytes), and gives each as the key and the row value
// loadnode encoded (re-encoded from the typed columns).
func (s *Sink) ScanRowsAfter(name string, after []byte, limit int, fn func(key, value []byte) error) error {
	if limit <= 0 {
		return nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	ti, err := s.table(ctx, name)
	if err != nil {
		return err
	}
	quoted := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	key := pgx.Identifier{keyColumn}.Sanitize()
	q := `SELECT ` + strings.Join(quoted, ", ") + ` FROM ` + ti.ident.Sanitize()
	args := []any{limit}
	if after != nil {
		q += ` WHERE ` + key + ` > $2`
		args = append(args, after)
	}
	q += ` ORDER BY ` + key + ` LIMIT $1`
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("postgres: scan %s: %w", ti.ident.Sanitize(), err)
	}
	defer rows.Close()
	cols := ti.schema.StoredColumns()
	dest := make([]any, len(ti.cols))
	var k []byte
	var job, off int64
	var part int32
	dest[0], dest[1], dest[2], dest[3] = &k, &job, &part, &off
	cells := make([]cell, len(cols))
	for i := range cols {
		dest[len(systemColumns)+i] = cells[i].target(cols[i].GetType())
	}
	vals := make([]table.Value, len(cols))
	var value []byte
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("postgres: scan %s: %w", ti.ident.Sanitize(), err)
		}
		for i := range cols {
			if vals[i], err = cells[i].value(cols[i]); err != nil {
				return fmt.Errorf("postgres: scan %s: row %x: %w", ti.ident.Sanitize(), k, err)
			}
		}
		value = table.AppendValue(value[:0], ti.schema, table.Pos{JobID: uint64(job), Partition: part, Offset: off}, vals)
		if err := fn(k, value); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: scan %s: %w", ti.ident.Sanitize(), err)
	}
	return nil
}

var _ sink.Claimer = (*Sink)(nil)

// claimChunk is the most jobs one ClaimJobs transaction takes.
const claimChunk = 1000

// ClaimJobs raises many jobs' fences in one statement and reads their
// progress in one query, in one transaction per claimChunk jobs (a
// cluster member taking over a lost member's jobs): the progress read
// after the raise is final, since no older fence can commit after it.
func (s *Sink) ClaimJobs(fences map[uint64]uint64) (map[uint64]*sink.Progress, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(fences))
	out := make(map[uint64]*sink.Progress, len(ids))
	for start := 0; start < len(ids); start += claimChunk {
		chunk := ids[start:min(start+claimChunk, len(ids))]
		jobs := make([]int64, len(chunk))
		fs := make([]int64, len(chunk))
		for i, id := range chunk {
			jobs[i], fs[i] = int64(id), int64(fences[id])
			out[id] = &sink.Progress{Positions: map[int32]int64{}, Checkpoints: map[int32][]byte{}, Stats: &api.JobStats{}}
		}
		stats := map[uint64][]byte{}
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, customPlans); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE loadnode.jobs j SET fence = f.fence
				FROM unnest($1::bigint[], $2::bigint[]) AS f(job, fence)
				WHERE j.owner = $3 AND j.job = f.job AND j.fence < f.fence`, jobs, fs, s.opts.Owner); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, `SELECT j.job, j.fence, j.stats, p.partition, p.position, p.checkpoint
				FROM loadnode.jobs j LEFT JOIN loadnode.progress p ON p.owner = j.owner AND p.job = j.job
				WHERE j.owner = $2 AND j.job = ANY($1)`, jobs, s.opts.Owner)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var job, fence int64
				var st []byte
				var part *int32
				var pos *int64
				var ck []byte
				if err := rows.Scan(&job, &fence, &st, &part, &pos, &ck); err != nil {
					return err
				}
				p := out[uint64(job)]
				if p == nil {
					continue
				}
				p.Fence = uint64(fence)
				stats[uint64(job)] = st
				if part != nil {
					p.Positions[*part] = *pos
					if ck != nil {
						p.Checkpoints[*part] = ck
					}
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("postgres: claim %d jobs: %w", len(chunk), unavailable(err))
		}
		for id, st := range stats {
			if st != nil {
				if err := proto.Unmarshal(st, out[id].Stats); err != nil {
					return nil, fmt.Errorf("postgres: claim job %d: corrupt statistics: %w", id, err)
				}
			}
		}
	}
	return out, nil
}

// RaiseFence lifts the job's stored fence to fence if it is lower (a new
// owner in cluster mode, before its first task reads): every later commit
// with an older fence is refused. A job without stored state is left
// alone (it has no commits to refuse yet).
func (s *Sink) RaiseFence(job, fence uint64) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `UPDATE loadnode.jobs SET fence = $2 WHERE owner = $3 AND job = $1 AND fence < $2`, int64(job), int64(fence), s.opts.Owner); err != nil {
		return fmt.Errorf("postgres: raise fence of job %d: %w", job, unavailable(err))
	}
	return nil
}

// Select runs one read-only query over the table name: build is given the
// table's quoted name, its storage-order key column (quoted) and the
// names of the columns it stores, and returns the statement and its result
// columns (each decoded as a column of that type is scanned). The query
// runs in a READ ONLY transaction with the sink's timeout as its statement
// and lock timeout, so it never holds up a commit for long and never
// waits on one (a reader takes no lock a commit waits for). It reads at
// most maxRows+1 rows (one more than maxRows tells the caller the result
// is over its bound). An error of PostgreSQL's class 22 (a data exception:
// a value out of range, ...) has a method DataException() bool returning
// true: the caller may answer the query another way, to give that error
// as it words it.
func (s *Sink) Select(ctx context.Context, name string, build func(tableSQL, keySQL string, stored []string) (string, []*api.Column, error), maxRows int) ([][]table.Value, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	ti, err := s.table(ctx, name)
	if err != nil {
		return nil, err
	}
	var stored []string
	for _, c := range ti.schema.StoredColumns() {
		stored = append(stored, c.GetName())
	}
	q, cols, err := build(ti.ident.Sanitize(), pgx.Identifier{keyColumn}.Sanitize(), stored)
	if err != nil {
		return nil, err
	}
	var out [][]table.Value
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		ms := max(s.opts.Timeout.Milliseconds(), 1)
		for _, set := range []string{"statement_timeout", "lock_timeout"} {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL %s = %d`, set, ms)); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		cells := make([]cell, len(cols))
		dest := make([]any, len(cols))
		for i, c := range cols {
			dest[i] = cells[i].target(c.GetType())
		}
		for rows.Next() {
			if len(out) > maxRows {
				break
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			row := make([]table.Value, len(cols))
			for i, c := range cols {
				if row[i], err = cells[i].value(c); err != nil {
					return err
				}
			}
			out = append(out, row)
		}
		return rows.Err()
	})
	if err != nil {
		err = fmt.Errorf("postgres: select from %s: %w", ti.ident.Sanitize(), err)
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22") {
			return nil, dataException{err}
		}
		return nil, err
	}
	return out, nil
}

// dataException is a query's error of PostgreSQL's class 22.
type dataException struct{ error }

func (e dataException) DataException() bool { return true }
func (e dataException) Unwrap() error       { return e.error }
