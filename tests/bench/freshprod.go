package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// freshProducer produces the freshness records and keeps, per partition,
// each run of them the broker acknowledged: its first offset, its count,
// its produce time and the time of the acknowledgement.
//
// It does not use kgo's producer. It shares the 2 cores with the node it
// measures, and kgo's producer cost about 0.8 us a record (a kgo.Record
// of ~180 bytes written per record, a promise per record, the batch
// built again from the records): two thirds of a core at half the
// maximum rate, taken from the node. Here each tick's records are written
// once, as Kafka record batches (v2, snappy like kgo's default, one per
// partition of at most freshBatchRecords records), into the tick's
// buffers, reused once the tick's Produce requests are answered; one
// request per leader broker goes out through the kgo client's connection
// to it (kgo.Broker.Request), acks=all. A broker's error fails the cell
// (no retries: a leader change on a real cluster ends the run with its
// error).
//
// A tick's records all carry the tick's time, taken before the first of
// them is made: a record's latency counts from before it existed.
type freshProducer struct {
	cl      *kgo.Client
	topic   string
	parts   int
	topicID [16]byte // what Produce v13 and later name the topic by
	leaders []int32  // leader broker of each partition
	comp    kgo.Compressor
	// bodies are records made beforehand (formatting one costs about as
	// much as producing it) without their produce time, which
	// appendProducedAt adds.
	bodies   [][]byte
	json     bool
	next     int           // records produced so far
	nextBody int           // bodies used so far
	inflight chan struct{} // one token per tick whose requests are out
	wg       sync.WaitGroup

	mu     sync.Mutex
	byPart [][]produced // acknowledged runs, per partition
	err    error
	free   []*freshTick // ticks whose requests were all answered
}

// produced is a run of n records of one partition from offset on, their
// produce time and the time the broker acknowledged them (Unix ns).
type produced struct {
	offset, n, at, acked int64
}

// freshBatchRecords bounds the records of one record batch: about 0.5 MiB
// of the bench's records before compression, under Kafka's default
// message.max.bytes of 1 MiB.
const freshBatchRecords = 2048

// maxFreshInflight bounds the ticks whose requests are out: a producer
// that gets that far ahead of the broker waits (and catches up later, as
// kgo's producer did when its buffer was full).
const maxFreshInflight = 256

// freshTick is one tick's records: a record batch per partition in bufs
// (reused), and what each request carries.
type freshTick struct {
	bufs    [][]byte     // per partition: its record batch
	counts  []int64      // per partition: its records
	records []byte       // one batch's records, before compression
	suffix  []byte       // the end of each value: its produced_at
	zbuf    bytes.Buffer // the compressor's
	sends   []freshSend  // a request per leader; only the producer's goroutine writes it
	left    int          // requests not yet answered (p.mu)
}

// newFreshProducer is a producer into topic's parts partitions, whose
// leaders it looks up (again, for up to freshLeaderWait, while a new
// topic's partitions have none yet).
func newFreshProducer(ctx context.Context, cl *kgo.Client, topic, format string, parts, size int) (*freshProducer, error) {
	comp, err := kgo.DefaultCompressor(kgo.SnappyCompression())
	if err != nil {
		return nil, err
	}
	p := &freshProducer{
		cl: cl, topic: topic, parts: parts, json: format == "json", comp: comp,
		byPart: make([][]produced, parts), inflight: make(chan struct{}, maxFreshInflight),
	}
	for i := range freshBodies {
		p.bodies = append(p.bodies, appendRecord(nil, format, i, max(size-32, 120)))
	}
	adm := kadm.NewClient(cl)
	retry := time.NewTicker(freshLeaderWait / 50)
	defer retry.Stop()
	for tries := 1; ; tries++ {
		if err = p.lookUpLeaders(ctx, adm); err == nil || tries == 50 {
			return p, err
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-retry.C:
		}
	}
}

// freshLeaderWait bounds how long newFreshProducer waits for leaders.
const freshLeaderWait = 10 * time.Second

// lookUpLeaders sets p's topic ID and each partition's leader.
func (p *freshProducer) lookUpLeaders(ctx context.Context, adm *kadm.Client) error {
	tds, err := adm.ListTopics(ctx, p.topic)
	if err == nil {
		err = tds.Error()
	}
	if err != nil {
		return fmt.Errorf("bench: freshness producer: %s's leaders: %w", p.topic, err)
	}
	leaders := make([]int32, p.parts)
	for i := range p.parts {
		pd, ok := tds[p.topic].Partitions[int32(i)]
		if !ok {
			return fmt.Errorf("bench: freshness producer: %s has no partition %d", p.topic, i)
		}
		if pd.Err != nil || pd.Leader < 0 {
			return fmt.Errorf("bench: freshness producer: %s partition %d has no leader (%v)", p.topic, i, pd.Err)
		}
		leaders[i] = pd.Leader
	}
	p.topicID, p.leaders = tds[p.topic].ID, leaders
	return nil
}

// freshBodies is the number of distinct records a producer cycles through.
const freshBodies = 4096

// pace produces rate records/s from start until end: every freshnessTick
// the records due by then (not a burst per second).
func (p *freshProducer) pace(ctx context.Context, rate int, start, end time.Time) error {
	tick := time.NewTicker(freshnessTick)
	defer tick.Stop()
	sent := 0
	for {
		now := time.Now()
		if !now.Before(end) {
			return p.failed()
		}
		due := int(float64(rate) * now.Sub(start).Seconds())
		if err := p.produceN(ctx, due-sent); err != nil {
			return err
		}
		sent = max(sent, due)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// produceN produces n records (n <= 0: none), partition by partition in
// turn, and sends them without waiting for the answers (flush waits):
// as one tick when each partition's share fits one record batch, else as
// several, one after another.
func (p *freshProducer) produceN(ctx context.Context, n int) error {
	for n > 0 {
		m := min(n, freshBatchRecords*p.parts)
		if err := p.produceTick(ctx, m); err != nil {
			return err
		}
		n -= m
	}
	return p.failed()
}

// produceTick produces n records, at most freshBatchRecords per
// partition, stamped with the time now: a record batch per partition, a
// Produce request per leader (Kafka takes one batch per partition in a
// request).
func (p *freshProducer) produceTick(ctx context.Context, n int) error {
	select {
	case p.inflight <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	at := time.Now()
	t := p.tick()
	// Every value of the tick ends the same: its produced_at.
	t.suffix = appendProducedAtEnd(t.suffix[:0], p.json, at.UnixNano())
	// Partition k gets the records next+i with (next+i) % parts == k.
	for k := range p.parts {
		c := n / p.parts
		if (k-p.next%p.parts+p.parts)%p.parts < n%p.parts {
			c++
		}
		t.counts[k] = int64(c)
		if c > 0 {
			t.bufs[k] = p.appendBatch(t, t.bufs[k][:0], c, at, t.suffix)
		}
	}
	p.next += n
	for k := range p.parts {
		if t.counts[k] == 0 {
			continue
		}
		leader := p.leaders[k]
		i := slices.IndexFunc(t.sends, func(s freshSend) bool { return s.leader == leader })
		if i < 0 {
			req := kmsg.NewPtrProduceRequest()
			req.Acks, req.TimeoutMillis = -1, 30_000
			req.Topics = []kmsg.ProduceRequestTopic{{Topic: p.topic, TopicID: p.topicID}}
			i, t.sends = len(t.sends), append(t.sends, freshSend{leader, req})
		}
		rt := &t.sends[i].req.Topics[0]
		rt.Partitions = append(rt.Partitions, kmsg.ProduceRequestTopicPartition{Partition: int32(k), Records: t.bufs[k]})
	}
	p.mu.Lock()
	t.left = len(t.sends)
	p.mu.Unlock()
	p.wg.Add(len(t.sends))
	for _, s := range t.sends {
		go p.send(ctx, t, s.leader, s.req, at)
	}
	return nil
}

// freshSend is one request of a tick and the broker it goes to.
type freshSend struct {
	leader int32
	req    *kmsg.ProduceRequest
}

// tick returns a free tick, its requests none.
func (p *freshProducer) tick() *freshTick {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		t := p.free[n-1]
		p.free = p.free[:n-1]
		t.sends = t.sends[:0]
		return t
	}
	return &freshTick{bufs: make([][]byte, p.parts), counts: make([]int64, p.parts)}
}

// appendBatch appends to dst a record batch of the producer's next m
// bodies, stamped with time at (suffix: the values' produced_at ending).
func (p *freshProducer) appendBatch(t *freshTick, dst []byte, m int, at time.Time, suffix []byte) []byte {
	recs := t.records[:0]
	for i := range m {
		body := valueHead(p.bodies[p.nextBody%len(p.bodies)], p.json)
		p.nextBody++
		vlen := len(body) + len(suffix)
		// A record: its length, then attributes, timestamp delta, offset
		// delta, key length -1 (none), value length, value, no headers;
		// the integers zigzag varints.
		var head [4 + 3*binary.MaxVarintLen32]byte
		h := append(head[:0], 0, 0) // attributes, timestamp delta 0
		h = binary.AppendVarint(h, int64(i))
		h = binary.AppendVarint(h, -1)
		h = binary.AppendVarint(h, int64(vlen))
		recs = binary.AppendVarint(recs, int64(len(h)+vlen+1))
		recs = append(append(append(append(recs, h...), body...), suffix...), 0)
	}
	t.records = recs
	attrs := uint16(0)
	t.zbuf.Reset()
	if z, codec := p.comp.Compress(&t.zbuf, recs); codec == kgo.CodecSnappy && len(z) < len(recs) {
		recs, attrs = z, uint16(codec)
	}
	atMs := uint64(at.UnixMilli())
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, 0)                    // base offset
	dst = binary.BigEndian.AppendUint32(dst, uint32(49+len(recs))) // batch length: what follows it
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)           // partition leader epoch -1
	dst = append(dst, 2)                                           // magic
	dst = binary.BigEndian.AppendUint32(dst, 0)                    // crc, below
	dst = binary.BigEndian.AppendUint16(dst, attrs)                // attributes: the codec
	dst = binary.BigEndian.AppendUint32(dst, uint32(m-1))          // last offset delta
	dst = binary.BigEndian.AppendUint64(dst, atMs)                 // first timestamp
	dst = binary.BigEndian.AppendUint64(dst, atMs)                 // max timestamp
	dst = binary.BigEndian.AppendUint64(dst, 0xffffffffffffffff)   // producer id -1
	dst = binary.BigEndian.AppendUint16(dst, 0xffff)               // producer epoch -1
	dst = binary.BigEndian.AppendUint32(dst, 0xffffffff)           // base sequence -1
	dst = binary.BigEndian.AppendUint32(dst, uint32(m))            // records
	dst = append(dst, recs...)
	binary.BigEndian.PutUint32(dst[start+17:], crc32.Checksum(dst[start+21:], castagnoli))
	return dst
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// send sends one request of tick t and notes each partition's
// acknowledged run; the last answer frees the tick.
func (p *freshProducer) send(ctx context.Context, t *freshTick, leader int32, req *kmsg.ProduceRequest, at time.Time) {
	defer p.wg.Done()
	kr, err := p.cl.Broker(int(leader)).Request(ctx, req)
	acked := time.Now().UnixNano()
	var runs []produced
	var parts []int32
	if err == nil {
		resp := kr.(*kmsg.ProduceResponse)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if e := kerr.ErrorForCode(rp.ErrorCode); e != nil {
					err = errors.Join(err, fmt.Errorf("partition %d: %w", rp.Partition, e))
					continue
				}
				if rp.Partition < 0 || int(rp.Partition) >= p.parts {
					err = errors.Join(err, fmt.Errorf("an answer for partition %d", rp.Partition))
					continue
				}
				parts = append(parts, rp.Partition)
				runs = append(runs, produced{offset: rp.BaseOffset, n: t.counts[rp.Partition], at: at.UnixNano(), acked: acked})
			}
		}
		if err == nil && len(runs) != len(req.Topics[0].Partitions) {
			err = fmt.Errorf("%d partitions answered of %d", len(runs), len(req.Topics[0].Partitions))
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.err = errors.Join(p.err, fmt.Errorf("broker %d: %w", leader, err))
	}
	for i, r := range runs {
		p.byPart[parts[i]] = append(p.byPart[parts[i]], r)
	}
	if t.left--; t.left == 0 {
		p.free = append(p.free, t)
		<-p.inflight
	}
}

// flush waits for every request sent to be answered.
func (p *freshProducer) flush() error {
	p.wg.Wait()
	return p.failed()
}

func (p *freshProducer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// ends are the end offsets of the acknowledged records, per partition.
func (p *freshProducer) ends() map[int32]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[int32]int64, p.parts)
	for i, rs := range p.byPart {
		for _, r := range rs {
			out[int32(i)] = max(out[int32(i)], r.offset+r.n)
		}
	}
	return out
}

// latencies are the produce-to-committed latencies of the records produced
// at or after fromNs: for each, the first time its partition's committed
// offset was seen past it minus its produce time; acks are the same
// records' times from produce to the broker's acknowledgement, and
// sinceAck from that acknowledgement to the commit (the part of a latency
// after the record reached the broker).
func (p *freshProducer) latencies(marks map[int32][]seen, fromNs int64) (out, acks, sinceAck []time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(0)
	for _, rs := range p.byPart {
		for _, r := range rs {
			n += r.n
		}
	}
	out, acks, sinceAck = make([]time.Duration, 0, n), make([]time.Duration, 0, n), make([]time.Duration, 0, n)
	for i, rs := range p.byPart {
		slices.SortFunc(rs, func(a, b produced) int { return int(a.offset - b.offset) })
		ms := marks[int32(i)]
		k := 0
		for _, r := range rs {
			if r.at < fromNs {
				continue
			}
			for off := r.offset; off < r.offset+r.n; off++ {
				for k < len(ms) && ms[k].offset <= off {
					k++
				}
				if k == len(ms) {
					break
				}
				out = append(out, time.Duration(ms[k].at.UnixNano()-r.at))
				acks = append(acks, time.Duration(r.acked-r.at))
				sinceAck = append(sinceAck, time.Duration(ms[k].at.UnixNano()-r.acked))
			}
		}
	}
	return out, acks, sinceAck
}

// valueHead is the part of body (json or csv, from appendRecord) a
// produced value starts with: a csv body whole, a json body without its
// closing '}' (appendProducedAtEnd closes the object).
func valueHead(body []byte, json bool) []byte {
	if json {
		return body[:len(body)-1]
	}
	return body
}

// appendProducedAtEnd appends what follows a value's head (valueHead): a
// last column produced_at, its produce time in Unix ns.
func appendProducedAtEnd(dst []byte, json bool, atNs int64) []byte {
	if json {
		dst = append(dst, `,"produced_at":`...)
		return append(strconv.AppendInt(dst, atNs, 10), '}')
	}
	return strconv.AppendInt(append(dst, ','), atNs, 10)
}
