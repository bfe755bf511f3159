package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// A Cluster's readers share its fetcher: one consuming franz-go client (a
// lane) fetches the partitions of every reader of the node on that cluster,
// and one dispatcher goroutine per lane routes each fetched partition's
// records to the reader that owns it. A job start then costs an added
// partition set, not a client (its goroutines, metadata requests and a
// connection per broker).
//
// franz-go consumes a partition once per client, so a reader of a
// partition another reader of the node already reads (two jobs loading one
// topic into two tables) goes to another lane: lanes are opened as needed
// and each closes with its last reader.
//
// INVARIANT: partitions are added to and removed from a lane's client only
// by its dispatcher, between two polls, and its routes change at the same
// moment. A poll therefore never returns records of a removed reader's
// cursor to a new reader of the same partition (a rewind): removal stops
// franz-go's session and drops what it buffered, and the next poll starts
// after it. Guarded by TestFetchRewindOnSharedLane.

// tp names one partition of one topic.
type tp struct {
	topic     string
	partition int32
}

// fetcher is the set of lanes of one Cluster. Safe for concurrent use.
type fetcher struct {
	c *Cluster
	// bound, when > 0, replaces every route's queue bound (tests).
	bound int64
	mu    struct {
		sync.Mutex
		lanes []*lane
	}
}

// lane is one consuming client and its dispatcher.
type lane struct {
	f      *fetcher
	cl     *kgo.Client
	health *health
	logger *slog.Logger
	// owned are the partitions the lane's readers read, and readers how
	// many readers it has. REQUIRES: fetcher.mu is held.
	owned   map[tp]bool
	readers int
	done    chan struct{} // closed when the dispatcher has exited

	mu struct {
		sync.Mutex
		ops     []laneOp
		retired bool               // no reader left: the dispatcher closes the client and exits
		wake    context.CancelFunc // ends the dispatcher's current poll
	}
	// routes is the reader of each partition; only the dispatcher uses it.
	routes map[tp]*route
}

// laneOp adds or removes a route; applied is closed once the dispatcher
// has applied it.
type laneOp struct {
	r       *route
	add     bool
	offsets map[int32]kgo.Offset // where an add starts
	applied chan struct{}
}

// route is one reader's share of a lane: what the dispatcher fetched for
// its partitions and has not been taken yet. Its fields under mu are
// written by the dispatcher and taken by the reader.
type route struct {
	lane   *lane
	topic  string
	parts  []int32
	bound  int64         // queued bytes above which the partitions are paused
	signal chan struct{} // cap 1: something was queued
	mu     struct {
		sync.Mutex
		recs   []*kgo.Record
		bytes  int64
		errs   []kgo.FetchError
		hw     map[int32]int64
		paused bool
	}
}

// laneFetchMaxWait is how long a broker holds a lane's fetch without data
// (fetch.max.wait.ms when unset). franz-go adds a partition, or resumes a
// paused one, in the next fetch to its broker once the one in flight is
// answered: this bounds how late a new or resumed reader's first records
// come on an idle lane, for 2 fetch requests a second per broker.
const laneFetchMaxWait = 500 * time.Millisecond

// maxRouteErrs bounds the fetch errors queued for a reader that does not
// read: the first ones decide (a reader's error is sticky).
const maxRouteErrs = 64

// minRouteBound is the least queue a route holds before it pauses.
const minRouteBound = 1 << 20

func newFetcher(c *Cluster) *fetcher { return &fetcher{c: c} }

// open registers a reader of topic's partitions at their offsets on the
// first lane that does not read any of them, opening a lane if none.
func (f *fetcher) open(topic string, start map[int32]int64) (*route, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var l *lane
	for _, cand := range f.mu.lanes {
		free := true
		for p := range start {
			if cand.owned[tp{topic, p}] {
				free = false
				break
			}
		}
		if free {
			l = cand
			break
		}
	}
	if l == nil {
		var err error
		if l, err = f.newLane(); err != nil {
			return nil, err
		}
		f.mu.lanes = append(f.mu.lanes, l)
	}
	r := &route{lane: l, topic: topic, signal: make(chan struct{}, 1)}
	r.mu.hw = make(map[int32]int64, len(start))
	offsets := make(map[int32]kgo.Offset, len(start))
	for p, o := range start {
		r.parts = append(r.parts, p)
		offsets[p] = kgo.NewOffset().At(o)
		l.owned[tp{topic, p}] = true
	}
	part := int64(f.c.cfg.partMaxBytes)
	if part <= 0 {
		part = 1 << 20 // franz-go's default max.partition.fetch.bytes
	}
	r.bound = max(part*int64(len(start)), minRouteBound)
	if fm := int64(f.c.cfg.fetchMaxBytes); fm > 0 && r.bound > fm {
		r.bound = max(fm, minRouteBound)
	}
	if f.bound > 0 {
		r.bound = f.bound
	}
	l.readers++
	l.enqueue(laneOp{r: r, add: true, offsets: offsets, applied: make(chan struct{})})
	return r, nil
}

// newLane opens a consuming client with no partitions and starts its
// dispatcher. REQUIRES: f.mu is held.
func (f *fetcher) newLane() (*lane, error) {
	c := f.c
	h := &health{}
	logger := c.logger.With("client", "fetch")
	opts := c.cfg.opts(c.brokers)
	opts = append(opts, c.cfg.consumerOpts()...)
	if c.cfg.fetchMaxWait <= 0 {
		opts = append(opts, kgo.FetchMaxWait(laneFetchMaxWait))
	}
	opts = append(opts,
		kgo.WithLogger(kgoLogger{logger}),
		kgo.WithHooks(h),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, &sources.ConfigError{Field: "kafka.brokers", Err: fmt.Errorf("kafka: new reader: %w", err)}
	}
	l := &lane{f: f, cl: cl, health: h, logger: logger, owned: map[tp]bool{},
		done: make(chan struct{}), routes: map[tp]*route{}}
	go l.dispatch()
	return l, nil
}

// close unregisters r and waits until its lane's dispatcher removed its
// partitions (or, for the lane's last reader, closed the client and
// exited).
func (f *fetcher) close(r *route) {
	l := r.lane
	f.mu.Lock()
	op := laneOp{r: r, applied: make(chan struct{})}
	l.enqueue(op)
	for _, p := range r.parts {
		delete(l.owned, tp{r.topic, p})
	}
	l.readers--
	wait := op.applied
	if l.readers == 0 {
		for i, cand := range f.mu.lanes {
			if cand == l {
				f.mu.lanes = append(f.mu.lanes[:i], f.mu.lanes[i+1:]...)
				break
			}
		}
		l.mu.Lock()
		l.mu.retired = true
		l.wakeLocked()
		l.mu.Unlock()
		wait = l.done
	}
	f.mu.Unlock()
	<-wait
}

// enqueue queues op and ends the current poll so that the dispatcher
// applies it.
func (l *lane) enqueue(op laneOp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.ops = append(l.mu.ops, op)
	l.wakeLocked()
}

// REQUIRES: l.mu is held.
func (l *lane) wakeLocked() {
	if l.mu.wake != nil {
		l.mu.wake()
		l.mu.wake = nil
	}
}

// dispatch is the lane's goroutine: apply queued route changes, poll,
// route what the poll returned; until the lane is retired.
func (l *lane) dispatch() {
	defer close(l.done)
	for {
		l.mu.Lock()
		ops, retired := l.mu.ops, l.mu.retired
		l.mu.ops = nil
		ctx, cancel := context.WithCancel(context.Background())
		l.mu.wake = cancel
		l.mu.Unlock()
		if retired {
			cancel()
			l.cl.Close()
			for _, op := range ops {
				close(op.applied)
			}
			return
		}
		l.apply(ops)
		fs := l.cl.PollRecords(ctx, 0)
		cancel()
		l.route(fs)
	}
}

// apply applies route changes in their order, adding consecutive adds
// and removing consecutive removes with one call each (a removal stops
// the client's fetch session and drops what it buffered).
func (l *lane) apply(ops []laneOp) {
	adds := map[string]map[int32]kgo.Offset{}
	removes := map[string][]int32{}
	flush := func() {
		if len(adds) > 0 {
			l.cl.AddConsumePartitions(adds)
			adds = map[string]map[int32]kgo.Offset{}
		}
		if len(removes) > 0 {
			l.cl.RemoveConsumePartitions(removes)
			l.cl.ResumeFetchPartitions(removes)
			removes = map[string][]int32{}
		}
	}
	for _, op := range ops {
		r := op.r
		if op.add {
			if len(removes) > 0 {
				flush()
			}
			for p, o := range op.offsets {
				l.routes[tp{r.topic, p}] = r
				if adds[r.topic] == nil {
					adds[r.topic] = map[int32]kgo.Offset{}
				}
				adds[r.topic][p] = o
			}
			continue
		}
		if len(adds) > 0 {
			flush()
		}
		for _, p := range r.parts {
			if l.routes[tp{r.topic, p}] == r {
				delete(l.routes, tp{r.topic, p})
				removes[r.topic] = append(removes[r.topic], p)
			}
		}
	}
	flush()
	for _, op := range ops {
		close(op.applied)
	}
}

// route hands each partition of fs to its reader.
func (l *lane) route(fs kgo.Fetches) {
	var touched []*route
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Topic == "" { // an injected error of the whole client
			if errors.Is(p.Err, kgo.ErrClientClosed) {
				for _, r := range l.routes {
					if r.push(p.Partition, nil, p.Err, -1) {
						touched = append(touched, r)
					}
				}
			}
			return
		}
		r := l.routes[tp{p.Topic, p.Partition}]
		if r == nil {
			if p.Err != nil && !errors.Is(p.Err, context.Canceled) {
				l.logger.Debug("kafka: fetch error of a partition no reader reads", "topic", p.Topic, "partition", p.Partition, "err", p.Err)
			}
			return
		}
		hw := int64(-1)
		if p.Err == nil {
			hw = p.HighWatermark
		}
		if r.push(p.Partition, p.Records, p.Err, hw) {
			touched = append(touched, r)
		}
	})
	for _, r := range touched {
		select {
		case r.signal <- struct{}{}:
		default:
		}
	}
}

// push queues one fetched partition's records and error for r (hw < 0: no
// high watermark), pausing r's partitions when its queue passes its bound.
// It reports whether anything was queued.
func (r *route) push(p int32, recs []*kgo.Record, err error, hw int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	queued := false
	if hw >= 0 {
		if old, ok := r.mu.hw[p]; !ok || hw > old {
			r.mu.hw[p] = hw
		}
	}
	for _, rec := range recs {
		r.mu.recs = append(r.mu.recs, rec)
		r.mu.bytes += int64(len(rec.Key) + len(rec.Value))
		queued = true
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		if len(r.mu.errs) < maxRouteErrs {
			r.mu.errs = append(r.mu.errs, kgo.FetchError{Topic: r.topic, Partition: p, Err: err})
		}
		queued = true
	}
	if !r.mu.paused && r.mu.bytes > r.bound {
		r.mu.paused = true
		r.lane.cl.PauseFetchPartitions(map[string][]int32{r.topic: r.parts})
	}
	return queued
}

// take returns at most n of the records queued for r (all if n <= 0)
// and, once none is left, the queued errors (which follow the records of
// their partition); it resumes r's partitions once its queue is down to
// half its bound, and merges the known high watermarks into hw.
func (r *route) take(n int, hw map[int32]int64) ([]*kgo.Record, []kgo.FetchError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, v := range r.mu.hw {
		if old, ok := hw[p]; !ok || v > old {
			hw[p] = v
		}
	}
	var recs []*kgo.Record
	if n <= 0 || n >= len(r.mu.recs) {
		recs, r.mu.recs, r.mu.bytes = r.mu.recs, nil, 0
	} else {
		recs = slices.Clone(r.mu.recs[:n])
		clear(r.mu.recs[:n])
		r.mu.recs = r.mu.recs[n:]
		for _, rec := range recs {
			r.mu.bytes -= int64(len(rec.Key) + len(rec.Value))
		}
	}
	var errs []kgo.FetchError
	if len(r.mu.recs) == 0 {
		errs, r.mu.errs = r.mu.errs, nil
	} else {
		select { // more is queued: the next wait must not block
		case r.signal <- struct{}{}:
		default:
		}
	}
	if r.mu.paused && r.mu.bytes <= r.bound/2 {
		r.mu.paused = false
		r.lane.cl.ResumeFetchPartitions(map[string][]int32{r.topic: r.parts})
	}
	return recs, errs
}
