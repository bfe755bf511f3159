package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// Publishing outside loadnode, after a job's commits: its positions to a
// consumer group (GroupCommitter) and its error rows to a dead-letter
// topic (DeadLetters). Both run one goroutine each, take work through
// methods that never block, keep only counts and the last error for
// `job show`, and are never read back: the job's positions and error rows
// stay where the sink committed them.

const (
	publishTimeout  = 10 * time.Second
	publishRetryMin = 500 * time.Millisecond
	publishRetryMax = 30 * time.Second
	// maxQueuedLetters bounds the dead letters waiting in memory (the
	// dead-letter cluster down for long); more are dropped here, counted,
	// and produced after the next restart if the sink still keeps them.
	maxQueuedLetters = 100_000
)

// PublishCounts are what a publisher did since it was opened.
type PublishCounts struct {
	OK, Failed int64
	Pending    int64
	LastError  string
	LastOKMs   int64
}

// GroupCommitter commits a job's positions to a consumer group: the
// offsets Kafka's own tools (kafka-consumer-groups --describe, kadm Lag)
// compare with the log end. The group has no members; loadnode commits as
// an admin would (generation -1), so a group that some consumer actually
// joined refuses the commit (counted as a failure).
type GroupCommitter struct {
	adm    *kadm.Client
	topic  string
	group  string
	logger *slog.Logger
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	mu     struct {
		sync.Mutex
		latest map[int32]int64 // not yet committed; nil if none
		counts PublishCounts
	}
}

// NewGroupCommitter starts a committer of topic's positions to group, on
// c's admin connection. Close it when the job's source closes.
func (c *Cluster) NewGroupCommitter(topic, group string) *GroupCommitter {
	g := &GroupCommitter{adm: c.adm, topic: topic, group: group, logger: c.logger.With("group", group, "topic", topic),
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go g.run()
	return g
}

// Publish asks for positions to be committed soon; a later call replaces
// an earlier one not yet committed. It does not block.
func (g *GroupCommitter) Publish(positions map[int32]int64) {
	g.mu.Lock()
	g.mu.latest = maps.Clone(positions)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// Counts returns what the committer did so far.
func (g *GroupCommitter) Counts() PublishCounts {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mu.counts
}

func (g *GroupCommitter) run() {
	defer close(g.done)
	retry := time.Duration(0)
	for {
		if !wait(g.stop, g.wake, retry) {
			return
		}
		g.mu.Lock()
		pos := g.mu.latest
		g.mu.latest = nil
		g.mu.Unlock()
		if pos == nil {
			continue
		}
		if err := g.commit(pos); err != nil {
			g.mu.Lock()
			g.mu.counts.Failed++
			g.mu.counts.LastError = err.Error()
			if g.mu.latest == nil {
				g.mu.latest = pos // retry unless newer positions came
			}
			g.mu.Unlock()
			retry = min(max(2*retry, publishRetryMin), publishRetryMax)
			g.logger.Warn("kafka: commit to consumer group failed; the load goes on", "err", err, "retry_in", retry)
			continue
		}
		retry = 0
		g.mu.Lock()
		g.mu.counts.OK++
		g.mu.counts.LastOKMs = time.Now().UnixMilli()
		g.mu.Unlock()
	}
}

func (g *GroupCommitter) commit(pos map[int32]int64) error {
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	go func() {
		select {
		case <-g.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var os kadm.Offsets
	for p, o := range pos {
		os.Add(kadm.Offset{Topic: g.topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	resp, err := g.adm.CommitOffsets(ctx, g.group, os)
	if err != nil {
		return fmt.Errorf("kafka: commit offsets to group %s: %w", g.group, err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("kafka: commit offsets to group %s: %w", g.group, err)
	}
	return nil
}

// Close stops the committer; a commit in flight is abandoned.
func (g *GroupCommitter) Close() {
	g.once.Do(func() {
		close(g.stop)
		<-g.done
	})
}

// Letter is one error row to put on a dead-letter topic.
type Letter struct {
	// Index is the error row's number among the job's error rows (0-based,
	// in commit order).
	Index     int64
	Partition int32
	Offset    int64
	Reason    string
	Key       []byte
	Value     []byte
	// Replayed: rebuilt from the sink's stored row after a restart (Value
	// is the stored raw bytes, possibly cut; no Key).
	Replayed bool
}

// DeadLetterConfig says where and how a job's dead letters go.
type DeadLetterConfig struct {
	Topic string
	// Brokers and Properties name the dead-letter cluster.
	Brokers    []string
	Properties map[string]string
	// Job and Source name the job and its source ("kafka://orders") in
	// every letter's headers.
	Job, Source string
	Logger      *slog.Logger
}

// Header names of a dead letter.
const (
	HeaderJob       = "loadnode.job"
	HeaderSource    = "loadnode.source"
	HeaderPartition = "loadnode.partition"
	HeaderOffset    = "loadnode.offset"
	HeaderReason    = "loadnode.reason"
	HeaderReplayed  = "loadnode.replayed"
)

// DeadLetters produces a job's error rows to its dead-letter topic, at
// least once: a letter that fails is produced again (after a back-off)
// until it succeeds or the producer closes. Done counts the letters,
// oldest first, known to be on the topic; the job commits it, so that
// after a restart Resume produces the rest again.
type DeadLetters struct {
	cfg  DeadLetterConfig
	cl   *kgo.Client
	wake chan struct{}
	stop chan struct{}
	fin  chan struct{}
	once sync.Once
	mu   struct {
		sync.Mutex
		done   int64          // letters 0..done-1 are on the topic (or lost, counted)
		acked  map[int64]bool // acknowledged letters at or after done
		queue  []Letter       // to produce
		unfin  int64          // queued or in flight
		counts PublishCounts
		closed bool
	}
}

// NewDeadLetters validates cfg and opens a producer. It does not dial.
func NewDeadLetters(cfg DeadLetterConfig) (*DeadLetters, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = cfg.Logger.With("error_topic", cfg.Topic)
	if cfg.Topic == "" || len(cfg.Brokers) == 0 {
		return nil, &sources.ConfigError{Field: "error_topic", Err: errors.New("kafka: a dead-letter topic needs a topic and brokers")}
	}
	pc, err := parseProperties(cfg.Properties)
	if err != nil {
		var ce *sources.ConfigError
		if errors.As(err, &ce) {
			ce.Field = "error_topic_" + strings.TrimPrefix(ce.Field, "kafka.")
		}
		return nil, err
	}
	opts := append(pc.opts(cfg.Brokers),
		kgo.WithLogger(kgoLogger{cfg.Logger}),
		kgo.DefaultProduceTopic(cfg.Topic),
		// Not idempotent: an idempotent producer cannot fail a record whose
		// first attempt may have been written, so with the cluster down its
		// records would wait forever, uncounted. Letters are at least once
		// anyway.
		kgo.DisableIdempotentWrite(),
		kgo.RecordDeliveryTimeout(publishTimeout),
		kgo.ProducerLinger(5*time.Millisecond),
		// A missing dead-letter topic is created where the cluster allows
		// it (auto.create.topics.enable), as Kafka Connect's DLQ is;
		// elsewhere the failures say UNKNOWN_TOPIC_OR_PARTITION.
		kgo.AllowAutoTopicCreation(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, &sources.ConfigError{Field: "error_topic_brokers", Err: fmt.Errorf("kafka: dead-letter producer: %w", err)}
	}
	d := &DeadLetters{cfg: cfg, cl: cl, wake: make(chan struct{}, 1), stop: make(chan struct{}), fin: make(chan struct{})}
	d.mu.acked = map[int64]bool{}
	go d.run()
	return d, nil
}

// Resume starts the producer from the job's durable state: done of its
// total error rows are on the topic; stored returns the newest n stored
// error rows, oldest first. The rows after done are produced again; those
// the sink no longer keeps are counted as failures and skipped.
func (d *DeadLetters) Resume(total, done int64, stored func(n int) ([]Letter, error)) {
	d.mu.Lock()
	d.mu.done = max(d.mu.done, done)
	d.mu.Unlock()
	if total <= done {
		return
	}
	go func() {
		n := total - done
		rows, err := stored(int(min(n, 1<<30)))
		if err != nil {
			d.cfg.Logger.Warn("kafka: dead letters: cannot read stored error rows to produce again", "err", err, "rows", n)
			d.mu.Lock()
			d.mu.counts.Failed++
			d.mu.counts.LastError = err.Error()
			d.mu.Unlock()
			return
		}
		lost := n - int64(len(rows))
		if lost > 0 {
			d.cfg.Logger.Warn("kafka: dead letters: error rows committed before the restart are no longer kept; they are skipped",
				"rows", lost)
		}
		letters := make([]Letter, len(rows))
		for i := range rows {
			letters[i] = rows[i]
			letters[i].Index = total - int64(len(rows)) + int64(i)
			letters[i].Replayed = true
		}
		d.mu.Lock()
		if lost > 0 {
			d.mu.counts.Failed += lost
			d.mu.counts.LastError = fmt.Sprintf("%d error rows committed before the restart are no longer kept (max_error_rows_kept)", lost)
			for i := done; i < done+lost; i++ {
				d.mu.acked[i] = true
			}
			d.advance()
		}
		d.mu.Unlock()
		d.Add(letters)
	}()
}

// Add queues letters for producing. It does not block.
func (d *DeadLetters) Add(letters []Letter) {
	if len(letters) == 0 {
		return
	}
	d.mu.Lock()
	room := maxQueuedLetters - len(d.mu.queue)
	if room < len(letters) {
		dropped := len(letters) - max(room, 0)
		d.mu.counts.Failed += int64(dropped)
		d.mu.counts.LastError = fmt.Sprintf("%d dead letters dropped: more than %d waiting (they are produced after a restart if still kept)", dropped, maxQueuedLetters)
		letters = letters[:max(room, 0)]
	}
	d.mu.queue = append(d.mu.queue, letters...)
	d.mu.unfin += int64(len(letters))
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// advance moves done over the acknowledged prefix.
// REQUIRES: d.mu is held.
func (d *DeadLetters) advance() {
	for d.mu.acked[d.mu.done] {
		delete(d.mu.acked, d.mu.done)
		d.mu.done++
	}
}

// Done is how many of the job's error rows, oldest first, are known to be
// on the topic.
func (d *DeadLetters) Done() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.done
}

// Counts returns what the producer did so far; Pending is the letters
// queued or in flight.
func (d *DeadLetters) Counts() PublishCounts {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.mu.counts
	c.Pending = d.mu.unfin
	return c
}

func (d *DeadLetters) record(l Letter) *kgo.Record {
	r := &kgo.Record{Key: l.Key, Value: l.Value, Headers: []kgo.RecordHeader{
		{Key: HeaderJob, Value: []byte(d.cfg.Job)},
		{Key: HeaderSource, Value: []byte(d.cfg.Source)},
		{Key: HeaderPartition, Value: []byte(strconv.FormatInt(int64(l.Partition), 10))},
		{Key: HeaderOffset, Value: []byte(strconv.FormatInt(l.Offset, 10))},
		{Key: HeaderReason, Value: []byte(l.Reason)},
	}}
	if l.Replayed {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: HeaderReplayed, Value: []byte("true")})
	}
	return r
}

func (d *DeadLetters) run() {
	defer close(d.fin)
	retry := time.Duration(0)
	for {
		if !wait(d.stop, d.wake, retry) {
			return
		}
		d.mu.Lock()
		batch := d.mu.queue
		d.mu.queue = nil
		d.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		var wg sync.WaitGroup
		var failed []Letter
		var fmu sync.Mutex
		for _, l := range batch {
			wg.Add(1)
			d.cl.Produce(context.Background(), d.record(l), func(_ *kgo.Record, err error) {
				defer wg.Done()
				d.mu.Lock()
				defer d.mu.Unlock()
				if d.mu.closed {
					return
				}
				if err != nil {
					d.mu.counts.Failed++
					d.mu.counts.LastError = err.Error()
					fmu.Lock()
					failed = append(failed, l)
					fmu.Unlock()
					return
				}
				d.mu.counts.OK++
				d.mu.counts.LastOKMs = time.Now().UnixMilli()
				d.mu.unfin--
				d.mu.acked[l.Index] = true
				d.advance()
			})
		}
		// Wait for this round's answers (each within the delivery
		// timeout), unless the producer closes.
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-d.stop:
			return
		}
		if len(failed) == 0 {
			retry = 0
			continue
		}
		retry = min(max(2*retry, publishRetryMin), publishRetryMax)
		d.cfg.Logger.Warn("kafka: dead letters not produced; retrying, the load goes on", "letters", len(failed), "retry_in", retry, "err", d.Counts().LastError)
		d.mu.Lock()
		d.mu.queue = append(failed, d.mu.queue...)
		d.mu.Unlock()
	}
}

// wait waits for wake, or retry when it is > 0; false when stop closed.
func wait(stop <-chan struct{}, wake <-chan struct{}, retry time.Duration) bool {
	var timer <-chan time.Time
	if retry > 0 {
		t := time.NewTimer(retry)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-stop:
		return false
	case <-wake:
	case <-timer:
	}
	return true
}

// Close stops the producer; letters not yet produced are abandoned (they
// are after done, so a restart produces them again if the sink keeps them).
func (d *DeadLetters) Close() {
	d.once.Do(func() {
		d.mu.Lock()
		d.mu.closed = true
		d.mu.Unlock()
		close(d.stop)
		d.cl.Close() // fails what is buffered: a Produce blocked on a full buffer returns
		<-d.fin
	})
}
