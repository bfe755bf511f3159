package bench

import "time"

// Results is everything one Run measured. It is what --json prints.
type Results struct {
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Host     Host      `json:"host"`
	Settings Settings  `json:"settings"`
	// Throughput holds the ceiling, end-to-end and store rows.
	Throughput []*Throughput `json:"throughput"`
	Create     *Create       `json:"create,omitempty"`
	Scale      []*Scale      `json:"scale,omitempty"`
	Cluster    *Cluster      `json:"cluster,omitempty"`
	Freshness  *Freshness    `json:"freshness,omitempty"`
	Targets    []Target      `json:"targets"`
	Errors     []string      `json:"errors,omitempty"`
}

// Host describes the machine.
type Host struct {
	CPUs      int    `json:"cpus"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	// CgoEnabled is the CGO_ENABLED setting the running binary was built
	// with ("0" or "1"; "" when the build info does not say). It changes
	// where Pebble allocates memtables (Go heap without cgo, calloc with).
	CgoEnabled string `json:"cgo_enabled"`
}

// Settings are the sizes the run used.
type Settings struct {
	Quick           bool     `json:"quick"`
	Broker          string   `json:"broker"` // "kfake child process" or the brokers
	Records         int      `json:"records"`
	RecordBytes     int      `json:"record_bytes"`
	Runs            int      `json:"runs"`
	BatchRows       int      `json:"batch_rows"`
	BatchIntervalMs int64    `json:"batch_interval_ms"`
	Tasks           int      `json:"tasks"`
	Creates         int      `json:"creates"`
	ScaleJobs       []int    `json:"scale_jobs"`
	Scenarios       []string `json:"scenarios"`
	// Kcat is the kcat and librdkafka versions of the kcat scenario, empty
	// when it did not run.
	Kcat string `json:"kcat,omitempty"`
}

// Throughput is one throughput scenario: the medians of Runs measured runs.
type Throughput struct {
	// Scenario is "ceiling" (raw franz-go), "kcat" (a plain kcat consume),
	// "e2e" (loadnode) or "store" (Pebble store ceiling).
	Scenario   string  `json:"scenario"`
	Format     string  `json:"format,omitempty"`
	Partitions int     `json:"partitions,omitempty"`
	Topic      string  `json:"topic,omitempty"`
	Records    int64   `json:"records"`
	Runs       int     `json:"runs"`
	Seconds    float64 `json:"seconds"`
	// RecordsPerSec, MBPerSec (source record bytes, 10^6), CPU seconds of
	// the measuring process per million records (for kcat: the kcat
	// process's), heap allocations per record in the measuring process (0
	// for kcat).
	RecordsPerSec    float64 `json:"records_per_sec"`
	MBPerSec         float64 `json:"mb_per_sec"`
	CPUSecPerMillion float64 `json:"cpu_sec_per_million"`
	AllocsPerRecord  float64 `json:"allocs_per_record"`
	// FaultsPerRecord (e2e and store rows) is the measuring process's
	// minor + major page faults (getrusage) per record.
	FaultsPerRecord float64 `json:"faults_per_record,omitempty"`
	// BrokerCPUSecPerMillion is the broker child's CPU seconds per million
	// records over the same window (0 with --brokers, and for store rows);
	// CoresBusy is the whole machine's non-idle cores over it (every
	// process, steal included; /proc/stat). With the machine's cores busy,
	// the two CPU figures bound the rate: CPUs / (CPU s/M + broker CPU s/M)
	// million records per second.
	BrokerCPUSecPerMillion float64 `json:"broker_cpu_sec_per_million,omitempty"`
	CoresBusy              float64 `json:"machine_cores_busy,omitempty"`
	// AvgBatchRows is rows per committed batch (e2e, store).
	AvgBatchRows float64 `json:"avg_batch_rows,omitempty"`
	// E2EToCeilingRatio is set on every e2e row: its records/s over the
	// ceiling's on the same topic.
	E2EToCeilingRatio *float64 `json:"e2e_to_ceiling_ratio,omitempty"`
	// CommitRowsPerSec (e2e rows) is the commit path's rate: records over
	// the seconds the job spent in its synced commits (the node's
	// loadnode_batch_commit_seconds), which overlap reading and parsing.
	CommitRowsPerSec float64 `json:"commit_rows_per_sec,omitempty"`
	// CommitToStoreRatio (e2e rows): CommitRowsPerSec over the store
	// ceiling's records/s, the "commit path / store ceiling".
	CommitToStoreRatio *float64 `json:"commit_to_store_ratio,omitempty"`
	// E2EToStoreRatio (e2e rows): end-to-end records/s over the store
	// ceiling's.
	E2EToStoreRatio *float64 `json:"e2e_to_store_ratio,omitempty"`
	// E2EToKcatRatio (e2e rows, when kcat ran on the same topic): records/s
	// over kcat's.
	E2EToKcatRatio *float64 `json:"e2e_to_kcat_ratio,omitempty"`
	// PGToCeilingRatio (the pg-e2e row): its records/s over the
	// PostgreSQL ceiling's, same server, same run.
	PGToCeilingRatio *float64 `json:"pg_e2e_to_pg_ceiling_ratio,omitempty"`
	// PGRunRatios (the pg-e2e row): each measured run's records/s over
	// that of the ceiling run just before it (the two alternate, so that
	// each pair sees about the same load on a shared host).
	PGRunRatios []float64 `json:"pg_run_ratios,omitempty"`
	// ServerCPUSecPerMillion (postgres rows): CPU seconds of the
	// PostgreSQL server per million records.
	ServerCPUSecPerMillion float64 `json:"server_cpu_sec_per_million,omitempty"`
	// Skipped says why the scenario did not run (kcat not installed).
	Skipped string `json:"skipped,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Create is the create-latency scenario (medians over runs).
type Create struct {
	Jobs            int     `json:"jobs"`
	Runs            int     `json:"runs"`
	CreateP50Ms     float64 `json:"create_p50_ms"`
	CreateP99Ms     float64 `json:"create_p99_ms"`
	PebbleSyncP50Ms float64 `json:"pebble_sync_1k_p50_ms"`
	PebbleSyncP99Ms float64 `json:"pebble_sync_1k_p99_ms"`
	// PingP50Ms and PingP99Ms are client round trips to the manager (no
	// store access) in the same run: the floor under a create.
	PingP50Ms         float64 `json:"ping_p50_ms"`
	PingP99Ms         float64 `json:"ping_p99_ms"`
	P99Ratio          float64 `json:"create_p99_to_pebble_p99_ratio"`
	CreatesPerSec1    float64 `json:"creates_per_sec_1_client"`
	CreatesPerSec16   float64 `json:"creates_per_sec_16_clients"`
	ConcurrencyFactor float64 `json:"concurrency_16_to_1_ratio"`
	// CPUMsPerCreate1 and CPUMsPerCreate16 are the bench process's CPU
	// (the node and its clients) per create with 1 and 16 clients; the
	// Broker ones the broker child's (its partition and offset look-ups
	// for the new jobs).
	CPUMsPerCreate1        float64 `json:"cpu_ms_per_create_1_client"`
	CPUMsPerCreate16       float64 `json:"cpu_ms_per_create_16_clients"`
	BrokerCPUMsPerCreate1  float64 `json:"broker_cpu_ms_per_create_1_client,omitempty"`
	BrokerCPUMsPerCreate16 float64 `json:"broker_cpu_ms_per_create_16_clients,omitempty"`
	// AllocsPerCreate1 and AllocsPerCreate16 are the bench process's heap
	// allocations per create (a figure the machine's load does not move).
	AllocsPerCreate1  float64 `json:"allocs_per_create_1_client"`
	AllocsPerCreate16 float64 `json:"allocs_per_create_16_clients"`
}

// Scale is the scale-of-jobs scenario for one job count.
type Scale struct {
	Jobs                   int     `json:"jobs"`
	Created                int     `json:"created"`
	CreateSeconds          float64 `json:"create_seconds"`
	CreatesPerSec          float64 `json:"creates_per_sec"`
	RSSBaseMB              float64 `json:"rss_base_mb"`
	RSSAfterMB             float64 `json:"rss_after_mb"`
	RSSPerJobKB            float64 `json:"rss_per_job_kb"`
	NodeCPUSeconds         float64 `json:"node_cpu_seconds"`
	FDs                    int     `json:"fds"`
	Threads                int     `json:"threads"`
	StopSeconds            float64 `json:"stop_seconds"`
	RestartReadySeconds    float64 `json:"restart_ready_seconds"`
	RestartAllShownSeconds float64 `json:"restart_all_shown_seconds"`
	Shown                  int     `json:"shown"`
	// RestartAllListedSeconds is the time from the restart until a paged
	// listing (ListJobs, 10,000 summaries a request) returned the status
	// of every job; ListSeconds the listing alone; Listed the jobs in it
	// with a health verdict. Measured before the `job show` round trips.
	RestartAllListedSeconds   float64 `json:"restart_all_listed_seconds"`
	ListSeconds               float64 `json:"list_seconds"`
	Listed                    int     `json:"listed"`
	RSSAfterRestartMB         float64 `json:"rss_after_restart_mb"`
	ExtrapolatedCreateSeconds float64 `json:"extrapolated_create_seconds,omitempty"`
	ExtrapolatedRSSMB         float64 `json:"extrapolated_rss_mb"`
	// Reused: the store of an earlier run (--scale-data) was restarted;
	// creates and RSS were not measured.
	Reused bool     `json:"reused,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// Target is one of issue 5's targets and where this run stands.
type Target struct {
	Name     string  `json:"name"`
	Want     string  `json:"want"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit"`
	Met      bool    `json:"met"`
	// NotMeasured: the scenario behind the target was skipped (Note says
	// why); Measured is then meaningless.
	NotMeasured bool   `json:"not_measured,omitempty"`
	Note        string `json:"note,omitempty"`
}
