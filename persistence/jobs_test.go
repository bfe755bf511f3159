package persistence

import (
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/loadnode/loadnode/api"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestTransitionsRoundTrip(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, mem, Options{})
	rec := mustCreate(t, s, 3, "j")
	want := []*api.Transition{createdTransition()}
	for _, tr := range []*api.Transition{
		{Seq: 2, From: api.JobState_NEED_SCHEDULE, To: api.JobState_RUNNING, Reason: api.Reason_SCHEDULED},
		{Seq: 3, From: api.JobState_RUNNING, To: api.JobState_PAUSED, Reason: api.Reason_SOURCE_UNREACHABLE, Message: "broker down"},
	} {
		if err := s.AppendTransition(rec.Id, tr); err != nil {
			t.Fatalf("AppendTransition(seq %d): %v", tr.Seq, err)
		}
		want = append(want, tr)
	}

	before := dump(t, s)
	for _, seq := range []uint64{0, 1, 3, 5} {
		if err := s.AppendTransition(rec.Id, &api.Transition{Seq: seq}); err == nil {
			t.Errorf("AppendTransition(seq %d) after seq 3 succeeded", seq)
		}
	}
	assertSameDump(t, before, dump(t, s))
	if err := s.AppendTransition(99, &api.Transition{Seq: 2}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendTransition to an unknown job = %v, want ErrNotFound", err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, mem, Options{})
	got, err := s.Journal(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Journal has %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		assertProtoEqual(t, "journal entry", got[i], want[i])
	}
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	assertProtoEqual(t, "LoadJob.Record", st.Record, rec)
	assertProtoEqual(t, "LoadJob.Last", st.Last, want[len(want)-1])
	if _, err := s.Journal(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("Journal of an unknown job = %v, want ErrNotFound", err)
	}
	if _, err := s.LoadJob(99); !errors.Is(err, ErrNotFound) {
		t.Errorf("LoadJob of an unknown job = %v, want ErrNotFound", err)
	}
}

func TestCreateJobFirstSeqZeroStoredAsOne(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	first := &api.Transition{To: api.JobState_NEED_SCHEDULE, Reason: api.Reason_CREATED}
	if err := s.CreateJob(testRecord(1, "a"), first, nil); err != nil {
		t.Fatal(err)
	}
	if first.Seq != 0 {
		t.Error("CreateJob modified the caller's transition")
	}
	j, err := s.Journal(1)
	if err != nil || len(j) != 1 || j[0].Seq != 1 {
		t.Fatalf("Journal = %v, %v; want one entry with seq 1", j, err)
	}
	if err := s.AppendTransition(1, &api.Transition{Seq: 2}); err != nil {
		t.Errorf("AppendTransition(seq 2): %v", err)
	}
}

func TestInitProgress(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	initial := map[int32]int64{0: 100, 1: 0, 7: 42}
	if err := s.InitProgress(rec.Id, initial); err != nil {
		t.Fatal(err)
	}
	// A new partition only.
	if err := s.InitProgress(rec.Id, map[int32]int64{8: 5}); err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(initial)
	want[8] = 5

	before := dump(t, s)
	err := s.InitProgress(rec.Id, map[int32]int64{9: 1, 7: 0, 10: 3})
	if !errors.Is(err, ErrProgressExists) {
		t.Fatalf("InitProgress over partition 7 = %v, want ErrProgressExists", err)
	}
	if !strings.Contains(err.Error(), "partition 7") {
		t.Errorf("error %q does not name partition 7", err)
	}
	assertSameDump(t, before, dump(t, s))
	if err := s.InitProgress(42, map[int32]int64{0: 0}); !errors.Is(err, ErrNotFound) {
		t.Errorf("InitProgress of an unknown job = %v, want ErrNotFound", err)
	}

	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(st.Progress, want) {
		t.Errorf("progress = %v, want %v", st.Progress, want)
	}
}

func TestProgressNegativePartitionsAndPositions(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	want := map[int32]int64{-2147483648: -5, -1: 1, 0: 0, 2147483647: 1 << 62}
	if err := s.InitProgress(rec.Id, want); err != nil {
		t.Fatal(err)
	}
	st, err := s.LoadJob(rec.Id)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(st.Progress, want) {
		t.Errorf("progress = %v, want %v", st.Progress, want)
	}
}
