package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testnode"
)

// startServe starts `loadnode serve` on dir and waits up to wait until it
// is ready; its output stays in the process's log ring (Proc.Tail), out of
// the report (1,000 creates are 1,000 INFO lines). Close (after Stop)
// removes the harness's files.
func startServe(ctx context.Context, o Options, dir string, wait time.Duration, extra ...string) (*testnode.Proc, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	p, err := testnode.Launch(ctx, testnode.Options{Binary: o.Binary, DataDir: dir, Args: extra, ReadyTimeout: wait})
	if err != nil {
		if p != nil && o.Log != nil {
			fmt.Fprintf(o.Log, "bench: serve output:\n%s\n", p.Tail(40))
		}
		return nil, fmt.Errorf("bench: %w", err)
	}
	return p, nil
}

// stopServe stops p within grace and removes its files.
func stopServe(p *testnode.Proc, grace time.Duration) error {
	err := p.Stop(grace)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return err
}

// scaleRun creates jobs idle jobs on a `loadnode serve` child with 16
// concurrent clients, measures its resident memory per job, restarts it and
// measures the time until every job answers `job show`. Each phase is bounded
// by o.ScaleTimeout; what finished is reported, with an extrapolation.
func scaleRun(ctx context.Context, o Options, brokers []string, jobs int) (*Scale, error) {
	res := &Scale{Jobs: jobs}
	var dir string
	reused := 0
	if o.ScaleData != "" {
		dir = filepath.Join(o.ScaleData, strconv.Itoa(jobs))
		if b, err := os.ReadFile(filepath.Join(dir, scaleMarker)); err == nil {
			reused, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if reused == 0 {
			_ = os.RemoveAll(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
		}
	} else {
		d, err := tempDir("scale")
		if err != nil {
			return nil, err
		}
		dir = d
		defer os.RemoveAll(dir)
	}
	if reused > 0 {
		res.Created, res.Reused = reused, true
		res.Notes = append(res.Notes, fmt.Sprintf("reused the store of %d jobs in %s: create and RSS not measured", reused, dir))
		restartScale(ctx, o, dir, res, nil)
		return res, nil
	}
	srv, err := startServe(ctx, o, dir, time.Minute)
	if err != nil {
		return nil, err
	}
	defer func() { _ = stopServe(srv, time.Minute) }()
	addr := srv.Addr()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("bench: dial: %w", err)
	}
	if _, err := c.ListJobs(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("bench: list jobs: %w", err)
	}
	c.Close()
	rss0, err := procRSS(srv.PID())
	if err != nil {
		return nil, err
	}
	cpu0, _ := procCPU(srv.PID())
	res.RSSBaseMB = float64(rss0) / (1 << 20)

	// 1. Create, bounded.
	cctx, cancel := context.WithTimeout(ctx, o.ScaleTimeout)
	lat, el, cerr := createJobs(cctx, addr, brokers, "idle", jobs, 16, nil)
	cancel()
	res.Created = len(lat)
	res.CreateSeconds = el.Seconds()
	if res.Created > 0 {
		res.CreatesPerSec = float64(res.Created) / el.Seconds()
	}
	if cerr != nil {
		res.Notes = append(res.Notes, cerr.Error())
	}
	if res.Created < jobs {
		res.Notes = append(res.Notes, fmt.Sprintf("created %d of %d jobs within %v", res.Created, jobs, o.ScaleTimeout))
		if res.CreatesPerSec > 0 {
			res.ExtrapolatedCreateSeconds = float64(jobs) / res.CreatesPerSec
		}
	}
	if res.Created == 0 {
		return res, errors.Join(cerr, fmt.Errorf("bench: scale %d: no job created", jobs))
	}

	// 2. Let the idle jobs settle (tasks spawned, slots cycled), then read RSS.
	rss1 := settleRSS(ctx, srv.PID(), 3*time.Second, o.ScaleSettle)
	cpu1, _ := procCPU(srv.PID())
	res.RSSAfterMB = float64(rss1) / (1 << 20)
	res.RSSPerJobKB = float64(rss1-rss0) / 1024 / float64(res.Created)
	res.ExtrapolatedRSSMB = (float64(rss0) + float64(rss1-rss0)/float64(res.Created)*float64(jobs)) / (1 << 20)
	res.NodeCPUSeconds = (cpu1 - cpu0).Seconds()
	res.FDs = procFDs(srv.PID())
	res.Threads = procThreads(srv.PID())

	if o.ScaleData != "" && res.Created == jobs {
		if err := os.WriteFile(filepath.Join(dir, scaleMarker), []byte(strconv.Itoa(jobs)), 0o644); err != nil {
			return nil, err
		}
	}
	// 3. Restart: stop, start, then `job show` every job.
	restartScale(ctx, o, dir, res, srv)
	return res, nil
}

// scaleMarker, in a kept scale store, holds the number of jobs created in it.
const scaleMarker = "bench-scale-jobs"

// restartScale stops srv (if any), starts a node on dir again, and measures
// the time until it serves and until every job answered `job show`.
func restartScale(ctx context.Context, o Options, dir string, res *Scale, srv *testnode.Proc) {
	if srv != nil {
		s := time.Now()
		if err := srv.Stop(o.ScaleTimeout); err != nil {
			res.Notes = append(res.Notes, err.Error())
		}
		res.StopSeconds = time.Since(s).Seconds()
	}
	var extra []string
	if o.ScaleCPUProfile != "" {
		extra = []string{"--cpuprofile", o.ScaleCPUProfile}
	}
	t0 := time.Now()
	srv2, err := startServe(ctx, o, dir, o.ScaleTimeout, extra...)
	if err != nil {
		res.Notes = append(res.Notes, "restart: "+err.Error())
		return
	}
	defer func() { _ = stopServe(srv2, time.Minute) }()
	addr2 := srv2.Addr()
	res.RestartReadySeconds = time.Since(t0).Seconds()
	defer func() {
		// After the shows: the job actors are respawned after the node
		// serves, and their line comes later.
		if line := recoveryLine(srv2.Log()); line != "" {
			res.Notes = append(res.Notes, "restarted node: "+line)
		}
	}()
	lctx, lcancel := context.WithTimeout(ctx, o.ScaleTimeout)
	l0 := time.Now()
	listed, lerr := listStatuses(lctx, addr2)
	lcancel()
	res.ListSeconds = time.Since(l0).Seconds()
	res.RestartAllListedSeconds = time.Since(t0).Seconds()
	res.Listed = listed
	if lerr != nil {
		res.Notes = append(res.Notes, lerr.Error())
	}
	sctx, cancel := context.WithTimeout(ctx, o.ScaleTimeout)
	shown, serr := showJobs(sctx, addr2, "idle", res.Created, 16)
	cancel()
	res.Shown = shown
	res.RestartAllShownSeconds = time.Since(t0).Seconds()
	if serr != nil {
		res.Notes = append(res.Notes, serr.Error())
	}
	if rss, err := procRSS(srv2.PID()); err == nil {
		res.RSSAfterRestartMB = float64(rss) / (1 << 20)
	}
}

// settleRSS polls pid's RSS until it changed by less than 1% over quiet, or
// until max passed, and returns the last reading.
func settleRSS(ctx context.Context, pid int, quiet, maxWait time.Duration) int64 {
	deadline := time.Now().Add(maxWait)
	last, _ := procRSS(pid)
	lastChange := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return last
		case <-tick.C:
		}
		r, err := procRSS(pid)
		if err != nil {
			return last
		}
		if diff := r - last; diff > last/100 || -diff > last/100 {
			last, lastChange = r, time.Now()
			continue
		}
		if time.Since(lastChange) >= quiet {
			return r
		}
	}
	return last
}

// showJobs asks `job show` for prefix_0 .. prefix_<jobs-1> with clients
// concurrent clients and returns how many answered.
func showJobs(ctx context.Context, addr, prefix string, jobs, clients int) (int, error) {
	var shown atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	for w := range clients {
		wg.Go(func() {
			c, err := client.Dial(ctx, addr, client.WithTimeout(time.Minute))
			if err != nil {
				errc <- err
				return
			}
			defer c.Close()
			for i := w; i < jobs; i += clients {
				if _, err := c.ShowJob(ctx, fmt.Sprintf("%s_%d", prefix, i)); err != nil {
					errc <- fmt.Errorf("bench: show %s_%d: %w", prefix, i, err)
					return
				}
				shown.Add(1)
			}
		})
	}
	wg.Wait()
	close(errc)
	return int(shown.Load()), <-errc
}

// listStatuses reads every job's summary and status through one client's
// paged ListJobs and returns how many came with a health verdict.
func listStatuses(ctx context.Context, addr string) (int, error) {
	c, err := client.Dial(ctx, addr, client.WithTimeout(time.Minute))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	jobs, err := c.ListJobs(ctx)
	if err != nil {
		return 0, fmt.Errorf("bench: list every job: %w", err)
	}
	n := 0
	for _, j := range jobs {
		if j.GetHealth() != "" {
			n++
		}
	}
	return n, nil
}

// procThreads is the number of threads of process pid.
func procThreads(pid int) int {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return -1
	}
	return len(es)
}

// recoveryLine is the restarted node's own account of its recovery: the
// manager's "recovered jobs" line (jobs, load and journal times; the node
// serves from then on) and, once they are back, its "respawned jobs" line
// (the job actors' spawn time), "" if its log has neither.
func recoveryLine(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		for _, msg := range []string{`msg="recovered jobs"`, `msg="respawned jobs"`} {
			if i := strings.Index(l, msg); i >= 0 {
				f := strings.TrimSpace(l[i+len(msg):])
				if msg == `msg="respawned jobs"` {
					f = "respawned " + f
				}
				out = append(out, f)
			}
		}
	}
	return strings.Join(out, "; ")
}
