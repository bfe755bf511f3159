package client

import (
	"context"

	"github.com/loadnode/loadnode/api"
)

// ListTables returns every table of the node's catalog, by name, with the
// jobs loading into it and where its rows are (row counts are left out:
// Rows is -1; DescribeTable counts).
func (c *Client) ListTables(ctx context.Context) ([]*api.TableInfo, error) {
	resp, err := call[*api.ListTablesResponse](ctx, c, "list tables", &api.ListTablesRequest{})
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	return resp.GetTables(), nil
}

// DescribeTable returns a table's schema, database, jobs and row count
// (Rows -1 and CountError when its database did not answer).
func (c *Client) DescribeTable(ctx context.Context, table string) (*api.TableInfo, error) {
	resp, err := call[*api.DescribeTableResponse](ctx, c, "describe table", &api.DescribeTableRequest{Table: table})
	if err != nil {
		return nil, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return nil, err
	}
	return resp.GetTable(), nil
}

// DropTable removes a table from the catalog and its rows from its
// database. It is refused with FAILED_PRECONDITION, naming the job, while a
// job that is not deleted and not final loads into it. With ifExists an
// unknown table is not an error (dropped is then false).
func (c *Client) DropTable(ctx context.Context, table string, ifExists bool) (dropped bool, err error) {
	resp, err := call[*api.DropTableResponse](ctx, c, "drop table", &api.DropTableRequest{Table: table, IfExists: ifExists})
	if err != nil {
		return false, err
	}
	if err := fromAPI(resp.GetError()); err != nil {
		return false, err
	}
	return resp.GetDropped(), nil
}
