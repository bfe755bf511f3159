package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/doris"
	"github.com/loadnode/loadnode/query"
)

// Exec runs one Doris-compatible statement through c: CREATE TABLE, CREATE /
// ALTER / PAUSE / RESUME / STOP / SHOW ROUTINE LOAD, ... The statement is
// translated here, at the edge, into the typed requests of c's methods
// (CreateTable, Create with the stored table, Alter with an update mask,
// ...); no node parses SQL. A clause loadnode does not support is
// refused with a *client.Error naming it (in Field), never ignored. Statements
// about one job answer with that job in ExecResponse.Job; SHOW ROUTINE LOAD
// without FOR lists the jobs in ExecResponse.Jobs (without ALL: not the
// STOPPED and CANCELLED ones, as in Doris). SHOW [ALL] ROUTINE LOAD, SHOW
// ROUTINE LOAD TASK and SHOW [ALL] CREATE ROUTINE LOAD also answer with
// Doris's result set in ExecResponse.Result (package doris shapes it).
// SELECT (package query's subset) answers with its result set in
// ExecResponse.Result, run here over the paged scan (select.go).
func Exec(ctx context.Context, c Client, statement string) (*api.ExecResponse, error) {
	if query.IsSelect(statement) {
		return execSelect(ctx, c, statement)
	}
	st, err := doris.Parse(statement)
	if err != nil {
		var de *doris.Error
		field := "statement"
		if errors.As(err, &de) && de.Clause != "" {
			field = de.Clause
		}
		return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: field, Message: err.Error()}
	}
	switch {
	case st.CreateTable != nil:
		name := st.CreateTable.GetName()
		// CREATE TABLE analytics.orders: the table is in the node config's
		// database analytics.
		st.CreateTable.Database = st.DB
		existed, err := c.CreateTable(ctx, st.CreateTable, st.IfNotExists)
		if err != nil {
			return nil, err
		}
		ignored := ""
		if len(st.Ignored) > 0 {
			ignored = " (ignored, no meaning in loadnode: " + strings.Join(st.Ignored, ", ") + ")"
		}
		if existed {
			return &api.ExecResponse{Message: fmt.Sprintf("table %s exists", name)}, nil
		}
		return &api.ExecResponse{Table: st.CreateTable, Message: fmt.Sprintf("table %s created%s", name, ignored)}, nil
	case st.CreateRoutineLoad != nil:
		spec := st.CreateRoutineLoad
		var leftOut []string // a multi-table load's tables of other models
		if st.MultiTable {
			// Without ON: the job loads the tables of the statement's
			// database (the embedded store's without a qualifier) that
			// exist now; each record names its table.
			tables, err := c.ListTables(ctx)
			if err != nil {
				return nil, err
			}
			for _, t := range tables {
				ts := t.GetSpec()
				if ts.GetDatabase() != st.DB {
					continue
				}
				if ts.GetModel() != api.TableModel_DUPLICATE {
					// A multi-table job loads DUPLICATE tables only: the
					// database's UNIQUE and AGGREGATE tables are not its
					// tables (a record naming one is an error row), and
					// do not keep it from loading the others.
					leftOut = append(leftOut, fmt.Sprintf("%s table %s", ts.GetModel(), ts.GetName()))
					continue
				}
				if st.LoadToSingleTablet && !ts.GetRandomDistribution() {
					return nil, singleTabletErr(ts.GetName())
				}
				spec.Tables = append(spec.Tables, &api.TableSpec{Name: ts.GetName(), Database: st.DB})
			}
			if len(spec.Tables) == 0 {
				if len(leftOut) > 0 {
					return nil, fmt.Errorf("CREATE ROUTINE LOAD %s without ON: no DUPLICATE table to load in %s (a multi-table load loads DUPLICATE tables only; not %s)", spec.GetName(), databaseName(st.DB), strings.Join(leftOut, ", "))
				}
				return nil, fmt.Errorf("CREATE ROUTINE LOAD %s without ON: no table to load in %s; create the tables first", spec.GetName(), databaseName(st.DB))
			}
		}
		// CREATE ROUTINE LOAD analytics.orders_load ON orders: the table
		// must be in database analytics (without a qualifier: wherever it
		// is).
		if st.DB != "" && !st.MultiTable {
			if spec.Table == nil {
				spec.Table = &api.TableSpec{}
			}
			spec.Table.Database = st.DB
		}
		if st.LoadToSingleTablet && !st.MultiTable {
			ti, err := c.DescribeTable(ctx, spec.GetTable().GetName())
			if err != nil {
				return nil, err
			}
			if !ti.GetSpec().GetRandomDistribution() {
				return nil, singleTabletErr(spec.GetTable().GetName())
			}
		}
		info, err := c.Create(ctx, &api.CreateJobRequest{Spec: spec, UseStoredTable: true})
		var ce *client.Error
		if errors.As(err, &ce) && ce.Code == api.ErrorCode_ALREADY_EXISTS {
			// As in Doris, the name of a STOPPED (or CANCELLED) job may be
			// used again: the final job goes (its rows stay), then the
			// new one is created.
			if old, serr := c.ShowJob(ctx, spec.GetName()); serr == nil && old.GetSummary().GetState().Final() {
				if _, derr := c.DeleteJob(ctx, spec.GetName()); derr != nil {
					return nil, derr
				}
				info, err = c.Create(ctx, &api.CreateJobRequest{Spec: spec, UseStoredTable: true})
			}
		}
		if err != nil {
			return nil, clauseErr(err)
		}
		msg := "routine load " + spec.GetName() + " created"
		if len(leftOut) > 0 {
			msg += " (not loaded: " + strings.Join(leftOut, ", ") + "; a multi-table load loads DUPLICATE tables only)"
		}
		return &api.ExecResponse{Job: info, Message: msg}, nil
	case st.Pause != nil:
		return execJobs(ctx, c, st.Pause, c.PauseJob)
	case st.Resume != nil:
		return execJobs(ctx, c, st.Resume, c.ResumeJob)
	case st.Stop != nil:
		return execJobs(ctx, c, st.Stop, c.StopJob)
	case st.Show != nil:
		return execShow(ctx, c, st.Show)
	case st.Insert != nil:
		n, err := c.InsertRows(ctx, st.Insert)
		if err != nil {
			return nil, err
		}
		return &api.ExecResponse{Message: doris.InsertedMessage(n, st.Insert.GetTable())}, nil
	case st.Truncate != nil:
		if err := c.TruncateTable(ctx, st.Truncate.Name); err != nil {
			return nil, err
		}
		return &api.ExecResponse{Message: "table " + st.Truncate.Name + " truncated"}, nil
	case st.ShowTables:
		tables, err := c.ListTables(ctx)
		if err != nil {
			return nil, err
		}
		return &api.ExecResponse{Tables: tables}, nil
	case st.Describe != nil:
		ti, err := c.DescribeTable(ctx, st.Describe.Name)
		if err != nil {
			return nil, err
		}
		return &api.ExecResponse{Tables: []*api.TableInfo{ti}, Table: ti.GetSpec()}, nil
	case st.Sync:
		return &api.ExecResponse{Message: "nothing to sync: loadnode's metadata is current when a statement answers"}, nil
	case st.ShowCreateTable != nil:
		ti, err := c.DescribeTable(ctx, st.ShowCreateTable.Name)
		if err != nil {
			return nil, err
		}
		spec := ti.GetSpec()
		return &api.ExecResponse{Result: resultSet(doris.ShowCreateTableColumns, []string{spec.GetName(), doris.CreateTableStatement(spec)})}, nil
	case st.DropTable != nil:
		dropped, err := c.DropTable(ctx, st.DropTable.Name, st.IfExists)
		if err != nil {
			return nil, err
		}
		if !dropped {
			return &api.ExecResponse{Message: "table " + st.DropTable.Name + " does not exist"}, nil
		}
		return &api.ExecResponse{Message: "table " + st.DropTable.Name + " dropped"}, nil
	case st.AlterTable != nil:
		return execAlterTable(ctx, c, st)
	case st.Alter != nil:
		info, err := c.Alter(ctx, st.Alter.Request)
		if err != nil {
			return nil, err
		}
		return &api.ExecResponse{Job: info}, nil
	}
	return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "statement", Message: "unsupported statement"}
}

// clauseErr names the statement's clauses in a create's errors about its
// table: ON (the table) and COLUMNS (the column list).
func clauseErr(err error) error {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Field {
	case "table.name":
		return &client.Error{Code: ce.Code, Field: "ON", Message: ce.Message}
	case "table.columns":
		return &client.Error{Code: ce.Code, Field: "COLUMNS", Message: ce.Message}
	}
	return err
}

// execJobs sends a job command for one job, or for ALL jobs that are not
// final (answered with how many were asked).
func execJobs(ctx context.Context, c Client, ref *doris.JobRef, command func(ctx context.Context, name string) (*api.JobInfo, error)) (*api.ExecResponse, error) {
	if !ref.All {
		info, err := command(ctx, ref.Name)
		if err != nil {
			return nil, err
		}
		return &api.ExecResponse{Job: info}, nil
	}
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, j := range jobs {
		if j.GetState().Final() {
			continue
		}
		if _, err := command(ctx, j.GetName()); err != nil {
			var ce *client.Error
			if errors.As(err, &ce) && ce.Code == api.ErrorCode_FAILED_PRECONDITION {
				continue // not in a state the command applies to, as before
			}
			return nil, err
		}
		n++
	}
	return &api.ExecResponse{Message: fmt.Sprintf("sent to %d jobs", n)}, nil
}

// databaseName names a database of a statement for people.
func databaseName(db string) string {
	if db == "" {
		return "the embedded store"
	}
	return "database " + db
}

// singleTabletErr refuses "load_to_single_tablet" = "true" into a table
// that is not DISTRIBUTED BY RANDOM, as Doris does.
func singleTabletErr(table string) error {
	return &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: `PROPERTIES "load_to_single_tablet"`,
		Message: fmt.Sprintf("if load_to_single_tablet set to true, the olap table must be with random distribution (table %s is not DISTRIBUTED BY RANDOM)", table)}
}

// execAlterTable runs ALTER TABLE ADD or DROP TEMPORARY PARTITION: the
// temporary partition is a table of its own in the catalog
// (doris.AlterTable), made from the table's spec (CreateTable, which the
// node checks against the table and its other temporary partitions) or
// dropped (DropTable).
func execAlterTable(ctx context.Context, c Client, st *doris.Statement) (*api.ExecResponse, error) {
	at := st.AlterTable
	if p := at.AddTemporary; p != nil {
		ti, err := c.DescribeTable(ctx, at.Table)
		if err != nil {
			return nil, err
		}
		if st.DB != "" && ti.GetSpec().GetDatabase() != st.DB {
			return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "ALTER TABLE",
				Message: fmt.Sprintf("table %s is not in %s", at.Table, databaseName(st.DB))}
		}
		spec, err := at.TemporarySpec(ti.GetSpec())
		if err != nil {
			return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "ADD TEMPORARY PARTITION", Message: err.Error()}
		}
		if _, err := c.CreateTable(ctx, spec, false); err != nil {
			var ce *client.Error
			if errors.As(err, &ce) && ce.Field == "temporary_partition" {
				return nil, &client.Error{Code: ce.Code, Field: "ADD TEMPORARY PARTITION", Message: ce.Message}
			}
			return nil, err
		}
		return &api.ExecResponse{Message: fmt.Sprintf("temporary partition %s added to table %s", p.GetName(), at.Table)}, nil
	}
	name := at.TemporaryTable(at.DropTemporary)
	dropped, err := c.DropTable(ctx, name, st.IfExists)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == api.ErrorCode_NOT_FOUND {
		return nil, &client.Error{Code: ce.Code, Field: "DROP TEMPORARY PARTITION",
			Message: fmt.Sprintf("table %s has no temporary partition %s", at.Table, at.DropTemporary)}
	}
	if err != nil {
		return nil, err
	}
	if !dropped {
		return &api.ExecResponse{Message: fmt.Sprintf("table %s has no temporary partition %s", at.Table, at.DropTemporary)}, nil
	}
	return &api.ExecResponse{Message: fmt.Sprintf("temporary partition %s dropped from table %s", at.DropTemporary, at.Table)}, nil
}
