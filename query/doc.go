// Package query owns loadnode's SELECT: the subset a Doris user runs to
// check a load, parsed (Parse) and run (Run) over a table read page by page
// through a Source (a client's paged scan; a node's store or a PostgreSQL
// pushdown may implement it too).
//
//	SELECT [DISTINCT] item, ... [FROM [db.]table [[AS] alias]] [WHERE expr]
//	    [GROUP BY key, ...] [HAVING cond]
//	    [ORDER BY key [ASC|DESC] [NULLS FIRST|LAST], ...]
//	    [LIMIT n [OFFSET m] | LIMIT m, n]
//
//	item   *, col, expr [[AS] name], agg [[AS] name], an expression over aggs
//	       and grouped columns [[AS] name]
//	agg    COUNT(*), COUNT(1), COUNT(expr), SUM(expr), MIN(expr), MAX(expr),
//	       AVG(expr); each also fn(DISTINCT expr), and COUNT(DISTINCT expr, ...)
//	expr   any expression of the load expression engine (package table: its
//	       operators and functions), over the table's columns
//	cond   an expression over aggs, grouped columns and the items' aliases
//	key    a column, an expression, an item's alias or position (from 1)
//
// Anything else is an *Error naming what is not supported (JOIN,
// subqueries, UNION, window functions, WITH, an aggregate inside an
// aggregate, ...), never a wrong answer. An expression over aggregates
// (SUM(a) / COUNT(*), ROUND(AVG(x), 2)) is computed once per group from
// the aggregates' results and the group's values of the grouped columns it
// reads; a column it reads outside an aggregate must be grouped. HAVING
// keeps the groups whose condition is true. A DISTINCT aggregate takes
// each distinct value once, skipping NULLs (COUNT(DISTINCT a, b) counts
// the distinct pairs with neither NULL). SELECT DISTINCT is a GROUP BY of
// every item. Aggregates are typed as Doris types them: COUNT is a BIGINT; SUM
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
// the best offset+limit: a top-K heap), the groups of GROUP BY, the rows
// of a result; the values its DISTINCT aggregates keep take at most
// DefaultMaxDistinctBytes (WithMaxDistinctBytes; 64 MiB, some 1.6 million
// integer ids), all of them together, an aggregate written twice kept
// once; over a bound, the query fails naming it. WHERE, COUNT, SUM,
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
// through the Source (a reader never blocks a job's commits: each page of
// the scan is a snapshot read of the store). The pages are separate
// snapshots: over a table a job is loading, a query's later pages may hold
// rows committed after its first, so its aggregates are not of one
// moment (count(*) and max(id) - min(id) + 1 can disagree while rows
// arrive); a PostgreSQL pushdown is one statement, of one snapshot.
package query
