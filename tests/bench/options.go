package bench

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadnode/loadnode/config"
)

// Scenario names, as accepted by Options.Scenarios.
const (
	ScenarioCeiling = "ceiling" // raw franz-go consumer
	ScenarioKcat    = "kcat"    // plain kcat (librdkafka) consume
	ScenarioE2E     = "e2e"     // loadnode end to end
	ScenarioStore   = "store"   // Pebble store ceiling
	ScenarioCreate  = "create"  // create latency and throughput
	ScenarioScale   = "scale"   // idle jobs: RSS per job, restart time
	// ScenarioPostgres: loadnode end to end into PostgreSQL next to that
	// server's ceiling (COPY plus a progress update per transaction).
	ScenarioPostgres = "postgres"
	// ScenarioFreshness: produce-to-committed latency at a steady rate
	// (freshness.go).
	ScenarioFreshness = "freshness"
)

// Rows of the postgres scenario.
const (
	scenarioPGCeiling = "pg-ceiling"
	scenarioPGE2E     = "pg-e2e"
)

// AllScenarios are the scenarios Options.Scenarios accepts, in the order
// they run.
var AllScenarios = []string{ScenarioCeiling, ScenarioKcat, ScenarioE2E, ScenarioStore, ScenarioPostgres, ScenarioCreate, ScenarioScale, ScenarioFreshness, ScenarioCluster}

// DefaultScenarios run when Options.Scenarios is empty: all but the
// cluster scenario, which needs etcd and takes minutes, and the freshness
// scenario, which takes a minute or more of steady producing (ask for
// them).
var DefaultScenarios = slices.DeleteFunc(slices.Clone(AllScenarios), func(s string) bool { return s == ScenarioCluster || s == ScenarioFreshness })

// Options configures Run. Zero fields take the defaults of Defaults (or
// QuickDefaults when Quick is set).
type Options struct {
	// Quick selects small sizes (the whole run in under 2 minutes on 2 cores).
	Quick bool
	// Brokers is a real cluster (host:port each); empty starts a
	// `loadnode kfake` child process.
	Brokers []string
	// Binary is the loadnode binary used for `kfake` and `serve` children.
	// Required unless Brokers is set and the scale scenario is not run.
	Binary string
	// Records is the number of records per topic (N). Default 1,000,000;
	// quick 50,000.
	Records int
	// RecordBytes is the approximate size of a record value. Default 200.
	RecordBytes int
	// Runs is the number of measured runs per scenario (median reported),
	// after one discarded warm-up run. Default 3; at least 1.
	Runs int
	// Scenarios to run; empty means DefaultScenarios.
	Scenarios []string
	// Formats are the record formats of the end-to-end scenario: json,
	// csv, avro (through a schema registry the bench starts). Default all
	// three.
	Formats []string
	// registryURL is the schema registry of avro jobs, set by Run.
	registryURL string
	// brokerPID is the kfake child's process id (0 with Brokers), set by
	// Run: the freshness scenario reports its CPU.
	brokerPID int
	// Partitions are the partition counts of the end-to-end scenario.
	// Default 1, 8, 64.
	Partitions []int
	// Tasks is the job's desired_concurrent_number; 0 is the spec default.
	Tasks int
	// BatchRows is the job's max_batch_rows and the store ceiling's batch
	// size. Default 20,000.
	BatchRows int
	// BatchInterval is the job's max_batch_interval. Default 100ms (the
	// least a spec allows). A task's last batch of a pre-filled topic ends
	// as soon as the task is caught up (the Kafka reader's early end), so
	// this matters only for batches smaller than a quarter of BatchRows.
	BatchInterval time.Duration
	// Creates is the number of jobs created per create-latency run. Default
	// 1,000; quick 200.
	Creates int
	// ScaleJobs are the idle-job counts of the scale scenario. Default
	// 10,000 and 100,000; quick 1,000.
	ScaleJobs []int
	// ScaleTimeout bounds each scale size (create, settle, restart). Default
	// 5m; quick 40s. What finished is reported with an extrapolation.
	ScaleTimeout time.Duration
	// ScaleSettle is the longest wait, after the creates, for the node's
	// RSS to settle before it is read. Default 30s; quick 10s.
	ScaleSettle time.Duration
	// ScaleData, when set, keeps each scale size's node store in
	// ScaleData/<jobs> instead of a temporary directory. A store a previous
	// run left there is reused: its creates and RSS are not measured again,
	// only the restart (for iterating on restart time).
	ScaleData string
	// ScaleCPUProfile, when set, makes the restarted node write a CPU
	// profile of its whole run (recovery and the shows) to this file.
	ScaleCPUProfile string
	// ClusterJobs is the cluster scenario's job count (cluster.go).
	// Default 3,000; quick 300.
	ClusterJobs int
	// ClusterLease is the cluster members' lease TTL. Default 3s.
	ClusterLease time.Duration
	// ClusterTimeout bounds the cluster scenario. Default 15m; quick 3m.
	ClusterTimeout time.Duration
	// FreshnessDuration is the measured window of each freshness cell (at
	// least two of its max_batch_interval). Default 10s; quick 2s.
	FreshnessDuration time.Duration
	// FreshnessIntervals are the max_batch_interval settings of the
	// freshness scenario. Default the spec default (10s) and the least
	// allowed (100ms).
	FreshnessIntervals []time.Duration
	// ClusterCreateClients is how many creates the cluster scenario keeps
	// in flight (round-robin over the members). Default 24.
	ClusterCreateClients int
	// ClusterProfile, when set, is a directory where the cluster scenario
	// writes its members' profiles (from their /debug/pprof): CPU during
	// the creates and during the move, heap and goroutines after the
	// first commits and after the move.
	ClusterProfile string
	// Timeout bounds the whole run. Default 1h; quick 3m.
	Timeout time.Duration
	// Log receives progress lines; nil discards them.
	Log io.Writer
	// Logger receives the in-process node's logs; nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.RecordBytes == 0 {
		o.RecordBytes = 200
	}
	if o.Runs == 0 {
		o.Runs = 3
	}
	if len(o.Scenarios) == 0 {
		o.Scenarios = DefaultScenarios
	}
	if len(o.Formats) == 0 {
		o.Formats = []string{"json", "csv", "avro"}
	}
	if len(o.Partitions) == 0 {
		o.Partitions = []int{1, 8, 64}
	}
	if o.BatchRows == 0 {
		o.BatchRows = 20000
	}
	if o.BatchInterval == 0 {
		o.BatchInterval = 100 * time.Millisecond
	}
	if o.ClusterLease == 0 {
		o.ClusterLease = 3 * time.Second
	}
	if o.Quick {
		if o.ClusterJobs == 0 {
			o.ClusterJobs = 300
		}
		if o.ClusterTimeout == 0 {
			o.ClusterTimeout = 3 * time.Minute
		}
		if o.Records == 0 {
			o.Records = 200000
		}
		if o.Creates == 0 {
			o.Creates = 200
		}
		if len(o.ScaleJobs) == 0 {
			o.ScaleJobs = []int{1000}
		}
		if o.ScaleTimeout == 0 {
			o.ScaleTimeout = 40 * time.Second
		}
		if o.Timeout == 0 {
			o.Timeout = 3 * time.Minute
		}
		if o.ScaleSettle == 0 {
			o.ScaleSettle = 10 * time.Second
		}
		if o.FreshnessDuration == 0 {
			o.FreshnessDuration = 2 * time.Second
		}
	}
	if o.FreshnessDuration == 0 {
		o.FreshnessDuration = 10 * time.Second
	}
	if o.Records == 0 {
		o.Records = 1000000
	}
	if o.ClusterJobs == 0 {
		o.ClusterJobs = 3000
	}
	if o.ClusterTimeout == 0 {
		o.ClusterTimeout = 15 * time.Minute
	}
	if o.Creates == 0 {
		o.Creates = 1000
	}
	if len(o.ScaleJobs) == 0 {
		o.ScaleJobs = []int{10000, 100000}
	}
	if o.ScaleTimeout == 0 {
		o.ScaleTimeout = 5 * time.Minute
	}
	if o.Timeout == 0 {
		o.Timeout = time.Hour
	}
	if o.ScaleSettle == 0 {
		o.ScaleSettle = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if _, ok := o.Log.(*syncWriter); !ok {
		// Child processes' output is copied to Log from other goroutines.
		o.Log = &syncWriter{w: o.Log}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Validate reports a setting that cannot work.
func (o Options) Validate() error {
	o = o.withDefaults()
	var errs []error
	if o.Records < 1 || o.RecordBytes < 120 || o.Runs < 1 || o.BatchRows < 1 || o.Creates < 16 {
		errs = append(errs, errors.New("bench: records >= 1, record bytes >= 120, runs >= 1, batch rows >= 1 and creates >= 16 are required"))
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(AllScenarios, s) {
			errs = append(errs, fmt.Errorf("bench: unknown scenario %q (want %s)", s, strings.Join(AllScenarios, ",")))
		}
	}
	for _, f := range o.Formats {
		if f != "json" && f != "csv" && f != "avro" {
			errs = append(errs, fmt.Errorf("bench: unknown format %q", f))
		}
	}
	for _, p := range o.Partitions {
		if p < 1 {
			errs = append(errs, fmt.Errorf("bench: partitions must be >= 1, got %d", p))
		}
	}
	for _, n := range o.ScaleJobs {
		if n < 1 {
			errs = append(errs, fmt.Errorf("bench: scale jobs must be >= 1, got %d", n))
		}
	}
	if o.FreshnessDuration < 0 || o.FreshnessDuration > 10*time.Minute {
		errs = append(errs, fmt.Errorf("bench: freshness duration must be within 0..10m, got %v", o.FreshnessDuration))
	}
	for _, iv := range o.FreshnessIntervals {
		if iv < config.MinMaxBatchInterval || iv > 10*time.Minute {
			errs = append(errs, fmt.Errorf("bench: freshness interval must be within %v..10m, got %v", config.MinMaxBatchInterval, iv))
		}
	}
	if o.BatchInterval < 100*time.Millisecond {
		errs = append(errs, errors.New("bench: batch interval must be >= 100ms"))
	}
	if o.ClusterCreateClients < 0 || o.ClusterCreateClients > 1024 {
		errs = append(errs, fmt.Errorf("bench: cluster create clients must be 0 (default 24) to 1024, got %d", o.ClusterCreateClients))
	}
	needBinary := len(o.Brokers) == 0 || slices.Contains(o.Scenarios, ScenarioScale) || slices.Contains(o.Scenarios, ScenarioCluster)
	if needBinary && o.Binary == "" {
		errs = append(errs, errors.New("bench: a loadnode binary is required (for kfake and serve children)"))
	}
	return errors.Join(errs...)
}

func (o Options) has(s string) bool { return slices.Contains(o.Scenarios, s) }

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
