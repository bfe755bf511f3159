package kinesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/loadnode/loadnode/sources"
)

const (
	// defaultPollInterval is the least time between two GetRecords calls
	// of a shard: the service allows 5 per second per shard.
	defaultPollInterval = 200 * time.Millisecond
	// backoffBase and backoffMax bound the full-jitter back-off of a shard
	// after throttling or a server error (doubling per failure in a row).
	backoffBase = 100 * time.Millisecond
	backoffMax  = 5 * time.Second
	// callTimeout bounds one SDK call.
	callTimeout = 30 * time.Second
	// maxFetchers is the most GetRecords calls a Read has in flight.
	maxFetchers = 8
	// GetRecords Limit bounds (the service's maximum is 10000).
	minFetch, maxFetch = 500, 10000
)

// reader reads a fixed set of shards. A Read fetches every shard that is
// due (its buffer empty, its pacing or back-off elapsed) concurrently, then
// returns buffered records round robin across shards, until a limit or
// MaxWait. Nothing runs between Reads.
type reader struct {
	client *kinesis.Client
	stream string
	logger *slog.Logger
	poll   time.Duration
	shards []*shard // by partition
	rr     int      // the shard the next drain starts with
	// err is sticky: once set every Read returns it.
	err    error
	closed bool
}

var _ sources.Reader = (*reader)(nil)

// shard is a reader's state of one shard. Between Reads it is touched by
// the Read's goroutine only; during a fetch round by its fetch goroutine
// only.
type shard struct {
	p     int32
	start position
	// cp is the checkpoint after the records returned so far (which the
	// caller commits before the next Read): cp.Last is the last returned
	// record's sequence number.
	cp Checkpoint
	// next is the ordinal of the next record to return.
	next int64
	// changed: cp changed in the current Read.
	changed bool

	iter   *string // current shard iterator; nil: open one
	opened bool    // an iterator was opened once
	// verify, when set, is the sequence number the first record fetched
	// must have (the iterator was opened AT_SEQUENCE_NUMBER of it): a
	// greater one means it was trimmed.
	verify string
	// buf holds fetched records not yet returned, in order, KPL
	// aggregates already split into their user records. Records are
	// fetched only when buf is empty, so a re-acquired iterator never
	// leaves fetched-but-unreturned records behind.
	buf []entry
	// endSeen: the service answered with no NextShardIterator, so the shard
	// is closed and buf holds its last records.
	endSeen bool
	// due is the earliest time of the next call; backoff the current
	// back-off (0 after a success).
	due     time.Time
	backoff time.Duration
	// behind is the last MillisBehindLatest; hasBehind once known.
	behind    int64
	hasBehind bool

	// Outcome of the last fetch, read by Read after the round.
	err          error // fatal for the reader (sticky)
	transportErr error // the endpoint did not answer
	answered     bool  // a call got a response
}

// NewReader opens a reader of the partitions in start, each from its
// ordinal (start.Offset) and encoded Checkpoint. It does no I/O: iterators
// are opened by the first Read.
// entry is one record a shard returns: a Kinesis record, or one user
// record of a KPL aggregate.
type entry struct {
	seq  string // the Kinesis record's sequence number
	sub  int    // the index of the user record in its aggregate; 0 otherwise
	last bool   // the last (or only) record of its Kinesis record
	key  []byte
	data []byte
	at   time.Time
	err  error // a corrupt aggregate: data is its raw bytes
}

// expand appends to buf the records of Kinesis record rec, skipping the
// first skip user records of an aggregate (already committed). A record
// without the KPL magic is one entry; a corrupt aggregate is one entry
// with its error. An aggregate with no more than skip records is an error:
// the checkpoint does not match the stream.
func expand(buf []entry, rec *types.Record, skip int) ([]entry, error) {
	seq := aws.ToString(rec.SequenceNumber)
	key := []byte(aws.ToString(rec.PartitionKey))
	at := aws.ToTime(rec.ApproximateArrivalTimestamp)
	if !IsAggregated(rec.Data) {
		if skip > 0 {
			return buf, fmt.Errorf("kinesis: record %s is not a KPL aggregate, but the checkpoint has %d of its records committed", seq, skip)
		}
		return append(buf, entry{seq: seq, last: true, key: key, data: rec.Data, at: at}), nil
	}
	users, err := Deaggregate(rec.Data)
	if err != nil {
		if skip > 0 {
			return buf, fmt.Errorf("kinesis: aggregate %s: the checkpoint has %d of its records committed, but %w", seq, skip, err)
		}
		return append(buf, entry{seq: seq, last: true, key: key, data: rec.Data, at: at,
			err: fmt.Errorf("record %s: %w", seq, err)}), nil
	}
	if skip >= len(users) {
		return buf, fmt.Errorf("kinesis: aggregate %s holds %d records, but the checkpoint has %d of them committed and more to come", seq, len(users), skip)
	}
	for i := skip; i < len(users); i++ {
		u := &users[i]
		buf = append(buf, entry{seq: seq, sub: i, last: i == len(users)-1, key: []byte(u.Key), data: u.Data, at: at})
	}
	return buf, nil
}

func (s *Source) NewReader(start map[int32]sources.Start) (sources.Reader, error) {
	if len(start) == 0 {
		return nil, errors.New("kinesis: new reader: no partitions")
	}
	r := &reader{client: s.client, stream: s.stream, logger: s.logger, poll: s.poll}
	for _, p := range slices.Sorted(maps.Keys(start)) {
		st := start[p]
		if st.Offset < 0 {
			return nil, fmt.Errorf("kinesis: new reader: partition %d: bad start ordinal %d", p, st.Offset)
		}
		cp, err := DecodeCheckpoint(st.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("kinesis: new reader: partition %d: %w", p, err)
		}
		if idx, _ := ShardIndex(cp.Shard); idx != p {
			return nil, fmt.Errorf("kinesis: new reader: partition %d has the checkpoint of %s", p, cp.Shard)
		}
		pos, _ := parsePosition(cp.Start) // checked by DecodeCheckpoint
		r.shards = append(r.shards, &shard{p: p, start: pos, cp: cp, next: st.Offset})
	}
	return r, nil
}

func (r *reader) Read(ctx context.Context, lim sources.Limits) (*sources.Batch, error) {
	b := &sources.Batch{}
	for _, s := range r.shards {
		s.changed = false
	}
	if r.closed {
		return r.finish(b), errors.New("kinesis: read: reader closed")
	}
	if r.err != nil {
		return r.finish(b), r.err
	}
	deadline := time.Now().Add(lim.MaxWait)
	var transportErr error
	answered := false
	rounds := 0
	for {
		if r.drain(b, lim) || r.err != nil || ctx.Err() != nil {
			break
		}
		now := time.Now()
		if lim.MaxWait <= 0 && rounds > 0 || lim.MaxWait > 0 && !now.Before(deadline) {
			break
		}
		var due []*shard
		var wake time.Time
		for _, s := range r.shards {
			if s.cp.Ended || s.endSeen || len(s.buf) > 0 {
				continue
			}
			if !s.due.After(now) {
				due = append(due, s)
			} else if wake.IsZero() || s.due.Before(wake) {
				wake = s.due
			}
		}
		if len(due) == 0 {
			if wake.IsZero() || lim.MaxWait <= 0 {
				break // every shard ended, or no waiting allowed
			}
			if wake.After(deadline) {
				wake = deadline
			}
			t := time.NewTimer(time.Until(wake))
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			continue
		}
		rounds++
		r.fetchRound(ctx, due, lim)
		for _, s := range due {
			if s.err != nil && r.err == nil {
				r.err = s.err
			}
			if s.transportErr != nil {
				transportErr = s.transportErr
			}
			answered = answered || s.answered
		}
	}
	if r.err != nil {
		return r.finish(b), r.err
	}
	if len(b.Records) == 0 && !answered && transportErr != nil && ctx.Err() == nil {
		return r.finish(b), &sources.UnreachableError{Err: fmt.Errorf("kinesis: stream %s: %w", r.stream, transportErr)}
	}
	return r.finish(b), nil
}

// finish fills b's positions: Next of every shard, the checkpoints that
// changed, the known MillisBehindLatest.
func (r *reader) finish(b *sources.Batch) *sources.Batch {
	b.Next = make(map[int32]int64, len(r.shards))
	for _, s := range r.shards {
		b.Next[s.p] = s.next
		if s.changed {
			if b.Checkpoints == nil {
				b.Checkpoints = map[int32][]byte{}
			}
			b.Checkpoints[s.p] = EncodeCheckpoint(s.cp)
		}
		if s.hasBehind {
			if b.BehindMs == nil {
				b.BehindMs = map[int32]int64{}
			}
			b.BehindMs[s.p] = s.behind
		}
	}
	return b
}

// drain moves buffered records into b, round robin across shards, until a
// limit is reached, and reports whether one is. A shard whose end was seen
// and whose records were all returned is marked ended.
func (r *reader) drain(b *sources.Batch, lim sources.Limits) bool {
	full := func() bool {
		return lim.MaxRows > 0 && len(b.Records) >= lim.MaxRows ||
			lim.MaxBytes > 0 && b.Bytes >= lim.MaxBytes
	}
	n := len(r.shards)
	stopped := false
	for i := 0; i < n && !stopped; i++ {
		s := r.shards[(r.rr+i)%n]
		for len(s.buf) > 0 {
			e := &s.buf[0]
			size := int64(len(e.key) + len(e.data))
			if full() || lim.MaxBytes > 0 && len(b.Records) > 0 && b.Bytes+size > lim.MaxBytes {
				r.rr = (r.rr + i) % n
				stopped = true
				break
			}
			b.Records = append(b.Records, sources.Record{
				Partition: s.p,
				Offset:    s.next,
				Seq:       e.seq,
				SubSeq:    int64(e.sub),
				Key:       e.key,
				Value:     e.data,
				Timestamp: e.at,
				Err:       e.err,
			})
			b.Bytes += size
			s.next++
			// A batch may end inside an aggregate: the checkpoint then
			// says how many of its user records are committed.
			s.cp.Last, s.cp.Sub = e.seq, 0
			if !e.last {
				s.cp.Sub = e.sub + 1
			}
			s.changed = true
			s.buf[0] = entry{}
			s.buf = s.buf[1:]
		}
		if len(s.buf) == 0 {
			s.buf = nil
		}
	}
	if !stopped && n > 0 {
		r.rr = (r.rr + 1) % n
	}
	for _, s := range r.shards {
		if s.endSeen && len(s.buf) == 0 && !s.cp.Ended {
			s.cp.Ended = true
			s.changed = true
			r.logger.Debug("kinesis: shard read to its end", "shard", s.cp.Shard, "ordinal", s.next)
		}
	}
	return full()
}

// fetchRound fetches the due shards concurrently (at most maxFetchers
// calls in flight) and returns when all are done.
func (r *reader) fetchRound(ctx context.Context, due []*shard, lim sources.Limits) {
	limit := int32(maxFetch)
	if lim.MaxRows > 0 && lim.MaxRows < maxFetch {
		limit = int32(max(lim.MaxRows, minFetch))
	}
	sem := make(chan struct{}, maxFetchers)
	var wg sync.WaitGroup
	for _, s := range due {
		s.err, s.transportErr, s.answered = nil, nil, false
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.fetch(ctx, s, limit)
		}()
	}
	wg.Wait()
}

// fetch opens s's iterator if needed and fetches one page of records into
// s.buf (which is empty).
func (r *reader) fetch(ctx context.Context, s *shard, limit int32) {
	cctx, cancel := context.WithTimeout(withShard(ctx, s.cp.Shard), callTimeout)
	defer cancel()
	now := time.Now()
	s.due = now.Add(r.poll)
	if s.iter == nil && !r.open(ctx, cctx, s) {
		return
	}
	out, err := r.client.GetRecords(cctx, &kinesis.GetRecordsInput{ShardIterator: s.iter, Limit: aws.Int32(limit)})
	if err != nil {
		r.fail(ctx, s, "GetRecords", err)
		return
	}
	s.answered = true
	s.backoff = 0
	if out.MillisBehindLatest != nil {
		s.behind, s.hasBehind = *out.MillisBehindLatest, true
	}
	recs := out.Records
	var buf []entry
	if s.verify != "" && len(recs) > 0 {
		first := aws.ToString(recs[0].SequenceNumber)
		switch c := cmpSeq(first, s.verify); {
		case c == 0 && s.cp.Sub > 0 && first == s.cp.Last:
			// A batch ended inside this aggregate: its first Sub user
			// records are committed, the rest are not.
			var err error
			if buf, err = expand(buf, &recs[0], s.cp.Sub); err != nil {
				s.err = fmt.Errorf("kinesis: shard %s: %w", s.cp.Shard, err)
				return
			}
			r.logger.Info("kinesis: resuming inside a KPL aggregate", "shard", s.cp.Shard, "seq", first, "skip", s.cp.Sub)
			recs = recs[1:]
			s.verify = ""
		case c == 0:
			recs = recs[1:] // the committed record itself: AT + drop = AFTER
			s.verify = ""
		case c > 0:
			r.logger.Warn("kinesis: position trimmed: the first record after it is not the committed one",
				"shard", s.cp.Shard, "position", s.verify, "first", first)
			s.err = r.outOfRange(s)
			return
		default:
			s.err = fmt.Errorf("kinesis: shard %s: iterator at %s returned earlier record %s", s.cp.Shard, s.verify, first)
			return
		}
	}
	for i := range recs {
		var err error
		if buf, err = expand(buf, &recs[i], 0); err != nil {
			s.err = fmt.Errorf("kinesis: shard %s: %w", s.cp.Shard, err)
			return
		}
	}
	s.buf = buf
	s.iter = out.NextShardIterator
	if s.iter == nil {
		if s.verify != "" {
			// The shard ended without the record the position names: it
			// and whatever followed it are gone.
			r.logger.Warn("kinesis: position trimmed: the shard ended without the committed record",
				"shard", s.cp.Shard, "position", s.verify)
			s.err = r.outOfRange(s)
			s.buf = nil
			return
		}
		s.endSeen = true
	}
}

func (r *reader) outOfRange(s *shard) error {
	pos := s.cp.Last
	if pos == "" {
		pos = s.cp.Start
	}
	return &sources.OutOfRangeError{Partition: s.p, Offset: s.next, LogStart: -1, LogEnd: -1, Shard: s.cp.Shard, Position: pos}
}

// open opens s's iterator. The first open of a shard with a committed
// sequence number S is AT_SEQUENCE_NUMBER S with verify = S (trim
// detection); a re-open after expiry is AFTER_SEQUENCE_NUMBER of the last
// returned record, unless the check is still pending; a shard without a
// committed record opens at its start position (a sequence number there is
// also opened AT and verified).
func (r *reader) open(ctx, cctx context.Context, s *shard) bool {
	in := &kinesis.GetShardIteratorInput{StreamName: aws.String(r.stream), ShardId: aws.String(s.cp.Shard)}
	fromUser := false
	switch {
	case s.verify != "":
		in.ShardIteratorType, in.StartingSequenceNumber = types.ShardIteratorTypeAtSequenceNumber, aws.String(s.verify)
		fromUser = s.cp.Last == ""
	case s.cp.Last != "" && (!s.opened || s.cp.Sub > 0):
		// After a committed record, or inside a committed part of an
		// aggregate (which AFTER_SEQUENCE_NUMBER would skip the rest of).
		in.ShardIteratorType, in.StartingSequenceNumber = types.ShardIteratorTypeAtSequenceNumber, aws.String(s.cp.Last)
		s.verify = s.cp.Last
	case s.cp.Last != "":
		in.ShardIteratorType, in.StartingSequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(s.cp.Last)
	default:
		switch s.start.kind {
		case posTrimHorizon:
			in.ShardIteratorType = types.ShardIteratorTypeTrimHorizon
		case posLatest:
			in.ShardIteratorType = types.ShardIteratorTypeLatest
		case posTimestamp:
			in.ShardIteratorType, in.Timestamp = types.ShardIteratorTypeAtTimestamp, aws.Time(s.start.at)
		case posSeq:
			in.ShardIteratorType, in.StartingSequenceNumber = types.ShardIteratorTypeAtSequenceNumber, aws.String(s.start.seq)
			s.verify = s.start.seq
			fromUser = true
		}
	}
	out, err := r.getIterator(ctx, cctx, s, in)
	if err != nil {
		if kindOf(err) == kindInvalidArg && in.StartingSequenceNumber != nil {
			// The service refuses the sequence number: not of this shard
			// or stream (a stream deleted and re-created), or too old.
			if fromUser {
				s.err = &sources.ConfigError{Field: "kinesis.positions." + s.cp.Shard,
					Err: fmt.Errorf("kinesis: shard %s: position %s: %w", s.cp.Shard, *in.StartingSequenceNumber, err)}
			} else {
				r.logger.Warn("kinesis: committed position refused", "shard", s.cp.Shard,
					"position", *in.StartingSequenceNumber, "err", err)
				s.err = r.outOfRange(s)
			}
			return false
		}
		r.fail(ctx, s, "GetShardIterator", err)
		return false
	}
	s.answered = true
	s.opened = true
	s.iter = out.ShardIterator
	r.logger.Debug("kinesis: iterator opened", "shard", s.cp.Shard, "type", in.ShardIteratorType,
		"seq", aws.ToString(in.StartingSequenceNumber))
	return true
}

// atTimestampWait bounds an AT_TIMESTAMP GetShardIterator. Kinesis answers
// at once; kinesalite never answers while no record is as new as the
// timestamp.
const atTimestampWait = 2 * time.Second

// getIterator calls GetShardIterator. An AT_TIMESTAMP call that gets no
// answer within atTimestampWait (kinesalite, when no record is that new
// yet) is asked again at LATEST: with no record at or after the timestamp,
// LATEST starts at the same place.
func (r *reader) getIterator(ctx, cctx context.Context, s *shard, in *kinesis.GetShardIteratorInput) (*kinesis.GetShardIteratorOutput, error) {
	if in.ShardIteratorType != types.ShardIteratorTypeAtTimestamp {
		return r.client.GetShardIterator(cctx, in)
	}
	tctx, cancel := context.WithTimeout(cctx, atTimestampWait)
	out, err := r.client.GetShardIterator(tctx, in)
	cancel()
	if err == nil || ctx.Err() != nil || cctx.Err() != nil || tctx.Err() == nil {
		return out, err
	}
	r.logger.Debug("kinesis: no answer at the timestamp; opening at LATEST", "shard", s.cp.Shard, "at", in.Timestamp)
	latest := *in
	latest.ShardIteratorType, latest.Timestamp = types.ShardIteratorTypeLatest, nil
	return r.client.GetShardIterator(cctx, &latest)
}

// fail handles a failed call of s: back off on throttling, server errors and
// transport errors; re-acquire on expiry; a sticky error otherwise.
func (r *reader) fail(ctx context.Context, s *shard, op string, err error) {
	switch kindOf(err) {
	case kindCtx:
		if ctx.Err() != nil {
			return // the caller's context: Read returns
		}
		s.transportErr = err // our call timeout
		r.backOff(s)
	case kindThrottle:
		s.answered = true
		r.logger.Debug("kinesis: throttled", "shard", s.cp.Shard, "op", op, "err", err)
		r.backOff(s)
	case kindExpired:
		s.answered = true
		r.logger.Debug("kinesis: iterator expired; re-acquiring", "shard", s.cp.Shard, "after", s.cp.Last)
		s.iter = nil
		s.buf = nil
		s.due = time.Time{}
	case kindTransport:
		s.transportErr = err
		r.backOff(s)
	case kindNotFound:
		s.err = &sources.ConfigError{Field: "kinesis.stream",
			Err: fmt.Errorf("kinesis: %s of %s in stream %s: %w", op, s.cp.Shard, r.stream, err)}
	case kindAuth:
		s.err = &sources.ConfigError{Field: "kinesis credentials",
			Err: fmt.Errorf("kinesis: %s of %s in stream %s: %w", op, s.cp.Shard, r.stream, err)}
	default:
		s.err = fmt.Errorf("kinesis: %s of %s in stream %s: %w", op, s.cp.Shard, r.stream, err)
	}
}

// backOff delays s's next call by full jitter over a back-off doubling from
// backoffBase to backoffMax.
func (r *reader) backOff(s *shard) {
	s.backoff = min(max(2*s.backoff, backoffBase), backoffMax)
	s.due = time.Now().Add(time.Millisecond + rand.N(s.backoff))
}

func (r *reader) Close() {
	if r.closed {
		return
	}
	r.closed = true
	for _, s := range r.shards {
		s.buf, s.iter = nil, nil
	}
}
