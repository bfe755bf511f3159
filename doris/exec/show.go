package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/doris"
)

// SHOW [ALL] ROUTINE LOAD, SHOW ROUTINE LOAD TASK and SHOW [ALL] CREATE
// ROUTINE LOAD: the node tells what it knows of a job (ShowJob, ListJobs);
// the answer is shaped here into Doris's result set (package doris).

// execShow answers a SHOW statement about routine loads. Times are shown in
// the client's local time zone.
func execShow(ctx context.Context, c Client, sh *doris.Show) (*api.ExecResponse, error) {
	loc := time.Local
	if sh.Name == "" {
		return showAll(ctx, c, sh, loc)
	}
	info, err := c.ShowJob(ctx, sh.Name)
	if err != nil {
		return nil, err
	}
	res := &api.ExecResponse{Job: info}
	state := info.GetSummary().GetState()
	switch {
	case sh.Task:
		// A job that is not RUNNING has no tasks: no rows.
		res.Result = resultSet(doris.RoutineLoadTaskColumns, doris.RoutineLoadTaskRows(info, loc)...)
	case state.Final() && !sh.All:
		all := "SHOW ALL ROUTINE LOAD FOR "
		if sh.Create {
			all = "SHOW ALL CREATE ROUTINE LOAD FOR "
		}
		return nil, &client.Error{Code: api.ErrorCode_NOT_FOUND, Field: "FOR", Message: fmt.Sprintf(
			"routine load %s is %s; %s%s shows a stopped or cancelled job, as in Doris", sh.Name, state, all, sh.Name)}
	case sh.Create:
		res.Result = resultSet(doris.CreateRoutineLoadColumns, doris.CreateRoutineLoadRow(info))
	default:
		res.Result = resultSet(doris.RoutineLoadColumns)
		if row := doris.RoutineLoadRow(info, loc); len(sh.Page([][]string{row})) == 1 { // LIMIT 0 or an offset
			res.Result.Rows = []*api.ResultRow{{Values: row}}
		}
	}
	return res, nil
}

// showAll is SHOW [ALL] ROUTINE LOAD without FOR: one row per job in id
// (creation) order, as Doris orders them; without ALL, final jobs are left
// out; with LIKE, the jobs whose names match. Each job is asked for its
// details; a job removed in between is skipped.
func showAll(ctx context.Context, c Client, sh *doris.Show, loc *time.Location) (*api.ExecResponse, error) {
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	res := &api.ExecResponse{Jobs: []*api.JobSummary{}, Result: resultSet(doris.RoutineLoadColumns)}
	for _, j := range jobs {
		if j.GetState().Final() && !sh.All || !sh.Lists(j.GetName()) {
			continue
		}
		info, err := c.ShowJob(ctx, j.GetName())
		if err != nil {
			var ce *client.Error
			if errors.As(err, &ce) && ce.Code == api.ErrorCode_NOT_FOUND {
				continue
			}
			return nil, err
		}
		res.Jobs = append(res.Jobs, j)
		res.Result.Rows = append(res.Result.Rows, &api.ResultRow{Values: doris.RoutineLoadRow(info, loc)})
	}
	// ORDER BY and LIMIT, over the rows as shown.
	rows := make([][]string, len(res.Result.Rows))
	for i, r := range res.Result.Rows {
		rows[i] = r.GetValues()
	}
	jobs, shown := res.Jobs, res.Result.Rows
	res.Jobs, res.Result.Rows = []*api.JobSummary{}, nil
	for _, i := range sh.Page(rows) {
		res.Jobs, res.Result.Rows = append(res.Jobs, jobs[i]), append(res.Result.Rows, shown[i])
	}
	return res, nil
}

func resultSet(columns []string, rows ...[]string) *api.ResultSet {
	rs := &api.ResultSet{Columns: columns}
	for _, r := range rows {
		rs.Rows = append(rs.Rows, &api.ResultRow{Values: r})
	}
	return rs
}
