package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/query"
)

// SELECT: a query over a table is first offered to the node
// (QueryTable): a PostgreSQL table's query runs in PostgreSQL, read-only.
// When the node answers with a fallback (the table is in the embedded
// store, or a part of the query has no PostgreSQL equivalent), the query
// runs here, over the client's paged scan (package query), a page of rows
// at a time; a read never blocks a job's commits.

// querier is a Client that can ask the node to answer a query
// (*client.Client); a Client without it always runs the scan path.
type querier interface {
	QueryTable(ctx context.Context, table, statement string) (*api.ResultSet, string, error)
}

var _ querier = (*client.Client)(nil)

// scanSource reads a table through the client's scan pages (query.Source).
type scanSource struct{ c Client }

var _ query.Source = scanSource{}

func (s scanSource) Page(ctx context.Context, table string, cursor []byte) (*api.TableSpec, []*api.Row, []byte, error) {
	schema, rows, next, err := s.c.ScanPage(ctx, table, cursor, scanPage)
	if err != nil {
		return nil, nil, nil, err
	}
	if schema == nil {
		return nil, nil, nil, fmt.Errorf("exec: scan %s: reply has no schema", table)
	}
	return schema, rows, next, nil
}

// scanPage is the number of rows a SELECT asks for per page.
const scanPage = 1000

// execSelect answers a SELECT with its result set (ExecResponse.Result:
// the columns, and each row's cells as Doris's MySQL protocol renders
// them, NULL as "NULL"). Expressions use the client's time zone as the
// session's. A query outside the subset is a *client.Error naming the clause.
func execSelect(ctx context.Context, c Client, statement string) (*api.ExecResponse, error) {
	q, err := query.Parse(statement)
	if err == nil && q.Table != "" && q.TemporaryPartition == "" {
		if qc, ok := c.(querier); ok {
			rs, fallback, qerr := qc.QueryTable(ctx, q.Table, statement)
			var ce *client.Error
			switch {
			case qerr == nil && fallback == "":
				return &api.ExecResponse{Result: rs, Message: fmt.Sprintf("%d rows in set", len(rs.GetRows()))}, nil
			case errors.As(qerr, &ce) && ce.Code == api.ErrorCode_UNKNOWN_MESSAGE:
				// A node without TableQueryRequest: the scan answers.
			case qerr != nil:
				return nil, qerr
			}
		}
	}
	if err == nil {
		var res *query.Result
		if res, err = query.Run(ctx, scanSource{c}, q, query.WithLocation(time.Local)); err == nil {
			return &api.ExecResponse{Result: res.ResultSet(), Message: fmt.Sprintf("%d rows in set", len(res.Rows))}, nil
		}
	}
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == api.ErrorCode_NOT_FOUND && q.TemporaryPartition != "" {
		// The temporary partition's catalog table is not there.
		return nil, &client.Error{Code: ce.Code, Field: "FROM", Message: fmt.Sprintf("table %s has no temporary partition %s", q.Table, q.TemporaryPartition)}
	}
	if errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	field := "SELECT"
	var qe *query.Error
	if errors.As(err, &qe) {
		field = qe.Clause
	}
	return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: field, Message: err.Error()}
}
