package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// A Cluster's readers on a node share one consuming franz-go client (its
// lane) and one dispatcher goroutine, which polls the client and routes
// each fetched partition's records to the readers of that partition. A job
// start then costs added partitions, not a client (its goroutines,
// metadata requests and a connection per broker).
//
// franz-go consumes a partition once per client, so the lane fetches each
// partition as one stream, however many readers read it (jobs loading one
// topic into several tables): the stream starts at the lowest position a
// reader needs, and each reader takes the stream's records at or after
// its own position. A reader below the stream's position rewinds the
// stream (the others skip what they already have).
//
// INVARIANT: a reader receives, from its start offset on, exactly the
// records the partition's stream delivers after a point at or below its
// position, so none is skipped or repeated: the stream's position is the
// offset after the last record it delivered (or where it was set), a
// reader joins it only at or above that position and otherwise sets it
// back to the reader's position, and streams are added, set and removed
// only by the dispatcher between two polls, together with the readers, so
// that a poll never hands a closed reader's fetched records to a new
// reader (franz-go drops what it buffered when a partition is set or
// removed). Guarded by TestFetchRewindOnSharedLane and
// TestFetchSamePartitionTwoReaders.

// tp names one partition of one topic.
type tp struct {
	topic     string
	partition int32
}

// maxLanes is how many consuming clients (lanes) a Cluster's readers on a
// node share at most. A reader goes to lane (its lowest partition mod
// maxLanes): a job's tasks take partitions round-robin from the sorted
// list, so task i's lowest is the i-th partition and a job's tasks (up to
// maxLanes) fetch on lanes of their own, concurrently, as they did with a
// client each (one lane for a job of 8 partitions and 3 tasks loaded 0.6
// as fast: one fetch at a time per broker), while readers of single
// partitions (many small jobs) all share lane 0. Two lanes may fetch one
// partition, each as its own stream: what one lane's readers share is
// only ever within a lane.
const maxLanes = 4

// fetcher holds the lanes of one Cluster. Safe for concurrent use.
type fetcher struct {
	c *Cluster
	// bound, when > 0, replaces every route's queue bound (tests).
	bound int64
	// recent, when not 0, replaces maxRecentBytes; < 0: none (tests).
	recent int64
	// nLanes, when > 0, replaces maxLanes (tests).
	nLanes int
	mu     struct {
		sync.Mutex
		lanes [maxLanes]*lane // nil while none of its readers is open
	}
}

// lane is one consuming client and its dispatcher.
type lane struct {
	f       *fetcher
	cl      *kgo.Client
	health  *health
	logger  *slog.Logger
	readers int           // REQUIRES: fetcher.mu is held
	slot    int           // its index in fetcher.mu.lanes
	done    chan struct{} // closed when the dispatcher has exited

	mu struct {
		sync.Mutex
		ops     []laneOp
		retired bool               // no reader left: the dispatcher closes the client and exits
		wake    context.CancelFunc // ends the dispatcher's current poll
	}
	// streams are the partitions the client consumes; only the
	// dispatcher uses them.
	streams map[tp]*stream
}

// stream is one partition the lane's client consumes and its readers.
type stream struct {
	// pos is the offset after the last record the stream delivered, or
	// where it was added or set: the client's next record is the log's
	// first at or after it.
	pos    int64
	subs   map[*route]*sub
	paused bool // no reader takes its records: franz-go does not fetch it
	// recent are the last records the stream delivered, every record of
	// the log in [recentFrom, pos): a reader joining in that range takes
	// them from here instead of setting the stream back (a failover's
	// moved jobs joining the survivors' jobs of one partition). At most
	// maxRecentBytes of keys and values.
	recent      []*kgo.Record
	recentFrom  int64
	recentBytes int64
	recentMax   int64
}

// maxRecentBytes bounds a stream's recent records.
const maxRecentBytes = 256 << 10

// setPos sets the stream's position, forgetting its recent records.
func (s *stream) setPos(at int64) {
	s.pos, s.recentFrom = at, at
	clear(s.recent)
	s.recent, s.recentBytes = s.recent[:0], 0
}

// delivered records recs (in offset order) as delivered by the stream.
func (s *stream) delivered(recs []*kgo.Record) {
	if len(recs) == 0 {
		return
	}
	s.pos = recs[len(recs)-1].Offset + 1
	for _, rec := range recs {
		s.recent = append(s.recent, rec)
		s.recentBytes += int64(len(rec.Key) + len(rec.Value))
	}
	drop := 0
	for drop < len(s.recent) && s.recentBytes > s.recentMax {
		rec := s.recent[drop]
		s.recentBytes -= int64(len(rec.Key) + len(rec.Value))
		s.recentFrom = rec.Offset + 1
		drop++
	}
	if drop > 0 {
		clear(s.recent[:drop])
		s.recent = append(s.recent[:0], s.recent[drop:]...)
	}
}

// sub is one reader's place on a stream.
type sub struct {
	next   int64 // offset after the last record queued for the reader
	failed bool  // out of range: nothing more is queued
}

type opKind int8

const (
	opAdd opKind = iota
	opRemove
	opResume // a detached route's reader took its queue down
)

// laneOp changes the lane's routes; applied is closed once the dispatcher
// has applied it.
type laneOp struct {
	kind    opKind
	r       *route
	offsets map[int32]int64 // where an add starts
	applied chan struct{}
}

// route is one reader's share of a lane: what the dispatcher fetched for
// its partitions and has not been taken yet. Its fields under mu are
// written by the dispatcher and taken by the reader.
type route struct {
	lane   *lane
	topic  string
	parts  []int32
	bound  int64         // queued bytes above which nothing more is queued until Read takes it
	signal chan struct{} // cap 1: something was queued
	// detached is set by the dispatcher when the queue passed bound, and
	// cleared by it on the opResume that take asks for. Dispatcher only.
	detached bool
	mu       struct {
		sync.Mutex
		recs    []*kgo.Record
		bytes   int64
		errs    []kgo.FetchError
		hw      map[int32]int64
		waiting bool // detached: take asks for an opResume once down to half the bound
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

// minRouteBound is the least queue a route holds before it detaches.
const minRouteBound = 1 << 20

func newFetcher(c *Cluster) *fetcher { return &fetcher{c: c} }

// open registers a reader of topic's partitions at their offsets on the
// lane, opening it if no reader is open.
func (f *fetcher) open(topic string, start map[int32]int64) (*route, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	low := int32(-1)
	for p := range start {
		if low < 0 || p < low {
			low = p
		}
	}
	n := maxLanes
	if f.nLanes > 0 {
		n = min(f.nLanes, maxLanes)
	}
	i := int(max(low, 0)) % n
	l := f.mu.lanes[i]
	if l == nil {
		var err error
		if l, err = f.newLane(); err != nil {
			return nil, err
		}
		l.slot = i
		f.mu.lanes[i] = l
	}
	r := &route{lane: l, topic: topic, signal: make(chan struct{}, 1)}
	r.mu.hw = make(map[int32]int64, len(start))
	for p := range start {
		r.parts = append(r.parts, p)
	}
	slices.Sort(r.parts)
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
	l.enqueue(laneOp{kind: opAdd, r: r, offsets: start})
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
	l := &lane{f: f, cl: cl, health: h, logger: logger, done: make(chan struct{}), streams: map[tp]*stream{}}
	go l.dispatch()
	return l, nil
}

// close unregisters r and waits until the dispatcher removed it (or, for
// the lane's last reader, closed the client and exited).
func (f *fetcher) close(r *route) {
	l := r.lane
	f.mu.Lock()
	op := laneOp{kind: opRemove, r: r, applied: make(chan struct{})}
	l.enqueue(op)
	l.readers--
	wait := op.applied
	if l.readers == 0 {
		if f.mu.lanes[l.slot] == l {
			f.mu.lanes[l.slot] = nil
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
				if op.applied != nil {
					close(op.applied)
				}
			}
			return
		}
		l.apply(ops)
		fs := l.cl.PollRecords(ctx, 0)
		cancel()
		l.route(fs)
	}
}

// changes gathers what one round of the dispatcher does to the client, so
// that many route changes cost one call each: adds, then removes, then
// sets (a removal or a set stops the client's fetch session and drops
// what it buffered, fetched again from the positions it had taken).
type changes struct {
	adds    map[string]map[int32]kgo.Offset
	removes map[string][]int32
	sets    map[tp]int64
	pause   map[string][]int32
	resume  map[string][]int32
}

func (ch *changes) add(t tp, at int64) {
	if ch.adds == nil {
		ch.adds = map[string]map[int32]kgo.Offset{}
	}
	if ch.adds[t.topic] == nil {
		ch.adds[t.topic] = map[int32]kgo.Offset{}
	}
	ch.adds[t.topic][t.partition] = kgo.NewOffset().At(at)
}

func addTo(m *map[string][]int32, t tp) {
	if *m == nil {
		*m = map[string][]int32{}
	}
	(*m)[t.topic] = append((*m)[t.topic], t.partition)
}

// flush applies ch to the client.
func (l *lane) flush(ch *changes) {
	if len(ch.adds) > 0 {
		l.cl.AddConsumePartitions(ch.adds)
	}
	if len(ch.removes) > 0 {
		l.cl.RemoveConsumePartitions(ch.removes)
		l.cl.ResumeFetchPartitions(ch.removes)
	}
	if len(ch.sets) > 0 {
		// A partition added a moment ago may not be assigned yet: adding
		// it again at the set offset covers that, SetOffsets the
		// assigned one (both under the client's consumer lock).
		adds := map[string]map[int32]kgo.Offset{}
		sets := map[string]map[int32]kgo.EpochOffset{}
		for t, at := range ch.sets {
			if adds[t.topic] == nil {
				adds[t.topic] = map[int32]kgo.Offset{}
				sets[t.topic] = map[int32]kgo.EpochOffset{}
			}
			adds[t.topic][t.partition] = kgo.NewOffset().At(at)
			sets[t.topic][t.partition] = kgo.EpochOffset{Epoch: -1, Offset: at}
		}
		l.cl.AddConsumePartitions(adds)
		l.cl.SetOffsets(sets)
	}
	if len(ch.pause) > 0 {
		l.cl.PauseFetchPartitions(ch.pause)
	}
	if len(ch.resume) > 0 {
		l.cl.ResumeFetchPartitions(ch.resume)
	}
	*ch = changes{}
}

// apply applies route changes in their order.
func (l *lane) apply(ops []laneOp) {
	var ch changes
	for _, op := range ops {
		r := op.r
		switch op.kind {
		case opAdd:
			if len(ch.removes) > 0 {
				l.flush(&ch) // a partition removed, then added again
			}
			r.detached = false
			for _, p := range r.parts {
				t, at := tp{r.topic, p}, op.offsets[p]
				s := l.streams[t]
				if s == nil {
					s = &stream{pos: at, recentFrom: at, recentMax: maxRecentBytes, subs: map[*route]*sub{}}
					if rm := l.f.recent; rm != 0 {
						s.recentMax = max(rm, 0)
					}
					l.streams[t] = s
					ch.add(t, at)
				}
				u := &sub{next: at}
				s.subs[r] = u
				l.join(&ch, t, s, r, u)
			}
		case opRemove:
			for _, p := range r.parts {
				t := tp{r.topic, p}
				s := l.streams[t]
				if s == nil {
					continue
				}
				delete(s.subs, r)
				if len(s.subs) == 0 {
					delete(l.streams, t)
					delete(ch.sets, t)
					if ch.adds[t.topic] != nil {
						// added and removed in one round
						l.flush(&ch)
					}
					addTo(&ch.removes, t)
				} else {
					l.pauseIfIdle(&ch, t, s)
				}
			}
		case opResume:
			if !r.detached {
				break
			}
			r.detached = false
			for _, p := range r.parts {
				t := tp{r.topic, p}
				if s := l.streams[t]; s != nil {
					if u := s.subs[r]; u != nil && !u.failed {
						l.join(&ch, t, s, r, u)
					}
				}
			}
		}
	}
	l.flush(&ch)
	for _, op := range ops {
		if op.applied != nil {
			close(op.applied)
		}
	}
}

// join makes s deliver from u.next for reader r (re)joining it: from its
// recent records if they cover u.next, else a stream past u.next is set
// back to it; a paused one resumes.
func (l *lane) join(ch *changes, t tp, s *stream, r *route, u *sub) {
	if at := u.next; at < s.pos && at >= s.recentFrom {
		from := len(s.recent)
		for i, rec := range s.recent {
			if rec.Offset >= at {
				from = i
				break
			}
		}
		if r.push(t.partition, s.recent[from:], nil, -1) {
			select {
			case r.signal <- struct{}{}:
			default:
			}
		}
		u.next = s.pos
	}
	if at := u.next; at < s.pos {
		s.setPos(at)
		if _, ok := ch.adds[t.topic][t.partition]; ok {
			ch.add(t, at) // added in this round: start it lower
			return
		}
		if ch.sets == nil {
			ch.sets = map[tp]int64{}
		}
		ch.sets[t] = at
	}
	if s.paused {
		s.paused = false
		addTo(&ch.resume, t)
	}
}

// pauseIfIdle pauses s when none of its readers takes its records.
func (l *lane) pauseIfIdle(ch *changes, t tp, s *stream) {
	if s.paused {
		return
	}
	for r, u := range s.subs {
		if !r.detached && !u.failed {
			return
		}
	}
	s.paused = true
	addTo(&ch.pause, t)
}

// route hands each partition of fs to its readers, then detaches the
// readers whose queue passed its bound.
func (l *lane) route(fs kgo.Fetches) {
	touched := map[*route]bool{}
	var ch changes
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if p.Topic == "" { // an injected error of the whole client
			if errors.Is(p.Err, kgo.ErrClientClosed) {
				for _, s := range l.streams {
					for r := range s.subs {
						r.push(p.Partition, nil, p.Err, -1)
						touched[r] = true
					}
				}
			}
			return
		}
		t := tp{p.Topic, p.Partition}
		s := l.streams[t]
		if s == nil {
			if p.Err != nil && !errors.Is(p.Err, context.Canceled) {
				l.logger.Debug("kafka: fetch error of a partition no reader reads", "topic", p.Topic, "partition", p.Partition, "err", p.Err)
			}
			return
		}
		hw := int64(-1)
		if p.Err == nil {
			hw = p.HighWatermark
		}
		for r, u := range s.subs {
			if u.failed || r.detached {
				if hw >= 0 {
					r.push(p.Partition, nil, nil, hw)
				}
				continue
			}
			from := len(p.Records)
			for i, rec := range p.Records {
				if rec.Offset >= u.next {
					from = i
					break
				}
			}
			recs := p.Records[from:]
			if len(recs) > 0 {
				u.next = recs[len(recs)-1].Offset + 1
			}
			var err error
			if p.Err != nil && !errors.Is(p.Err, kerr.OffsetOutOfRange) {
				err = p.Err
			}
			if r.push(p.Partition, recs, err, hw) {
				touched[r] = true
			}
		}
		s.delivered(p.Records)
		if errors.Is(p.Err, kerr.OffsetOutOfRange) {
			l.outOfRange(&ch, t, s, p.Err, touched)
		}
	})
	for r := range touched {
		select {
		case r.signal <- struct{}{}:
		default:
		}
		if !r.detached && r.full() {
			r.detached = true
			for _, p := range r.parts {
				t := tp{r.topic, p}
				if s := l.streams[t]; s != nil {
					l.pauseIfIdle(&ch, t, s)
				}
			}
		}
	}
	l.flush(&ch)
}

// outOfRange hands the stream's OffsetOutOfRange to the readers at its
// position (they read nothing more of it) and sets the stream to the
// lowest position of the others, if any.
func (l *lane) outOfRange(ch *changes, t tp, s *stream, err error, touched map[*route]bool) {
	lowest := int64(-1)
	for r, u := range s.subs {
		if u.failed || r.detached {
			continue
		}
		if u.next <= s.pos {
			u.failed = true
			r.push(t.partition, nil, err, -1)
			touched[r] = true
			continue
		}
		if lowest < 0 || u.next < lowest {
			lowest = u.next
		}
	}
	if lowest >= 0 {
		s.setPos(lowest)
		if ch.sets == nil {
			ch.sets = map[tp]int64{}
		}
		ch.sets[t] = lowest
	}
	l.pauseIfIdle(ch, t, s)
}

// push queues one fetched partition's records and error for r (hw < 0: no
// high watermark). It reports whether anything was queued.
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
	return queued
}

// full reports whether r's queue passed its bound, and if so has the next
// take that brings it down to half ask for an opResume.
func (r *route) full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.bytes <= r.bound {
		return false
	}
	r.mu.waiting = true
	return true
}

// take returns at most n of the records queued for r (all if n <= 0)
// and, once none is left, the queued errors (which follow the records of
// their partition); it asks the dispatcher to queue again once a detached
// route's queue is down to half its bound, and merges the known high
// watermarks into hw.
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
	if r.mu.waiting && r.mu.bytes <= r.bound/2 {
		r.mu.waiting = false
		r.lane.enqueue(laneOp{kind: opResume, r: r})
	}
	return recs, errs
}
