package actors_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// TestRewindKeepsDuplicateRows: a DUPLICATE table keeps every row a user
// asked to load. A reset of a PAUSED job's offsets back to the beginning
// loads the records again as new rows (Doris keeps both), never over the
// rows first loaded from those offsets: the table's count, the job's
// loaded-rows statistic and twice the records produced agree, each id
// twice. A restart after the rewind replays from the sink's progress in
// the same key space and adds nothing (exactly once).
func TestRewindKeepsDuplicateRows(t *testing.T) {
	const n = 100
	_, cl := kafka(t, "rw", 2, n)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	dir := t.TempDir()
	node := startNode(t, nil, dir, actors.Hooks{})
	sp := spec("rw", "rw_rows", "rw", brokers)
	if _, err := node.c.CreateJob(ctx10(t), sp); err != nil {
		t.Fatal(err)
	}
	node.waitLoaded(t, "rw", n)
	if _, err := node.c.PauseJob(ctx10(t), "rw"); err != nil {
		t.Fatal(err)
	}
	node.waitState(t, "rw", api.JobState_PAUSED)
	if _, err := node.c.AlterJob(ctx10(t), "rw", nil, map[int32]string{0: "OFFSET_BEGINNING", 1: "OFFSET_BEGINNING"}); err != nil {
		t.Fatal(err)
	}
	if _, err := node.c.ResumeJob(ctx10(t), "rw"); err != nil {
		t.Fatal(err)
	}
	node.waitLoaded(t, "rw", 2*n)
	check := func(what string, node *testNode) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, rows, err := node.c.Scan(ctx, "rw_rows", 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]int{}
		for _, r := range rows {
			seen[r.GetValues()[0].GetInt64()]++
		}
		for i := range n {
			if seen[int64(i)] != 2 {
				t.Errorf("%s: id %d in %d rows, want 2 (loaded, then loaded again after the rewind)", what, i, seen[int64(i)])
			}
		}
		stat := node.show(t, "rw").GetStats().GetLoadedRows()
		if len(rows) != 2*n || stat != 2*n {
			t.Errorf("%s: count(*) = %d, loaded_rows = %d, want both %d", what, len(rows), stat, 2*n)
		}
	}
	check("after the rewind", node)
	node.stop()
	node = startNode(t, nil, dir, actors.Hooks{})
	produce(t, cl, "rw", n, 0, nil)
	node.waitLoaded(t, "rw", 2*n)
	check("after a restart", node)
}
