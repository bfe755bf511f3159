package testnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ClusterMember describes one cluster-mode member's node config.
type ClusterMember struct {
	Name string   // cluster.name, unique per member
	Etcd []string // cluster.etcd endpoints
	// Lease is cluster.lease; 0: the node's default.
	Lease time.Duration
	// RequestTimeout is cluster.request_timeout; 0: the node's default.
	RequestTimeout time.Duration
	// Databases maps a database name to its PostgreSQL DSN.
	Databases map[string]string
	// Extra is more top-level YAML (e.g. "auto_resume_base: 1s\n").
	Extra string
}

// WriteClusterConfig writes m's node config into dir and returns the
// `serve` arguments that use it (--config FILE). tests/e2e's cluster tests
// and tests/chaos's TestChaosCluster start their members with it.
func WriteClusterConfig(dir string, m ClusterMember) ([]string, error) {
	if m.Name == "" || len(m.Etcd) == 0 {
		return nil, fmt.Errorf("testnode: a cluster member needs a name and etcd endpoints")
	}
	var b strings.Builder
	b.WriteString(m.Extra)
	fmt.Fprintf(&b, "cluster:\n  name: %s\n  etcd: [", m.Name)
	for i, e := range m.Etcd {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", e)
	}
	b.WriteString("]\n")
	if m.Lease > 0 {
		fmt.Fprintf(&b, "  lease: %s\n", m.Lease)
	}
	if m.RequestTimeout > 0 {
		fmt.Fprintf(&b, "  request_timeout: %s\n", m.RequestTimeout)
	}
	if len(m.Databases) > 0 {
		b.WriteString("databases:\n")
		for name, dsn := range m.Databases {
			fmt.Fprintf(&b, "  %s:\n    type: postgres\n    dsn: %q\n", name, dsn)
		}
	}
	file := filepath.Join(dir, m.Name+".yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("testnode: %w", err)
	}
	return []string{"--config", file}, nil
}
