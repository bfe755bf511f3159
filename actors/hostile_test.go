package actors_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
)

// TestOneInputCannotTakeTheNodeDown (probe 2026-12-02, D5 and D6): a
// 23-byte record asking LPAD for 3e9 characters and a 400 KB record whose
// REPLACE would make 40 GB are error rows naming the function and the
// limit, and the job loads the records around them; a 3.8 MB spec of
// nested parentheses is refused naming the depth limit. The node answers
// throughout.
func TestOneInputCannotTakeTheNodeDown(t *testing.T) {
	_, cl := kafka(t, "hostile", 1, 0)
	brokers := cl.OptValue(kgo.SeedBrokers).([]string)
	n := startNode(t, nil, t.TempDir(), actors.Hooks{})
	aaa, bbb := strings.Repeat("a", 200_000), strings.Repeat("b", 200_000)
	produce(t, cl, "hostile", 0, 6, func(i int) string {
		switch i {
		case 1:
			return `{"id":1,"n":3000000000}` // 23 bytes
		case 3:
			return `{"id":3,"n":1,"s":"` + aaa + `","r":"` + bbb + `"}`
		}
		return fmt.Sprintf(`{"id":%d,"n":3,"s":"a","r":"b"}`, i)
	})
	s := spec("hostile", "hostile_rows", "hostile", brokers)
	s.ColumnsMapping = []string{"id", "n", "s", "r", "note = concat(lpad('a', n, 'x'), replace(s, 'a', r))"}
	s.StrictMode = proto.Bool(false)
	s.MaxErrorNumber = 2
	s.Jsonpaths = nil
	if _, err := n.c.CreateJob(ctx10(t), s); err != nil {
		t.Fatal(err)
	}
	info := n.waitLoaded(t, "hostile", 4)
	if info.Stats.ErrorRows != 2 || len(info.ErrorRows) != 2 || info.Summary.State != api.JobState_RUNNING {
		t.Fatalf("state %s, %d error rows (%d shown), want RUNNING and 2", info.Summary.State, info.Stats.ErrorRows, len(info.ErrorRows))
	}
	for _, er := range info.ErrorRows {
		want := map[int64]string{
			1: "column note: note = ...: LPAD would make a value of at least 3000000000 bytes, over the limit of 16777216 bytes per value (max_record_size)",
			3: "column note: note = ...: REPLACE would make a value of 40000000000 bytes, over the limit of 16777216 bytes per value (max_record_size)",
		}[er.Offset]
		if er.Reason != want {
			t.Errorf("error row at offset %d: %q\nwant %q", er.Offset, er.Reason, want)
		}
	}
	if rows, err := n.c.Count(ctx10(t), "hostile_rows"); err != nil || rows != 4 {
		t.Fatalf("count = %d, %v; want 4", rows, err)
	}

	// D6: 1.9 million nested parentheses, under the 4 MiB request limit.
	deep := spec("deep", "deep_rows", "hostile", brokers)
	deep.ColumnsMapping = []string{"id", "note = " + strings.Repeat("(", 1_900_000) + "id" + strings.Repeat(")", 1_900_000)}
	_, err := n.c.CreateJob(ctx10(t), deep)
	if code(err) != api.ErrorCode_INVALID_ARGUMENT || !strings.Contains(err.Error(), "expression nests deeper than 3000 levels") {
		t.Fatalf("deep expression: %v, want INVALID_ARGUMENT naming the depth limit", err)
	}
	produce(t, cl, "hostile", 6, 2, func(i int) string { return fmt.Sprintf(`{"id":%d,"n":1}`, i) })
	n.waitLoaded(t, "hostile", 6)
}
