package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// minRecordsCap is the least capacity a Read's Records start with.
const minRecordsCap = 64

// boundsTimeout bounds the listing that fills an OutOfRangeError.
const boundsTimeout = 10 * time.Second

// reader reads a fixed set of partitions of one topic through its
// Cluster's shared consuming clients (fetch.go): direct partition
// consumption (no group, nothing committed to Kafka), read_committed,
// control records kept so that positions move past transaction markers,
// and no offset reset: an OffsetOutOfRange is an error of this reader,
// never a silent jump.
//
// The lane's client fetches in the background between Read calls and its
// dispatcher queues this reader's records on its route (nothing more past a
// bound); Read only takes from that queue.
type reader struct {
	cluster *Cluster
	topic   string
	route   *route
	health  *health
	logger  *slog.Logger

	// next is the position after the last record returned by Read, per
	// partition. INVARIANT: every record of partition p below next[p] was
	// returned exactly once, and none at or above it was.
	next map[int32]int64
	// fetched is the position after the last record taken from the client
	// (returned or pending), per partition: where the client fetches next.
	fetched map[int32]int64
	// pending holds records taken from the client but cut off by a limit,
	// in per-partition offset order; they are returned first by the next
	// Read. pending[head:] is live.
	pending []*kgo.Record
	head    int
	// hw is the latest known high watermark of each partition, from the
	// fetches the client returned (or, for a partition none of whose
	// fetches held records, from one listing): with next it tells when the
	// reader is caught up, so that Read need not wait out MaxWait.
	hw map[int32]int64
	// lastLen is the number of records the last Read returned: the next
	// Read's Records start with that capacity, so that a reader working
	// through a backlog allocates each batch once instead of growing it
	// (growslice was ~6% of the end-to-end CPU), and a trickle stays small.
	lastLen int
	// spare is the Records slice of a batch given back by Recycle,
	// cleared, for the next Read (minSpare to maxSpareRecords slots).
	spare    []sources.Record
	minSpare int // minSpareRecords; tests lower it
	// err is sticky: once set every Read returns it.
	err    error
	closed bool
}

var _ sources.Reader = (*reader)(nil)

// NewReader opens a reader of topic's partitions in start, each from its
// given next offset (>= 0), on the node's shared consuming client of c
// (fetch.go); Close it when the task is done with it. It does not dial: a
// bad position or an unreachable cluster shows on Read.
func (c *Cluster) NewReader(topic string, start map[int32]int64) (sources.Reader, error) {
	if topic == "" {
		return nil, &sources.ConfigError{Field: "kafka.topic", Err: errors.New("kafka: empty topic")}
	}
	if len(start) == 0 {
		return nil, errors.New("kafka: new reader: no partitions")
	}
	for p, o := range start {
		if p < 0 || o < 0 {
			return nil, fmt.Errorf("kafka: new reader: partition %d: bad start offset %d", p, o)
		}
	}
	rt, err := c.fetch.open(topic, start)
	if err != nil {
		return nil, err
	}
	logger := c.logger.With("topic", topic)
	return &reader{
		cluster:  c,
		topic:    topic,
		route:    rt,
		health:   rt.lane.health,
		logger:   logger,
		next:     maps.Clone(start),
		fetched:  maps.Clone(start),
		hw:       make(map[int32]int64, len(start)),
		minSpare: minSpareRecords,
	}, nil
}

func (r *reader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	b := &sources.Batch{Topic: r.topic}
	defer func() {
		r.lastLen = len(b.Records)
		if r.lastLen == 0 {
			r.spare = nil // idle: an idle job keeps no slots
		}
	}()
	// An idle job's reads (nothing queued, the last read empty) allocate
	// no record slots: 64 of them are 8 KiB, per read, per idle job.
	if queued := len(r.pending) - r.head; r.lastLen > 0 || queued > 0 {
		hint := max(r.lastLen, queued, minRecordsCap)
		if lim.MaxRows > 0 {
			hint = min(hint, lim.MaxRows)
		}
		if cap(r.spare) >= hint {
			b.Records, r.spare = r.spare[:0], nil
		} else {
			b.Records = make([]sources.Record, 0, hint)
		}
	}
	if r.closed {
		return r.finish(b), errors.New("kafka: read: reader closed")
	}
	if r.err != nil {
		return r.finish(b), r.err
	}
	start := time.Now()
	deadline := start.Add(lim.MaxWait)
	half := start.Add(lim.MaxWait / 2)
	polled, listed := false, false
	for {
		if r.drain(b, lim) || r.err != nil || ctx.Err() != nil {
			break
		}
		need := 0 // all queued
		if lim.MaxRows > 0 {
			need = lim.MaxRows - len(b.Records)
		}
		if time.Until(deadline) <= 0 {
			if polled {
				break
			}
			// MaxWait <= 0: take what is queued, without waiting.
			polled = true
			r.absorb(ctx, need)
			continue
		}
		// The early end: nothing more to wait for.
		if polled && len(b.Records) > 0 && r.filled(b, lim, half) {
			if !listed && r.caughtUpKnown() && len(r.unknownHW()) > 0 {
				listed = true
				r.listHW(ctx, deadline)
			}
			if r.caughtUp() {
				// Take what was queued meanwhile, without waiting.
				r.absorb(ctx, need)
				if r.head == len(r.pending) && r.caughtUp() {
					break
				}
				continue
			}
		}
		polled = true
		until := deadline
		if len(b.Records) > 0 && time.Now().Before(half) && r.caughtUpKnown() {
			// Caught up with a small fill: look again at half of MaxWait,
			// when the fill no longer has to be meaningful.
			until = half
		}
		r.wait(ctx, until)
		r.absorb(ctx, need)
	}
	if r.err != nil {
		return r.finish(b), r.err
	}
	if len(b.Records) == 0 && lim.MaxWait > 0 && ctx.Err() == nil && time.Since(start) >= lim.MaxWait {
		if err := r.health.failure(start); err != nil {
			var ce *sources.ConfigError
			if errors.As(err, &ce) {
				r.err = err
			}
			return r.finish(b), err
		}
	}
	return r.finish(b), nil
}

// earlyFill: a caught-up Read ends before half of MaxWait once it holds
// 1/earlyFill of MaxRows or of MaxBytes. It was a tenth: a stream at half
// the node's maximum rate then committed every ~2,900 rows (217 synced
// commits a second on 2 cores, ack-to-commit p99 96-163 ms); at a quarter,
// half the commits, and the freshness bench's p99 at that rate with
// max_batch_interval 100ms was 108-187 ms in five runs (4 under 150)
// against 135-362 ms (1 under 150) alternated with a tenth, 2026-12-05.
// A batch still ends at half of MaxWait, so the wait this adds is bounded
// by what a trickle waits already.
const earlyFill = 4

// filled reports whether b holds enough for a Read to end before MaxWait
// once the reader is caught up: a quarter (1/earlyFill) of MaxRows or of
// MaxBytes, or half of MaxWait gone (half is that instant). A trickle of
// records therefore still gathers for at least half of MaxWait instead of
// turning every poll into its own synced commit.
func (r *reader) filled(b *sources.Batch, lim sources.Limits, half time.Time) bool {
	return lim.MaxRows > 0 && len(b.Records) >= max(lim.MaxRows/earlyFill, 1) ||
		lim.MaxBytes > 0 && b.Bytes >= max(lim.MaxBytes/earlyFill, 1) ||
		!time.Now().Before(half)
}

// caughtUp reports whether nothing is pending and every partition's next
// position is at or past its known high watermark. A partition whose high
// watermark is unknown is not caught up.
func (r *reader) caughtUp() bool {
	return r.caughtUpKnown() && len(r.unknownHW()) == 0
}

// caughtUpKnown is caughtUp over the partitions whose high watermark is
// known.
func (r *reader) caughtUpKnown() bool {
	if r.head < len(r.pending) {
		return false
	}
	for p, next := range r.next {
		if hw, ok := r.hw[p]; ok && next < hw {
			return false
		}
	}
	return true
}

// unknownHW lists the partitions without a known high watermark.
func (r *reader) unknownHW() []int32 {
	var out []int32
	for p := range r.next {
		if _, ok := r.hw[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// listHWTimeout bounds the listing of high watermarks for an early end.
const listHWTimeout = time.Second

// listHW lists the high watermarks of the partitions none of whose fetches
// held records (franz-go returns no fetch without records, so an empty or
// idle partition never shows its watermark), at most until deadline. A
// failed listing leaves them unknown: Read then waits as it would without
// the early end.
func (r *reader) listHW(ctx context.Context, deadline time.Time) {
	if d := time.Now().Add(listHWTimeout); d.Before(deadline) {
		deadline = d
	}
	lctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	marks, err := r.cluster.Watermarks(lctx, r.topic)
	if err != nil {
		r.logger.Debug("kafka: list high watermarks for an early end", "err", err)
		return
	}
	for _, p := range r.unknownHW() {
		if hw, ok := marks[p]; ok {
			r.hw[p] = hw
		}
	}
}

// finish sets b.Next to the positions after b.
func (r *reader) finish(b *sources.Batch) *sources.Batch {
	b.Next = maps.Clone(r.next)
	return b
}

// drain moves pending records into b until a limit is reached, and reports
// whether one is. Control records advance positions without counting.
func (r *reader) drain(b *sources.Batch, lim sources.Limits) bool {
	full := func() bool {
		return lim.MaxRows > 0 && len(b.Records) >= lim.MaxRows ||
			lim.MaxBytes > 0 && b.Bytes >= lim.MaxBytes
	}
	// Records come in runs of one partition: its next position is kept
	// here and written to r.next when the partition changes and on return
	// (not once per record).
	var curP int32
	var curNext int64
	have := false
	defer func() {
		if have {
			r.next[curP] = curNext
		}
	}()
	for r.head < len(r.pending) {
		rec := r.pending[r.head]
		if have && rec.Partition != curP {
			r.next[curP] = curNext
		}
		if rec.Attrs.IsControl() {
			curP, curNext, have = rec.Partition, rec.Offset+1, true
			r.pop()
			continue
		}
		size := int64(len(rec.Key) + len(rec.Value))
		if full() || lim.MaxBytes > 0 && len(b.Records) > 0 && b.Bytes+size > lim.MaxBytes {
			return true
		}
		// Field by field into the next (zero) slot: appending a whole
		// Record takes a bulk write barrier per record while the GC marks.
		if len(b.Records) == cap(b.Records) {
			b.Records = slices.Grow(b.Records, 1)
		}
		b.Records = b.Records[:len(b.Records)+1]
		out := &b.Records[len(b.Records)-1]
		out.Partition, out.Offset = rec.Partition, rec.Offset
		out.Key, out.Value, out.Timestamp = rec.Key, rec.Value, rec.Timestamp
		if len(rec.Headers) > 0 {
			out.Headers = headersOf(rec.Headers)
		}
		b.Bytes += size
		curP, curNext, have = rec.Partition, rec.Offset+1, true
		r.pop()
	}
	return full()
}

// minSpareRecords and maxSpareRecords bound the record slots a reader
// keeps for its next Read: from about 150 KiB (a smaller batch's slots cost
// little to allocate, and 10,000 jobs of small batches would each keep
// theirs) to about 5 MiB (a bigger batch's are left to the GC). A Read
// that returns no record drops them.
const (
	minSpareRecords = 1 << 10
	maxSpareRecords = 32 << 10
)

// Recycle keeps b's record slots for the next Read (sources.Recycler):
// a reader working through a backlog then fills the same ~3 MiB of slots
// batch after batch, warm, instead of ~150 bytes of fresh memory per
// record (allocated, zeroed, faulted in and collected).
func (r *reader) Recycle(b *sources.Batch) {
	if b == nil || len(b.Records) == 0 || cap(b.Records) < r.minSpare || cap(b.Records) > maxSpareRecords || cap(b.Records) <= cap(r.spare) {
		// (An empty batch's slots go too: the reader is idle.)
		return
	}
	clear(b.Records) // the fetched records' bytes go with the batch
	r.spare, b.Records = b.Records[:0], nil
}

func (r *reader) pop() {
	r.pending[r.head] = nil
	r.head++
	if r.head == len(r.pending) {
		r.pending, r.head = r.pending[:0], 0
	}
}

// wait blocks until the dispatcher queued something for r, until or ctx
// is done.
func (r *reader) wait(ctx context.Context, until time.Time) {
	d := time.Until(until)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.route.signal:
	case <-t.C:
	case <-ctx.Done():
	}
}

// absorb takes what the dispatcher queued into pending and turns its
// errors into the sticky r.err, or logs and drops them when they are
// transient.
func (r *reader) absorb(ctx context.Context, need int) {
	recs, errs := r.route.take(need, r.hw)
	var oor []int32
	for _, fe := range errs {
		err := fe.Err
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			// our own poll deadline or the caller's ctx
		case errors.Is(err, kgo.ErrClientClosed):
			r.setErr(fmt.Errorf("kafka: read: %w", err))
		case errors.Is(err, kerr.OffsetOutOfRange):
			oor = append(oor, fe.Partition)
		case isAuthErr(err):
			r.setErr(&sources.ConfigError{Field: "kafka.properties",
				Err: fmt.Errorf("kafka: fetch %s[%d]: %s: %w", fe.Topic, fe.Partition, authHint(err), err)})
		case errors.Is(err, kerr.UnknownTopicID):
			r.setErr(&sources.ConfigError{Field: "kafka.topic",
				Err: fmt.Errorf("kafka: fetch %s: topic was deleted or recreated: %w", fe.Topic, err)})
		case kerr.IsRetriable(err):
			r.logger.Debug("kafka: retriable fetch error", "partition", fe.Partition, "err", err)
		default:
			r.setErr(fmt.Errorf("kafka: fetch %s[%d]: %w", fe.Topic, fe.Partition, err))
		}
	}
	// One map read and write per run of a partition's records, not per
	// record; a partition the reader does not read (!known) is skipped.
	var curP int32
	var curFetched int64
	have, known := false, false
	for _, rec := range recs {
		if !have || rec.Partition != curP {
			if have && known {
				r.fetched[curP] = curFetched
			}
			curP, have = rec.Partition, true
			curFetched, known = r.fetched[curP]
		}
		if !known || rec.Offset < curFetched {
			continue
		}
		r.pending = append(r.pending, rec)
		curFetched = rec.Offset + 1
	}
	if have && known {
		r.fetched[curP] = curFetched
	}
	if len(oor) > 0 && r.err == nil {
		slices.Sort(oor)
		p := oor[0]
		e := &sources.OutOfRangeError{Partition: p, Offset: r.fetched[p], LogStart: -1, LogEnd: -1}
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), boundsTimeout)
		defer cancel()
		if lo, hi, err := r.cluster.Bounds(bctx, r.topic); err == nil {
			if v, ok := lo[p]; ok {
				e.LogStart = v
			}
			if v, ok := hi[p]; ok {
				e.LogEnd = v
			}
		} else {
			r.logger.Warn("kafka: list bounds for out-of-range error", "partition", p, "err", err)
		}
		r.setErr(e)
	}
}

func (r *reader) setErr(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.cluster.fetch.close(r.route)
	r.pending, r.head = nil, 0
}

// health watches the reader's broker connections through franz-go hooks
// (called from franz-go goroutines) to tell "no data" from "no broker".
type health struct {
	mu        sync.Mutex
	lastOK    time.Time // last fetch or metadata response read
	lastErr   error     // last failed connection attempt
	lastErrAt time.Time
	authErr   error // last auth or TLS failure, cleared by a response
}

var (
	_ kgo.HookBrokerConnect = (*health)(nil)
	_ kgo.HookBrokerRead    = (*health)(nil)
)

// Request keys that prove an authenticated, working connection.
const (
	keyFetch    = 1
	keyMetadata = 3
)

func (h *health) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr, h.lastErrAt = err, time.Now()
	if isAuthErr(err) {
		h.authErr = err
	}
}

func (h *health) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil || key != keyFetch && key != keyMetadata {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastOK, h.authErr = time.Now(), nil
}

// failure is the error for a Read since start that returned nothing: a
// *sources.ConfigError if connections fail authentication, a
// *sources.UnreachableError if no broker answered and connecting failed, nil
// otherwise.
func (h *health) failure(since time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lastOK.After(since) {
		return nil
	}
	if h.authErr != nil {
		return &sources.ConfigError{Field: "kafka.properties", Err: fmt.Errorf("kafka: connect: %s: %w", authHint(h.authErr), h.authErr)}
	}
	if h.lastErr != nil && h.lastErrAt.After(since) {
		return &sources.UnreachableError{Err: fmt.Errorf("kafka: no broker answered since %s: %w",
			since.Format(time.RFC3339), h.lastErr)}
	}
	return nil
}

// headersOf copies a record's headers; nil (no allocation) when it has
// none.
func headersOf(hs []kgo.RecordHeader) []sources.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]sources.Header, len(hs))
	for i, h := range hs {
		out[i] = sources.Header{Key: h.Key, Value: h.Value}
	}
	return out
}
