package postgres

import (
	"errors"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// TestPrepareTableShared: a PrepareTable of the spec in flight waits for
// it and answers with its answer; of another spec, it prepares its own;
// concurrent calls of one spec all succeed and leave it prepared.
func TestPrepareTableShared(t *testing.T) {
	s, _ := open(t, false)
	sp := spec("shared", col("n", api.ColumnType_INT64))
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(sp)
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("the preparation in flight failed")
	f := &preparation{spec: b, done: make(chan struct{})}
	s.mu.Lock()
	s.mu.preparing["shared"] = f
	s.mu.Unlock()
	got := make(chan error, 1)
	go func() { got <- s.PrepareTable(sp) }()
	f.err = failed
	close(f.done)
	if err := <-got; !errors.Is(err, failed) {
		t.Errorf("PrepareTable while one of the same spec is in flight = %v, want its answer", err)
	}
	// Another spec of the table does not wait for it.
	other := spec("shared", col("n", api.ColumnType_INT64), col("m", api.ColumnType_STRING))
	f2 := &preparation{spec: b, done: make(chan struct{})}
	s.mu.Lock()
	s.mu.preparing["shared"] = f2
	s.mu.Unlock()
	if err := s.PrepareTable(other); err != nil {
		t.Fatalf("PrepareTable of another spec: %v", err)
	}
	s.mu.Lock()
	delete(s.mu.preparing, "shared")
	s.mu.Unlock()

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := s.PrepareTable(other); err != nil {
				t.Errorf("concurrent PrepareTable: %v", err)
			}
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mu.preparing) != 0 {
		t.Errorf("%d preparations left in flight", len(s.mu.preparing))
	}
	if s.mu.prepared["shared"] == nil {
		t.Error("the spec is not recorded as prepared")
	}
}
