package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// A commit, top to bottom (this file, in the order it runs):
//
//	Commit        validate; resolve each written table and its model, encode
//	              the DUPLICATE rows (tableWrites); one transaction (commitTx),
//	              once more upserting when a replayed key makes the COPY fail
//	commitTx      lock the job's row and check fence, progress, statistics
//	              base, owner's claim and table shapes (checkJob); per table,
//	              stage then apply by its model (writeTable: the model's SQL
//	              in models.go); progress, statistics, fence and error rows
//	              (writeProgress); COMMIT
//
// The rows' COPY encoding is copy.go's and types.go's; a table's info and
// shape are tables.go's; the owner's claim is incarnation.go's.

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// Commit makes c durable in one transaction or writes nothing (see the
// package comment).
//
// INVARIANT: rows, progress, statistics, fence and error rows move
// together, and progress only from the stored value forward.
func (s *Sink) Commit(c *sink.Commit) error {
	if err := validateCommit(c); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	writes, err := s.tableWrites(ctx, c)
	if err != nil {
		return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
	}
	if groupable(c, writes) {
		err = s.commitGrouped(c, writes)
	} else {
		err = s.commitAlone(ctx, c, writes)
	}
	if err != nil {
		if errors.Is(err, sink.ErrSuperseded) {
			return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
		}
		if errors.Is(err, sink.ErrStaleCommit) {
			return err
		}
		if errors.Is(err, sink.ErrTableChanged) {
			s.forgetPrepared(c.Table)
		}
		return fmt.Errorf("postgres: commit job %d: %w", c.JobID, unavailable(err))
	}
	return nil
}

// commitAlone is c in a transaction of its own. DUPLICATE rows go in with
// a plain COPY; a key already stored (a replay after a reset) makes the
// COPY fail, and the commit is done again through a staging table that
// upserts.
func (s *Sink) commitAlone(ctx context.Context, c *sink.Commit, writes []*tableWrite) error {
	err := s.commitTx(ctx, c, writes, false)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation && len(writes) > 0 {
		err = s.commitTx(ctx, c, writes, true)
	}
	return err
}

func validateCommit(c *sink.Commit) error {
	if c == nil {
		return errors.New("postgres: commit: nil commit")
	}
	if len(c.Ranges) == 0 {
		return fmt.Errorf("postgres: commit job %d: no ranges", c.JobID)
	}
	seen := make(map[int32]struct{}, len(c.Ranges))
	for _, r := range c.Ranges {
		if _, dup := seen[r.Partition]; dup {
			return fmt.Errorf("postgres: commit job %d: partition %d listed twice", c.JobID, r.Partition)
		}
		seen[r.Partition] = struct{}{}
		if r.To < r.From {
			return fmt.Errorf("postgres: commit job %d partition %d: range [%d, %d) ends before it starts", c.JobID, r.Partition, r.From, r.To)
		}
	}
	for i, er := range c.ErrorRows {
		if er == nil {
			return fmt.Errorf("postgres: commit job %d: error row %d is nil", c.JobID, i)
		}
	}
	return nil
}

// tableWrite is a commit's rows for one table, as its model takes them
// (models.go).
type tableWrite struct {
	ti *tableInfo
	// keyed is, for a UNIQUE or AGGREGATE table, the schema its rows
	// merge by (with the load's sequence column); nil for DUPLICATE.
	keyed  *table.Schema
	kvs    []sink.KV     // keyed: the rows, merged in the transaction
	update *table.Update // keyed: the load's partial update, if any
	rows   *copyData     // DUPLICATE: the rows, encoded
}

// tableWrites resolves the tables c writes, its own table's first then
// the other tables of a multi-table commit (DUPLICATE only), and encodes
// their DUPLICATE rows, unless the tasks encoded them ahead
// (sink.Encoder).
func (s *Sink) tableWrites(ctx context.Context, c *sink.Commit) ([]*tableWrite, error) {
	var writes []*tableWrite
	if len(c.Rows) > 0 {
		ti, err := s.table(ctx, c.Table)
		if err != nil {
			return nil, err
		}
		w := &tableWrite{ti: ti}
		if w.keyed, err = keyedTable(ti, c.Update); err != nil {
			return nil, err
		}
		if w.keyed != nil {
			w.kvs, w.update = c.Rows, c.Update
		} else if w.rows, err = commitRows(ti, c); err != nil {
			return nil, err
		}
		writes = append(writes, w)
	}
	for _, m := range c.More {
		if len(m.Rows) == 0 {
			continue
		}
		mt, err := s.table(ctx, m.Table)
		if err != nil {
			return nil, err
		}
		if k, err := keyedTable(mt, nil); err != nil || k != nil {
			return nil, fmt.Errorf("table %s: rows of a multi-table commit go to DUPLICATE tables only (%v)", m.Table, err)
		}
		data, err := encodeCopy(mt, m.Rows)
		if err != nil {
			return nil, err
		}
		writes = append(writes, &tableWrite{ti: mt, rows: data})
	}
	return writes, nil
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

// commitTx is one attempt of Commit: one transaction. With upsert, a
// DUPLICATE table's rows replace those stored under the same keys.
//
// A commit is three round trips on one connection of the pool: BEGIN
// goes in one pipeline with the job's lock and the checks (checkJob), the
// rows are copied (writeTable), and COMMIT goes in one pipeline with the
// progress, statistics, fence and error rows (writeProgress). Each
// pipeline's statements run in order and stop at the first error, so a
// COMMIT after a failed write never runs. A connection left in a
// transaction (a check refused the commit, a write failed) is rolled
// back, or closed when that fails, before it goes back to the pool.
func (s *Sink) commitTx(ctx context.Context, c *sink.Commit, writes []*tableWrite, upsert bool) error {
	conn, release, err := s.acquireTx(ctx)
	if err != nil {
		return err
	}
	defer release()
	errSeq, err := s.checkJob(ctx, conn, c, writes)
	if err != nil {
		return err
	}
	for _, w := range writes {
		if err := s.writeTable(ctx, conn, w, upsert); err != nil {
			return tableChanged(err, w.ti.ident.Sanitize())
		}
	}
	return s.writeProgress(ctx, conn, c, errSeq)
}

// querier runs a commit's statements: a pgx.Tx, or the pooled connection
// whose transaction commitTx began (*pgxpool.Conn).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Conn() *pgx.Conn
}

var (
	_ querier = pgx.Tx(nil)
	_ querier = (*pgxpool.Conn)(nil)
)

// tableChanged wraps err with sink.ErrTableChanged, naming the table, when
// PostgreSQL says the table or a column is not what loadnode prepared:
// undefined table (42P01) or column (42703), a type mismatch (42804), a
// NOT NULL column loadnode does not write (23502).
func tableChanged(err error, table string) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "42P01", "42703", "42804", "23502":
		return fmt.Errorf("table %s was dropped or altered in PostgreSQL under the job (%w): %w", table, sink.ErrTableChanged, err)
	}
	return err
}

// checkJob begins the commit's transaction and locks the job's row in
// loadnode.jobs (every writer of the job waits here for the one before
// it), in one round trip with the reads its checks need, and refuses the
// commit unless the owner's claim is still this incarnation's
// (incarnation.go), every range starts at its stored position, the fence
// is not older than the stored one, the statistics base is the stored
// one, and no table it writes was altered since it was prepared
// (checkShape). It returns the sequence
// number of the job's newest error row.
func (s *Sink) checkJob(ctx context.Context, tx querier, c *sink.Commit, writes []*tableWrite) (int64, error) {
	// BEGIN, the job's row locked, then (read after the lock: each
	// statement of a READ COMMITTED transaction sees what committed
	// before it started) the stored progress, the owner's claim and the
	// shape of every table the commit writes.
	pb := &pgx.Batch{}
	pb.Queue(`BEGIN`)
	s.queueJobCheck(pb, c)
	tis := make([]*tableInfo, len(writes))
	for i, w := range writes {
		tis[i] = w.ti
	}
	br, claimed, err := s.sendChecks(ctx, tx, pb, tis)
	if err != nil {
		return 0, err
	}
	jc, err := readJobCheck(br, c)
	if err != nil {
		br.Close()
		return 0, err
	}
	if err := s.readChecks(ctx, tx, br, claimed, tis, func() error { return verifyJob(c, jc) }); err != nil {
		return 0, err
	}
	return jc.errSeq, nil
}

// sendChecks completes a commit's first pipeline, pb (BEGIN and the jobs'
// checks): it queues the owner's claim (claimed: with
// Options.Incarnation) and the shape of each table of tis, sends it and
// reads BEGIN's answer. The caller reads the jobs' checks, then
// readChecks the rest.
func (s *Sink) sendChecks(ctx context.Context, tx querier, pb *pgx.Batch, tis []*tableInfo) (br pgx.BatchResults, claimed bool, err error) {
	claimed = s.opts.Incarnation != ""
	if claimed {
		pb.Queue(ownerQuery, s.opts.Owner)
	}
	for _, ti := range tis {
		pb.Queue(shapeQuery, ti.ident.Sanitize())
	}
	br = tx.SendBatch(ctx, pb)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, false, err
	}
	return br, claimed, nil
}

// readChecks reads the rest of a commit's first pipeline from br (the
// owner's claim when claimed, then the shape of each table of tis), closes
// it, and checks, in this order: the claim, verify (the jobs' own checks),
// each table's shape.
func (s *Sink) readChecks(ctx context.Context, tx querier, br pgx.BatchResults, claimed bool, tis []*tableInfo, verify func() error) error {
	var got claim
	var claimErr error
	if claimed {
		claimErr = br.QueryRow().Scan(&got.incarnation, &got.holder, &got.at)
	}
	shapes := make([]columnShape, len(tis))
	var shapeErr error
	for i := range tis {
		if shapeErr == nil {
			shapes[i], shapeErr = readShape(br.Query())
		}
	}
	if err := br.Close(); err != nil && claimErr == nil && shapeErr == nil {
		return err
	}
	if err := s.checkClaim(ctx, tx, got, claimErr); err != nil {
		return err
	}
	if err := verify(); err != nil {
		return err
	}
	if shapeErr != nil {
		return shapeErr
	}
	for i, ti := range tis {
		if err := checkShape(ctx, tx, ti, shapes[i]); err != nil {
			return err
		}
	}
	return nil
}

// acquireTx takes a connection of the pool for a transaction; release
// rolls back a transaction left open on it (a check refused, a statement
// failed), or closes it when that fails, before it goes back to the pool.
func (s *Sink) acquireTx(ctx context.Context) (*pgxpool.Conn, func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	return conn, func() {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
				_ = conn.Conn().Close(ctx)
			}
		}
		conn.Release()
	}, nil
}

// jobCheck is what a commit's checks read of its job, under the job's
// row lock: the stored fence, committed batches, newest error row's
// sequence number and the positions of the commit's partitions.
type jobCheck struct {
	fence, batches, errSeq int64
	stored                 map[int32]int64
}

// queueJobCheck queues the lock of c's job's row and the reads of
// jobCheck (read by readJobCheck).
func (s *Sink) queueJobCheck(pb *pgx.Batch, c *sink.Commit) {
	job := int64(c.JobID)
	pb.Queue(`SELECT fence, committed_batches, error_seq FROM loadnode.jobs WHERE owner = $2 AND job = $1 FOR UPDATE`, job, s.opts.Owner)
	pb.Queue(`SELECT partition, position FROM loadnode.progress WHERE owner = $3 AND job = $1 AND partition = ANY($2)`, job, partitions(c), s.opts.Owner)
}

// readJobCheck reads the results of queueJobCheck; a job without a row
// is a stale commit.
func readJobCheck(br pgx.BatchResults, c *sink.Commit) (jobCheck, error) {
	jc := jobCheck{stored: make(map[int32]int64, len(c.Ranges))}
	err := br.QueryRow().Scan(&jc.fence, &jc.batches, &jc.errSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return jc, fmt.Errorf("postgres: commit job %d partition %d: no stored progress, commit from %d: %w",
			c.JobID, c.Ranges[0].Partition, c.Ranges[0].From, sink.ErrStaleCommit)
	}
	if err != nil {
		return jc, err
	}
	prow, err := br.Query()
	if err != nil {
		return jc, err
	}
	for prow.Next() {
		var p int32
		var pos int64
		if err := prow.Scan(&p, &pos); err != nil {
			prow.Close()
			return jc, err
		}
		jc.stored[p] = pos
	}
	return jc, prow.Err()
}

// verifyJob refuses c unless every range starts at its stored position,
// the fence is not older than the stored one and the statistics base is
// the stored one.
func verifyJob(c *sink.Commit, jc jobCheck) error {
	for _, r := range c.Ranges {
		at, ok := jc.stored[r.Partition]
		if !ok {
			return fmt.Errorf("postgres: commit job %d partition %d: no stored progress, commit from %d: %w",
				c.JobID, r.Partition, r.From, sink.ErrStaleCommit)
		}
		if at != r.From {
			return fmt.Errorf("postgres: commit job %d partition %d: stored progress %d, commit from %d: %w",
				c.JobID, r.Partition, at, r.From, sink.ErrStaleCommit)
		}
	}
	if int64(c.Fence) < jc.fence {
		return fmt.Errorf("postgres: commit job %d: fence %d is older than the stored %d: %w", c.JobID, c.Fence, jc.fence, sink.ErrStaleCommit)
	}
	if c.Stats != nil && jc.batches != c.StatsBase {
		return fmt.Errorf("postgres: commit job %d: stored statistics have %d committed batches, commit based on %d: %w",
			c.JobID, jc.batches, c.StatsBase, sink.ErrStaleCommit)
	}
	return nil
}

// partitions are the partitions of c's ranges, in order.
func partitions(c *sink.Commit) []int32 {
	parts := make([]int32, len(c.Ranges))
	for i, r := range c.Ranges {
		parts[i] = r.Partition
	}
	return parts
}

// writeTable writes w's rows in tx: its model (models.go) makes them
// into copies and statements; the copies are staged (COPY into a
// temporary table, or, for a DUPLICATE table's first attempt, into the
// table itself), then the statements apply them, in order.
func (s *Sink) writeTable(ctx context.Context, tx querier, w *tableWrite, upsert bool) error {
	mw, err := s.model(ctx, tx, w, upsert)
	if err != nil {
		return err
	}
	quoted := make([]string, len(w.ti.cols))
	for i, c := range w.ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	for _, st := range mw.stage {
		target := w.ti.ident.Sanitize()
		if st.into != "" {
			if _, err := tx.Exec(ctx, `CREATE TEMP TABLE `+st.into+` (LIKE `+target+`) ON COMMIT DROP`); err != nil {
				return err
			}
			target = st.into
		}
		tag, err := tx.Conn().PgConn().CopyFrom(ctx, st.rows.reader(), "COPY "+target+" ("+list+") FROM STDIN (FORMAT binary)")
		if err == nil && tag.RowsAffected() != int64(st.rows.rows) {
			err = fmt.Errorf("COPY wrote %d rows of %d", tag.RowsAffected(), st.rows.rows)
		}
		if err != nil {
			return err
		}
	}
	for _, a := range mw.apply {
		if _, err := tx.Exec(ctx, a.sql, a.args...); err != nil {
			return err
		}
	}
	return nil
}

// writeProgress moves the progress of exactly c's partitions, the
// statistics, the fence and the error rows (the newest MaxErrorRowsKept),
// and commits, in one round trip. errSeq is the stored sequence number of
// the job's newest error row.
func (s *Sink) writeProgress(ctx context.Context, tx querier, c *sink.Commit, errSeq int64) error {
	b := &pgx.Batch{}
	if err := s.queueCommitProgress(b, c, errSeq); err != nil {
		return err
	}
	b.Queue(`COMMIT`)
	return execBatch(ctx, tx, b)
}

// queueCommitProgress queues writeProgress's statements but COMMIT.
func (s *Sink) queueCommitProgress(b *pgx.Batch, c *sink.Commit, errSeq int64) error {
	job := int64(c.JobID)
	positions := make([]int64, len(c.Ranges))
	cks := make([][]byte, len(c.Ranges))
	for i, r := range c.Ranges {
		positions[i], cks[i] = r.To, r.Checkpoint
	}
	b.Queue(`UPDATE loadnode.progress p SET position = u.position, checkpoint = COALESCE(u.checkpoint, p.checkpoint)
		FROM unnest($2::integer[], $3::bigint[], $4::bytea[]) AS u(partition, position, checkpoint)
		WHERE p.owner = $5 AND p.job = $1 AND p.partition = u.partition`, job, partitions(c), positions, cks, s.opts.Owner)
	if c.Stats != nil {
		sb, err := proto.Marshal(c.Stats)
		if err != nil {
			return fmt.Errorf("marshal statistics: %w", err)
		}
		b.Queue(`UPDATE loadnode.jobs SET fence = $2, stats = $3, committed_batches = $4, loaded_rows = $5, error_rows = $6,
			error_seq = $7, updated_at = now() WHERE owner = $8 AND job = $1`,
			job, int64(c.Fence), sb, c.Stats.GetCommittedBatches(), c.Stats.GetLoadedRows(), c.Stats.GetErrorRows(),
			errSeq+int64(len(c.ErrorRows)), s.opts.Owner)
	} else {
		b.Queue(`UPDATE loadnode.jobs SET fence = $2, error_seq = $3, updated_at = now() WHERE owner = $4 AND job = $1`,
			job, int64(c.Fence), errSeq+int64(len(c.ErrorRows)), s.opts.Owner)
	}
	if n := int64(len(c.ErrorRows)); n > 0 {
		// Keep the newest MaxErrorRowsKept: sequence numbers from cutoff.
		next := errSeq + n
		cutoff := max(1, next-int64(s.opts.MaxErrorRowsKept)+1)
		b.Queue(`DELETE FROM loadnode.error_rows WHERE owner = $3 AND job = $1 AND seq < $2`, job, cutoff, s.opts.Owner)
		var seqs, offs []int64
		var ps []int32
		var reasons []string
		var raws [][]byte
		for i, er := range c.ErrorRows {
			seq := errSeq + 1 + int64(i)
			if seq < cutoff {
				continue
			}
			v, err := proto.Marshal(er)
			if err != nil {
				return fmt.Errorf("marshal error row: %w", err)
			}
			seqs, ps, offs = append(seqs, seq), append(ps, er.GetPartition()), append(offs, er.GetOffset())
			reasons, raws = append(reasons, cleanText(er.GetReason())), append(raws, v)
		}
		b.Queue(`INSERT INTO loadnode.error_rows (owner, job, seq, partition, "offset", reason, row)
			SELECT $7, $1, * FROM unnest($2::bigint[], $3::integer[], $4::bigint[], $5::text[], $6::bytea[])`,
			job, seqs, ps, offs, reasons, raws, s.opts.Owner)
	}
	return nil
}

// cleanText makes s storable as PostgreSQL text.
func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\\0")
}

// InsertRows writes rows outside a job in one transaction, by the table's
// model as a commit's are (a DUPLICATE table's replacing those stored
// under the same keys).
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
		w := &tableWrite{ti: ti}
		if ti.schema.Keyed() {
			w.keyed, w.kvs = ti.schema, rows
		} else {
			data, err := encodeCopy(ti, rows)
			if err != nil {
				return err
			}
			w.rows = data
		}
		return s.writeTable(ctx, tx, w, true)
	})
	if err != nil {
		return fmt.Errorf("postgres: insert into %s: %w", ti.ident.Sanitize(), unavailable(err))
	}
	return nil
}

var _ sink.Inserter = (*Sink)(nil)
