package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
)

// The freshness scenario: records produced at a steady rate, each carrying
// its produce time, and the time until the batch holding each is committed.
//
// A record's latency is the commit time of the first commit seen with its
// partition's committed offset past it minus its produce time (the
// produced_at column, also the Kafka record timestamp). Commits are
// watched with the node's light read of a job's committed positions
// (client.WaitCommits), a long poll the node answers from what the job
// published after its commit, off the job's mailbox; each answer carries
// every commit since the watcher's last answer (the node keeps the last
// api.MaxCommittedHistory), each with its own time on the node's clock
// (the node runs in this process) and its positions, so a commit made
// while the watcher is between two long polls is dated exactly. Only if
// an answer's history is full could older commits be dated late, to the
// oldest one kept; the answers with a full history are counted and
// printed ("full"), as is the watcher's blind window between polls
// ("resolution", which no longer shows in the latencies).

const (
	// freshnessWait bounds one long poll of the committed positions.
	freshnessWait = time.Second
	// freshnessTick is the producer's pacing period: each tick produces the
	// records due by then at the cell's rate.
	freshnessTick = time.Millisecond
	// freshnessLowRate is the scenario's low rate, records/s.
	freshnessLowRate = 1000
	// freshnessWarmup is produced before the measured window and not
	// measured (the tasks' first fetches).
	freshnessWarmup = time.Second
	// freshnessMaxRecords bounds the records of one cell (the produce
	// times are kept in memory).
	freshnessMaxRecords = 50_000_000
	// freshnessTargetSlack is the target's slack over max_batch_interval.
	freshnessTargetSlack = 50 * time.Millisecond
)

// freshnessIntervals are the max_batch_interval settings measured when
// Options.FreshnessIntervals is empty: the spec default and the least a
// spec allows.
func freshnessIntervals() []time.Duration {
	return []time.Duration{config.DefaultMaxBatchInterval, config.MinMaxBatchInterval}
}

// freshnessFormat is the format of the freshness topic: the first of o's
// formats that is json or csv.
func (o Options) freshnessFormat() string {
	for _, f := range o.Formats {
		if f == "json" || f == "csv" {
			return f
		}
	}
	return "json"
}

// freshnessPartitions is the partition count of the freshness topic: 8 when
// o measures it, else o's first.
func (o Options) freshnessPartitions() int {
	if slices.Contains(o.Partitions, 8) || len(o.Partitions) == 0 {
		return 8
	}
	return o.Partitions[0]
}

// cellDuration is the measured window of a cell with max_batch_interval
// iv: at least two intervals, so that several batches fall in it.
func (o Options) cellDuration(iv time.Duration) time.Duration {
	return max(o.FreshnessDuration, 2*iv)
}

// runFreshness runs the freshness scenario. maxRate is the e2e records/s of
// the same format and partitions measured earlier in this run, or 0: then
// it is measured here first.
func runFreshness(ctx context.Context, o Options, brokers []string, maxRate float64, logf func(string, ...any)) (*Freshness, error) {
	format, parts := o.freshnessFormat(), o.freshnessPartitions()
	f := &Freshness{Format: format, Partitions: parts, WaitMs: ms(freshnessWait), MaxFrom: "the e2e scenario of this run"}
	if maxRate <= 0 {
		f.MaxFrom = "an e2e run of this scenario (one after a warm-up)"
		topic := topicName(format, parts, o.Records, o.RecordBytes)
		ends, err := prepareTopic(ctx, brokers, topic, format, parts, o.Records, o.RecordBytes)
		if err != nil {
			return f, err
		}
		ss, err := repeat(1, func(run int) (sample, error) { return e2eRun(ctx, o, brokers, topic, format, ends, run) })
		if err != nil {
			return f, err
		}
		maxRate = float64(ss[0].records) / ss[0].elapsed.Seconds()
	}
	f.MaxRecordsPerSec = maxRate
	half := int(maxRate / 2)
	rates := []int{half, freshnessLowRate}
	logf("freshness: %s p%d, max %.0f records/s (%s): rates %d and %d records/s", format, parts, maxRate, f.MaxFrom, half, freshnessLowRate)
	intervals := o.FreshnessIntervals
	if len(intervals) == 0 {
		intervals = freshnessIntervals()
	}
	for _, rate := range rates {
		for _, iv := range intervals {
			if ctx.Err() != nil {
				return f, ctx.Err()
			}
			c, err := freshnessCell(ctx, o, brokers, format, parts, rate, iv)
			f.Cells = append(f.Cells, c)
			if err != nil {
				c.Error = err.Error()
				return f, err
			}
			logf("freshness: %d records/s, max_batch_interval %v: p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d records at %.0f/s (observer resolution p99 %.2f ms; produce to ack p50 %.1f ms, p99 %.1f ms; ack to commit p99 %.1f ms)",
				rate, iv, c.P50Ms, c.P99Ms, c.MaxMs, c.Records, c.ProducedPerSec, c.ResolutionP99Ms, c.AckP50Ms, c.AckP99Ms, c.SinceAckP99Ms)
		}
	}
	return f, nil
}

// seen is a committed offset of a partition and the time of the first
// commit seen with it.
type seen struct {
	offset int64
	at     time.Time
}

// freshnessCell measures one rate and max_batch_interval on a new topic and
// a new node.
func freshnessCell(ctx context.Context, o Options, brokers []string, format string, parts, rate int, iv time.Duration) (*FreshnessCell, error) {
	dur := o.cellDuration(iv)
	c := &FreshnessCell{RatePerSec: rate, IntervalMs: iv.Milliseconds(), Seconds: dur.Seconds()}
	if rate < 1 {
		return c, fmt.Errorf("bench: freshness: rate %d records/s (the measured maximum is too low)", rate)
	}
	if total := float64(rate) * (dur + freshnessWarmup).Seconds(); total > freshnessMaxRecords {
		return c, fmt.Errorf("bench: freshness: %d records/s for %v is %.0f records; at most %d", rate, dur, total, freshnessMaxRecords)
	}
	topic := fmt.Sprintf("loadnode_bench_fresh_%s_p%d_r%d_i%d_%d", format, parts, rate, iv.Milliseconds(), time.Now().UnixNano())
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return c, fmt.Errorf("bench: freshness producer: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, int32(parts), 1, nil, topic); err != nil {
		return c, fmt.Errorf("bench: create topic %s: %w", topic, err)
	}
	defer func() { _, _ = adm.DeleteTopic(context.WithoutCancel(ctx), topic) }()

	n, cleanup, err := startNode(ctx, o, "fresh")
	if err != nil {
		return c, err
	}
	defer cleanup()
	lc, err := client.Dial(ctx, n.Addr())
	if err != nil {
		return c, fmt.Errorf("bench: dial: %w", err)
	}
	defer lc.Close()

	p, err := newFreshProducer(ctx, cl, topic, format, parts, o.RecordBytes)
	if err != nil {
		return c, err
	}
	// One record per partition first: the job commits them before the
	// paced records start, so that its tasks are reading.
	if err := p.produceN(ctx, parts); err != nil {
		return c, err
	}
	if err := p.flush(); err != nil {
		return c, fmt.Errorf("bench: freshness produce: %w", err)
	}
	name := fmt.Sprintf("fresh_%s_r%d_i%d", format, rate, iv.Milliseconds())
	spec := o.jobSpec(name, name+"_t", format, topic, brokers)
	spec.MaxBatchIntervalMs = iv.Milliseconds()
	spec.Table.Columns = append(spec.Table.Columns, &api.Column{Name: "produced_at", Type: api.ColumnType_INT64})
	if len(spec.Jsonpaths) > 0 {
		spec.Jsonpaths = append(spec.Jsonpaths, "$.produced_at")
	}
	if _, err := lc.CreateJob(ctx, spec); err != nil {
		return c, fmt.Errorf("bench: create %s: %w", name, err)
	}
	if _, _, _, err := watchCommitted(ctx, lc, name, p.ends(), 30*time.Second+2*iv, nil); err != nil {
		return c, err
	}

	// The poller runs until the last record is committed; the producer
	// meanwhile produces at rate for the warm-up and the measured window.
	type observed struct {
		marks map[int32][]seen
		gaps  []time.Duration
		full  int
		err   error
	}
	stopPoll := make(chan map[int32]int64, 1)
	pollDone := make(chan observed, 1)
	go func() {
		marks, gaps, full, err := watchCommitted(ctx, lc, name, nil, 30*time.Second+3*iv, stopPoll)
		pollDone <- observed{marks, gaps, full, err}
	}()
	start := time.Now()
	measureFrom := start.Add(freshnessWarmup)
	cpu := startCPU(o.brokerPID)
	perr := p.pace(ctx, rate, start, measureFrom.Add(dur))
	c.BenchCores, c.BrokerCores = cpu.cores()
	if perr == nil {
		perr = p.flush()
	}
	if perr != nil {
		perr = fmt.Errorf("bench: freshness produce: %w", perr)
	}
	ends := p.ends()
	stopPoll <- ends
	obs := <-pollDone
	if err := errors.Join(perr, obs.err); err != nil {
		return c, err
	}
	// Exactly once: the loaded-rows statistic is committed with the rows.
	info, err := lc.ShowJob(ctx, name)
	if err != nil {
		return c, fmt.Errorf("bench: show %s: %w", name, err)
	}
	if got, want := info.GetStats().GetLoadedRows(), sum(ends); got != want || info.GetStats().GetErrorRows() != 0 {
		return c, fmt.Errorf("bench: job %s loaded %d rows (%d error rows) of %d records", name, got, info.GetStats().GetErrorRows(), want)
	}
	c.Batches = info.GetStats().GetCommittedBatches()
	if sec, cnt, err := commitTimes(ctx, n.AdminAddr(), name); err != nil {
		return c, err
	} else if cnt > 0 {
		c.Commits, c.CommitMeanMs = int64(cnt), sec*1e3/cnt
	}
	lat, acks, sinceAck := p.latencies(obs.marks, measureFrom.UnixNano())
	if len(lat) == 0 {
		return c, fmt.Errorf("bench: freshness: no record measured")
	}
	slices.Sort(lat)
	slices.Sort(acks)
	slices.Sort(sinceAck)
	c.AckP50Ms, c.AckP99Ms, c.SinceAckP99Ms = ms(percentile(acks, 50)), ms(percentile(acks, 99)), ms(percentile(sinceAck, 99))
	slices.Sort(obs.gaps)
	c.Records = int64(len(lat))
	c.ProducedPerSec = float64(len(lat)) / dur.Seconds()
	c.P50Ms, c.P99Ms, c.MaxMs = ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(lat[len(lat)-1])
	c.Polls, c.HistoryFull = len(obs.gaps), obs.full
	c.ResolutionP50Ms, c.ResolutionP99Ms, c.ResolutionMaxMs = ms(percentile(obs.gaps, 50)), ms(percentile(obs.gaps, 99)), ms(obs.gaps[len(obs.gaps)-1])
	return c, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// watchCommitted watches job name's commits with long polls of its
// committed positions and their history and returns, per partition, each
// committed offset with the time of the first commit with it (the
// commit's own time), every answer's resolution: the watcher's blind
// window after it, from the answer's commit (or its request, if later) to
// the next request, plus the answer's delivery again for the next
// request's way to the node, and how many answers had a full history
// (commits older than it could be dated late). It returns once
// every partition of ends is committed to its end; with ends nil, it
// first waits for ends on stop. The wait is bounded by within from the
// time ends is known.
func watchCommitted(ctx context.Context, lc *client.Client, name string, ends map[int32]int64, within time.Duration, stop <-chan map[int32]int64) (map[int32][]seen, []time.Duration, int, error) {
	var late <-chan time.Time
	if ends != nil {
		late = time.After(within)
	}
	marks := map[int32][]seen{}
	var gaps []time.Duration
	full := 0
	var prevFrom time.Time         // the previous answer's commit or request, the later
	var prevDelivery time.Duration // the previous answer's way back
	after := int64(-1)
	for {
		sent := time.Now()
		if !prevFrom.IsZero() {
			gaps = append(gaps, sent.Sub(prevFrom)+prevDelivery)
		}
		c, err := lc.WaitCommits(ctx, name, after, freshnessWait)
		got := time.Now()
		if err != nil {
			return nil, nil, 0, fmt.Errorf("bench: committed %s: %w", name, err)
		}
		at := time.Unix(0, c.GetLastCommitUnixNs())
		prevFrom = sent
		if at.After(sent) {
			prevFrom = at
		}
		prevDelivery = got.Sub(prevFrom)
		after = c.GetCommittedBatches()
		note := func(ps []*api.CommittedPosition, at time.Time) {
			for _, pi := range ps {
				p, off := pi.GetPartition(), pi.GetCommittedOffset()
				if ms := marks[p]; len(ms) == 0 || ms[len(ms)-1].offset < off {
					marks[p] = append(ms, seen{offset: off, at: at})
				}
			}
		}
		if len(c.GetCommits()) >= api.MaxCommittedHistory {
			full++
		}
		for _, m := range c.GetCommits() { // oldest first, each at its own time
			note(m.GetPositions(), time.Unix(0, m.GetCommitUnixNs()))
		}
		note(c.GetPositions(), at)
		if ends != nil && committedTo(c, ends) {
			return marks, gaps, full, nil
		}
		if st := c.GetState(); st == api.JobState_PAUSED || st == api.JobState_CANCELLED {
			return nil, nil, 0, fmt.Errorf("bench: job %s is %s (%s)", name, st, c.GetReason())
		}
		select {
		case <-ctx.Done():
			return nil, nil, 0, fmt.Errorf("bench: job %s: not committed to the end: %w", name, ctx.Err())
		case <-late:
			return nil, nil, 0, fmt.Errorf("bench: job %s: not committed to the end within %v", name, within)
		case e := <-stop:
			ends, stop, late = e, nil, time.After(within)
		default:
		}
	}
}

// committedTo reports whether every partition of ends is committed to its
// end in c.
func committedTo(c *api.JobCommitted, ends map[int32]int64) bool {
	at := make(map[int32]int64, len(c.GetPositions()))
	for _, p := range c.GetPositions() {
		at[p.GetPartition()] = p.GetCommittedOffset()
	}
	for p, end := range ends {
		if at[p] < end {
			return false
		}
	}
	return true
}

// Freshness is the freshness scenario's result.
type Freshness struct {
	Format     string `json:"format"`
	Partitions int    `json:"partitions"`
	// MaxRecordsPerSec is the end-to-end rate of the same format and
	// partitions in this run; the high rate is half of it. MaxFrom says
	// which run measured it.
	MaxRecordsPerSec float64 `json:"max_records_per_sec"`
	MaxFrom          string  `json:"max_from"`
	// WaitMs bounds each long poll of the job's committed positions that
	// sees its commits (client.WaitCommitted).
	WaitMs float64          `json:"wait_ms"`
	Cells  []*FreshnessCell `json:"cells"`
}

// FreshnessCell is one rate and max_batch_interval.
type FreshnessCell struct {
	RatePerSec int   `json:"rate_per_sec"`
	IntervalMs int64 `json:"max_batch_interval_ms"`
	// Seconds is the measured window (after a warm-up of
	// freshnessWarmup); Records the records produced in it, at
	// ProducedPerSec.
	Seconds        float64 `json:"seconds"`
	Records        int64   `json:"records"`
	ProducedPerSec float64 `json:"produced_per_sec"`
	// P50Ms, P99Ms and MaxMs are the produce-to-committed latencies.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// AckP50Ms and AckP99Ms are the records' times from produce to the
	// broker's acknowledgement (the producer's part: large when this
	// machine cannot produce the rate while it loads), SinceAckP99Ms the
	// p99 of the time from that acknowledgement to the commit.
	AckP50Ms      float64 `json:"ack_p50_ms"`
	AckP99Ms      float64 `json:"ack_p99_ms"`
	SinceAckP99Ms float64 `json:"since_ack_p99_ms"`
	// Polls is the number of long polls; Resolution* the watcher's blind
	// window after each (watchCommitted): the commits made in it are dated
	// by their own times from the answer's history, unless the answer's
	// history was full (HistoryFull answers), when older commits could be
	// dated late by up to that window.
	Polls       int `json:"polls"`
	HistoryFull int `json:"history_full"`
	// BenchCores is the CPU of the bench process (node, producer and
	// poller) over the producing, in cores; BrokerCores the kfake child's
	// (0 with --brokers). Next to the machine's CPUs they show whether the
	// rate saturates the machine.
	BenchCores float64 `json:"bench_cores"`
	// Batches are the job's committed batches, Commits its synced group
	// commits (a group holds the batches that waited for the one before),
	// CommitMeanMs their mean time (the node's
	// loadnode_batch_commit_seconds); warm-up included.
	Batches         int64   `json:"batches"`
	Commits         int64   `json:"commits"`
	CommitMeanMs    float64 `json:"commit_mean_ms"`
	BrokerCores     float64 `json:"broker_cores,omitempty"`
	ResolutionP50Ms float64 `json:"resolution_p50_ms"`
	ResolutionP99Ms float64 `json:"resolution_p99_ms"`
	ResolutionMaxMs float64 `json:"resolution_max_ms"`
	Error           string  `json:"error,omitempty"`
}

// freshnessTargets are issue 29's freshness targets: p99 at most
// max_batch_interval + 50 ms, every cell.
func freshnessTargets(f *Freshness) []Target {
	if f == nil {
		return nil
	}
	var out []Target
	for _, c := range f.Cells {
		if c.Error != "" {
			continue
		}
		want := float64(c.IntervalMs) + ms(freshnessTargetSlack)
		out = append(out, Target{Name: fmt.Sprintf("freshness p99, %d records/s, max_batch_interval %v", c.RatePerSec, time.Duration(c.IntervalMs)*time.Millisecond),
			Want: fmt.Sprintf("<= %.0f (interval + 50 ms)", want), Measured: c.P99Ms, Unit: "ms", Met: c.P99Ms <= want})
	}
	return out
}

// writeFreshnessText writes the freshness table.
func writeFreshnessText(w io.Writer, f *Freshness) error {
	fmt.Fprintf(w, "freshness (%s, %d partitions): produce-to-committed latency at a steady rate; max %.0f records/s from %s\n",
		f.Format, f.Partitions, f.MaxRecordsPerSec, f.MaxFrom)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "records/s\tmax_batch_interval\tseconds\trecords\tp50 ms\tp99 ms\tmax ms\tack p50 ms\tack p99 ms\tack-commit p99 ms\tpolls\tfull\tresolution p50 ms\tp99 ms\tmax ms\tbench cores\tbroker cores\tbatches\tcommits\tcommit ms\t")
	for _, c := range f.Cells {
		iv := time.Duration(c.IntervalMs) * time.Millisecond
		if c.Error != "" {
			fmt.Fprintf(tw, "%d\t%v\tfailed\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", c.RatePerSec, iv)
			continue
		}
		fmt.Fprintf(tw, "%d\t%v\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%d\t%d\t%.1f\t\n", c.RatePerSec, iv, c.Seconds, c.Records,
			c.P50Ms, c.P99Ms, c.MaxMs, c.AckP50Ms, c.AckP99Ms, c.SinceAckP99Ms, c.Polls, c.HistoryFull, c.ResolutionP50Ms, c.ResolutionP99Ms, c.ResolutionMaxMs, c.BenchCores, numOrDash(c.BrokerCores, "%.2f"),
			c.Batches, c.Commits, c.CommitMeanMs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  a record's latency = the node's time of the first commit with its offset committed - its produced_at; each commit dated by its own time (long polls of the job's committed positions with their history);")
	fmt.Fprintf(w, "  full = answers whose history was full (older commits could be dated late by up to the resolution, the watcher's blind window after each answer); the first %v of each cell is a warm-up, not measured;\n", freshnessWarmup)
	fmt.Fprintln(w, "  ack = produce to the broker's acknowledgement (the producer's part of a latency; large when the machine cannot produce the rate while loading), ack-commit = from it to the commit;")
	fmt.Fprintln(w, "  bench cores = CPU of this process (node, producer, poller) while producing, broker cores = the kfake child's, next to the machine's CPUs;")
	fmt.Fprintln(w, "  batches = the job's committed batches, commits = its synced group commits and commit ms their mean (warm-up included).")
	fmt.Fprintln(w)
	return nil
}

// e2eRate is the records/s of the e2e row of format and partitions in r,
// or 0.
func e2eRate(r *Results, format string, parts int) float64 {
	for _, t := range r.Throughput {
		if t.Scenario == ScenarioE2E && t.Format == format && t.Partitions == parts && t.Error == "" {
			return t.RecordsPerSec
		}
	}
	return 0
}

// cpuMeter measures this process's CPU and the broker child's.
type cpuMeter struct {
	t0             time.Time
	self0, broker0 time.Duration
	brokerPID      int
}

func startCPU(brokerPID int) cpuMeter {
	m := cpuMeter{t0: time.Now(), self0: selfCPU(), brokerPID: brokerPID}
	if brokerPID > 0 {
		m.broker0, _ = procCPU(brokerPID)
	}
	return m
}

// cores are the CPU seconds per second since start of this process and of
// the broker.
func (m cpuMeter) cores() (self, broker float64) {
	el := time.Since(m.t0).Seconds()
	self = (selfCPU() - m.self0).Seconds() / el
	if m.brokerPID > 0 {
		if b, err := procCPU(m.brokerPID); err == nil {
			broker = (b - m.broker0).Seconds() / el
		}
	}
	return self, broker
}

// commitTimes reads job's loadnode_batch_commit_seconds sum and count from
// the node's /metrics at addr.
func commitTimes(ctx context.Context, addr, job string) (sec, n float64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: metrics: %w", err)
	}
	defer resp.Body.Close()
	sumP := fmt.Sprintf("loadnode_batch_commit_seconds_sum{job=%q} ", job)
	countP := fmt.Sprintf("loadnode_batch_commit_seconds_count{job=%q} ", job)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sumP); ok {
			sec, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
		} else if v, ok := strings.CutPrefix(sc.Text(), countP); ok {
			n, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("bench: metrics: %w", err)
		}
	}
	return sec, n, sc.Err()
}
