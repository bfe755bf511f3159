package metastore

import (
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

func TestNewJobCheck(t *testing.T) {
	rec := &api.JobRecord{Id: 7, Name: "j"}
	for _, tt := range []struct {
		name    string
		job     NewJob
		errPart string // "" for a valid job
	}{
		{"valid, seq 0", NewJob{Record: rec, First: &api.Transition{}}, ""},
		{"valid, seq 1, table", NewJob{Record: rec, First: &api.Transition{Seq: 1}, NewTable: &api.TableSpec{Name: "t"}}, ""},
		{"nil record", NewJob{First: &api.Transition{}}, "nil record"},
		{"id 0", NewJob{Record: &api.JobRecord{Name: "j"}, First: &api.Transition{}}, "id 0"},
		{"no name", NewJob{Record: &api.JobRecord{Id: 7}, First: &api.Transition{}}, "empty name"},
		{"nil first", NewJob{Record: rec}, "nil first transition"},
		{"seq 2", NewJob{Record: rec, First: &api.Transition{Seq: 2}}, "seq 2, want 1"},
		{"unnamed table", NewJob{Record: rec, First: &api.Transition{}, NewTable: &api.TableSpec{}}, "empty table name"},
	} {
		first, err := tt.job.Check()
		if tt.errPart != "" {
			if err == nil || !strings.Contains(err.Error(), tt.errPart) || !strings.HasPrefix(err.Error(), "create job") {
				t.Errorf("%s: Check() = %v, want an error \"create job ...%s...\"", tt.name, err, tt.errPart)
			}
			continue
		}
		if err != nil || first.GetSeq() != 1 {
			t.Errorf("%s: Check() = %v, %v; want a transition of seq 1", tt.name, first, err)
		}
		if tt.job.First.GetSeq() == 0 && first == tt.job.First {
			t.Errorf("%s: Check changed the caller's transition", tt.name)
		}
	}
}
