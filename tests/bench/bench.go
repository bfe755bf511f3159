package bench

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Run runs the scenarios of o and returns what they measured. A scenario that
// fails is recorded in Results.Errors and the others still run; the error
// returned is for what stops the whole run (bad options, no broker).
func Run(ctx context.Context, o Options) (*Results, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	if o.has(ScenarioE2E) && !o.has(ScenarioCeiling) {
		// Every e2e row carries its ratio to the ceiling of the same run.
		o.Scenarios = append([]string{ScenarioCeiling}, o.Scenarios...)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res := &Results{
		Started: time.Now(),
		Host: Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
			CgoEnabled: cgoEnabled()},
		Settings: Settings{Quick: o.Quick, Records: o.Records, RecordBytes: o.RecordBytes, Runs: o.Runs,
			BatchRows: o.BatchRows, BatchIntervalMs: o.BatchInterval.Milliseconds(), Tasks: o.Tasks,
			Creates: o.Creates, ScaleJobs: o.ScaleJobs, Scenarios: o.Scenarios},
	}
	defer func() { res.Seconds = time.Since(res.Started).Seconds() }()
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.Log, "bench: %s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
	fail := func(err error) {
		logf("error: %v", err)
		res.Errors = append(res.Errors, err.Error())
	}

	brokers := o.Brokers
	if len(brokers) == 0 {
		k, addr, err := startKfake(ctx, o.Binary, o.Log)
		if err != nil {
			return res, err
		}
		defer func() { _ = k.stop(10 * time.Second) }()
		brokers = []string{addr}
		o.brokerPID = k.pid()
		res.Settings.Broker = "loadnode kfake child process at " + addr
		logf("kfake broker at %s (pid %d)", addr, k.pid())
	} else {
		res.Settings.Broker = strings.Join(brokers, ",")
	}
	if slices.Contains(o.Formats, "avro") && (o.has(ScenarioCeiling) || o.has(ScenarioKcat) || o.has(ScenarioE2E)) {
		reg, err := startRegistry()
		if err != nil {
			return res, err
		}
		defer reg.Close()
		o.registryURL = reg.URL()
		logf("schema registry (srfake) at %s", reg.URL())
	}
	if o.has(ScenarioCreate) || o.has(ScenarioScale) {
		if _, err := prepareTopic(ctx, brokers, idleTopic, "json", 1, 0, o.RecordBytes); err != nil {
			return res, err
		}
	}

	kcat, kcatErr := "", error(nil)
	if o.has(ScenarioKcat) {
		if kcat, kcatErr = kcatPath(); kcatErr == nil {
			res.Settings.Kcat = kcatVersion(ctx, kcat)
		} else {
			logf("kcat: skipped: %v", kcatErr)
		}
	}

	// 1 and 2: ceiling (and kcat) and end to end, side by side per topic.
	if o.has(ScenarioCeiling) || o.has(ScenarioKcat) || o.has(ScenarioE2E) {
		for _, format := range o.Formats {
			for _, parts := range o.Partitions {
				if ctx.Err() != nil {
					break
				}
				topic := topicName(format, parts, o.Records, o.RecordBytes)
				logf("topic %s: producing %d records", topic, o.Records)
				ends, err := prepareTopic(ctx, brokers, topic, format, parts, o.Records, o.RecordBytes)
				if err != nil {
					fail(err)
					continue
				}
				ceil := &Throughput{Scenario: ScenarioCeiling, Format: format, Partitions: parts, Topic: topic, Records: sum(ends)}
				if o.has(ScenarioCeiling) {
					res.Throughput = append(res.Throughput, ceil)
					ss, err := repeat(o.Runs, func(int) (sample, error) { return ceilingRun(ctx, brokers, topic, ends, o.brokerPID) })
					if err != nil {
						ceil.Error = err.Error()
						fail(err)
					} else {
						summarize(ceil, ss)
						logf("ceiling  %s p%-2d %10.0f records/s", format, parts, ceil.RecordsPerSec)
					}
				}
				kc := &Throughput{Scenario: ScenarioKcat, Format: format, Partitions: parts, Topic: topic, Records: sum(ends)}
				switch {
				case !o.has(ScenarioKcat):
				case kcatErr != nil:
					kc.Skipped = kcatErr.Error()
					res.Throughput = append(res.Throughput, kc)
				default:
					res.Throughput = append(res.Throughput, kc)
					ss, err := repeat(o.Runs, func(int) (sample, error) { return kcatRun(ctx, kcat, brokers, topic, ends) })
					if err != nil {
						kc.Error = err.Error()
						fail(err)
					} else {
						summarize(kc, ss)
						logf("kcat     %s p%-2d %10.0f records/s", format, parts, kc.RecordsPerSec)
					}
				}
				if !o.has(ScenarioE2E) {
					continue
				}
				e2e := &Throughput{Scenario: ScenarioE2E, Format: format, Partitions: parts, Topic: topic, Records: sum(ends)}
				res.Throughput = append(res.Throughput, e2e)
				ss, err := repeat(o.Runs, func(run int) (sample, error) {
					return e2eRun(ctx, o, brokers, topic, format, ends, run)
				})
				if err != nil {
					e2e.Error = err.Error()
					fail(err)
					continue
				}
				summarize(e2e, ss)
				if ceil.RecordsPerSec > 0 {
					r := e2e.RecordsPerSec / ceil.RecordsPerSec
					e2e.E2EToCeilingRatio = &r
				}
				if kc.RecordsPerSec > 0 {
					r := e2e.RecordsPerSec / kc.RecordsPerSec
					e2e.E2EToKcatRatio = &r
				}
				logf("loadnode %s p%-2d %10.0f records/s", format, parts, e2e.RecordsPerSec)
			}
		}
	}

	// 3: store ceiling, batches of the job's max_batch_rows.
	if o.has(ScenarioStore) && ctx.Err() == nil {
		st := &Throughput{Scenario: ScenarioStore, Format: "encoded", Records: int64(o.Records)}
		res.Throughput = append(res.Throughput, st)
		rows, err := encodeRows(o.Records, o.RecordBytes)
		if err == nil {
			var ss []sample
			ss, err = repeat(o.Runs, func(int) (sample, error) { return storeRun(rows, o.BatchRows) })
			if err == nil {
				summarize(st, ss)
				logf("store    %10.0f records/s", st.RecordsPerSec)
			}
		}
		if err != nil {
			st.Error = err.Error()
			fail(err)
		}
		for _, t := range res.Throughput {
			if t.Scenario == ScenarioE2E && st.RecordsPerSec > 0 && t.RecordsPerSec > 0 {
				r := t.RecordsPerSec / st.RecordsPerSec
				t.E2EToStoreRatio = &r
				if t.CommitRowsPerSec > 0 {
					c := t.CommitRowsPerSec / st.RecordsPerSec
					t.CommitToStoreRatio = &c
				}
			}
		}
	}

	// 3b: PostgreSQL: its ceiling and loadnode end to end, same server.
	if o.has(ScenarioPostgres) && ctx.Err() == nil {
		rs, err := runPostgres(ctx, o, brokers, logf)
		res.Throughput = append(res.Throughput, rs...)
		if err != nil {
			fail(err)
		}
	}

	// 4: create latency and throughput.
	if o.has(ScenarioCreate) && ctx.Err() == nil {
		c, err := runCreate(ctx, o, brokers, logf)
		if err != nil {
			fail(err)
		}
		res.Create = c
	}

	// 5: scale of idle jobs.
	if o.has(ScenarioScale) {
		for _, jobs := range o.ScaleJobs {
			if ctx.Err() != nil {
				fail(fmt.Errorf("bench: scale %d: %w", jobs, ctx.Err()))
				break
			}
			logf("scale: %d idle jobs", jobs)
			s, err := scaleRun(ctx, o, brokers, jobs)
			if err != nil {
				fail(err)
			}
			if s != nil {
				res.Scale = append(res.Scale, s)
				logf("scale: %d of %d created in %.1fs, %.1f KB RSS per job, restart %.2fs, all listed %.2fs (list %.2fs), all shown %.2fs",
					s.Created, jobs, s.CreateSeconds, s.RSSPerJobKB, s.RestartReadySeconds, s.RestartAllListedSeconds, s.ListSeconds, s.RestartAllShownSeconds)
			}
		}
	}
	// Freshness: latency at a steady rate (freshness.go).
	if o.has(ScenarioFreshness) && ctx.Err() == nil {
		f, err := runFreshness(ctx, o, brokers, e2eRate(res, o.freshnessFormat(), o.freshnessPartitions()), logf)
		if err != nil {
			fail(err)
		}
		res.Freshness = f
	}
	// 6: cluster: 3 members, a member SIGKILLed (cluster.go).
	if o.has(ScenarioCluster) && ctx.Err() == nil {
		c, err := runCluster(ctx, o, brokers, logf)
		if err != nil {
			fail(err)
		}
		res.Cluster = c
	}
	if err := ctx.Err(); err != nil {
		fail(fmt.Errorf("bench: run stopped early (timeout %v or a signal): %w", o.Timeout, err))
	}
	res.Targets = targets(res)
	return res, nil
}

// cgoEnabled is the CGO_ENABLED build setting of the running binary, or ""
// when its build info does not record it.
func cgoEnabled() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value
		}
	}
	return ""
}

// repeat runs f once as a discarded warm-up, then runs times.
func repeat(runs int, f func(run int) (sample, error)) ([]sample, error) {
	if _, err := f(0); err != nil {
		return nil, err
	}
	out := make([]sample, 0, runs)
	for i := 1; i <= runs; i++ {
		s, err := f(i)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func runCreate(ctx context.Context, o Options, brokers []string, logf func(string, ...any)) (*Create, error) {
	// Warm-up: a smaller run, discarded.
	if _, err := createRun(ctx, o, brokers, max(o.Creates/10, 16), 0); err != nil {
		return nil, err
	}
	var p50, p99, pb50, pb99, pg50, pg99, t1, t16, c1, c16, b1, b16, a1, a16 []float64
	for run := 1; run <= o.Runs; run++ {
		cs, err := createRun(ctx, o, brokers, o.Creates, run)
		if err != nil {
			return nil, err
		}
		seq, ping, tp1, tp16 := cs.seq, cs.ping, cs.tput1, cs.tput16
		c1, c16 = append(c1, cs.cpu1), append(c16, cs.cpu16)
		b1, b16 = append(b1, cs.brokerCPU1), append(b16, cs.brokerCPU16)
		a1, a16 = append(a1, cs.allocs1), append(a16, cs.allocs16)
		pb, err := pebbleCommits(o.Creates)
		if err != nil {
			return nil, err
		}
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		p50 = append(p50, ms(percentile(seq, 50)))
		p99 = append(p99, ms(percentile(seq, 99)))
		pb50 = append(pb50, ms(percentile(pb, 50)))
		pb99 = append(pb99, ms(percentile(pb, 99)))
		pg50 = append(pg50, ms(percentile(ping, 50)))
		pg99 = append(pg99, ms(percentile(ping, 99)))
		t1 = append(t1, tp1)
		t16 = append(t16, tp16)
		logf("create run %d: p50 %.2fms p99 %.2fms (pebble sync p99 %.2fms), %.0f/s with 1 client, %.0f/s with 16 (per create: CPU ms %.3f / %.3f, broker %.3f / %.3f, allocations %.0f / %.0f)",
			run, p50[len(p50)-1], p99[len(p99)-1], pb99[len(pb99)-1], tp1, tp16, cs.cpu1, cs.cpu16, cs.brokerCPU1, cs.brokerCPU16, cs.allocs1, cs.allocs16)
	}
	c := &Create{Jobs: o.Creates, Runs: o.Runs, CreateP50Ms: median(p50), CreateP99Ms: median(p99),
		PebbleSyncP50Ms: median(pb50), PebbleSyncP99Ms: median(pb99),
		PingP50Ms: median(pg50), PingP99Ms: median(pg99),
		CreatesPerSec1: median(t1), CreatesPerSec16: median(t16),
		CPUMsPerCreate1: median(c1), CPUMsPerCreate16: median(c16),
		BrokerCPUMsPerCreate1: median(b1), BrokerCPUMsPerCreate16: median(b16),
		AllocsPerCreate1: median(a1), AllocsPerCreate16: median(a16)}
	if c.PebbleSyncP99Ms > 0 {
		c.P99Ratio = c.CreateP99Ms / c.PebbleSyncP99Ms
	}
	if c.CreatesPerSec1 > 0 {
		c.ConcurrencyFactor = c.CreatesPerSec16 / c.CreatesPerSec1
	}
	return c, nil
}

// coresBound says, for e2e row t, the most records/s the machine's cores
// allow at the run's CPU per record (the node's and the broker's), over
// the ceiling's, and how busy the machine was: when it was busy, that is
// the bound of the e2e / ceiling ratio. Empty without the figures.
func coresBound(r *Results, t *Throughput) string {
	cpu := t.CPUSecPerMillion + t.BrokerCPUSecPerMillion
	if t.BrokerCPUSecPerMillion <= 0 || cpu <= 0 || t.CoresBusy <= 0 || r.Host.CPUs <= 0 || t.E2EToCeilingRatio == nil || *t.E2EToCeilingRatio <= 0 {
		return ""
	}
	most := float64(r.Host.CPUs) / cpu * 1e6
	ceiling := t.RecordsPerSec / *t.E2EToCeilingRatio
	return fmt.Sprintf("baseline: %d cores at %.2f + %.2f CPU s per million records (loadnode + broker) allow at most %.0f records/s, %.2f x the ceiling; the machine was %.2f cores busy",
		r.Host.CPUs, t.CPUSecPerMillion, t.BrokerCPUSecPerMillion, most, most/ceiling, t.CoresBusy)
}

// targets compares the results with the performance issue's targets
// (#29: e2e at least half the raw consumer at 0.9 CPU s per million
// records or less, PostgreSQL at 0.85 of its COPY ceiling, creates,
// freshness) and the earlier ones still printed (kcat, commit path, scale).
func targets(r *Results) []Target {
	var out []Target
	for _, t := range r.Throughput {
		if t.Scenario != ScenarioE2E || t.Partitions != 8 || t.E2EToCeilingRatio == nil {
			continue
		}
		out = append(out, Target{Name: fmt.Sprintf("e2e / ceiling, %s, 8 partitions", t.Format), Want: ">= 0.5",
			Measured: *t.E2EToCeilingRatio, Unit: "x", Met: *t.E2EToCeilingRatio >= 0.5, Note: coresBound(r, t)},
			Target{Name: fmt.Sprintf("e2e CPU s per million records, %s, 8 partitions", t.Format), Want: "<= 0.9",
				Measured: t.CPUSecPerMillion, Unit: "s", Met: t.CPUSecPerMillion > 0 && t.CPUSecPerMillion <= 0.9})
	}
	for _, t := range r.Throughput {
		if t.Scenario != ScenarioE2E || t.Partitions != 8 || t.E2EToKcatRatio == nil {
			continue
		}
		out = append(out, Target{Name: fmt.Sprintf("e2e faster than kcat, %s, 8 partitions", t.Format), Want: "> 1",
			Measured: *t.E2EToKcatRatio, Unit: "x", Met: *t.E2EToKcatRatio > 1})
	}
	for _, t := range r.Throughput {
		if t.Scenario == ScenarioKcat && t.Partitions == 8 && t.Skipped != "" {
			out = append(out, Target{Name: fmt.Sprintf("e2e faster than kcat, %s, 8 partitions", t.Format), Want: "> 1",
				Unit: "x", NotMeasured: true, Note: t.Skipped})
		}
	}
	for _, t := range r.Throughput {
		if t.Scenario != ScenarioE2E || t.Partitions != 8 || t.CommitToStoreRatio == nil {
			continue
		}
		out = append(out, Target{Name: fmt.Sprintf("commit path / store ceiling, %s, 8 partitions", t.Format), Want: ">= 0.7",
			Measured: *t.CommitToStoreRatio, Unit: "x", Met: *t.CommitToStoreRatio >= 0.7})
	}
	for _, t := range r.Throughput {
		if t.Scenario != scenarioPGE2E || t.PGToCeilingRatio == nil {
			continue
		}
		out = append(out, Target{Name: fmt.Sprintf("postgres e2e / postgres ceiling, %s, %d partitions", t.Format, t.Partitions), Want: ">= 0.85",
			Measured: *t.PGToCeilingRatio, Unit: "x", Met: *t.PGToCeilingRatio >= 0.85})
	}
	if c := r.Create; c != nil {
		out = append(out,
			Target{Name: "create p99 / bare synced commit p99", Want: "<= 2", Measured: c.P99Ratio, Unit: "x", Met: c.P99Ratio > 0 && c.P99Ratio <= 2},
			Target{Name: "creates/s 16 clients / 1 client", Want: ">= 3", Measured: c.ConcurrencyFactor, Unit: "x", Met: c.ConcurrencyFactor >= 3})
	}
	if i := slices.IndexFunc(r.Scale, func(s *Scale) bool { return s.Jobs == slices.Max(jobCounts(r.Scale)) }); i >= 0 {
		s := r.Scale[i]
		note := ""
		if s.Jobs < 100000 {
			note = fmt.Sprintf("measured at %d jobs; the target is for 100,000", s.Jobs)
		}
		if s.Created < s.Jobs {
			note = fmt.Sprintf("only %d of %d jobs created in time", s.Created, s.Jobs)
		}
		if !s.Reused {
			out = append(out, Target{Name: fmt.Sprintf("RSS per idle job (%d jobs)", s.Jobs), Want: "<= 16", Measured: s.RSSPerJobKB, Unit: "KB",
				Met: s.Created == s.Jobs && s.RSSPerJobKB <= 16, Note: note})
		}
		out = append(out,
			Target{Name: fmt.Sprintf("restart until the node serves every job (%d jobs)", s.Jobs), Want: "<= 5", Measured: s.RestartReadySeconds, Unit: "s",
				Met: s.Created == s.Jobs && s.RestartReadySeconds > 0 && s.RestartReadySeconds <= 5, Note: note},
			// The target: every job's status through bulk reads.
			// Every job's `job show` (one round trip each, the "all shown"
			// column) is what bulk reads replace; it is measured, not a
			// target.
			Target{Name: fmt.Sprintf("restart until a paged list gave every job's status (%d jobs)", s.Jobs), Want: "<= 5", Measured: s.RestartAllListedSeconds, Unit: "s",
				Met: s.Created == s.Jobs && s.Listed == s.Created && s.RestartAllListedSeconds <= 5, Note: note})
	}
	return append(out, freshnessTargets(r.Freshness)...)
}

func jobCounts(ss []*Scale) []int {
	out := make([]int, len(ss))
	for i, s := range ss {
		out[i] = s.Jobs
	}
	return out
}
