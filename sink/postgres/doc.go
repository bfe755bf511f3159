// Package postgres is the PostgreSQL sink: it implements sink.Sink over a
// pgx connection pool (github.com/jackc/pgx/v5/pgxpool).
//
// # Layout
//
// A loadnode table T lives in PostgreSQL as <schema>.T (Options.Schema,
// default public), created on first use (PrepareTable) with these columns:
//
//	_loadnode_key        bytea PRIMARY KEY  the table-model row key (sink.KV.Key)
//	_loadnode_job        bigint             where the row came from: job,
//	_loadnode_partition  integer            partition and offset (the row
//	_loadnode_offset     bigint             value's header)
//	<column>             bigint | double precision | text | boolean | timestamptz
//	                     | numeric(p,s) (DECIMAL; LARGEINT numeric(39,0)) | date
//	                     | timestamp(p) without time zone (DATETIME) | json
//
// A row written twice under one key keeps the last value (a replay
// rewrites its own keys; a user's reset gives the rows read again keys of
// their own: table.KeySpace). A UNIQUE or AGGREGATE table has _loadnode_key UNIQUE
// instead, and its key columns as the conflict target of its merges: a
// PRIMARY KEY when the spec makes them NOT NULL, else UNIQUE NULLS NOT
// DISTINCT; a keyed table made by an earlier release (primary key
// _loadnode_key) gets that constraint at its next PrepareTable. Its rows
// merge in SQL (models.go): folded per key, staged by COPY, then deletes
// by the staged keys and INSERT ... ON CONFLICT DO UPDATE under the
// sequence condition (UNIQUE) or with each value column's arithmetic
// (AGGREGATE), in the commit's transaction. The job state lives in loadnode's own schema, created
// on first use:
//
// Every row of loadnode.jobs, .progress and .error_rows carries its owner
// (Options.Owner): nodes sharing a database keep their job ids apart.
//
//	loadnode.jobs        (owner, job) -> fence, statistics (protobuf and readable
//	                     columns), the sequence number of the newest error row
//	loadnode.progress    (owner, job, partition) -> next position, source checkpoint
//	loadnode.error_rows  (owner, job, seq) -> error row, the newest MaxErrorRowsKept
//	loadnode.tables      (schema, table) -> the loadnode table spec
//	loadnode.owners      owner -> the incarnation (process) that holds it: a counter,
//	                     the holder's id, when it claimed (incarnation.go)
//
// # Exactly once
//
// A Commit is one transaction: it locks the job's row in loadnode.jobs
// (FOR UPDATE: every writer of a job serializes there), checks the fence,
// the statistics base and that every range starts at its stored position,
// that no column it writes was altered since the table was prepared (its
// shape, read in the same round trip; a change that no longer holds the
// spec's rows is a *ChangedError, sink.ErrTableChanged), writes the rows
// with a binary COPY, and moves the progress of exactly the
// covered partitions, the statistics, the fence and the error rows. Either
// all of it commits or none; a refused commit rolls back having written
// nothing. With Options.Incarnation, a write also checks, once the job's
// row is locked, that no later incarnation of the owner (a copy of the
// node: a restored backup, a copied data directory) has claimed it; if
// one has, the write is refused with sink.ErrSuperseded. After an error
// that is not a refusal (the connection lost during COMMIT) the caller
// reads Progress, which PostgreSQL answers from one snapshot.
//
// Small DUPLICATE commits of different jobs that arrive together share one
// transaction (commitgroup.go): each job's checks and writes are exactly
// those of its commit alone; a group that fails anywhere writes nothing
// and its commits are done again one by one.
//
// commit.go holds a commit in the order it runs (check the job, stage
// then apply each table by its model, write progress, COMMIT); models.go
// each table model's SQL; types.go how each column type is held; copy.go
// the binary COPY stream; initstarts.go the first positions, of the jobs
// that start together in one transaction (each job's row locked in job
// order, as a commit locks its one row).
//
// # Encoding ahead
//
// The binary COPY stream of a DUPLICATE table's batch is built by the task
// that parses the batch (sink.Encoder: copyBatch, straight from the parsed
// values, sorted into key order by Seal without moving the rows), while
// the job's previous commit is in flight, so a job's serial commits only
// send bytes. A commit without encodings, or whose encodings are not of
// the table as the sink knows it now (prepared again since), encodes its
// Rows itself; Rows remain what a commit writes.
//
// Identifiers are always quoted (pgx.Identifier); no value from a spec or a
// row is ever pasted into SQL text. A table or column name longer than
// PostgreSQL keeps (max_identifier_length, 63 bytes) is refused at create,
// since PostgreSQL would truncate it into another's (names.go).
//
// Concurrency: a Sink is safe for concurrent use; the pool bounds the
// connections (Options.MaxConns).
package postgres
