// Command loadnode-bench is loadnode's benchmark harness (tests/bench): it
// measures, in one run on the same data, the raw franz-go consumer
// ceiling, a plain kcat consume, loadnode end to end, the Pebble store
// ceiling, job creates next to a bare synced commit, idle jobs at scale
// and a 3-member cluster that loses a member. It is a command of its own
// so that the release binary (cmd/loadnode) links no test harness;
// `loadnode bench ARGS` runs it (see cmd/loadnode's bench command).
// See BENCHMARKS.md.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/loadnode/loadnode/node"
	"github.com/loadnode/loadnode/tests/bench"
)

// benchCmd is one parsed command line.
type benchCmd struct {
	opts       bench.Options
	json       bool
	out        string
	chart      string
	cpuprofile string
}

// errUsage marks a command line that does not parse (exit status 2).
var errUsage = errors.New("usage")

const usage = "loadnode-bench [--quick] [--json] [--binary FILE] [--brokers HOST:PORT,...] [--records N] [--runs N] [--scenarios LIST] [--out FILE] [--chart FILE]\n\n" +
	"Measures, in one run on the same data: the raw franz-go consumer ceiling,\n" +
	"a plain kcat consume (skipped when kcat is not on PATH),\n" +
	"loadnode end to end (json, csv and avro through a schema registry; 1, 8 and\n64 partitions), the Pebble store\n" +
	"ceiling, job create latency next to a bare synced Pebble commit, and the\n" +
	"scale of idle jobs, and a 3-member cluster (etcd, PostgreSQL) that loses a\n" +
	"member to SIGKILL, and the freshness of records produced at a steady rate\n" +
	"(produce-to-committed latency). The broker is a `loadnode kfake` child process unless\n" +
	"--brokers is given. Progress goes to stderr. `loadnode bench ARGS` runs this\n" +
	"command with --binary set to itself. See BENCHMARKS.md.\n\nFlags:\n"

// parse reads the command line (without the program name).
func parse(args []string, stderr io.Writer) (benchCmd, error) {
	var c benchCmd
	var brokers, scenarios, formats, partitions, scaleJobs, freshIntervals string
	fs := flag.NewFlagSet("loadnode-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.opts.Binary, "binary", "", "the loadnode `FILE` run for the kfake broker and the scale and cluster nodes (default: loadnode beside this command, else on PATH)")
	fs.BoolVar(&c.opts.Quick, "quick", false, "small sizes (under 2 minutes on 2 cores)")
	fs.BoolVar(&c.json, "json", false, "print machine-readable JSON instead of the tables")
	fs.StringVar(&brokers, "brokers", "", "a real Kafka cluster `HOST:PORT,...` instead of a kfake child")
	fs.IntVar(&c.opts.Records, "records", 0, "records per topic `N` (default 1000000; quick 200000)")
	fs.IntVar(&c.opts.RecordBytes, "record-bytes", 0, "approximate record size in `bytes` (default 200)")
	fs.IntVar(&c.opts.Runs, "runs", 0, "measured runs `N` per scenario after a warm-up; the median is reported (default 3)")
	fs.StringVar(&scenarios, "scenarios", "", "comma-separated `LIST` of "+strings.Join(bench.AllScenarios, ",")+" (default all but cluster and freshness)")
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
	fs.DurationVar(&c.opts.FreshnessDuration, "freshness-duration", 0, "measured window of each freshness cell, at least two of its max_batch_interval (default 10s; quick 2s)")
	fs.StringVar(&freshIntervals, "freshness-intervals", "", "max_batch_interval `LIST` of the freshness scenario (default 10s,100ms: the spec default and the least allowed)")
	fs.IntVar(&c.opts.ClusterCreateClients, "cluster-create-clients", 0, "creates `N` in flight in the cluster scenario (default 24)")
	fs.StringVar(&c.opts.ClusterProfile, "cluster-profile", "", "write the cluster members' CPU (creates, move), heap and goroutine profiles to `DIR`")
	fs.DurationVar(&c.opts.Timeout, "timeout", 0, "bound of the whole run (default 1h; quick 3m)")
	fs.StringVar(&c.out, "out", "", "write the results to `FILE` instead of stdout")
	fs.StringVar(&c.chart, "chart", "", "write an SVG chart of records/s to `FILE`")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	var err error
	c.opts.Brokers = splitList(brokers)
	c.opts.Scenarios = splitList(scenarios)
	c.opts.Formats = splitList(formats)
	if c.opts.Partitions, err = intList(partitions); err != nil {
		return c, fmt.Errorf("%w: --partitions: %v", errUsage, err)
	}
	if c.opts.ScaleJobs, err = intList(scaleJobs); err != nil {
		return c, fmt.Errorf("%w: --scale-jobs: %v", errUsage, err)
	}
	for _, f := range splitList(freshIntervals) {
		d, err := time.ParseDuration(f)
		if err != nil {
			return c, fmt.Errorf("%w: --freshness-intervals: %v", errUsage, err)
		}
		c.opts.FreshnessIntervals = append(c.opts.FreshnessIntervals, d)
	}
	if c.opts.Records < 0 || c.opts.Runs < 0 || c.opts.Creates < 0 || c.opts.Tasks < 0 {
		return c, fmt.Errorf("%w: counts must be >= 0", errUsage)
	}
	check := c.opts
	if check.Binary == "" {
		check.Binary = "loadnode" // run finds the real one (findLoadnode)
	}
	if err := check.Validate(); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
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

// findLoadnode is the loadnode binary beside this command's executable,
// else the one on PATH.
func findLoadnode() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "loadnode")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("loadnode")
	if err != nil {
		return "", errors.New("no loadnode binary beside loadnode-bench or on PATH: build it (make loadnode) or name it with --binary")
	}
	return p, nil
}

func (c benchCmd) run(ctx context.Context, stdout, stderr io.Writer) error {
	o := c.opts
	if o.Binary == "" {
		b, err := findLoadnode()
		if err != nil {
			return err
		}
		o.Binary = b
	}
	o.Log = stderr
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if c.cpuprofile != "" {
		f, err := os.Create(c.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
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
	if c.out != "" {
		if err := os.WriteFile(c.out, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "bench: results in %s (%s)\n", c.out, time.Since(start).Round(time.Second))
	} else if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if c.chart != "" {
		var svg bytes.Buffer
		if err := bench.WriteSVG(&svg, res); err != nil {
			return err
		}
		if err := os.WriteFile(c.chart, svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%d scenario(s) failed (see the results)", len(res.Errors))
	}
	return nil
}

func main() {
	c, err := parse(os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, "loadnode-bench:", err)
		os.Exit(2)
	}
	// The in-process node runs with the GC target a loadnode process has.
	node.TuneRuntime(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := c.run(ctx, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadnode-bench:", err)
		os.Exit(1)
	}
}
