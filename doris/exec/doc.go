// Package exec runs Doris-compatible statements against a node through the
// typed client: Exec parses a statement (package doris; a SELECT, package
// query), sends the typed requests it means (CreateTable, Create with the
// stored table, Alter with an update mask, ...) and shapes the answer as
// Doris does (SHOW ROUTINE LOAD's result sets, a SELECT's rows). The node
// parses no statement but a SELECT it is asked to answer (TableQueryRequest,
// package query), and package client links no SQL grammar: a Go program
// that only wants CreateJob imports client alone.
//
// Exec takes any Client (the methods of *client.Client it uses), so a test
// can give it a fake, and a server inside the node can give it its own.
// Errors the node answered stay *client.Error; a statement's own errors are
// *client.Error with INVALID_ARGUMENT and the clause at fault in Field.
//
// Concurrency: Exec keeps no state; it is as safe for concurrent use as
// the Client it is given. A SELECT over a table is offered to the node
// first (a Client with QueryTable): a PostgreSQL table's query runs in
// PostgreSQL, read-only; else, or when the node answers with a fallback,
// the query reads its table a page at a time (ScanPage). A read never
// blocks a job's commits.
package exec

import (
	"context"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

// Client is what Exec uses of a node's client.
type Client interface {
	CreateTable(ctx context.Context, spec *api.TableSpec, ifNotExists bool) (existed bool, err error)
	DescribeTable(ctx context.Context, table string) (*api.TableInfo, error)
	ListTables(ctx context.Context) ([]*api.TableInfo, error)
	DropTable(ctx context.Context, table string, ifExists bool) (dropped bool, err error)
	TruncateTable(ctx context.Context, table string) error
	InsertRows(ctx context.Context, req *api.TableInsertRequest) (int64, error)
	ScanPage(ctx context.Context, table string, after []byte, limit int) (schema *api.TableSpec, rows []*api.Row, next []byte, err error)

	Create(ctx context.Context, req *api.CreateJobRequest) (*api.JobInfo, error)
	Alter(ctx context.Context, req *api.AlterJobRequest) (*api.JobInfo, error)
	PauseJob(ctx context.Context, name string) (*api.JobInfo, error)
	ResumeJob(ctx context.Context, name string) (*api.JobInfo, error)
	StopJob(ctx context.Context, name string) (*api.JobInfo, error)
	DeleteJob(ctx context.Context, name string) (*api.JobInfo, error)
	ShowJob(ctx context.Context, name string) (*api.JobInfo, error)
	ListJobs(ctx context.Context) ([]*api.JobSummary, error)
}

var _ Client = (*client.Client)(nil)
