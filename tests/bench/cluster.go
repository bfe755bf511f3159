package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/sink"
)

// The cluster scenario: 3 `loadnode serve` members on one etcd (Debian's
// etcd-server, internal/etcdtest), one PostgreSQL (internal/pgtest) and
// the run's broker. It creates ClusterJobs jobs through the members (all
// reading one topic into one PostgreSQL table), waits until every job has
// committed, SIGKILLs one member, and measures the time until every job
// the killed member owned has committed again on a survivor (read from
// PostgreSQL: the job loaded the records produced after the SIGKILL, and
// its fence carries a later epoch). Every job must end with
// loaded_rows equal to the topic's records (exactly once).

// ScenarioCluster is the cluster scenario's name.
const ScenarioCluster = "cluster"

// clusterTopic is the cluster scenario's topic (one partition).
const clusterTopic = "loadnode_bench_cluster"

// Cluster is what the cluster scenario measured.
type Cluster struct {
	Members      int     `json:"members"`
	Jobs         int     `json:"jobs"`
	LeaseSeconds float64 `json:"lease_seconds"`
	// Created jobs, and the wall time of the creates (CreateClients in
	// flight, round-robin over the members).
	Created       int     `json:"created"`
	CreateClients int     `json:"create_clients"`
	CreateSeconds float64 `json:"create_seconds"`
	CreatesPerSec float64 `json:"creates_per_sec"`
	// EtcdTxnPerSec is the same run's etcd baseline: transactions of a
	// create's 4 puts (~1 KB) per second from CreateClients clients, each
	// waiting for its last (etcdTxnRate).
	EtcdTxnPerSec float64 `json:"etcd_txn_per_sec"`
	// CreateCPU is where the machine's CPU went during the creates.
	CreateCPU *CreateCPU `json:"create_cpu,omitempty"`
	// BrokerReadsPerSec is the same run's broker baseline of a job's task
	// start: a new consumer client reading the topic to its end, then
	// closed, 64 at once (a node's default task slots) (freshReadRate).
	BrokerReadsPerSec float64 `json:"broker_reads_per_sec"`
	// AllCommittedSeconds: from the end of the creates until every job
	// had committed its first batch.
	AllCommittedSeconds float64 `json:"all_committed_seconds"`
	// RSSMB is each member's resident memory before the kill; RSSAfterMB
	// the survivors' after the move.
	// RSSIdleMB is each member's resident memory before the creates.
	// RSSPerJobKB is the members' RSS growth from before the creates to
	// before the kill over the jobs they owned (KiB per job, all members).
	RSSIdleMB   map[string]float64 `json:"rss_idle_mb"`
	RSSPerJobKB float64            `json:"rss_per_job_kb"`
	// RSSPeakMB is each member's peak RSS (VmHWM) before the kill, and
	// RSSPeakPerJobKB the members' peak growth over the jobs.
	RSSPeakMB       []float64 `json:"rss_peak_mb"`
	RSSPeakPerJobKB float64   `json:"rss_peak_per_job_kb"`
	// RSSActivePerJobKB: the survivors' peak RSS growth (VmHWM over their
	// RSS before the creates) after the move, over every job (all of
	// which they then hold, and all of which ran a task since the kill).
	RSSActivePerJobKB float64            `json:"rss_active_per_job_kb"`
	RSSMB             map[string]float64 `json:"rss_mb"`
	RSSAfterMB        map[string]float64 `json:"rss_after_mb"`
	Killed            string             `json:"killed"`
	Moved             int                `json:"moved"`
	// MoveCommittedSeconds: from the SIGKILL until every moved job had
	// committed again on a survivor; MoveTargetSeconds is lease + 10 s.
	MoveCommittedSeconds float64 `json:"move_committed_seconds"`
	MoveTargetSeconds    float64 `json:"move_target_seconds"`
	// BaselineSeconds: from the SIGKILL until the survivors' own jobs
	// (not moved) had loaded the records produced right after it.
	BaselineSeconds float64 `json:"baseline_seconds"`
	// ExactlyOnce: every job's loaded_rows equals the topic's records.
	ExactlyOnce bool  `json:"exactly_once"`
	Records     int64 `json:"records"`
	// EtcdKeys and EtcdDBMB describe etcd at the end.
	EtcdKeys int64    `json:"etcd_keys"`
	EtcdDBMB float64  `json:"etcd_db_mb"`
	Notes    []string `json:"notes,omitempty"`
}

// clusterMember is one member process.
type clusterMember struct {
	name string
	p    *testnode.Proc
	c    *client.Client
}

// runCluster runs the cluster scenario.
func runCluster(ctx context.Context, o Options, brokers []string, logf func(string, ...any)) (*Cluster, error) {
	const members = 3
	clients := o.ClusterCreateClients
	if clients <= 0 {
		clients = 24
	}
	res := &Cluster{Members: members, Jobs: o.ClusterJobs, LeaseSeconds: o.ClusterLease.Seconds(), CreateClients: clients,
		RSSMB: map[string]float64{}, RSSIdleMB: map[string]float64{}, RSSAfterMB: map[string]float64{}}
	res.MoveTargetSeconds = res.LeaseSeconds + 10
	ctx, cancel := context.WithTimeout(ctx, o.ClusterTimeout)
	defer cancel()

	bin, err := etcdtest.FindBin()
	if err != nil {
		return nil, fmt.Errorf("bench: cluster: %w", err)
	}
	edir, err := tempDir("cluster-etcd")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(edir)
	etcd, err := etcdtest.Launch(bin, edir)
	if err != nil {
		return nil, fmt.Errorf("bench: cluster: %w", err)
	}
	defer etcd.Close()
	pg, err := startPostgres()
	if err != nil {
		return nil, fmt.Errorf("bench: cluster: %w", err)
	}
	defer pg.srv.Close()
	dsn, err := pg.freshDatabase(ctx, "cluster")
	if err != nil {
		return nil, err
	}
	const first = 100 // records before the kill
	if _, err := prepareTopic(ctx, brokers, clusterTopic, "json", 1, first, o.RecordBytes); err != nil {
		return nil, err
	}
	logf("cluster: etcd at %s, postgres on port %d, %d members, %d jobs, lease %v", etcd.Endpoint(), pg.srv.Port(), members, o.ClusterJobs, o.ClusterLease)
	if res.EtcdTxnPerSec, err = etcdTxnRate(ctx, etcd.Endpoints(), res.CreateClients, min(o.ClusterJobs, 2000)); err != nil {
		return nil, err
	}
	logf("cluster: etcd baseline: %.0f create-shaped transactions/s (%d clients, one at a time each)", res.EtcdTxnPerSec, res.CreateClients)
	if res.BrokerReadsPerSec, err = freshReadRate(ctx, brokers, clusterTopic, first, 64, min(o.ClusterJobs, 1000)); err != nil {
		return nil, err
	}
	logf("cluster: broker baseline: %.0f reads/s of the topic's %d records, each by a new consumer client (64 at once)", res.BrokerReadsPerSec, first)

	if o.ClusterProfile != "" {
		if err := os.MkdirAll(o.ClusterProfile, 0o755); err != nil {
			return nil, fmt.Errorf("bench: cluster: %w", err)
		}
	}
	var ms []*clusterMember
	defer func() {
		for _, m := range ms {
			if m.c != nil {
				m.c.Close()
			}
			_ = stopServe(m.p, 30*time.Second)
		}
	}()
	for i := range members {
		name := fmt.Sprintf("m%d", i)
		dir, err := tempDir("cluster-" + name)
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		cfg := filepath.Join(dir, "node.yaml")
		yaml := fmt.Sprintf("cluster:\n  name: %s\n  etcd: [%q]\n  lease: %s\n  request_timeout: 5s\n"+
			"databases:\n  %s:\n    type: postgres\n    dsn: %q\n", name, etcd.Endpoint(), o.ClusterLease, benchDatabase, dsn)
		if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
			return nil, err
		}
		var mlog io.Writer
		if o.ClusterProfile != "" {
			// The member's log beside its profiles.
			f, err := os.Create(filepath.Join(o.ClusterProfile, name+".log"))
			if err != nil {
				return nil, fmt.Errorf("bench: cluster: %w", err)
			}
			defer f.Close()
			mlog = f
		}
		lctx, lcancel := context.WithTimeout(ctx, time.Minute)
		p, err := testnode.Launch(lctx, testnode.Options{Binary: o.Binary, DataDir: filepath.Join(dir, "data"), HTTP: true,
			Args: []string{"--config", cfg}, ReadyTimeout: time.Minute, Log: mlog})
		lcancel()
		if err != nil {
			if p != nil {
				logf("cluster: %s output:\n%s", name, p.Tail(40))
			}
			return nil, fmt.Errorf("bench: cluster: start %s: %w", name, err)
		}
		m := &clusterMember{name: name, p: p}
		ms = append(ms, m)
		if m.c, err = client.Dial(ctx, p.Addr(), client.WithTimeout(time.Minute)); err != nil {
			return nil, fmt.Errorf("bench: cluster: dial %s: %w", name, err)
		}
	}

	for _, m := range ms {
		if rss, err := procRSS(m.p.PID()); err == nil {
			res.RSSIdleMB[m.name] = float64(rss) / (1 << 20)
		}
	}
	var profiles sync.WaitGroup
	defer profiles.Wait()
	profile := func(what, path string, except *clusterMember) {
		if o.ClusterProfile == "" {
			return
		}
		for _, m := range ms {
			if m != except {
				profiles.Go(func() {
					dumpURL(ctx, "http://"+m.p.AdminAddr()+"/debug/pprof/"+path, filepath.Join(o.ClusterProfile, m.name+"."+what))
				})
			}
		}
	}
	if o.ClusterProfile != "" {
		if err := os.MkdirAll(o.ClusterProfile, 0o755); err != nil {
			return nil, fmt.Errorf("bench: cluster: %w", err)
		}
	}
	profile("create.cpu.pprof", "profile?seconds=10", nil)
	if o.ClusterProfile != "" {
		// What the members wait on while they create (debug=1: stacks
		// counted), 5 s into the creates.
		profiles.Go(func() {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				profile("create.goroutines.txt", "goroutine?debug=1", nil)
			}
		})
	}

	// 1. Create, round-robin over the members.
	var pids []int
	for _, m := range ms {
		pids = append(pids, m.p.PID())
	}
	cpu := startCPUWindow(pids, etcd.PID())
	t0 := time.Now()
	var created atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan int)
	for w := range res.CreateClients {
		wg.Go(func() {
			for i := range next {
				spec := o.jobSpec(fmt.Sprintf("c%05d", i), "bench_cluster_t", "json", clusterTopic, brokers)
				spec.Table.Database = benchDatabase
				spec.DesiredConcurrentNumber = 1
				if _, err := ms[(i+w)%members].c.CreateJob(ctx, spec); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("bench: cluster: create %d: %w", i, err)
					}
					mu.Unlock()
					continue
				}
				created.Add(1)
			}
		})
	}
	for i := range o.ClusterJobs {
		select {
		case next <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(next)
	wg.Wait()
	res.Created = int(created.Load())
	res.CreateSeconds = time.Since(t0).Seconds()
	res.CreatesPerSec = float64(res.Created) / res.CreateSeconds
	res.CreateCPU = cpu.end()
	if u := res.CreateCPU; u != nil {
		logf("cluster: CPU during the creates: machine %.2f of %d cores busy (members %.2f, etcd %.2f, this bench %.2f)", u.Busy, u.Cores, u.Members, u.Etcd, u.Bench)
	}
	logf("cluster: created %d jobs in %.1fs (%.0f/s)", res.Created, res.CreateSeconds, res.CreatesPerSec)
	if firstErr != nil {
		return res, firstErr
	}

	db, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return res, fmt.Errorf("bench: cluster: postgres: %w", err)
	}
	defer db.Close()
	type jobRow struct {
		fence, batches, loaded int64
	}
	readJobs := func() (map[uint64]jobRow, error) {
		qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
		defer qcancel()
		rows, err := db.Query(qctx, `SELECT job, fence, committed_batches, loaded_rows FROM loadnode.jobs`)
		if err != nil {
			return nil, err
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
			id uint64
			jobRow
		}, error) {
			var id, f, b, l int64
			err := r.Scan(&id, &f, &b, &l)
			return struct {
				id uint64
				jobRow
			}{uint64(id), jobRow{f, b, l}}, err
		})
		if err != nil {
			return nil, err
		}
		m := make(map[uint64]jobRow, len(out))
		for _, r := range out {
			m[r.id] = r.jobRow
		}
		return m, nil
	}
	// waitRows polls PostgreSQL until ok holds for every row of ids.
	waitRows := func(what string, ids []uint64, ok func(id uint64, r jobRow) bool) error {
		for {
			rows, err := readJobs()
			if err != nil {
				return fmt.Errorf("bench: cluster: %s: %w", what, err)
			}
			n := 0
			for _, id := range ids {
				if r, has := rows[id]; has && ok(id, r) {
					n++
				}
			}
			if n == len(ids) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("bench: cluster: %s: %d of %d after the time limit: %w", what, n, len(ids), ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}

	// 2. Every job commits the first records.
	t1 := time.Now()
	list, err := ms[0].c.ListJobs(ctx)
	if err != nil {
		return res, fmt.Errorf("bench: cluster: list: %w", err)
	}
	for len(list) < res.Created && ctx.Err() == nil {
		// A member's registry learns of jobs created through the others
		// from its watch, a moment later.
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
		if list, err = ms[0].c.ListJobs(ctx); err != nil {
			return res, fmt.Errorf("bench: cluster: list: %w", err)
		}
	}
	var all []uint64
	for _, j := range list {
		all = append(all, j.GetId())
	}
	if err := waitRows("every job's first commit", all, func(_ uint64, r jobRow) bool { return r.loaded == first }); err != nil {
		return res, err
	}
	res.AllCommittedSeconds = time.Since(t1).Seconds()
	logf("cluster: every job committed its first %d records %.1fs after the creates", first, res.AllCommittedSeconds)
	profile("heap.pprof", "heap?gc=1", nil)
	profile("goroutines.txt", "goroutine?debug=1", nil)
	for _, m := range ms {
		if rss, err := procRSS(m.p.PID()); err == nil {
			res.RSSMB[m.name] = float64(rss) / (1 << 20)
		}
	}

	// 3. SIGKILL the member owning the most jobs; more records arrive.
	owner := map[uint64]string{}
	perMember := map[string]int{}
	if list, err = ms[0].c.ListJobs(ctx); err != nil {
		return res, fmt.Errorf("bench: cluster: list: %w", err)
	}
	for _, j := range list {
		owner[j.GetId()] = j.GetOwner()
		perMember[j.GetOwner()]++
	}
	var grew float64
	for _, m := range ms {
		grew += res.RSSMB[m.name] - res.RSSIdleMB[m.name]
	}
	if len(list) > 0 {
		res.RSSPerJobKB = grew * 1024 / float64(len(list))
		// The peak (VmHWM) is while the jobs start, read and commit their
		// first batch: the jobs are active then, not caught up.
		var peak float64
		for _, m := range ms {
			if hwm, err := procHWM(m.p.PID()); err == nil {
				res.RSSPeakMB = append(res.RSSPeakMB, float64(hwm)/(1<<20))
				peak += float64(hwm)/(1<<20) - res.RSSIdleMB[m.name]
			}
		}
		res.RSSPeakPerJobKB = peak * 1024 / float64(len(list))
	}
	victim := ms[len(ms)-1]
	for _, m := range ms {
		if perMember[m.name] > perMember[victim.name] {
			victim = m
		}
	}
	before, err := readJobs()
	if err != nil {
		return res, fmt.Errorf("bench: cluster: %w", err)
	}
	var moved []uint64
	for id, o := range owner {
		if o == victim.name {
			moved = append(moved, id)
		}
	}
	slices.Sort(moved)
	res.Killed, res.Moved = victim.name, len(moved)
	killed := time.Now()
	if err := victim.p.Kill(); err != nil {
		return res, fmt.Errorf("bench: cluster: kill %s: %w", victim.name, err)
	}
	logf("cluster: SIGKILLed %s, which owned %d jobs (per member %v)", victim.name, len(moved), perMember)
	profile("move.cpu.pprof", "profile?seconds=20", victim)
	debug := os.Getenv("LOADNODE_BENCH_CLUSTER_DEBUG")
	if debug != "" {
		// A goroutine dump of each survivor 4 s into the move, and every
		// member's log at the end, in that directory.
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(4 * time.Second):
			}
			for _, m := range ms {
				if m != victim {
					logf("cluster: debug: goroutines of %s (admin %s)", m.name, m.p.AdminAddr())
					dumpURL(ctx, "http://"+m.p.AdminAddr()+"/debug/pprof/goroutine?debug=1", filepath.Join(debug, m.name+".goroutines"))
				}
			}
		}()
		defer func() {
			for _, m := range ms {
				_ = os.WriteFile(filepath.Join(debug, m.name+".log"), []byte(m.p.Log()), 0o644)
			}
		}()
	}
	const more = 10
	if err := produce(ctx, brokers, clusterTopic, first, more, o.RecordBytes); err != nil {
		return res, err
	}
	res.Records = first + more
	// The new records were produced after the SIGKILL: a job that loaded
	// them committed on a survivor, at a later epoch (a later re-stamp
	// may have raised its fence again since, to a generation 0). The
	// baseline of the same run: the survivors' own jobs loading the same
	// new records (no move, the same scheduling and source).
	var stayed []uint64
	for id, o := range owner {
		if o != victim.name {
			stayed = append(stayed, id)
		}
	}
	baseDone := make(chan struct{})
	go func() {
		defer close(baseDone)
		if waitRows("the survivors' own jobs loaded the new records", stayed, func(_ uint64, r jobRow) bool { return r.loaded == res.Records }) == nil {
			mu.Lock()
			res.BaselineSeconds = time.Since(killed).Seconds()
			mu.Unlock()
		}
	}()
	err = waitRows("every moved job committed on a survivor", moved, func(id uint64, r jobRow) bool {
		f, was := uint64(r.fence), uint64(before[id].fence)
		return r.loaded == res.Records && sink.FenceEpoch(f) > sink.FenceEpoch(was) && r.batches > before[id].batches
	})
	if err != nil {
		return res, err
	}
	res.MoveCommittedSeconds = time.Since(killed).Seconds()
	logf("cluster: every one of the %d moved jobs committed on a survivor %.1fs after the SIGKILL (lease %v; target lease + 10s = %.0fs)",
		len(moved), res.MoveCommittedSeconds, o.ClusterLease, res.MoveTargetSeconds)
	<-baseDone
	mu.Lock()
	logf("cluster: baseline: the survivors' own %d jobs loaded the new records %.1fs after the SIGKILL", len(stayed), res.BaselineSeconds)
	mu.Unlock()
	// Every job the survivors hold has just run a task (the move, and the
	// records produced after the kill): their peak over the jobs is the
	// memory of an active job.
	var peakAfter float64
	for _, m := range ms {
		if m == victim {
			continue
		}
		if rss, err := procRSS(m.p.PID()); err == nil {
			res.RSSAfterMB[m.name] = float64(rss) / (1 << 20)
		}
		if hwm, err := procHWM(m.p.PID()); err == nil {
			peakAfter += float64(hwm)/(1<<20) - res.RSSIdleMB[m.name]
		}
	}
	if len(all) > 0 {
		res.RSSActivePerJobKB = peakAfter * 1024 / float64(len(all))
	}
	profile("after.heap.pprof", "heap?gc=1", victim)

	// 4. Exactly once: every job loads every record once.
	err = waitRows("every job loaded every record", all, func(_ uint64, r jobRow) bool { return r.loaded >= res.Records })
	final, rerr := readJobs()
	if rerr == nil {
		res.ExactlyOnce = err == nil
		for _, id := range all {
			if final[id].loaded != res.Records {
				res.ExactlyOnce = false
				res.Notes = append(res.Notes, fmt.Sprintf("job %d loaded %d rows, want %d", id, final[id].loaded, res.Records))
				if len(res.Notes) > 5 {
					break
				}
			}
		}
	}
	var count int64
	if qerr := db.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{"bench_cluster_t"}.Sanitize()).Scan(&count); qerr == nil &&
		count != res.Records*int64(res.Created) {
		res.ExactlyOnce = false
		res.Notes = append(res.Notes, fmt.Sprintf("table holds %d rows, want %d (%d jobs x %d records)", count, res.Records*int64(res.Created), res.Created, res.Records))
	}
	if ec, cerr := clientv3.New(clientv3.Config{Endpoints: etcd.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()}); cerr == nil {
		gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
		if r, err := ec.Get(gctx, "", clientv3.WithPrefix(), clientv3.WithCountOnly()); err == nil {
			res.EtcdKeys = r.Count
		}
		if st, err := ec.Status(gctx, etcd.Endpoint()); err == nil {
			res.EtcdDBMB = float64(st.DbSize) / (1 << 20)
		}
		gcancel()
		ec.Close()
	}
	return res, errors.Join(err, rerr)
}

// etcdTxnRate is the etcd baseline of the creates: n transactions, each
// of 4 puts shaped like a create's (a ~1 KB record, a name, a head and a
// journal entry of ~100 B), from clients goroutines over 3 clients (one
// per member), each committing one at a time; it deletes its keys after.
func etcdTxnRate(ctx context.Context, endpoints []string, clients, n int) (float64, error) {
	var cls []*clientv3.Client
	defer func() {
		for _, c := range cls {
			c.Close()
		}
	}()
	for range 3 {
		c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			return 0, fmt.Errorf("bench: cluster: etcd baseline: %w", err)
		}
		cls = append(cls, c)
	}
	rec, small := strings.Repeat("r", 1000), strings.Repeat("h", 100)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, clients)
	t0 := time.Now()
	for w := range clients {
		wg.Go(func() {
			c := cls[w%len(cls)]
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				k := fmt.Sprintf("/bench-baseline/%020d", i)
				tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := c.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(k+"/rec"), "=", 0)).Then(
					clientv3.OpPut(k+"/name", "1"), clientv3.OpPut(k+"/rec", rec),
					clientv3.OpPut(k+"/head", small), clientv3.OpPut(k+"/log", small)).Commit()
				cancel()
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	rate := float64(n) / time.Since(t0).Seconds()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("bench: cluster: etcd baseline: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := cls[0].Delete(dctx, "/bench-baseline/", clientv3.WithPrefix()); err != nil {
		return 0, fmt.Errorf("bench: cluster: etcd baseline: %w", err)
	}
	return rate, nil
}

// procHWM is the peak resident memory of process pid (VmHWM), in bytes.
func procHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(rest, &kb); err != nil {
				return 0, fmt.Errorf("bench: /proc/%d/status: VmHWM: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("bench: /proc/%d/status: no VmHWM", pid)
}

// freshReadRate is the broker baseline of task starts: n reads, each by
// a new franz-go consumer client of partition 0 of topic from offset 0
// until it has the topic's records, then closed, conc at once.
func freshReadRate(ctx context.Context, brokers []string, topic string, records, conc, n int) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, conc)
	t0 := time.Now()
	for w := range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DisableClientMetrics(),
					kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().At(0)}}),
					kgo.FetchIsolationLevel(kgo.ReadCommitted()))
				if err != nil {
					errs[w] = err
					return
				}
				got := 0
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				for got < records && rctx.Err() == nil {
					f := cl.PollFetches(rctx)
					got += f.NumRecords()
				}
				cancel()
				cl.Close()
				if got < records {
					errs[w] = fmt.Errorf("read %d of %d records", got, records)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("bench: cluster: broker baseline: %w", err)
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

// dumpURL writes what url answers to file (a debugging aid).
func dumpURL(ctx context.Context, url, file string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	_ = os.WriteFile(file, b, 0o644)
}

// produce appends n records (numbered from start) to partition 0 of topic.
func produce(ctx context.Context, brokers []string, topic string, start, n, size int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return fmt.Errorf("bench: producer: %w", err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := start; i < start+n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: appendRecord(nil, "json", i, size)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("bench: produce %s: %w", topic, err)
	}
	return nil
}

// writeClusterText prints the cluster scenario's table.
func writeClusterText(b *strings.Builder, c *Cluster) {
	if c == nil {
		return
	}
	fmt.Fprintf(b, "\nCluster: %d members on one etcd, %d jobs into one PostgreSQL table, lease %.0fs\n\n", c.Members, c.Jobs, c.LeaseSeconds)
	fmt.Fprintf(b, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(b, "| created (%d clients, round-robin over members) | %d in %.1f s (%.0f/s) |\n", c.CreateClients, c.Created, c.CreateSeconds, c.CreatesPerSec)
	fmt.Fprintf(b, "| baseline: etcd transactions of a create's 4 puts, %d clients one at a time each | %.0f/s (creates/s over it: %.2f) |\n", c.CreateClients, c.EtcdTxnPerSec, c.CreatesPerSec/max(c.EtcdTxnPerSec, 1))
	if u := c.CreateCPU; u != nil {
		fmt.Fprintf(b, "| baseline: CPU during the creates, cores of %d (whole machine busy; members, etcd, this bench; the rest is the broker, PostgreSQL and other processes) | %.2f busy; %.2f, %.2f, %.2f; rest %.2f |\n",
			u.Cores, u.Busy, u.Members, u.Etcd, u.Bench, max(u.Busy-u.Members-u.Etcd-u.Bench, 0))
	}
	fmt.Fprintf(b, "| baseline: broker reads of the topic by a new consumer client each (a task start), 64 at once | %.0f/s (%d moved jobs: %.1f s) |\n", c.BrokerReadsPerSec, c.Moved, float64(c.Moved)/max(c.BrokerReadsPerSec, 1))
	fmt.Fprintf(b, "| every job's first commit, after the creates | %.1f s |\n", c.AllCommittedSeconds)
	fmt.Fprintf(b, "| SIGKILLed member, its jobs | %s, %d |\n", c.Killed, c.Moved)
	met := "met"
	if c.MoveCommittedSeconds <= 0 || c.MoveCommittedSeconds > c.MoveTargetSeconds {
		met = "NOT met"
	}
	fmt.Fprintf(b, "| SIGKILL until every moved job committed on a survivor | %.1f s (target lease + 10 s = %.0f s: %s) |\n", c.MoveCommittedSeconds, c.MoveTargetSeconds, met)
	fmt.Fprintf(b, "| baseline: SIGKILL until the survivors' own jobs loaded the records produced after it | %.1f s |\n", c.BaselineSeconds)
	fmt.Fprintf(b, "| RSS per job (members' growth from before the creates to before the kill, over the jobs) | %.0f KiB |\n", c.RSSPerJobKB)
	fmt.Fprintf(b, "| peak RSS per job (members' VmHWM before the kill, while jobs started and loaded, over the jobs) | %.0f KiB (peaks %.0f MiB) |\n", c.RSSPeakPerJobKB, c.RSSPeakMB)
	fmt.Fprintf(b, "| RSS per active job (survivors' VmHWM after the move, every job having run a task since the kill, over the jobs) | %.0f KiB (target 150 KiB) |\n", c.RSSActivePerJobKB)
	for _, name := range slices.Sorted(maps.Keys(c.RSSMB)) {
		after := "-"
		if v, ok := c.RSSAfterMB[name]; ok {
			after = fmt.Sprintf("%.0f MiB", v)
		}
		fmt.Fprintf(b, "| RSS %s idle, before -> after the move | %.0f MiB, %.0f MiB -> %s |\n", name, c.RSSIdleMB[name], c.RSSMB[name], after)
	}
	fmt.Fprintf(b, "| exactly once (loaded_rows = %d records, for every job; table row count) | %v |\n", c.Records, c.ExactlyOnce)
	fmt.Fprintf(b, "| etcd keys, db size at the end | %d, %.1f MiB |\n", c.EtcdKeys, c.EtcdDBMB)
	for _, n := range c.Notes {
		fmt.Fprintf(b, "\nnote: %s\n", n)
	}
}
