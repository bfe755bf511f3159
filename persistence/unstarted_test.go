package persistence

import (
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// plantProgress writes a progress key behind the Store's back, so that a
// test sees whether InitStarts read the key (it then fails with
// ErrProgressExists) or skipped the read.
func plantProgress(t *testing.T, s *Store, id uint64, p int32) {
	t.Helper()
	if err := s.db.Set(progressKey(id, p), encodeInt64(99), pebble.Sync); err != nil {
		t.Fatal(err)
	}
}

// TestInitStartsSkipsReadOfNewJob: the first InitStarts of a job this
// Store created does not read its progress keys (none can exist:
// Store.heads.unstarted); any later one, one after another write of
// progress, and one of a job the Store did not create in this open do.
func TestInitStartsSkipsReadOfNewJob(t *testing.T) {
	mem := vfs.NewCrashableMem()
	s := openStore(t, mem, Options{})
	s.shareWait = 0

	fresh := mustCreate(t, s, 1, "fresh").Id
	plantProgress(t, s, fresh, 0)
	if err := s.InitStarts(fresh, map[int32]int64{0: 5}, nil, nil); err != nil {
		t.Fatalf("first InitStarts of a new job: %v (it read its progress keys)", err)
	}
	if err := s.InitStarts(fresh, map[int32]int64{0: 5}, nil, nil); !errors.Is(err, ErrProgressExists) {
		t.Fatalf("second InitStarts: %v, want ErrProgressExists", err)
	}

	reset := mustCreate(t, s, 2, "reset").Id
	if err := s.Sink().ResetStarts(reset, map[int32]int64{0: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(reset, map[int32]int64{0: 5}, nil, nil); !errors.Is(err, ErrProgressExists) {
		t.Fatalf("InitStarts after ResetStarts: %v, want ErrProgressExists", err)
	}

	rebased := mustCreate(t, s, 3, "rebased").Id
	if err := s.Sink().RebaseStarts(rebased, 1, map[int32]int64{0: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.InitStarts(rebased, map[int32]int64{0: 5}, nil, nil); !errors.Is(err, ErrProgressExists) {
		t.Fatalf("InitStarts after RebaseStarts: %v, want ErrProgressExists", err)
	}

	old := mustCreate(t, s, 4, "old").Id
	plantProgress(t, s, old, 0)
	s2 := crashReopen(t, mem, vfs.CrashCloneCfg{})
	if err := s2.InitStarts(old, map[int32]int64{0: 5}, nil, nil); !errors.Is(err, ErrProgressExists) {
		t.Fatalf("InitStarts of a job created before the store was opened: %v, want ErrProgressExists", err)
	}
}
