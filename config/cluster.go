package config

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Cluster is a node's cluster membership (`cluster:` in the node config).
// A node without it (Name == "") is a single node with its metadata in its
// embedded store; with it, the node's job snapshots, journal and table
// catalog live in etcd and jobs are spread over the live members. See
// docs/cluster.md ("Running a cluster").
type Cluster struct {
	// Name identifies the member; unique per member of a cluster. Letters,
	// digits, '-', '_' and '.'. Required in cluster mode.
	Name string `yaml:"name"`
	// Etcd are the etcd endpoints, host:port. Required in cluster mode.
	Etcd []string `yaml:"etcd"`
	// Lease is the membership lease TTL: a member that does not renew it
	// for this long (killed, frozen, partitioned) loses its jobs to the
	// others. Default 10s; whole seconds, 2s..300s.
	Lease time.Duration `yaml:"lease"`
	// Prefix is the etcd key prefix of this cluster's data; clusters that
	// share an etcd use different prefixes. Default "/loadnode/"; must
	// start and end with '/'.
	Prefix string `yaml:"prefix"`
	// MaxJobsPerNode caps the jobs one member owns. Default 0 (no cap); a
	// job beyond every member's cap stays unassigned (and is reported so by
	// `loadnode cluster status`) until a member has room.
	MaxJobsPerNode int `yaml:"max_jobs_per_node"`
	// RequestTimeout bounds each etcd call. Default 5s; > 0.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// User and PasswordFile authenticate to etcd (etcd's user/password
	// auth); the file holds the password, trimmed. Default none. Both or
	// neither.
	User         string `yaml:"user"`
	PasswordFile string `yaml:"password_file"`
	// TLSCAFile verifies etcd's server certificate; TLSCertFile and
	// TLSKeyFile are a client certificate (both or neither). Default none
	// (plain http). Any of them set means the etcd endpoints speak TLS.
	TLSCAFile   string `yaml:"tls_ca_file"`
	TLSCertFile string `yaml:"tls_cert_file"`
	TLSKeyFile  string `yaml:"tls_key_file"`
}

// Enabled reports whether the node is a cluster member.
func (c Cluster) Enabled() bool { return c.Name != "" || len(c.Etcd) > 0 }

// DefaultCluster is a Cluster's defaults (Name and Etcd have none).
func DefaultCluster() Cluster {
	return Cluster{Lease: 10 * time.Second, Prefix: "/loadnode/", RequestTimeout: 5 * time.Second}
}

var clusterKeys = []string{"name", "etcd", "lease", "prefix", "max_jobs_per_node", "request_timeout",
	"user", "password_file", "tls_ca_file", "tls_cert_file", "tls_key_file"}

func (d *decoder) cluster(v *yaml.Node) (Cluster, error) {
	c := DefaultCluster()
	if isNull(v) {
		return c, nil
	}
	err := d.mapping(v, "cluster", clusterKeys, func(key string, kv *yaml.Node) error {
		field := "cluster." + key
		var err error
		switch key {
		case "name":
			c.Name, err = str(kv, field)
		case "etcd":
			var items []item
			if items, err = d.list(kv, field); err == nil {
				c.Etcd = nil
				for _, it := range items {
					c.Etcd = append(c.Etcd, it.text)
				}
			}
		case "lease":
			c.Lease, err = duration(kv, field)
		case "prefix":
			c.Prefix, err = str(kv, field)
		case "max_jobs_per_node":
			c.MaxJobsPerNode, err = nodeInt(kv, field)
		case "request_timeout":
			c.RequestTimeout, err = duration(kv, field)
		case "user":
			c.User, err = str(kv, field)
		case "password_file":
			c.PasswordFile, err = str(kv, field)
		case "tls_ca_file":
			c.TLSCAFile, err = str(kv, field)
		case "tls_cert_file":
			c.TLSCertFile, err = str(kv, field)
		case "tls_key_file":
			c.TLSKeyFile, err = str(kv, field)
		}
		return err
	})
	return c, err
}

// Validate checks a cluster section; a disabled one (no name, no etcd) is
// valid.
func (c Cluster) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if c.Name == "" {
		return fieldErr("cluster.name", "required in cluster mode")
	}
	for _, r := range c.Name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fieldErr("cluster.name", "%q: want letters, digits, '-', '_' and '.'", c.Name)
		}
	}
	if len(c.Name) > 128 {
		return fieldErr("cluster.name", "longer than 128 bytes")
	}
	if len(c.Etcd) == 0 {
		return fieldErr("cluster.etcd", "required in cluster mode: at least one etcd endpoint host:port")
	}
	for i, e := range c.Etcd {
		host, port, err := net.SplitHostPort(e)
		if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
			return fieldErr(fmt.Sprintf("cluster.etcd[%d]", i), "%q must be host:port", e)
		}
	}
	if c.Lease < 2*time.Second || c.Lease > 300*time.Second || c.Lease%time.Second != 0 {
		return fieldErr("cluster.lease", "%s must be whole seconds between 2s and 300s", c.Lease)
	}
	if len(c.Prefix) < 2 || c.Prefix[0] != '/' || c.Prefix[len(c.Prefix)-1] != '/' {
		return fieldErr("cluster.prefix", "%q must start and end with /", c.Prefix)
	}
	if c.MaxJobsPerNode < 0 {
		return fieldErr("cluster.max_jobs_per_node", "%d must be >= 0 (0: no cap)", c.MaxJobsPerNode)
	}
	if c.RequestTimeout <= 0 {
		return fieldErr("cluster.request_timeout", "%s must be > 0", c.RequestTimeout)
	}
	if (c.User == "") != (c.PasswordFile == "") {
		return fieldErr("cluster.password_file", "user and password_file go together")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return fieldErr("cluster.tls_key_file", "tls_cert_file and tls_key_file go together")
	}
	return nil
}
