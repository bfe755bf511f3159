package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
)

// idleSpec is a job on the idle topic (no data) with the spec defaults.
func idleSpec(name string, brokers []string) *api.JobSpec {
	s := &api.JobSpec{
		Name:   name,
		Table:  &api.TableSpec{Name: "bench_idle_t", Columns: benchColumns()},
		Format: "json",
		Kafka:  &api.KafkaSpec{Brokers: brokers, Topic: idleTopic, DefaultOffset: "OFFSET_BEGINNING"},
	}
	config.ApplyDefaults(s)
	return s
}

// createJobs creates jobs named prefix_0 .. prefix_<jobs-1> through clients
// concurrent clients (each its own client.Client) against addr, and returns
// the latency of each create and the wall time of all. It stops early when
// ctx is done and returns what it created. started, if not nil, is called
// once the clients are connected, as the first create is sent.
func createJobs(ctx context.Context, addr string, brokers []string, prefix string, jobs, clients int, started func()) ([]time.Duration, time.Duration, error) {
	cls := make([]*client.Client, clients)
	for i := range cls {
		c, err := client.Dial(ctx, addr, client.WithTimeout(time.Minute))
		if err != nil {
			return nil, 0, fmt.Errorf("bench: dial: %w", err)
		}
		defer c.Close()
		cls[i] = c
	}
	lat := make([]time.Duration, jobs)
	done := make([]bool, jobs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	if started != nil {
		started()
	}
	t0 := time.Now()
	for w := range clients {
		wg.Go(func() {
			for i := w; i < jobs; i += clients {
				if ctx.Err() != nil {
					return
				}
				spec := idleSpec(fmt.Sprintf("%s_%d", prefix, i), brokers)
				s := time.Now()
				_, err := cls[w].CreateJob(ctx, spec)
				if err != nil {
					if ctx.Err() == nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("bench: create %s: %w", spec.Name, err)
						}
						mu.Unlock()
					}
					return
				}
				lat[i], done[i] = time.Since(s), true
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	var out []time.Duration
	for i, ok := range done {
		if ok {
			out = append(out, lat[i])
		}
	}
	return out, el, firstErr
}

// createSample is one createRun: the sorted latencies of sequential
// creates and pings, the creates/s with 1 and 16 clients, and the CPU
// milliseconds per create of this process (node and clients) and of the
// broker child with 1 and 16 clients.
type createSample struct {
	seq, ping               []time.Duration
	tput1, tput16           float64
	cpu1, cpu16             float64
	brokerCPU1, brokerCPU16 float64
	allocs1, allocs16       float64 // heap allocations per create, this process
}

// createRun measures, on fresh in-process nodes, the latency of n sequential
// creates from one client, and the throughput of n creates from one and from
// 16 concurrent clients.
func createRun(ctx context.Context, o Options, brokers []string, n, run int) (*createSample, error) {
	var cs createSample
	node1, cleanup, err := startNode(ctx, o, "create1")
	if err != nil {
		return nil, err
	}
	var cpu cpuMeter
	var m0 uint64
	started := func() { cpu, m0 = startCPU(o.brokerPID), mallocs() }
	seq, el, err := createJobs(ctx, node1.Addr(), brokers, fmt.Sprintf("seq%d", run), n, 1, started)
	cs.cpu1, cs.brokerCPU1 = cpu.msPer(len(seq))
	cs.allocs1 = float64(mallocs()-m0) / float64(max(len(seq), 1))
	if err == nil {
		cs.ping, err = pings(ctx, node1.Addr(), n)
	}
	cleanup()
	if err != nil {
		return nil, err
	}
	cs.seq, cs.tput1 = seq, float64(len(seq))/el.Seconds()
	node16, cleanup, err := startNode(ctx, o, "create16")
	if err != nil {
		return nil, err
	}
	conc, el, err := createJobs(ctx, node16.Addr(), brokers, fmt.Sprintf("conc%d", run), n, 16, started)
	cs.cpu16, cs.brokerCPU16 = cpu.msPer(len(conc))
	cs.allocs16 = float64(mallocs()-m0) / float64(max(len(conc), 1))
	cleanup()
	if err != nil {
		return nil, err
	}
	cs.tput16 = float64(len(conc)) / el.Seconds()
	slices.Sort(cs.seq)
	slices.Sort(cs.ping)
	return &cs, nil
}

// mallocs is this process's heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// msPer is the CPU milliseconds of this process and of the broker since
// start, per one of n operations.
func (m cpuMeter) msPer(n int) (self, broker float64) {
	if n == 0 {
		return 0, 0
	}
	el := time.Since(m.t0).Seconds()
	s, b := m.cores()
	return s * el * 1e3 / float64(n), b * el * 1e3 / float64(n)
}

// pings measures n client round trips to the node's manager (a Ping, no
// store access): the floor under any client call, create included.
func pings(ctx context.Context, addr string, n int) ([]time.Duration, error) {
	c, err := client.Dial(ctx, addr, client.WithTimeout(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("bench: dial: %w", err)
	}
	defer c.Close()
	out := make([]time.Duration, 0, n)
	for range n {
		s := time.Now()
		if _, err := c.Ping(ctx); err != nil {
			return nil, fmt.Errorf("bench: ping: %w", err)
		}
		out = append(out, time.Since(s))
	}
	return out, nil
}

// pebbleCommits measures n bare synced 1 KB Pebble commits (one Set each,
// pebble.Sync) on a fresh database in the system temp dir.
func pebbleCommits(n int) ([]time.Duration, error) {
	dir, err := tempDir("pebble")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		return nil, fmt.Errorf("bench: pebble open: %w", err)
	}
	defer db.Close()
	val := make([]byte, 1024)
	key := make([]byte, 0, 16)
	lat := make([]time.Duration, n)
	for i := range n {
		key = fmt.Appendf(key[:0], "k%08d", i)
		b := db.NewBatch()
		if err := b.Set(key, val, nil); err != nil {
			return nil, err
		}
		s := time.Now()
		err := b.Commit(pebble.Sync)
		lat[i] = time.Since(s)
		b.Close()
		if err != nil {
			return nil, fmt.Errorf("bench: pebble commit: %w", err)
		}
	}
	slices.Sort(lat)
	return lat, nil
}

// quietPebble drops Pebble's informational messages ("Found 0 WALs").
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("bench: pebble fatal: "+format, args...))
}
