package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/cluster"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/metastore/etcdmeta"
)

// clusterMode is a node's cluster membership: its etcd client, the
// metadata store on etcd and its Member.
type clusterMode struct {
	client *clientv3.Client
	meta   *etcdmeta.Store
	member *cluster.Member
}

// openCluster connects to etcd and makes (but does not start) the member;
// nodeID is the data directory's node id (a record it left is its own).
func openCluster(cfg config.Cluster, addr, nodeID string, logger *slog.Logger, peers *peerAuth) (*clusterMode, error) {
	cc := clientv3.Config{Endpoints: cfg.Etcd, DialTimeout: cfg.RequestTimeout, Logger: zap.NewNop()}
	if cfg.User != "" {
		pw, err := os.ReadFile(cfg.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("node: cluster.password_file: %w", err)
		}
		cc.Username, cc.Password = cfg.User, strings.TrimSpace(string(pw))
	}
	if cfg.TLSCAFile != "" || cfg.TLSCertFile != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.TLSCAFile != "" {
			pem, err := os.ReadFile(cfg.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("node: cluster.tls_ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("node: cluster.tls_ca_file %s: no PEM certificate", cfg.TLSCAFile)
			}
			tc.RootCAs = pool
		}
		if cfg.TLSCertFile != "" {
			cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
			if err != nil {
				return nil, fmt.Errorf("node: cluster.tls_cert_file: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		cc.TLS = tc
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("node: cluster: etcd client: %w", err)
	}
	meta, err := etcdmeta.New(c, etcdmeta.Options{Prefix: cfg.Prefix, RequestTimeout: cfg.RequestTimeout})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("node: cluster: %w", err)
	}
	// Fail fast, naming etcd, when it does not answer at start.
	ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout)
	_, err = c.Get(ctx, meta.Keys().LastJobID())
	cancel()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("node: cluster: etcd %v does not answer: %w", cfg.Etcd, err)
	}
	m, err := cluster.New(cluster.Config{Client: c, Prefix: cfg.Prefix, Name: cfg.Name, Addr: addr, Lease: cfg.Lease,
		MaxJobsPerNode: cfg.MaxJobsPerNode, RequestTimeout: cfg.RequestTimeout, Logger: logger,
		CertFingerprint: peers.fp, OnPeers: peers.setPeers, NodeID: nodeID, Credential: peers.token})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("node: cluster: %w", err)
	}
	return &clusterMode{client: c, meta: meta, member: m}, nil
}

func (cm *clusterMode) close() {
	cm.member.Stop()
	cm.client.Close()
}

// Self, Owner and Status make clusterMode the actors' Cluster.
func (cm *clusterMode) Self() string { return cm.member.Self() }

func (cm *clusterMode) Owner(id uint64) (string, string, uint64, bool) {
	o, ok := cm.member.Owner(id)
	return o.Name, o.Addr, o.Epoch, ok
}

func (cm *clusterMode) Status(ctx context.Context) (*api.ClusterStatusResponse, error) {
	st, err := cm.member.Status(ctx)
	if err != nil {
		return nil, err
	}
	resp := &api.ClusterStatusResponse{Leader: st.Leader, Assigned: int64(st.Assigned), Unassigned: int64(st.Unassigned), Orphaned: int64(st.Orphaned)}
	for _, ms := range st.Members {
		resp.Members = append(resp.Members, &api.ClusterMember{Name: ms.Name, Addr: ms.Addr, Jobs: int64(ms.Jobs),
			LeaseTtlMs: ms.LeaseTTL.Milliseconds(), LeaseGrantedMs: ms.LeaseGranted.Milliseconds(), SinceUnixMs: ms.Since.UnixMilli()})
	}
	return resp, nil
}

var _ actors.Cluster = (*clusterMode)(nil)

// toManager is the member's Handler: each change is a message to the
// manager.
type toManager struct {
	root    *actor.RootContext
	manager *actor.PID
}

func (h toManager) Own(jobs []cluster.Assignment) {
	msg := &actors.OwnJobs{Jobs: make([]actors.OwnJob, len(jobs))}
	for i, a := range jobs {
		msg.Jobs[i] = actors.OwnJob{ID: a.ID, Epoch: a.Epoch}
	}
	h.root.Send(h.manager, msg)
}
func (h toManager) Release(id uint64) { h.root.Send(h.manager, &actors.ReleaseJob{ID: id}) }
func (h toManager) ReleaseAll()       { h.root.Send(h.manager, &actors.ReleaseAllJobs{}) }

// Changed hands the manager the values the change wrote, decoded; a value
// that does not decode is left out (the manager reads the job back, and
// that read reports it).
func (h toManager) Changed(c cluster.JobChange) {
	msg := &actors.JobChanged{ID: c.ID, Deleted: c.Deleted}
	if c.Record != nil {
		if rec := (&api.JobRecord{}); proto.Unmarshal(c.Record, rec) == nil {
			msg.Record = rec
		}
	}
	if c.Head != nil {
		if t := (&api.Transition{}); proto.Unmarshal(c.Head, t) == nil {
			msg.Head = t
		}
	}
	h.root.Send(h.manager, msg)
}
func (h toManager) Resync() { h.root.Send(h.manager, &actors.JobsResync{}) }

var _ actors.BulkLoader = (*etcdmeta.Store)(nil)
