package node

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatermarkCacheShares: many concurrent callers cause one look-up per
// freshness window; an error is not cached.
func TestWatermarkCacheShares(t *testing.T) {
	c := newWatermarkCache(time.Hour)
	var calls atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	look := func(context.Context) (map[int32]int64, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-release
		return map[int32]int64{0: 42}, nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := c.get(context.Background(), "t", look)
			if err != nil || m[0] != 42 {
				t.Errorf("get = %v, %v", m, err)
			}
		}()
	}
	// The first look-up is in flight; the other callers pile up on it
	// (or arrive later and find the cached answer). Finish it.
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no look-up started")
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d look-ups for 50 concurrent callers, want 1", n)
	}

	failing := newWatermarkCache(time.Hour)
	boom := errors.New("broker down")
	if _, err := failing.get(context.Background(), "t", func(context.Context) (map[int32]int64, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	m, err := failing.get(context.Background(), "t", func(context.Context) (map[int32]int64, error) { return map[int32]int64{1: 7}, nil })
	if err != nil || m[1] != 7 {
		t.Fatalf("after an error the next call must look again: %v, %v", m, err)
	}
}
