package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/tests/bench"
)

// benchCmd is `loadnode bench`: the benchmark harness of tests/bench.
type benchCmd struct {
	opts       bench.Options
	json       bool
	out        string
	chart      string
	cpuprofile string
}

func (m *Main) parseBench(args []string) (command, error) {
	var c benchCmd
	var brokers, scenarios, formats, partitions, scaleJobs string
	fs := m.newFlagSet("bench", "bench [--quick] [--json] [--brokers HOST:PORT,...] [--records N] [--runs N] [--scenarios LIST] [--out FILE] [--chart FILE]\n\n"+
		"Measures, in one run on the same data: the raw franz-go consumer ceiling,\n"+
		"a plain kcat consume (skipped when kcat is not on PATH),\n"+
		"loadnode end to end (json, csv and avro through a schema registry; 1, 8 and\n64 partitions), the Pebble store\n"+
		"ceiling, job create latency next to a bare synced Pebble commit, and the\n"+
		"scale of idle jobs, and a 3-member cluster (etcd, PostgreSQL) that loses a\n"+
		"member to SIGKILL. The broker is a `loadnode kfake` child process unless\n"+
		"--brokers is given. Progress goes to stderr. See BENCHMARKS.md.")
	fs.BoolVar(&c.opts.Quick, "quick", false, "small sizes (under 2 minutes on 2 cores)")
	fs.BoolVar(&c.json, "json", false, "print machine-readable JSON instead of the tables")
	fs.StringVar(&brokers, "brokers", "", "a real Kafka cluster `HOST:PORT,...` instead of a kfake child")
	fs.IntVar(&c.opts.Records, "records", 0, "records per topic `N` (default 1000000; quick 200000)")
	fs.IntVar(&c.opts.RecordBytes, "record-bytes", 0, "approximate record size in `bytes` (default 200)")
	fs.IntVar(&c.opts.Runs, "runs", 0, "measured runs `N` per scenario after a warm-up; the median is reported (default 3)")
	fs.StringVar(&scenarios, "scenarios", "", "comma-separated `LIST` of "+strings.Join(bench.AllScenarios, ",")+" (default all but cluster)")
	fs.StringVar(&formats, "formats", "", "end-to-end formats `LIST`: json, csv, avro (default all)")
	fs.StringVar(&partitions, "partitions", "", "end-to-end partition counts `LIST` (default 1,8,64)")
	fs.IntVar(&c.opts.Tasks, "tasks", 0, "the jobs' desired_concurrent_number (0: spec default)")
	fs.IntVar(&c.opts.BatchRows, "batch-rows", 0, "the jobs' max_batch_rows and the store ceiling's batch size (default 20000)")
	fs.DurationVar(&c.opts.BatchInterval, "batch-interval", 0, "the jobs' max_batch_interval (default 100ms)")
	fs.IntVar(&c.opts.Creates, "creates", 0, "jobs created per create-latency run (default 1000; quick 200)")
	fs.StringVar(&scaleJobs, "scale-jobs", "", "idle job counts `LIST` of the scale scenario (default 10000,100000; quick 1000)")
	fs.DurationVar(&c.opts.ScaleTimeout, "scale-timeout", 0, "bound of each scale phase (default 5m; quick 40s)")
	fs.StringVar(&c.opts.ScaleData, "scale-data", "", "keep the scale stores in `DIR`/<jobs>; a store left there by an earlier run is reused and only its restart measured")
	fs.StringVar(&c.opts.ScaleCPUProfile, "scale-cpuprofile", "", "CPU profile `FILE` of the restarted scale node (recovery and shows)")
	fs.IntVar(&c.opts.ClusterJobs, "cluster-jobs", 0, "jobs `N` of the cluster scenario (default 3000; quick 300)")
	fs.DurationVar(&c.opts.ClusterLease, "cluster-lease", 0, "the cluster scenario members' lease TTL (default 3s)")
	fs.DurationVar(&c.opts.ClusterTimeout, "cluster-timeout", 0, "bound of the cluster scenario (default 15m; quick 3m)")
	fs.DurationVar(&c.opts.Timeout, "timeout", 0, "bound of the whole run (default 1h; quick 3m)")
	fs.StringVar(&c.out, "out", "", "write the results to `FILE` instead of stdout")
	fs.StringVar(&c.chart, "chart", "", "write an SVG chart of records/s to `FILE`")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	if err := exactArgs(fs, pos); err != nil {
		return nil, err
	}
	c.opts.Brokers = splitList(brokers)
	c.opts.Scenarios = splitList(scenarios)
	c.opts.Formats = splitList(formats)
	if c.opts.Partitions, err = intList(partitions); err != nil {
		return nil, usagef("bench: --partitions: %s", err)
	}
	if c.opts.ScaleJobs, err = intList(scaleJobs); err != nil {
		return nil, usagef("bench: --scale-jobs: %s", err)
	}
	if c.opts.Records < 0 || c.opts.Runs < 0 || c.opts.Creates < 0 || c.opts.Tasks < 0 {
		return nil, usagef("bench: counts must be >= 0")
	}
	check := c.opts
	check.Binary = "loadnode" // run sets the real one (os.Executable)
	if err := check.Validate(); err != nil {
		return nil, usagef("%s", err)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func (c benchCmd) run(ctx context.Context, m *Main) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	o := c.opts
	o.Binary = exe
	o.Log = m.Stderr
	o.Logger = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	res, err := bench.Run(ctx, o)
	if res == nil {
		return err
	}
	var buf bytes.Buffer
	if c.json {
		err = bench.WriteJSON(&buf, res)
	} else {
		err = bench.WriteText(&buf, res)
	}
	if err != nil {
		return err
	}
	var w io.Writer = m.Stdout
	if c.out != "" {
		if err := os.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		fmt.Fprintf(m.Stderr, "bench: results in %s (%s)\n", c.out, time.Since(start).Round(time.Second))
	} else if _, err := w.Write(buf.Bytes()); err != nil {
		return err
	}
	if c.chart != "" {
		var svg bytes.Buffer
		if err := bench.WriteSVG(&svg, res); err != nil {
			return err
		}
		if err := os.WriteFile(c.chart, svg.Bytes(), 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("bench: %d scenario(s) failed (see the results)", len(res.Errors))
	}
	return nil
}
