package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

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
	var rows *copyData
	var ti *tableInfo
	var keyed *table.Schema // a UNIQUE or AGGREGATE table: rows merge (models.go)
	if len(c.Rows) > 0 {
		var err error
		if ti, err = s.table(ctx, c.Table); err != nil {
			return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
		}
		if keyed, err = keyedTable(ti, c.Update); err != nil {
			return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
		}
		if keyed != nil {
			ti = &tableInfo{schema: ti.schema, ident: ti.ident, cols: ti.cols, keyed: keyed, shape: ti.shape}
		} else if rows = encodedRows(ti, c); rows == nil {
			// Not encoded ahead by the tasks (sink.Encoder): now.
			if rows, err = encodeCopy(ti, c.Rows); err != nil {
				return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
			}
		}
	}
	// Rows go in with a plain COPY; a key already stored (a replay after
	// a reset) makes the COPY fail, and the commit is done again through
	// a staging table that upserts.
	var more []moreRows
	for _, m := range c.More {
		if len(m.Rows) == 0 {
			continue
		}
		mt, err := s.table(ctx, m.Table)
		if err != nil {
			return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
		}
		if k, err := keyedTable(mt, nil); err != nil || k != nil {
			return fmt.Errorf("postgres: commit job %d: table %s: rows of a multi-table commit go to DUPLICATE tables only (%v)", c.JobID, m.Table, err)
		}
		data, err := encodeCopy(mt, m.Rows)
		if err != nil {
			return fmt.Errorf("postgres: commit job %d: %w", c.JobID, err)
		}
		more = append(more, moreRows{ti: mt, rows: data})
	}
	err := s.commit(ctx, c, ti, rows, more, false)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == uniqueViolation && (ti != nil || len(more) > 0) {
		err = s.commit(ctx, c, ti, rows, more, true)
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

// commit is one attempt of Commit: one transaction.
// moreRows are a multi-table commit's rows for one of its other tables.
type moreRows struct {
	ti   *tableInfo
	rows *copyData
}

func (s *Sink) commit(ctx context.Context, c *sink.Commit, ti *tableInfo, rows *copyData, more []moreRows, upsert bool) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()

	job := int64(c.JobID)
	parts := make([]int32, len(c.Ranges))
	for i, r := range c.Ranges {
		parts[i] = r.Partition
	}
	// Every writer of the job waits here for the one before it.
	var fence, batches, errSeq int64
	err = tx.QueryRow(ctx, `SELECT fence, committed_batches, error_seq FROM loadnode.jobs WHERE owner = $2 AND job = $1 FOR UPDATE`, job, s.opts.Owner).
		Scan(&fence, &batches, &errSeq)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("postgres: commit job %d partition %d: no stored progress, commit from %d: %w",
			c.JobID, c.Ranges[0].Partition, c.Ranges[0].From, sink.ErrStaleCommit)
	}
	if err != nil {
		return err
	}
	// The stored progress and, now that the job's row is locked, the
	// owner's claim (incarnation.go), in one round trip.
	stored := make(map[int32]int64, len(parts))
	pb := &pgx.Batch{}
	pb.Queue(`SELECT partition, position FROM loadnode.progress WHERE owner = $3 AND job = $1 AND partition = ANY($2)`, job, parts, s.opts.Owner)
	claimed := s.opts.Incarnation != ""
	if claimed {
		pb.Queue(ownerQuery, s.opts.Owner)
	}
	// And the shape of every table the commit writes (checkShape).
	var written []*tableInfo
	if ti != nil {
		written = append(written, ti)
	}
	for _, m := range more {
		written = append(written, m.ti)
	}
	for _, t := range written {
		pb.Queue(shapeQuery, t.ident.Sanitize())
	}
	br := tx.SendBatch(ctx, pb)
	prow, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	for prow.Next() {
		var p int32
		var pos int64
		if err := prow.Scan(&p, &pos); err != nil {
			prow.Close()
			br.Close()
			return err
		}
		stored[p] = pos
	}
	if err := prow.Err(); err != nil {
		br.Close()
		return err
	}
	var got claim
	var claimErr error
	if claimed {
		claimErr = br.QueryRow().Scan(&got.incarnation, &got.holder, &got.at)
	}
	shapes := make([]columnShape, len(written))
	var shapeErr error
	for i := range written {
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
	for _, r := range c.Ranges {
		at, ok := stored[r.Partition]
		if !ok {
			return fmt.Errorf("postgres: commit job %d partition %d: no stored progress, commit from %d: %w",
				c.JobID, r.Partition, r.From, sink.ErrStaleCommit)
		}
		if at != r.From {
			return fmt.Errorf("postgres: commit job %d partition %d: stored progress %d, commit from %d: %w",
				c.JobID, r.Partition, at, r.From, sink.ErrStaleCommit)
		}
	}
	if int64(c.Fence) < fence {
		return fmt.Errorf("postgres: commit job %d: fence %d is older than the stored %d: %w", c.JobID, c.Fence, fence, sink.ErrStaleCommit)
	}
	if c.Stats != nil && batches != c.StatsBase {
		return fmt.Errorf("postgres: commit job %d: stored statistics have %d committed batches, commit based on %d: %w",
			c.JobID, batches, c.StatsBase, sink.ErrStaleCommit)
	}
	if shapeErr != nil {
		return shapeErr
	}
	for i, t := range written {
		if err := checkShape(ctx, tx, t, shapes[i]); err != nil {
			return err
		}
	}

	if ti != nil && ti.keyed != nil {
		if err := s.mergeRows(ctx, tx, ti, ti.keyed, c); err != nil {
			return tableChanged(err, ti.ident.Sanitize())
		}
	} else if rows != nil && rows.rows > 0 {
		if err := writeRows(ctx, tx, ti, rows, upsert); err != nil {
			return tableChanged(err, ti.ident.Sanitize())
		}
	}
	for _, m := range more {
		if err := writeRows(ctx, tx, m.ti, m.rows, upsert); err != nil {
			return tableChanged(err, m.ti.ident.Sanitize())
		}
	}

	b := &pgx.Batch{}
	positions := make([]int64, len(c.Ranges))
	cks := make([][]byte, len(c.Ranges))
	for i, r := range c.Ranges {
		positions[i], cks[i] = r.To, r.Checkpoint
	}
	b.Queue(`UPDATE loadnode.progress p SET position = u.position, checkpoint = COALESCE(u.checkpoint, p.checkpoint)
		FROM unnest($2::integer[], $3::bigint[], $4::bytea[]) AS u(partition, position, checkpoint)
		WHERE p.owner = $5 AND p.job = $1 AND p.partition = u.partition`, job, parts, positions, cks, s.opts.Owner)
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
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// writeRows copies rows into the table; with upsert, through a staging
// table whose rows replace those stored under the same keys.
func writeRows(ctx context.Context, tx pgx.Tx, ti *tableInfo, rows *copyData, upsert bool) error {
	quoted := make([]string, len(ti.cols))
	for i, c := range ti.cols {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	copyInto := func(target string) error {
		tag, err := tx.Conn().PgConn().CopyFrom(ctx, rows.reader(),
			"COPY "+target+" ("+list+") FROM STDIN (FORMAT binary)")
		if err == nil && tag.RowsAffected() != int64(rows.rows) {
			err = fmt.Errorf("COPY wrote %d rows of %d", tag.RowsAffected(), rows.rows)
		}
		return err
	}
	if !upsert {
		return copyInto(ti.ident.Sanitize())
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE loadnode_staging (LIKE `+ti.ident.Sanitize()+`) ON COMMIT DROP`); err != nil {
		return err
	}
	if err := copyInto("loadnode_staging"); err != nil {
		return err
	}
	set := make([]string, 0, len(ti.cols)-1)
	for i, c := range ti.cols {
		if c != keyColumn {
			set = append(set, quoted[i]+" = EXCLUDED."+quoted[i])
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+ti.ident.Sanitize()+` (`+list+`) SELECT `+list+` FROM loadnode_staging
		ON CONFLICT (`+pgx.Identifier{keyColumn}.Sanitize()+`) DO UPDATE SET `+strings.Join(set, ", ")); err != nil {
		return err
	}
	// A multi-table commit stages each of its tables in turn.
	_, err := tx.Exec(ctx, `DROP TABLE loadnode_staging`)
	return err
}

// cleanText makes s storable as PostgreSQL text.
func cleanText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\\0")
}
