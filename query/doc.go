// Package query owns loadnode's SELECT: the subset a Doris user runs to
// check a load, parsed (Parse) and run (Run) over a table read page by page
// through a Source (a client's paged scan; a node's store or a PostgreSQL
// pushdown may implement it too).
//
//	SELECT item, ... [FROM [db.]table [[AS] alias]] [WHERE expr]
//	    [GROUP BY key, ...] [ORDER BY key [ASC|DESC] [NULLS FIRST|LAST], ...]
//	    [LIMIT n [OFFSET m] | LIMIT m, n]
//
//	item   *, col, expr [[AS] name], COUNT(*), COUNT(1), COUNT(expr), SUM(expr),
//	       MIN(expr), MAX(expr), AVG(expr)
//	expr   any expression of the load expression engine (package table: its
//	       operators and functions), over the table's columns
//	key    a column, an expression, an item's alias or position (from 1)
//
// Anything else is an *Error naming what is not supported (JOIN, HAVING,
// subqueries, UNION, DISTINCT, window functions, WITH, ...), never a wrong
// answer. Aggregates are typed as Doris types them: COUNT is a BIGINT; SUM
// of integers a BIGINT (an error past its range, never a wrapped sum), of
// DECIMAL(p,s) a DECIMAL(38,s), of LARGEINT a LARGEINT, of the rest a
// DOUBLE; AVG of DECIMAL(p,s) a DECIMAL(38, max(s,4)), of the rest a
// DOUBLE; MIN and MAX the argument's type. NULLs are skipped; with no
// values (an empty table, a group of NULLs) they are NULL and COUNT is 0.
// ORDER BY puts NULLs first ascending and last descending, as Doris.
// Without ORDER BY, rows come in storage order and GROUP BY's groups in the
// order of their first row.
//
// Bounds: a statement is at most MaxQueryBytes. A query keeps at most
// DefaultMaxRows (WithMaxRows) rows: the rows ORDER BY sorts (with LIMIT,
// the best offset+limit: a top-K heap), the groups of GROUP BY, the rows of
// a result; over it, the query fails naming the bound. WHERE, COUNT, SUM,
// AVG, MIN and MAX stream over the pages and keep no rows, so a count over
// a huge table reads it in bounded memory; a query without ORDER BY stops
// reading once LIMIT has its rows.
//
// Results are wire values (api.Value) with typed columns; Render and
// Result.Text render them as Doris's MySQL protocol does.
//
// Postgres translates a query into PostgreSQL's SQL over a table stored
// there (the node runs it), when every part has an equivalent that gives
// Run's answer; else it is ErrNoPushdown naming the part (postgres.go).
//
// Concurrency: Parse is a pure function; a Query is immutable and may be
// run by several goroutines; one Run uses its goroutine only, and reads
// through the Source (a reader never blocks a job's commits: the scan is a
// snapshot read of the store).
package query
