package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

// startNode starts an in-process node on a fresh data directory; cleanup
// closes it and removes the directory.
func startNode(ctx context.Context, o Options, prefix string) (*node.Node, func(), error) {
	return startNodeDB(ctx, o, prefix, "")
}

// startNodeDB is startNode with, when dsn is set, the database "bench" of
// the node config at dsn.
func startNodeDB(ctx context.Context, o Options, prefix, dsn string) (*node.Node, func(), error) {
	dir, err := tempDir(prefix)
	if err != nil {
		return nil, nil, err
	}
	cfg := config.DefaultNode()
	if dsn != "" {
		cfg.Databases = map[string]config.Database{benchDatabase: {Type: config.DatabasePostgres, DSN: dsn, Schema: "public"}}
	}
	cfg.DataDir = dir
	cfg.Listen = "127.0.0.1:0"
	cfg.HTTP = "127.0.0.1:0" // /metrics: the jobs' commit times
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: o.Logger})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("bench: start node: %w", err)
	}
	return n, func() { n.Close(); os.RemoveAll(dir) }, nil
}

// e2eRun starts a node, creates a job loading topic through the client and
// measures from the create until every partition's committed offset is its
// end offset. It checks that the job loaded exactly the topic's records.
func e2eRun(ctx context.Context, o Options, brokers []string, topic, format string, ends map[int32]int64, run int) (sample, error) {
	return e2eRunDB(ctx, o, brokers, topic, format, ends, run, "")
}

// e2eRunDB is e2eRun loading into the PostgreSQL database at dsn when set.
func e2eRunDB(ctx context.Context, o Options, brokers []string, topic, format string, ends map[int32]int64, run int, dsn string) (sample, error) {
	n, cleanup, err := startNodeDB(ctx, o, "e2e", dsn)
	if err != nil {
		return sample{}, err
	}
	defer cleanup()
	c, err := client.Dial(ctx, n.Addr())
	if err != nil {
		return sample{}, fmt.Errorf("bench: dial: %w", err)
	}
	defer c.Close()
	name := fmt.Sprintf("bench_%s_p%d_r%d", format, len(ends), run)
	spec := o.jobSpec(name, name+"_t", format, topic, brokers)
	if dsn != "" {
		spec.Name, spec.Table.Name = "pg_"+name, "pg_"+name+"_t"
		name = spec.Name
		spec.Table.Database = benchDatabase
	}
	want := sum(ends)
	bytes := int64(0)

	m := startMeter(o.brokerPID)
	if _, err := c.CreateJob(ctx, spec); err != nil {
		return sample{}, fmt.Errorf("bench: create %s: %w", name, err)
	}
	// The end is watched with the light read's long poll (one answer per
	// committed batch, from what the job published; no journal or sink
	// read), so watching costs the measured process almost nothing.
	var after int64
	for {
		jc, err := c.WaitCommitted(ctx, name, after, committedWait)
		if err != nil {
			return sample{}, fmt.Errorf("bench: committed %s: %w", name, err)
		}
		if committedUp(jc, ends) {
			break
		}
		if st := jc.GetState(); st == api.JobState_PAUSED || st == api.JobState_CANCELLED {
			return sample{}, fmt.Errorf("bench: job %s is %s: %s", name, st, jc.GetReason())
		}
		if ctx.Err() != nil {
			return sample{}, fmt.Errorf("bench: job %s: loaded %d of %d: %w", name, jc.GetLoadedRows(), want, ctx.Err())
		}
		after = jc.GetCommittedBatches()
	}
	s := m.stop(want, 0)
	// The job's statistics, once, after the measured window.
	info, err := c.ShowJob(ctx, name)
	if err != nil {
		return sample{}, fmt.Errorf("bench: show %s: %w", name, err)
	}
	if !caughtUp(info, ends) {
		return sample{}, fmt.Errorf("bench: job %s: committed positions seen caught up, but job show says otherwise", name)
	}
	bytes = info.GetStats().GetReceivedBytes()
	s.bytes = bytes
	s.batches = info.GetStats().GetCommittedBatches()
	// Exactly once: the loaded-rows statistic is committed with the rows.
	if got := info.GetStats().GetLoadedRows(); got != want || info.GetStats().GetErrorRows() != 0 {
		return sample{}, fmt.Errorf("bench: job %s loaded %d rows (%d error rows) of %d records", name, got, info.GetStats().GetErrorRows(), want)
	}
	if bytes == 0 {
		s.bytes = want * int64(o.RecordBytes)
	}
	// The commit path: the time the job spent in its synced commits, as the
	// node's /metrics reports it (loadnode_batch_commit_seconds).
	if s.commitSecs, err = commitSeconds(ctx, n.AdminAddr(), name); err != nil {
		return sample{}, err
	}
	return s, nil
}

// committedWait bounds one long poll of the job's committed positions.
const committedWait = time.Second

// commitSeconds reads job's loadnode_batch_commit_seconds_sum from the
// node's /metrics at addr.
func commitSeconds(ctx context.Context, addr, job string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("bench: metrics: %w", err)
	}
	defer resp.Body.Close()
	prefix := fmt.Sprintf("loadnode_batch_commit_seconds_sum{job=%q} ", job)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("bench: metrics: %w", err)
	}
	return 0, fmt.Errorf("bench: metrics: no %s", strings.TrimSpace(prefix))
}

// committedUp reports whether the light read jc has every partition of
// ends committed to its end.
func committedUp(jc *api.JobCommitted, ends map[int32]int64) bool {
	ps := jc.GetPositions()
	return atEnds(len(ps), func(i int) (int32, int64) { return ps[i].GetPartition(), ps[i].GetCommittedOffset() }, ends)
}

// caughtUp reports whether every partition of ends is committed to its end.
func caughtUp(info *api.JobInfo, ends map[int32]int64) bool {
	ps := info.GetPartitions()
	return atEnds(len(ps), func(i int) (int32, int64) { return ps[i].GetPartition(), ps[i].GetCommittedOffset() }, ends)
}

// atEnds reports whether the n committed positions that at gives hold
// every partition of ends at its end.
func atEnds(n int, at func(i int) (partition int32, committed int64), ends map[int32]int64) bool {
	if n < len(ends) {
		return false
	}
	seen := 0
	for i := range n {
		p, committed := at(i)
		end, ok := ends[p]
		if !ok {
			continue
		}
		if committed != end {
			return false
		}
		seen++
	}
	return seen == len(ends)
}
