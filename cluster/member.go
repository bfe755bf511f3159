package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/loadnode/loadnode/metastore/etcdmeta"
)

// Handler receives a member's ownership changes, from one goroutine, in
// order.
type Handler interface {
	// Own: the member owns these jobs from their epochs on (spawn their
	// actors). One call carries every job one watch response gave the
	// member, so that a member given a lost member's share takes it over
	// in bulk.
	Own(jobs []Assignment)
	// Release: the member no longer owns job id (stop its actor).
	Release(id uint64)
	// ReleaseAll: the member's session ended; it owns nothing.
	ReleaseAll()
	// Changed: a job's record or journal head changed in etcd (created,
	// altered, transitioned or deleted, by any member); c carries the
	// value the change wrote, so that most changes need no read back.
	Changed(c JobChange)
	// Resync: the job watch (re)started; changes may have been missed.
	Resync()
}

// Config configures a Member.
type Config struct {
	Client *clientv3.Client
	// Prefix is the cluster's key prefix (the metadata store's).
	Prefix string
	// Name is the member's unique name; Addr its --listen address.
	Name, Addr string
	// Lease is the membership lease TTL (whole seconds, >= 1s).
	Lease time.Duration
	// MaxJobsPerNode caps the jobs one member owns; 0: no cap.
	MaxJobsPerNode int
	// RequestTimeout bounds each etcd call.
	RequestTimeout time.Duration
	Logger         *slog.Logger
	// CertFingerprint is the hex SHA-256 of the member's TLS certificate,
	// published with its membership ("" without TLS).
	CertFingerprint string
	// OnPeers, if set, is called with the other live members (address:
	// certificate fingerprint) whenever they change, from the member's
	// watch goroutine.
	OnPeers func(peers map[string]string)
	// NodeID is the node's id (its data directory's node-id): at start, a
	// membership record of this name and node id left by an earlier
	// process (killed without revoking its lease) is revoked, not waited
	// for. "" recognizes none.
	NodeID string
	// Credential is the members' shared auth token ("" without one). etcd
	// holds only Verifier(Credential, Prefix); a member whose token gives
	// another verifier than the live members' is refused at start.
	Credential string
}

// JobChange is one change of a job's record or journal head, as the
// member's watch saw it: Record or Head is the value written (the other
// nil: the change did not write it, or the watch gave it apart), Deleted
// that the key was deleted.
type JobChange struct {
	ID           uint64
	Record, Head []byte
	Deleted      bool
}

// Assignment is a job this member owns and the epoch it owns it at.
type Assignment struct{ ID, Epoch uint64 }

// Owner is a job's current assignment.
type Owner struct {
	Name  string
	Addr  string
	Epoch uint64
}

// Member is this node's membership.
type Member struct {
	cfg  Config
	keys etcdmeta.Keys // under cfg.Prefix
	log  *slog.Logger
	// incarnation tells this process's records from a former one's.
	incarnation string

	cancel context.CancelFunc
	done   chan struct{}

	mu struct {
		sync.Mutex
		assign  map[uint64]Owner  // every job's assignment, from the watch
		addrs   map[string]string // live members' addresses
		owned   map[uint64]uint64 // jobs this member owns: epoch
		session *concurrency.Session
		leader  bool
	}
}

// New returns a member that has not started.
func New(cfg Config) (*Member, error) {
	if cfg.Client == nil || cfg.Name == "" || cfg.Prefix == "" {
		return nil, errors.New("cluster: Config needs Client, Name and Prefix")
	}
	if cfg.Lease < time.Second {
		return nil, fmt.Errorf("cluster: lease %v must be >= 1s", cfg.Lease)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m := &Member{cfg: cfg, keys: etcdmeta.Keys{Prefix: cfg.Prefix}, log: cfg.Logger.With("component", "cluster", "member", cfg.Name), incarnation: newIncarnation()}
	m.mu.assign, m.mu.addrs, m.mu.owned = map[uint64]Owner{}, map[string]string{}, map[uint64]uint64{}
	return m, nil
}

// Self is the member's name.
func (m *Member) Self() string { return m.cfg.Name }

// Owner returns job id's assignment as this member last saw it.
func (m *Member) Owner(id uint64) (Owner, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.mu.assign[id]
	if ok {
		o.Addr = m.mu.addrs[o.Name]
	}
	return o, ok
}

// Owned reports whether this member owns job id, and at which epoch.
func (m *Member) Owned(id uint64) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.mu.owned[id]
	return e, ok
}

// IsLeader reports whether this member leads now.
func (m *Member) IsLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.leader
}

type memberValue struct {
	Addr          string `json:"addr"`
	StartedUnixMs int64  `json:"started_unix_ms"`
	CertSHA256    string `json:"cert_sha256,omitempty"`
	NodeID        string `json:"node_id,omitempty"`
	Incarnation   string `json:"incarnation,omitempty"`
}

// Start joins the cluster and runs the member until Stop: sessions,
// registration, the ownership watch and the campaign, each restarted
// when a session ends. It returns once the member is registered, or the
// reason it cannot be: its token is not the cluster's (ErrCredential), a
// live member holds its name (ErrNameHeld), etcd failed, or ctx ended
// while it waited for a former holder's lease to run out. ctx bounds only
// the join; the member runs until Stop.
func (m *Member) Start(ctx context.Context, h Handler) error {
	rctx, cancel := context.WithCancel(context.Background())
	s, err := m.join(ctx, rctx, true)
	if err != nil {
		cancel()
		return err
	}
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		m.run(rctx, h, s)
	}()
	return nil
}

// Stop resigns, revokes the member's lease (its jobs move at once, not
// after the TTL) and waits for its goroutines.
func (m *Member) Stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
}

// run runs sessions until ctx ends, first s; after one ends the member
// joins again (its own former session revoked; a name another process
// took meanwhile waited for until it leaves).
func (m *Member) run(ctx context.Context, h Handler, s *concurrency.Session) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		var err error
		if s == nil {
			s, err = m.join(ctx, ctx, false)
		}
		joined := err == nil
		if joined {
			err = m.session(ctx, h, s)
			s = nil
			h.ReleaseAll()
			m.mu.Lock()
			clear(m.mu.owned)
			m.mu.leader = false
			m.mu.session = nil
			m.mu.Unlock()
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case joined:
			m.log.Warn("cluster: session ended; releasing every job and rejoining", "err", err)
		case errors.Is(err, ErrNameHeld) || errors.Is(err, ErrCredential):
			m.log.Error("cluster: cannot rejoin; retrying", "err", err)
		default:
			m.log.Warn("cluster: rejoin failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// errRecordLost ends a session whose membership record was deleted or
// replaced behind its back.
var errRecordLost = errors.New("cluster: this member's membership record was deleted or replaced")

// session runs one registered session: it returns when the session ends
// (its lease lost, its record gone) or ctx is cancelled; it revokes the
// lease either way.
func (m *Member) session(ctx context.Context, h Handler, s *concurrency.Session) error {
	defer func() {
		// Revoke: on Stop the others take the jobs at once; after a lost
		// session it is already gone (the error is ignored).
		m.revoke(s.Lease())
		s.Orphan()
	}()
	// A new session never reuses an epoch of the last one: the jobs
	// still assigned to this name are re-stamped (each put only if the job
	// is still ours), so the actors of this session fence off any left
	// over from the one before.
	if err := m.restamp(ctx); err != nil {
		return fmt.Errorf("re-stamp assignments: %w", err)
	}
	m.mu.Lock()
	m.mu.session = s
	m.mu.Unlock()
	m.log.Info("cluster: joined", "lease", fmt.Sprintf("%x", s.Lease()), "ttl", m.cfg.Lease)

	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	var wg sync.WaitGroup
	errc := make(chan error, 4)
	wg.Go(func() { errc <- m.watchJobs(wctx, h) })
	wg.Go(func() { errc <- m.watchAssignments(wctx, h) })
	wg.Go(func() { errc <- m.watchMembers(wctx, s.Lease()) })
	wg.Go(func() { errc <- m.campaign(wctx, s) })
	var err error
	select {
	case <-s.Done():
		err = errors.New("lease lost")
	case <-ctx.Done():
		err = ctx.Err()
	case err = <-errc:
	}
	wcancel()
	wg.Wait()
	return err
}

// restamp rewrites this member's own assignments so that their epochs
// (ModRevisions) are new. Keys go in transactions of restampChunk, each
// guarded by every key still naming this member and bounded by its own
// timeout; a chunk whose guard fails (the leader moved one of its jobs
// meanwhile) is retried key by key.
func (m *Member) restamp(ctx context.Context) error {
	prefix := m.keys.Assignments()
	gctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	r, err := m.cfg.Client.Get(gctx, prefix, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return err
	}
	var mine []string
	for _, kv := range r.Kvs {
		if string(kv.Value) == m.cfg.Name {
			mine = append(mine, string(kv.Key))
		}
	}
	put := func(keys []string) (bool, error) {
		cmps := make([]clientv3.Cmp, len(keys))
		ops := make([]clientv3.Op, len(keys))
		for i, k := range keys {
			cmps[i] = clientv3.Compare(clientv3.Value(k), "=", m.cfg.Name)
			ops[i] = clientv3.OpPut(k, m.cfg.Name)
		}
		tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		defer cancel()
		w, err := m.cfg.Client.Txn(tctx).If(cmps...).Then(ops...).Commit()
		if err != nil {
			return false, err
		}
		return w.Succeeded, nil
	}
	for start := 0; start < len(mine); start += restampChunk {
		chunk := mine[start:min(start+restampChunk, len(mine))]
		ok, err := put(chunk)
		if err != nil {
			return err
		}
		if ok {
			continue
		}
		for _, k := range chunk {
			if _, err := put([]string{k}); err != nil {
				return err
			}
		}
	}
	return nil
}

// restampChunk is how many assignments one re-stamp transaction rewrites
// (a compare and a put each, under etcd's default 128 operations).
const restampChunk = 60

// watchAssignments keeps m.mu.assign and the owned set current and tells h.
func (m *Member) watchAssignments(ctx context.Context, h Handler) error {
	prefix := m.keys.Assignments()
	for ctx.Err() == nil {
		gctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Get(gctx, prefix, clientv3.WithPrefix())
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			m.log.Warn("cluster: read assignments", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		all := map[uint64]Owner{}
		for _, kv := range r.Kvs {
			if id, ok := etcdmeta.ParseID(string(kv.Key), prefix); ok {
				all[id] = Owner{Name: string(kv.Value), Epoch: uint64(kv.ModRevision)}
			}
		}
		m.apply(h, all, true)
		wch := m.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(r.Header.Revision+1))
		for resp := range wch {
			if err := resp.Err(); err != nil {
				m.log.Warn("cluster: assignment watch", "err", err)
				break
			}
			changes := map[uint64]Owner{}
			for _, ev := range resp.Events {
				id, ok := etcdmeta.ParseID(string(ev.Kv.Key), prefix)
				if !ok {
					continue
				}
				if ev.Type == clientv3.EventTypeDelete {
					changes[id] = Owner{}
				} else {
					changes[id] = Owner{Name: string(ev.Kv.Value), Epoch: uint64(ev.Kv.ModRevision)}
				}
			}
			m.apply(h, changes, false)
		}
	}
	return nil
}

// apply merges assignments (all: they are the whole set) and tells h what
// this member gained and lost.
func (m *Member) apply(h Handler, changes map[uint64]Owner, all bool) {
	m.mu.Lock()
	var own []Assignment
	var release []uint64
	if all {
		for id := range m.mu.assign {
			if _, ok := changes[id]; !ok {
				changes[id] = Owner{}
			}
		}
	}
	for id, o := range changes {
		if o.Name == "" {
			delete(m.mu.assign, id)
		} else {
			m.mu.assign[id] = o
		}
		cur, had := m.mu.owned[id]
		switch {
		case o.Name == m.cfg.Name && (!had || cur != o.Epoch):
			m.mu.owned[id] = o.Epoch
			own = append(own, Assignment{ID: id, Epoch: o.Epoch})
		case o.Name != m.cfg.Name && had:
			delete(m.mu.owned, id)
			release = append(release, id)
		}
	}
	m.mu.Unlock()
	for _, id := range release {
		h.Release(id)
	}
	if len(own) > 0 {
		slices.SortFunc(own, func(a, b Assignment) int { return cmp.Compare(a.ID, b.ID) })
		h.Own(own)
	}
}

// watchJobs tells h of every change of a job's record or head.
func (m *Member) watchJobs(ctx context.Context, h Handler) error {
	recs, heads := m.keys.Records(), m.keys.Heads()
	for ctx.Err() == nil {
		gctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Get(gctx, recs, clientv3.WithCountOnly())
		cancel()
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		h.Resync()
		rev := r.Header.Revision + 1
		wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		// With values: the handler takes a change from the event instead
		// of reading the job back (every member sees every change, and a
		// read each made etcd's reads outnumber the creates' writes).
		rch := m.cfg.Client.Watch(wctx, recs, clientv3.WithPrefix(), clientv3.WithRev(rev))
		hch := m.cfg.Client.Watch(wctx, heads, clientv3.WithPrefix(), clientv3.WithRev(rev))
		pair := newPairer()
		for open := true; open; {
			var resp clientv3.WatchResponse
			var ok bool
			var prefix string
			select {
			case resp, ok = <-rch:
				prefix = recs
			case resp, ok = <-hch:
				prefix = heads
			}
			if !ok || resp.Err() != nil {
				open = false
				break
			}
			for _, ev := range resp.Events {
				id, ok := etcdmeta.ParseID(string(ev.Kv.Key), prefix)
				if !ok {
					continue
				}
				del := ev.Type == clientv3.EventTypeDelete
				if prefix == recs {
					pair.record(id, ev.Kv.Value, ev.Kv.ModRevision, del, h.Changed)
				} else {
					pair.head(id, ev.Kv.Value, ev.Kv.ModRevision, del, ev.Kv.Version == 1, h.Changed)
				}
			}
		}
		wcancel()
	}
	return nil
}

// tellPeers gives OnPeers the other live members.
func (m *Member) tellPeers(addrs, certs map[string]string) {
	if m.cfg.OnPeers == nil {
		return
	}
	peers := map[string]string{}
	for name, addr := range addrs {
		if name != m.cfg.Name && addr != "" {
			peers[addr] = certs[name]
		}
	}
	m.cfg.OnPeers(peers)
}

// watchMembers keeps the live members' addresses current, and returns
// errRecordLost when this member's own record (under lease) is gone or
// another's.
func (m *Member) watchMembers(ctx context.Context, lease clientv3.LeaseID) error {
	prefix := m.keys.Members()
	for ctx.Err() == nil {
		gctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Get(gctx, prefix, clientv3.WithPrefix())
		cancel()
		if err != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		addrs, certs := map[string]string{}, map[string]string{}
		mine := false
		for _, kv := range r.Kvs {
			var v memberValue
			name := strings.TrimPrefix(string(kv.Key), prefix)
			if name == m.cfg.Name {
				mine = clientv3.LeaseID(kv.Lease) == lease
			}
			if json.Unmarshal(kv.Value, &v) == nil {
				addrs[name], certs[name] = v.Addr, v.CertSHA256
			}
		}
		if !mine {
			return errRecordLost
		}
		m.mu.Lock()
		m.mu.addrs = addrs
		m.mu.Unlock()
		m.tellPeers(addrs, certs)
		wch := m.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), prefix, clientv3.WithPrefix(), clientv3.WithRev(r.Header.Revision+1))
		for resp := range wch {
			if resp.Err() != nil {
				break
			}
			lost := false
			m.mu.Lock()
			for _, ev := range resp.Events {
				name := strings.TrimPrefix(string(ev.Kv.Key), prefix)
				if name == m.cfg.Name && (ev.Type == clientv3.EventTypeDelete || clientv3.LeaseID(ev.Kv.Lease) != lease) {
					lost = true
				}
				if ev.Type == clientv3.EventTypeDelete {
					delete(m.mu.addrs, name)
					delete(certs, name)
					continue
				}
				var v memberValue
				if json.Unmarshal(ev.Kv.Value, &v) == nil {
					m.mu.addrs[name], certs[name] = v.Addr, v.CertSHA256
				}
			}
			addrs := maps.Clone(m.mu.addrs)
			m.mu.Unlock()
			if lost {
				return errRecordLost
			}
			m.tellPeers(addrs, certs)
		}
	}
	return nil
}
