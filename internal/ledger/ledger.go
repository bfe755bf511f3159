package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Position is where the broker stored a record.
type Position struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Payload is what every chaos record carries: its writer and the writer's
// sequence number.
type Payload struct {
	W   int64 `json:"w"`
	Seq int64 `json:"seq"`
}

// recordJSON is a record's value: the payload and some padding, so that
// batches have a realistic size.
type recordJSON struct {
	W   int64  `json:"w"`
	Seq int64  `json:"seq"`
	Pad string `json:"pad"`
}

// Encode returns the JSON value of a record with payload p.
func Encode(p Payload, pad string) []byte {
	b, _ := json.Marshal(recordJSON{W: p.W, Seq: p.Seq, Pad: pad})
	return b
}

// Decode parses a record value written by Encode.
func Decode(b []byte) (Payload, error) {
	var r recordJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return Payload{}, fmt.Errorf("ledger: decode record: %w", err)
	}
	return Payload{W: r.W, Seq: r.Seq}, nil
}

// Ledger remembers, from produce acknowledgements, the payload at every
// position. Records whose produce failed have an unknown fate: Failed
// counts them, and Reconcile adds those the log turns out to hold.
type Ledger struct {
	mu        sync.Mutex
	recs      map[Position]Payload
	failed    int
	conflicts []string
}

// New returns an empty ledger.
func New() *Ledger {
	return &Ledger{recs: map[Position]Payload{}}
}

// Add records that the broker acknowledged payload p at pos. Two different
// payloads at one position are a broker anomaly and are kept as conflicts.
func (l *Ledger) Add(pos Position, p Payload) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old, ok := l.recs[pos]; ok && old != p {
		l.conflicts = append(l.conflicts, fmt.Sprintf("%v: acknowledged %v and %v", pos, old, p))
		return
	}
	l.recs[pos] = p
}

func (l *Ledger) fail(n int) {
	l.mu.Lock()
	l.failed += n
	l.mu.Unlock()
}

// Len is the number of acknowledged records.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.recs)
}

// Failed is the number of records whose produce failed (unknown fate).
func (l *Ledger) Failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// Conflicts lists positions acknowledged (or read back) with two payloads.
func (l *Ledger) Conflicts() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.conflicts...)
}

// Topic returns a copy of the acknowledged records of one topic, keyed by
// partition and offset.
func (l *Ledger) Topic(topic string) map[PartOff]Payload {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[PartOff]Payload{}
	for pos, p := range l.recs {
		if pos.Topic == topic {
			out[PartOff{pos.Partition, pos.Offset}] = p
		}
	}
	return out
}

// Reconcile merges what the log of topic holds (read back with ReadLog)
// into the ledger: records the broker stored although their produce failed
// are added; a log record that differs from an acknowledged one is a
// conflict. It returns the number of records added.
func (l *Ledger) Reconcile(topic string, log map[PartOff]Payload) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	added := 0
	for po, p := range log {
		pos := Position{topic, po.Partition, po.Offset}
		old, ok := l.recs[pos]
		switch {
		case !ok:
			l.recs[pos] = p
			added++
		case old != p:
			l.conflicts = append(l.conflicts, fmt.Sprintf("%v: acknowledged %v, log has %v", pos, old, p))
		}
	}
	return added
}

// PartOff is a position within one topic.
type PartOff struct {
	Partition int32
	Offset    int64
}

// Writer is one producer of the ledger's records: it always writes to one
// partition, with a fixed key, and numbers its records from 0.
type Writer struct {
	ID        int64
	Partition int32
	next      int64
}

// Producer writes ledger records to one topic. Produce is called from one
// goroutine at a time; Reconnect and AddWriters may be called between
// Produce calls from any goroutine.
type Producer struct {
	topic  string
	ledger *Ledger
	pad    string

	mu      sync.Mutex
	cl      *kgo.Client
	writers []*Writer
	nextID  int64
}

// NewProducer connects a producer for topic to brokers. Record values are
// padded to about padBytes.
func NewProducer(brokers []string, topic string, ledger *Ledger, firstWriterID int64, padBytes int) (*Producer, error) {
	p := &Producer{topic: topic, ledger: ledger, nextID: firstWriterID}
	for range padBytes {
		p.pad += "x"
	}
	if err := p.Reconnect(brokers); err != nil {
		return nil, err
	}
	return p, nil
}

// Reconnect replaces the producer's client by a new one (after a broker
// restart, or to learn new partitions at once).
func (p *Producer) Reconnect(brokers []string) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.DefaultProduceTopic(p.topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(2*time.Millisecond),
		kgo.RecordDeliveryTimeout(30*time.Second),
		kgo.MetadataMinAge(100*time.Millisecond),
	)
	if err != nil {
		return fmt.Errorf("ledger: producer client: %w", err)
	}
	p.mu.Lock()
	old := p.cl
	p.cl = cl
	p.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

// Close closes the producer's client.
func (p *Producer) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cl != nil {
		p.cl.Close()
		p.cl = nil
	}
}

// AddWriters adds n writers to each of the given partitions.
func (p *Producer) AddWriters(n int, partitions ...int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, part := range partitions {
		for range n {
			p.writers = append(p.writers, &Writer{ID: p.nextID, Partition: part})
			p.nextID++
		}
	}
}

// Writers is the number of writers.
func (p *Producer) Writers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.writers)
}

// Produce writes perWriter records from every writer and waits for all
// acknowledgements, recording each acknowledged position in the ledger.
// It returns the number of records acknowledged and the first error.
func (p *Producer) Produce(ctx context.Context, perWriter int) (int, error) {
	p.mu.Lock()
	cl := p.cl
	writers := append([]*Writer(nil), p.writers...)
	p.mu.Unlock()
	if cl == nil {
		return 0, errors.New("ledger: producer closed")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	acked := 0
	for _, w := range writers {
		for range perWriter {
			pl := Payload{W: w.ID, Seq: w.next}
			w.next++
			rec := &kgo.Record{Topic: p.topic, Partition: w.Partition, Key: []byte("w" + strconv.FormatInt(w.ID, 10)), Value: Encode(pl, p.pad)}
			wg.Add(1)
			cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					p.ledger.fail(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				p.ledger.Add(Position{r.Topic, r.Partition, r.Offset}, pl)
				mu.Lock()
				acked++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return acked, firstErr
}

// EndOffsets returns the high watermark of every partition of topic.
func EndOffsets(ctx context.Context, brokers []string, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, fmt.Errorf("ledger: end offsets: %w", err)
	}
	defer cl.Close()
	return endOffsets(ctx, kadm.NewClient(cl), topic)
}

func endOffsets(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("ledger: list end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil && ferr == nil {
			ferr = fmt.Errorf("ledger: end offset of %s[%d]: %w", topic, o.Partition, o.Err)
		}
		out[o.Partition] = o.Offset
	})
	return out, ferr
}

// ReadLog reads every record of topic from its log start to its current end
// and decodes its payload.
func ReadLog(ctx context.Context, brokers []string, topic string) (map[PartOff]Payload, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, fmt.Errorf("ledger: read log: %w", err)
	}
	adm := kadm.NewClient(cl)
	ends, err := endOffsets(ctx, adm, topic)
	if err != nil {
		cl.Close()
		return nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	cl.Close()
	if err != nil {
		return nil, fmt.Errorf("ledger: list start offsets of %s: %w", topic, err)
	}
	pos := map[int32]int64{}
	starts.Each(func(o kadm.ListedOffset) { pos[o.Partition] = o.Offset })
	offsets := map[int32]kgo.Offset{}
	for p, end := range ends {
		if pos[p] < end {
			offsets[p] = kgo.NewOffset().At(pos[p])
		}
	}
	out := map[PartOff]Payload{}
	if len(offsets) == 0 {
		return out, nil
	}
	cl, err = kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return nil, fmt.Errorf("ledger: read log: %w", err)
	}
	defer cl.Close()
	done := func() bool {
		for p, end := range ends {
			if pos[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("ledger: read log of %s: %w (at %v of %v)", topic, err, pos, ends)
		}
		for _, fe := range fs.Errors() {
			return nil, fmt.Errorf("ledger: read log of %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
		}
		var derr error
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if r.Offset >= ends[r.Partition] {
				return
			}
			pl, err := Decode(r.Value)
			if err != nil && derr == nil {
				derr = fmt.Errorf("%s[%d]@%d: %w", topic, r.Partition, r.Offset, err)
			}
			out[PartOff{r.Partition, r.Offset}] = pl
		})
		if derr != nil {
			return nil, derr
		}
	}
	return maps.Clone(out), nil
}
