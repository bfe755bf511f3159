package kafka

import (
	"context"
	"errors"
	"maps"
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

// TestTopicWatch: one poller per watched topic tells every watcher of each
// change (and a late watcher of the current marks at once), tells nobody
// when nothing changed, and stops when the last watcher leaves.
func TestTopicWatch(t *testing.T) {
	var mu sync.Mutex
	marks := map[int32]int64{0: 1}
	var looks atomic.Int64
	look := func(context.Context) (map[int32]int64, error) {
		looks.Add(1)
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(marks), nil
	}
	ws := &topicWatches{}
	got := [2]chan map[int32]int64{make(chan map[int32]int64, 16), make(chan map[int32]int64, 16)}
	stop0 := ws.watch("t", 5*time.Millisecond, func(m map[int32]int64, _ error) { got[0] <- m }, look)
	recv := func(i int, want int64) {
		t.Helper()
		select {
		case m := <-got[i]:
			if m[0] != want {
				t.Fatalf("watcher %d told %v, want partition 0 at %d", i, m, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("watcher %d never told of %d", i, want)
		}
	}
	recv(0, 1)
	stop1 := ws.watch("t", 5*time.Millisecond, func(m map[int32]int64, _ error) { got[1] <- m }, look)
	recv(1, 1) // the current marks, at once
	// Unchanged marks tell nobody, over many polls.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for n, deadline := looks.Load(), time.After(5*time.Second); looks.Load() < n+5; {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatal("the poller stopped looking")
		}
	}
	if len(got[0])+len(got[1]) != 0 {
		t.Fatalf("unchanged marks were told: %d, %d", len(got[0]), len(got[1]))
	}
	mu.Lock()
	marks = map[int32]int64{0: 7}
	mu.Unlock()
	recv(0, 7)
	recv(1, 7)
	stop0()
	stop0() // idempotent
	stop1()
	ws.mu.Lock()
	left := len(ws.topics)
	ws.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d topics still watched after every watcher left", left)
	}
	// The poller stops: at most one look-up in flight finishes.
	n := looks.Load()
	for window := time.After(200 * time.Millisecond); ; {
		select {
		case <-tick.C:
			if looks.Load() > n+1 {
				t.Fatalf("the poller kept looking after the last watcher left (%d look-ups)", looks.Load()-n)
			}
			continue
		case <-window:
		}
		break
	}
}
