package actors

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestGoPool: Go never waits for a worker (every function runs at once even
// when all workers are busy), every function runs exactly once, a finished
// worker takes later work, and at most maxIdle workers wait.
func TestGoPool(t *testing.T) {
	const maxIdle, n = 4, 64
	p := newGoPool(maxIdle)
	release := make(chan struct{})
	var started, done sync.WaitGroup
	ran := make([]int, n)
	started.Add(n)
	done.Add(n)
	for i := range n {
		// Each function blocks until every one has started: Go must not
		// wait for a worker to come free.
		p.Go(func() {
			defer done.Done()
			ran[i]++
			started.Done()
			<-release
		})
	}
	started.Wait()
	close(release)
	done.Wait()
	for i, c := range ran {
		if c != 1 {
			t.Fatalf("function %d ran %d times", i, c)
		}
	}
	waitIdle(t, p, maxIdle)

	// Sequential work is taken by the waiting workers: no more wait than
	// before, and none fewer once each function has returned.
	for range 100 {
		ch := make(chan struct{})
		p.Go(func() { close(ch) })
		<-ch
	}
	waitIdle(t, p, maxIdle)
}

// waitIdle waits until want workers of p wait for work (bounded).
func waitIdle(t *testing.T, p *goPool, want int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.idle.Load() != want {
		if got := p.idle.Load(); got > want {
			t.Fatalf("%d workers wait, at most %d may", got, want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers wait, want %d", p.idle.Load(), want)
		}
		runtime.Gosched()
	}
}
