package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

// fake is a node as Exec sees it: the typed client's answers, and a record
// of the calls.
type fake struct {
	jobs    []*api.JobSummary        // ListJobs
	infos   map[string]*api.JobInfo  // ShowJob (absent: NOT_FOUND)
	refuse  map[string]api.ErrorCode // PauseJob/ResumeJob/StopJob/Create by job name
	rows    int                      // rows of every table ScanPage reads
	calls   []string                 // "pause a", "create j", "scan 1000", ...
	created map[string]*api.CreateJobRequest
}

var _ Client = (*fake)(nil)

func (f *fake) call(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fake) refused(name string) error {
	if code, ok := f.refuse[name]; ok {
		delete(f.refuse, name) // refused once
		return &client.Error{Code: code, Message: "refused " + name}
	}
	return nil
}

func (f *fake) jobInfo(name string) *api.JobInfo {
	return &api.JobInfo{Summary: &api.JobSummary{Name: name, State: api.JobState_RUNNING}}
}

func (f *fake) CreateTable(context.Context, *api.TableSpec, bool) (bool, error) { return false, nil }
func (f *fake) DescribeTable(context.Context, string) (*api.TableInfo, error)   { return nil, nil }
func (f *fake) ListTables(context.Context) ([]*api.TableInfo, error)            { return nil, nil }
func (f *fake) DropTable(context.Context, string, bool) (bool, error)           { return true, nil }
func (f *fake) TruncateTable(context.Context, string) error                     { return nil }
func (f *fake) InsertRows(context.Context, *api.TableInsertRequest) (int64, error) {
	return 0, nil
}

func (f *fake) ScanPage(_ context.Context, table string, after []byte, limit int) (*api.TableSpec, []*api.Row, []byte, error) {
	f.call("scan %d", limit)
	from := 0
	if len(after) > 0 {
		fmt.Sscan(string(after), &from)
	}
	var rows []*api.Row
	for i := from; i < f.rows && len(rows) < limit; i++ {
		rows = append(rows, &api.Row{Values: []*api.Value{{Kind: &api.Value_Int64{Int64: int64(i)}}}})
	}
	var next []byte
	if from+len(rows) < f.rows {
		next = []byte(fmt.Sprint(from + len(rows)))
	}
	schema := &api.TableSpec{Name: table, Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}}
	return schema, rows, next, nil
}

func (f *fake) Create(_ context.Context, req *api.CreateJobRequest) (*api.JobInfo, error) {
	name := req.GetSpec().GetName()
	f.call("create %s", name)
	if err := f.refused(name); err != nil {
		return nil, err
	}
	if f.created == nil {
		f.created = map[string]*api.CreateJobRequest{}
	}
	f.created[name] = req
	return f.jobInfo(name), nil
}

func (f *fake) Alter(_ context.Context, req *api.AlterJobRequest) (*api.JobInfo, error) {
	return f.jobInfo(req.GetName()), nil
}

func (f *fake) command(verb, name string) (*api.JobInfo, error) {
	f.call("%s %s", verb, name)
	if err := f.refused(name); err != nil {
		return nil, err
	}
	return f.jobInfo(name), nil
}

func (f *fake) PauseJob(_ context.Context, name string) (*api.JobInfo, error) {
	return f.command("pause", name)
}
func (f *fake) ResumeJob(_ context.Context, name string) (*api.JobInfo, error) {
	return f.command("resume", name)
}
func (f *fake) StopJob(_ context.Context, name string) (*api.JobInfo, error) {
	return f.command("stop", name)
}
func (f *fake) DeleteJob(_ context.Context, name string) (*api.JobInfo, error) {
	return f.command("delete", name)
}

func (f *fake) ShowJob(_ context.Context, name string) (*api.JobInfo, error) {
	if info, ok := f.infos[name]; ok {
		return info, nil
	}
	return nil, &client.Error{Code: api.ErrorCode_NOT_FOUND, Message: fmt.Sprintf("job %q not found", name)}
}

func (f *fake) ListJobs(context.Context) ([]*api.JobSummary, error) { return f.jobs, nil }

func job(name string, state api.JobState) *api.JobSummary {
	return &api.JobSummary{Name: name, State: state}
}

// info is a job's details as a node answers them (a spec, always).
func info(name string, state api.JobState) *api.JobInfo {
	return &api.JobInfo{Summary: job(name, state), Spec: &api.JobSpec{Name: name}}
}

// TestStatementErrors: a statement Exec cannot take is a *client.Error,
// INVALID_ARGUMENT, naming the clause, and nothing is sent.
func TestStatementErrors(t *testing.T) {
	for _, tc := range []struct{ stmt, field string }{
		{"FROBNICATE ALL THE THINGS", "FROBNICATE"},
		{"SELECT a FROM t1 JOIN t2", "JOIN"},
	} {
		f := &fake{}
		_, err := Exec(context.Background(), f, tc.stmt)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Code != api.ErrorCode_INVALID_ARGUMENT || ce.Field != tc.field {
			t.Errorf("%s: err %v, want INVALID_ARGUMENT on %s", tc.stmt, err, tc.field)
		}
		if len(f.calls) != 0 {
			t.Errorf("%s: sent %v", tc.stmt, f.calls)
		}
	}
}

// TestPauseAll: PAUSE ALL asks every job that is not final, and skips one
// in a state the command does not apply to (FAILED_PRECONDITION).
func TestPauseAll(t *testing.T) {
	f := &fake{
		jobs:   []*api.JobSummary{job("a", api.JobState_RUNNING), job("b", api.JobState_STOPPED), job("c", api.JobState_PAUSED), job("d", api.JobState_NEED_SCHEDULE)},
		refuse: map[string]api.ErrorCode{"c": api.ErrorCode_FAILED_PRECONDITION},
	}
	res, err := Exec(context.Background(), f, "PAUSE ALL ROUTINE LOAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pause a", "pause c", "pause d"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
	if res.GetMessage() != "sent to 2 jobs" {
		t.Errorf("message %q", res.GetMessage())
	}
}

// TestCreateTakesFinalJobsName: as in Doris, CREATE ROUTINE LOAD may take
// the name of a STOPPED job: the final job is deleted, then the new one
// created (with the stored table); a name of a live job stays refused.
func TestCreateTakesFinalJobsName(t *testing.T) {
	const stmt = `CREATE ROUTINE LOAD j ON t COLUMNS(id) FROM KAFKA ("kafka_broker_list" = "b:9092", "kafka_topic" = "events")`
	f := &fake{
		refuse: map[string]api.ErrorCode{"j": api.ErrorCode_ALREADY_EXISTS},
		infos:  map[string]*api.JobInfo{"j": {Summary: job("j", api.JobState_STOPPED)}},
	}
	res, err := Exec(context.Background(), f, stmt)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"create j", "delete j", "create j"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
	if !f.created["j"].GetUseStoredTable() || res.GetMessage() != "routine load j created" {
		t.Errorf("created %v, message %q", f.created["j"], res.GetMessage())
	}

	f = &fake{
		refuse: map[string]api.ErrorCode{"j": api.ErrorCode_ALREADY_EXISTS},
		infos:  map[string]*api.JobInfo{"j": {Summary: job("j", api.JobState_RUNNING)}},
	}
	var ce *client.Error
	if _, err := Exec(context.Background(), f, stmt); !errors.As(err, &ce) || ce.Code != api.ErrorCode_ALREADY_EXISTS {
		t.Errorf("name of a running job: err %v, want ALREADY_EXISTS", err)
	}
}

// TestSelectReadsPages: a SELECT reads its table a page (1000 rows) at a
// time through ScanPage, to the end.
func TestSelectReadsPages(t *testing.T) {
	f := &fake{rows: 2500}
	res, err := Exec(context.Background(), f, "SELECT count(*), max(id) FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"scan 1000", "scan 1000", "scan 1000"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
	rs := res.GetResult()
	if len(rs.GetRows()) != 1 || !slices.Equal(rs.GetRows()[0].GetValues(), []string{"2500", "2499"}) {
		t.Errorf("result %v", rs)
	}
}

// TestShowAllSkipsVanishedJob: SHOW ROUTINE LOAD lists the jobs that are not
// final, one row each; a job deleted between the listing and its show is
// left out, not an error.
func TestShowAllSkipsVanishedJob(t *testing.T) {
	f := &fake{
		jobs:  []*api.JobSummary{job("a", api.JobState_RUNNING), job("gone", api.JobState_RUNNING), job("s", api.JobState_STOPPED)},
		infos: map[string]*api.JobInfo{"a": info("a", api.JobState_RUNNING), "s": info("s", api.JobState_STOPPED)},
	}
	res, err := Exec(context.Background(), f, "SHOW ROUTINE LOAD")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetJobs()) != 1 || res.GetJobs()[0].GetName() != "a" || len(res.GetResult().GetRows()) != 1 {
		t.Errorf("jobs %v, %d rows; want job a alone", res.GetJobs(), len(res.GetResult().GetRows()))
	}
}

// TestInsertAnswerNamesTable: an INSERT's answer names the table, and a
// temporary partition by its Doris name, never by its catalog name
// ("t#tp").
func TestInsertAnswerNamesTable(t *testing.T) {
	for _, tc := range []struct{ stmt, want string }{
		{"INSERT INTO t VALUES (1)", "0 rows inserted into table t"},
		{"INSERT INTO t TEMPORARY PARTITION (tp) VALUES (1)", "0 rows inserted into temporary partition tp of table t"},
	} {
		resp, err := Exec(context.Background(), &fake{}, tc.stmt)
		if err != nil {
			t.Fatalf("%s: %v", tc.stmt, err)
		}
		if resp.GetMessage() != tc.want {
			t.Errorf("%s: %q, want %q", tc.stmt, resp.GetMessage(), tc.want)
		}
	}
}
