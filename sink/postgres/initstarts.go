package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/sink"
)

// maxStartsGroup bounds the jobs of one InitStarts transaction.
const maxStartsGroup = 256

// Concurrent InitStarts calls of different jobs share one transaction
// through a jobgroup.Group: the jobs that start together (a burst of
// creates, the jobs a member takes over) each write their first
// positions, and one transaction (one WAL flush, two round trips) for n
// jobs costs PostgreSQL and this process much less than n.

// startsCall is one InitStarts waiting for its answer.
type startsCall struct {
	job         int64
	parts       []int32 // sorted
	positions   map[int32]int64
	checkpoints map[int32][]byte
	done        chan error // buffered (1): the writer never blocks on it
}

// InitStarts inserts the partitions' first positions, or nothing if one
// has progress. Calls of different jobs that overlap share one
// transaction (jobgroup.Group): each job's row is made and locked, and each
// job whose partitions have no progress gets its positions; a job with
// progress gets an error wrapping sink.ErrProgressExists and writes
// nothing.
func (s *Sink) InitStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) error {
	c := &startsCall{job: int64(job), parts: slices.Sorted(maps.Keys(positions)), positions: positions,
		checkpoints: checkpoints, done: make(chan error, 1)}
	s.starts.Add(job, c, maxStartsGroup, s.writeStarts)
	err := <-c.done
	if err != nil && !errors.Is(err, sink.ErrProgressExists) && !errors.Is(err, sink.ErrSuperseded) {
		return fmt.Errorf("postgres: init starts of job %d: %w", job, unavailable(err))
	}
	return err
}

// writeStarts writes a group of calls (jobgroup.Group) and answers each.
func (s *Sink) writeStarts(batch []*startsCall) {
	errs := s.initStartsGroup(batch)
	for i, c := range batch {
		c.done <- errs[i]
	}
}

// initStartsGroup writes the calls' starts in one transaction and returns
// each call's answer.
func (s *Sink) initStartsGroup(batch []*startsCall) []error {
	errs := make([]error, len(batch))
	all := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return all(err)
	}
	refused, err := s.initStartsTx(ctx, batch)
	if err != nil {
		return all(err)
	}
	for i, c := range batch {
		if have := refused[c.job]; len(have) > 0 {
			errs[i] = fmt.Errorf("postgres: init starts of job %d: partitions %v: %w", c.job, have, sink.ErrProgressExists)
		}
	}
	return errs
}

// customPlans makes the statements of the transaction it runs in planned
// for their arguments at each execution. The statements that take many
// jobs at once (job = ANY($1), joins with unnest) are prepared and cached
// per connection (pgx's statement cache), and PostgreSQL switches a cached
// statement to one generic plan after five executions: made while
// loadnode.jobs and .progress were nearly empty (a new database, a burst
// of creates), that plan reads every row of the owner (index condition on
// owner alone, the jobs as a filter) and keeps doing so as the tables grow
// until an autovacuum ANALYZE invalidates it: linear in the owner's jobs
// (in the bench's cluster scenario, 10,000 jobs created in 7 s, these
// statements read 205,000 buffers with it and 167,000 without; with
// 100,000 jobs one call of 20 jobs took 16.6 ms and 1,231 buffers, against
// 0.08 ms and 80 with a custom plan: PostgreSQL 15). A custom plan costs tens
// of microseconds of planning, and these run once per group of jobs that
// start or move. Guarded by TestManyJobStatementsPlanCustom.
const customPlans = `SET LOCAL plan_cache_mode = force_custom_plan`

// initStartsTx is initStartsGroup's transaction, two round trips on one
// connection of the pool: BEGIN (its statements planned for their jobs:
// customPlans), the jobs' rows made and locked (in job order: every other
// writer locks one job's row), the owner's claim and the stored progress
// of the jobs in one pipeline (read after the locks, as a commit reads
// them); then the positions of every job with none stored and COMMIT in
// another. It returns, by job, the partitions that
// have progress (those jobs write nothing). A connection left in the
// transaction (a check refused, a statement failed) is rolled back, or
// closed when that fails, before it goes back to the pool.
func (s *Sink) initStartsTx(ctx context.Context, batch []*startsCall) (map[int64][]int32, error) {
	conn, release, err := s.acquireTx(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	owner := s.opts.Owner
	jobs := make([]int64, len(batch))
	for i, c := range batch {
		jobs[i] = c.job
	}
	slices.Sort(jobs)
	pb := &pgx.Batch{}
	pb.Queue(`BEGIN`)
	pb.Queue(customPlans)
	pb.Queue(`INSERT INTO loadnode.jobs (owner, job) SELECT $2, unnest($1::bigint[]) ON CONFLICT (owner, job) DO NOTHING`, jobs, owner)
	pb.Queue(`SELECT job FROM loadnode.jobs WHERE owner = $2 AND job = ANY($1) ORDER BY job FOR UPDATE`, jobs, owner)
	claimed := s.opts.Incarnation != ""
	if claimed {
		pb.Queue(ownerQuery, owner)
	}
	pb.Queue(`SELECT job, partition FROM loadnode.progress WHERE owner = $2 AND job = ANY($1) ORDER BY job, partition`, jobs, owner)
	br := conn.SendBatch(ctx, pb)
	for range 4 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	var got claim
	var claimErr error
	if claimed {
		claimErr = br.QueryRow().Scan(&got.incarnation, &got.holder, &got.at)
	}
	stored := map[int64]map[int32]bool{}
	rows, err := br.Query()
	if err == nil {
		for rows.Next() {
			var job int64
			var p int32
			if err = rows.Scan(&job, &p); err != nil {
				break
			}
			if stored[job] == nil {
				stored[job] = map[int32]bool{}
			}
			stored[job][p] = true
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := s.checkClaim(ctx, conn, got, claimErr); err != nil {
		return nil, err
	}
	refused := map[int64][]int32{}
	var wJobs, ckJobs []int64
	var wParts, ckParts []int32
	var wPos []int64
	var cks [][]byte
	for _, c := range batch {
		for _, p := range c.parts {
			if stored[c.job][p] {
				refused[c.job] = append(refused[c.job], p)
			}
		}
		if len(refused[c.job]) > 0 {
			continue
		}
		for _, p := range c.parts {
			wJobs, wParts, wPos = append(wJobs, c.job), append(wParts, p), append(wPos, c.positions[p])
			if ck, ok := c.checkpoints[p]; ok {
				ckJobs, ckParts, cks = append(ckJobs, c.job), append(ckParts, p), append(cks, ck)
			}
		}
	}
	b := &pgx.Batch{}
	if len(wJobs) > 0 {
		b.Queue(`INSERT INTO loadnode.progress (owner, job, partition, position)
			SELECT $4, * FROM unnest($1::bigint[], $2::integer[], $3::bigint[])
			ON CONFLICT (owner, job, partition) DO UPDATE SET position = EXCLUDED.position`, wJobs, wParts, wPos, owner)
	}
	if len(ckJobs) > 0 {
		b.Queue(`UPDATE loadnode.progress p SET checkpoint = u.checkpoint
			FROM unnest($1::bigint[], $2::integer[], $3::bytea[]) AS u(job, partition, checkpoint)
			WHERE p.owner = $4 AND p.job = u.job AND p.partition = u.partition`, ckJobs, ckParts, cks, owner)
	}
	if b.Len() == 0 && len(refused) == len(batch) {
		// Every job has progress: nothing to write (the deferred
		// ROLLBACK undoes the rows made for none).
		return refused, nil
	}
	b.Queue(`COMMIT`)
	return refused, execBatch(ctx, conn, b)
}
