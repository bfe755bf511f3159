package kafka

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/loadnode/loadnode/sources"
)

// topicWatches are the topics of one Cluster that idle jobs watch, each
// polled by one goroutine while it has watchers.
type topicWatches struct {
	mu      sync.Mutex
	topics  map[string]*topicWatch
	nextSub uint64
}

// topicWatch is one watched topic: its watchers and the watermarks they
// were last told.
type topicWatch struct {
	subs map[uint64]func(map[int32]int64, error)
	last map[int32]int64
	stop chan struct{}
}

// watch adds fn to topic's watchers, starting the topic's poller (one
// look-up every `every`) if it is the first. fn gets the last known
// watermarks at once, if any, and then every change.
func (ws *topicWatches) watch(topic string, every time.Duration, fn func(map[int32]int64, error),
	look func(context.Context) (map[int32]int64, error)) (stop func()) {
	ws.mu.Lock()
	if ws.topics == nil {
		ws.topics = map[string]*topicWatch{}
	}
	w := ws.topics[topic]
	if w == nil {
		w = &topicWatch{subs: map[uint64]func(map[int32]int64, error){}, stop: make(chan struct{})}
		ws.topics[topic] = w
		go ws.poll(w, every, look)
	}
	ws.nextSub++
	id := ws.nextSub
	w.subs[id] = fn
	last := w.last
	ws.mu.Unlock()
	if last != nil {
		fn(last, nil)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ws.mu.Lock()
			defer ws.mu.Unlock()
			delete(w.subs, id)
			if len(w.subs) == 0 && ws.topics[topic] == w {
				close(w.stop)
				delete(ws.topics, topic)
			}
		})
	}
}

// poll looks up w's watermarks every `every` until w stops, and tells
// every watcher when they changed. A look-up failing with a configuration
// error (authentication, authorization) tells every watcher; other
// failures tell nobody.
func (ws *topicWatches) poll(w *topicWatch, every time.Duration, look func(context.Context) (map[int32]int64, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		marks, err := look(ctx)
		cancel()
		var cfg *sources.ConfigError
		switch {
		case err == nil:
			var fns []func(map[int32]int64, error)
			ws.mu.Lock()
			if w.last == nil || !maps.Equal(marks, w.last) {
				w.last = marks
				fns = slices.Collect(maps.Values(w.subs))
			}
			ws.mu.Unlock()
			for _, fn := range fns {
				fn(marks, nil)
			}
		case errors.As(err, &cfg):
			ws.mu.Lock()
			w.last = nil
			fns := slices.Collect(maps.Values(w.subs))
			ws.mu.Unlock()
			for _, fn := range fns {
				fn(nil, err)
			}
		}
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
	}
}

// stopAll ends every poller (the cluster is closing).
func (ws *topicWatches) stopAll() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for topic, w := range ws.topics {
		close(w.stop)
		delete(ws.topics, topic)
	}
}

// topicCache keeps the latest answer of a per-topic look-up (high
// watermarks, the partition list) for a freshness window; concurrent
// callers for one topic share one look-up.
type topicCache[T any] struct {
	fresh time.Duration
	mu    struct {
		sync.Mutex
		topics map[string]*topicEntry[T]
	}
}

type topicEntry[T any] struct {
	at    time.Time
	marks T
	ok    bool
	wait  chan struct{} // closed when the look-up in flight ends; nil if none
}

// watermarkCache caches high watermarks per topic.
type watermarkCache = topicCache[map[int32]int64]

func newWatermarkCache(fresh time.Duration) *watermarkCache {
	return newTopicCache[map[int32]int64](fresh)
}

func newTopicCache[T any](fresh time.Duration) *topicCache[T] {
	c := &topicCache[T]{fresh: fresh}
	c.mu.topics = map[string]*topicEntry[T]{}
	return c
}

// get returns a cached answer younger than the freshness window, or looks
// it up once for all callers. The value returned is shared: callers must
// not modify it. Errors are not cached.
func (c *topicCache[T]) get(ctx context.Context, topic string, look func(context.Context) (T, error)) (T, error) {
	for {
		c.mu.Lock()
		tm := c.mu.topics[topic]
		if tm == nil {
			tm = &topicEntry[T]{}
			c.mu.topics[topic] = tm
		}
		if tm.ok && time.Since(tm.at) < c.fresh {
			m := tm.marks
			c.mu.Unlock()
			return m, nil
		}
		if w := tm.wait; w != nil {
			c.mu.Unlock()
			select {
			case <-w:
				continue
			case <-ctx.Done():
				var zero T
				return zero, ctx.Err()
			}
		}
		w := make(chan struct{})
		tm.wait = w
		c.mu.Unlock()

		marks, err := look(ctx)
		c.mu.Lock()
		tm.wait = nil
		if err == nil {
			tm.marks, tm.at, tm.ok = marks, time.Now(), true
		}
		c.mu.Unlock()
		close(w)
		return marks, err
	}
}
