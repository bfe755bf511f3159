package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/sink"
)

var _ sink.Dropper = (*Sink)(nil)

// DropTable implements sink.Dropper: the PostgreSQL table (DROP TABLE IF
// EXISTS) and its row in loadnode.tables go in one transaction, so that a
// later CREATE TABLE of that name makes a new table. The jobs' progress
// rows are the caller's (DropJob), and the caller drops a table only while
// no job loads into it. A table that, in PostgreSQL, is also another
// loadnode table's (a catalog from before long names were refused: the
// two names truncate to one identifier, names.go) keeps its PostgreSQL
// table, which holds the other's rows; only its row goes.
func (s *Sink) DropTable(name string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	ident := pgx.Identifier{s.opts.Schema, name}.Sanitize()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.checkClaimTx(ctx, tx); err != nil {
			return err
		}
		shared, err := sharers(ctx, tx, s.opts.Schema, name, s.maxIdentBytes())
		if err != nil {
			return err
		}
		if len(shared) > 0 {
			s.opts.Logger.Warn("postgres: drop table: the PostgreSQL table is kept: its name, truncated by PostgreSQL, is also another table's",
				"table", name, "kept", s.opts.Schema+"."+truncated(name, s.maxIdentBytes()), "shared_with", shared)
		} else if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+ident); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM loadnode.tables WHERE schema_name = $1 AND table_name = $2`, s.opts.Schema, name)
		return err
	})
	if err != nil {
		return unavailable(fmt.Errorf("postgres: drop table %s: %w", ident, err))
	}
	s.mu.Lock()
	delete(s.mu.tables, name)
	delete(s.mu.prepared, name)
	s.mu.Unlock()
	return nil
}
