package node

import (
	"log/slog"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/sink"
)

// TestClusterMembersSharePostgresOwner: in cluster mode every member reads
// and writes a job's PostgreSQL progress as the cluster ("cluster:" and
// the prefix), not as itself, so a job that moves to another member finds
// its positions and fence there; another cluster (another prefix) and a
// single node on the same database do not see them.
func TestClusterMembersSharePostgresOwner(t *testing.T) {
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	open := func(member, prefix string) sink.Sink {
		t.Helper()
		cfg := config.Node{DataDir: t.TempDir(), MaxConcurrentTasks: 4, MaxErrorRowsKept: 10,
			Databases: map[string]config.Database{"db": {Type: "postgres", DSN: dsn}}}
		if member != "" {
			cfg.Cluster = config.DefaultCluster()
			cfg.Cluster.Name, cfg.Cluster.Etcd, cfg.Cluster.Prefix = member, []string{"127.0.0.1:1"}, prefix
		}
		d, err := openDatabases(cfg, vfs.Default, nil, slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(d.close)
		return d.sinks["db"]
	}
	const job = 7
	m0 := open("m0", "/a/")
	if err := m0.InitStarts(job, map[int32]int64{0: 42}, nil); err != nil {
		t.Fatal(err)
	}
	fence := sink.EpochFence(9, 0)
	if err := m0.(sink.Fencer).RaiseFence(job, fence); err != nil {
		t.Fatal(err)
	}
	progress := func(s sink.Sink) *sink.Progress {
		t.Helper()
		p, err := s.Progress(job)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Another member of the same cluster, another data directory (another
	// node id): the job's progress and fence are there.
	if p := progress(open("m1", "/a/")); p.Positions[0] != 42 || p.Fence != fence {
		t.Fatalf("another member of the cluster reads positions %v fence %d; want partition 0 at 42 and fence %d", p.Positions, p.Fence, fence)
	}
	// Another cluster, and a single node, on the same database: not theirs.
	if p := progress(open("m0", "/b/")); len(p.Positions) != 0 || p.Fence != 0 {
		t.Fatalf("a member of another cluster reads positions %v fence %d; want none", p.Positions, p.Fence)
	}
	if p := progress(open("", "")); len(p.Positions) != 0 || p.Fence != 0 {
		t.Fatalf("a single node reads positions %v fence %d; want none", p.Positions, p.Fence)
	}
}
