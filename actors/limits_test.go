package actors

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// TestErrorRowReasonBounded: a hostile record ({"id":<10 MiB of digits>})
// makes an error row whose reason, like its raw bytes, is bounded
// (issue 12, defect 2: the reason was 10 MB).
func TestErrorRowReasonBounded(t *testing.T) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}})
	if err != nil {
		t.Fatal(err)
	}
	f := table.Format{Kind: "json"}
	parser, err := table.NewParser(schema, f)
	if err != nil {
		t.Fatal(err)
	}
	hostile := []byte(`{"id":` + strings.Repeat("9", 10<<20) + `}`)
	invalid := []byte("{\"id\":\"\xff\xfe" + strings.Repeat("x", 4096) + "\"}")
	batch := &sources.Batch{Next: map[int32]int64{0: 2}, Bytes: int64(len(hostile) + len(invalid)), Records: []sources.Record{
		{Partition: 0, Offset: 0, Value: hostile},
		{Partition: 0, Offset: 1, Value: invalid},
	}}
	cfg := taskConfig{jobID: 1, schema: schema, format: f, settings: testSettings(Settings{})}
	out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	if len(out.commit.errorRows) != 2 {
		t.Fatalf("%d error rows, want 2", len(out.commit.errorRows))
	}
	for _, r := range out.commit.errorRows {
		if len(r.Reason) > api.MaxReasonBytes || !utf8.ValidString(r.Reason) {
			t.Errorf("offset %d: reason of %d bytes (valid UTF-8: %v), want at most %d", r.Offset, len(r.Reason), utf8.ValidString(r.Reason), api.MaxReasonBytes)
		}
		if len(r.Raw) > cfg.settings.ErrorRowRawBytes {
			t.Errorf("offset %d: raw of %d bytes", r.Offset, len(r.Raw))
		}
		t.Logf("offset %d: %s", r.Offset, r.Reason)
	}
}

// TestEchoedNamesBounded: errors that echo a user-given name echo at most
// api.MaxEchoBytes of it (issue 12, defect 9: 10,000-character names were
// echoed whole), and a journaled transition's message is bounded.
func TestEchoedNamesBounded(t *testing.T) {
	h := newHarness(t, vfs.NewMem())
	long := strings.Repeat("n", 10000)
	for _, msg := range []any{
		&api.ShowJobRequest{Name: long},
		&api.PauseJobRequest{Name: long},
		&api.CreateJobRequest{Spec: testSpec(long)},
	} {
		resp, ok := h.ask(h.mgr, msg).(*api.JobResponse)
		if !ok || resp.GetError() == nil {
			t.Fatalf("%T: want an error, got %v", msg, resp)
		}
		if e := resp.GetError(); len(e.GetMessage()) > api.MaxMessageBytes || strings.Contains(e.GetMessage(), long[:api.MaxEchoBytes+1]) {
			t.Errorf("%T: message of %d bytes echoes the name whole: %.200s", msg, len(e.GetMessage()), e.GetMessage())
		}
	}
	j := &job{jobCore: jobCore{deps: &Deps{Now: time.Now}}}
	tr := j.nextTransition(api.JobState_PAUSED, api.Reason_SOURCE_CONFIG_ERROR, "source: "+strings.Repeat("e", 10<<20))
	if len(tr.GetMessage()) > api.MaxMessageBytes {
		t.Errorf("transition message of %d bytes, want at most %d", len(tr.GetMessage()), api.MaxMessageBytes)
	}
}

type longHistory struct{ metastore.Store }

func (longHistory) History(uint64, int) ([]*api.Transition, error) {
	return []*api.Transition{{Seq: 1, Message: strings.Repeat("m", 1<<20), StateMessage: strings.Repeat("s", 1<<20)}}, nil
}

type longErrorRows struct{ sink.Sink }

func (longErrorRows) ErrorRows(uint64, int) ([]*api.ErrorRow, error) {
	return []*api.ErrorRow{{Offset: 7, Reason: strings.Repeat("r", 10<<20)}}, nil
}

// TestShowBoundsStoredText: text stored before it was bounded (a store
// written by an older node) is cut when shown, so `job show` stays small.
func TestShowBoundsStoredText(t *testing.T) {
	rec := &api.JobRecord{Id: 1, Name: "j", Spec: testSpec("j")}
	info, err := present(jobView{rec: rec, summary: &api.JobSummary{}, meta: longHistory{}, sink: longErrorRows{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := proto.Size(info); n > 8<<10 {
		t.Fatalf("job show is %d bytes, want at most 8 KiB", n)
	}
}

// TestValueLimitIsErrorRow: a task's parser bounds every value by the
// node's max_record_size: a 23-byte record asking LPAD for 3e9 characters,
// or one of 2,000 bytes whose REPLACE would make 1 MB, is an error row
// naming the function and the limit, and the batch goes on (probe
// 2026-12-02, D5: the node ran out of memory, at every restart).
func TestValueLimitIsErrorRow(t *testing.T) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64}, {Name: "v", Type: api.ColumnType_STRING}}})
	if err != nil {
		t.Fatal(err)
	}
	f := table.Format{Kind: "json", NonStrict: true, Columns: []string{"id", "n", "s", "r", "v = concat(lpad('a', n, 'x'), replace(s, 'a', r))"}}
	cfg := taskConfig{jobID: 1, schema: schema, format: f, settings: testSettings(Settings{MaxRecordBytes: 100_000})}
	parser, err := newParser(cfg, schema)
	if err != nil {
		t.Fatal(err)
	}
	records := []string{
		`{"id":0,"n":3000000000}`,
		`{"id":1,"n":2,"s":"a","r":"b"}`,
		`{"id":2,"n":1,"s":"` + strings.Repeat("a", 1000) + `","r":"` + strings.Repeat("b", 1000) + `"}`,
		`{"id":3,"n":99000,"s":"a","r":"b"}`,
	}
	batch := &sources.Batch{Next: map[int32]int64{0: int64(len(records))}}
	for i, r := range records {
		batch.Records = append(batch.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(r)})
		batch.Bytes += int64(len(r))
	}
	out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
	if out.err != nil {
		t.Fatal(out.err)
	}
	if out.commit.loaded != 2 || len(out.commit.errorRows) != 2 {
		t.Fatalf("%d rows loaded, %d error rows; want 2 and 2", out.commit.loaded, len(out.commit.errorRows))
	}
	for i, want := range []string{
		"column v: v = ...: LPAD would make a value of at least 3000000000 bytes, over the limit of 100000 bytes per value (max_record_size)",
		"column v: v = ...: REPLACE would make a value of 1000000 bytes, over the limit of 100000 bytes per value (max_record_size)",
	} {
		if r := out.commit.errorRows[i]; r.Offset != int64(2*i) || r.Reason != want {
			t.Errorf("error row %d: offset %d, %q\nwant offset %d, %q", i, r.Offset, r.Reason, 2*i, want)
		}
	}
}
