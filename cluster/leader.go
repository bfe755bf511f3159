package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore/etcdmeta"
)

// leaderOps is the most operations in one leader transaction (etcd's
// default --max-txn-ops is 128; one compare rides along).
const leaderOps = 100

// campaign waits to lead, then assigns until the session or ctx ends.
func (m *Member) campaign(ctx context.Context, s *concurrency.Session) error {
	e := concurrency.NewElection(s, m.keys.Leader())
	if err := e.Campaign(ctx, m.cfg.Name); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("campaign: %w", err)
	}
	m.mu.Lock()
	m.mu.leader = true
	m.mu.Unlock()
	m.log.Info("cluster: leading")
	defer func() {
		m.mu.Lock()
		m.mu.leader = false
		m.mu.Unlock()
		rctx, cancel := context.WithTimeout(context.Background(), m.cfg.RequestTimeout)
		_ = e.Resign(rctx)
		cancel()
	}()
	m.lead(ctx, e)
	return nil
}

// lead reconciles assignments on every relevant change (debounced) and
// every Lease/2, while this member leads, from its view (keepView).
func (m *Member) lead(ctx context.Context, e *concurrency.Election) {
	dirty := make(chan struct{}, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	v := newView()
	go m.keepView(ctx, v, mark)
	tick := time.NewTicker(max(m.cfg.Lease/2, 500*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-dirty:
			// Debounce: a burst of creates is one reconcile.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			select {
			case <-dirty:
			default:
			}
		}
		if err := m.reconcile(ctx, e, v); err != nil && ctx.Err() == nil {
			m.log.Warn("cluster: reconcile assignments", "err", err)
		}
	}
}

// reconcile plans from the view and writes the changes the plan asks
// for, guarded by the leader's key; what it wrote goes into the view at
// once (its own watch events, older, cannot undo it).
func (m *Member) reconcile(ctx context.Context, e *concurrency.Election, v *view) error {
	members, jobs, cur, ok := v.snapshot()
	if !ok {
		return nil // keepView has not read it yet: it marks dirty when it has
	}
	set, del := Plan(jobs, members, cur, m.cfg.MaxJobsPerNode)
	if len(set) == 0 && len(del) == 0 {
		return nil
	}
	k := m.keys
	type write struct {
		id    uint64
		owner string // "": delete
	}
	var writes []write
	for _, id := range slices.Sorted(maps.Keys(set)) {
		writes = append(writes, write{id, set[id]})
	}
	for _, id := range del {
		writes = append(writes, write{id: id})
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	guard := clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev())
	for start := 0; start < len(writes); start += leaderOps {
		part := writes[start:min(start+leaderOps, len(writes))]
		ops := make([]clientv3.Op, len(part))
		for i, w := range part {
			if w.owner == "" {
				ops[i] = clientv3.OpDelete(k.Assignment(w.id))
			} else {
				ops[i] = clientv3.OpPut(k.Assignment(w.id), w.owner)
			}
		}
		r, err := m.cfg.Client.Txn(rctx).If(guard).Then(ops...).Commit()
		if err != nil {
			return err
		}
		if !r.Succeeded {
			return errors.New("no longer the leader")
		}
		v.mu.Lock()
		for _, w := range part {
			v.setAssign(w.id, w.owner, r.Header.Revision)
		}
		v.mu.Unlock()
	}
	m.log.Info("cluster: assignments written", "members", len(members), "jobs", len(jobs), "moved", len(set), "removed", len(del))
	return nil
}

// view is the leader's picture of what Plan needs: live members, jobs
// (records), final jobs (their heads) and assignments. keepView reads it
// once and then applies each watch event to it, so that a change costs
// the leader that change, not a read of every head and assignment.
type view struct {
	mu struct {
		sync.Mutex
		// ready: read and watched; false while keepView (re)reads.
		ready   bool
		members map[string]bool
		jobs    map[uint64]bool
		final   map[uint64]bool
		// assign holds each assignment with the revision it was last
		// changed at; one the leader deleted stays with owner "" until
		// the watch delivers that deletion (so that an older event
		// cannot bring it back meanwhile).
		assign map[uint64]assignment
	}
}

type assignment struct {
	owner string
	rev   int64
}

func newView() *view {
	v := &view{}
	v.reset()
	return v
}

// reset empties the view and marks it not ready.
func (v *view) reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.mu.ready = false
	v.mu.members, v.mu.jobs, v.mu.final, v.mu.assign = map[string]bool{}, map[uint64]bool{}, map[uint64]bool{}, map[uint64]assignment{}
}

// setAssign records job id's assignment (owner "": deleted) at rev, unless
// the view has a newer one. REQUIRES: v.mu is held.
func (v *view) setAssign(id uint64, owner string, rev int64) {
	if a, ok := v.mu.assign[id]; ok && a.rev >= rev {
		return
	}
	v.mu.assign[id] = assignment{owner: owner, rev: rev}
}

// setHead records whether job id's head is final. REQUIRES: v.mu is held.
func (v *view) setHead(id uint64, value []byte) {
	t := &api.Transition{}
	if proto.Unmarshal(value, t) == nil && t.GetTo().Final() {
		v.mu.final[id] = true
	} else {
		delete(v.mu.final, id)
	}
}

// snapshot returns Plan's inputs: members and non-final jobs sorted, and
// the current assignments; ok is false until the view is read.
func (v *view) snapshot() (members []string, jobs []uint64, cur map[uint64]string, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.mu.ready {
		return nil, nil, nil, false
	}
	members = slices.Sorted(maps.Keys(v.mu.members))
	jobs = make([]uint64, 0, len(v.mu.jobs))
	for id := range v.mu.jobs {
		if !v.mu.final[id] {
			jobs = append(jobs, id)
		}
	}
	slices.Sort(jobs)
	cur = make(map[uint64]string, len(v.mu.assign))
	for id, a := range v.mu.assign {
		if a.owner != "" {
			cur[id] = a.owner
		}
	}
	return members, jobs, cur, true
}

// keepView reads members, jobs, heads and assignments at one revision
// into v, then applies the watches' events from the next revision on,
// calling mark after each change; a watch that fails or ends (compacted,
// etcd leader lost) makes it read again.
func (m *Member) keepView(ctx context.Context, v *view, mark func()) {
	k := m.keys
	for ctx.Err() == nil {
		v.reset()
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Txn(rctx).Then(
			clientv3.OpGet(k.Members(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
			clientv3.OpGet(k.Records(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
			clientv3.OpGet(k.Heads(), clientv3.WithPrefix()),
			clientv3.OpGet(k.Assignments(), clientv3.WithPrefix()),
		).Commit()
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				m.log.Warn("cluster: leader: read members, jobs and assignments", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		v.mu.Lock()
		for _, kv := range r.Responses[0].GetResponseRange().Kvs {
			v.mu.members[strings.TrimPrefix(string(kv.Key), k.Members())] = true
		}
		for _, kv := range r.Responses[1].GetResponseRange().Kvs {
			if id, ok := etcdmeta.ParseID(string(kv.Key), k.Records()); ok {
				v.mu.jobs[id] = true
			}
		}
		for _, kv := range r.Responses[2].GetResponseRange().Kvs {
			if id, ok := etcdmeta.ParseID(string(kv.Key), k.Heads()); ok {
				v.setHead(id, kv.Value)
			}
		}
		for _, kv := range r.Responses[3].GetResponseRange().Kvs {
			if id, ok := etcdmeta.ParseID(string(kv.Key), k.Assignments()); ok {
				v.setAssign(id, string(kv.Value), kv.ModRevision)
			}
		}
		v.mu.ready = true
		v.mu.Unlock()
		mark()

		wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		from := clientv3.WithRev(r.Header.Revision + 1)
		mch := m.cfg.Client.Watch(wctx, k.Members(), clientv3.WithPrefix(), from, clientv3.WithKeysOnly())
		rch := m.cfg.Client.Watch(wctx, k.Records(), clientv3.WithPrefix(), from, clientv3.WithKeysOnly())
		hch := m.cfg.Client.Watch(wctx, k.Heads(), clientv3.WithPrefix(), from)
		ach := m.cfg.Client.Watch(wctx, k.Assignments(), clientv3.WithPrefix(), from)
		for open := true; open; {
			var resp clientv3.WatchResponse
			var ok bool
			var prefix string
			select {
			case resp, ok = <-mch:
				prefix = k.Members()
			case resp, ok = <-rch:
				prefix = k.Records()
			case resp, ok = <-hch:
				prefix = k.Heads()
			case resp, ok = <-ach:
				prefix = k.Assignments()
			}
			if !ok || resp.Err() != nil {
				open = false
				break
			}
			v.mu.Lock()
			for _, ev := range resp.Events {
				del := ev.Type == clientv3.EventTypeDelete
				key := string(ev.Kv.Key)
				if prefix == k.Members() {
					if name := strings.TrimPrefix(key, prefix); del {
						delete(v.mu.members, name)
					} else {
						v.mu.members[name] = true
					}
					continue
				}
				id, ok := etcdmeta.ParseID(key, prefix)
				if !ok {
					continue
				}
				switch {
				case prefix == k.Records() && del:
					delete(v.mu.jobs, id)
				case prefix == k.Records():
					v.mu.jobs[id] = true
				case prefix == k.Heads() && del:
					delete(v.mu.final, id)
				case prefix == k.Heads():
					v.setHead(id, ev.Kv.Value)
				case del:
					// Events come in revision order: none older than this
					// one can follow, so no tombstone is kept (unless
					// the leader wrote the key since).
					if a, ok := v.mu.assign[id]; !ok || a.rev <= ev.Kv.ModRevision {
						delete(v.mu.assign, id)
					}
				default:
					v.setAssign(id, string(ev.Kv.Value), ev.Kv.ModRevision)
				}
			}
			v.mu.Unlock()
			if len(resp.Events) > 0 {
				mark()
			}
		}
		wcancel()
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Plan computes the assignment changes: set gives jobs their new owner,
// del lists assignments to remove (jobs gone or final). It moves as few
// jobs as balance needs: orphans (no owner, or a dead one) go to the
// least loaded members; a member above ceil(jobs/members) (or maxPerNode)
// gives up only its excess. Deterministic for equal inputs.
func Plan(jobs []uint64, members []string, cur map[uint64]string, maxPerNode int) (set map[uint64]string, del []uint64) {
	set = map[uint64]string{}
	live := map[string]bool{}
	for _, n := range members {
		live[n] = true
	}
	want := map[uint64]bool{}
	for _, id := range jobs {
		want[id] = true
	}
	for id := range cur {
		if !want[id] {
			del = append(del, id)
		}
	}
	slices.Sort(del)
	if len(members) == 0 {
		return set, del
	}
	target := (len(jobs) + len(members) - 1) / len(members)
	if maxPerNode > 0 {
		target = min(target, maxPerNode)
	}
	owned := map[string][]uint64{}
	var pool []uint64
	for _, id := range jobs {
		if o, ok := cur[id]; ok && live[o] {
			owned[o] = append(owned[o], id)
		} else {
			pool = append(pool, id)
		}
	}
	for _, n := range members {
		ids := owned[n]
		if len(ids) > target {
			slices.Sort(ids)
			pool = append(pool, ids[target:]...)
			owned[n] = ids[:target]
		}
	}
	slices.Sort(pool)
	sorted := slices.Clone(members)
	for _, id := range pool {
		slices.SortFunc(sorted, func(a, b string) int {
			if c := cmp.Compare(len(owned[a]), len(owned[b])); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		n := sorted[0]
		if len(owned[n]) >= target {
			break // every member is full (the cap): the rest wait
		}
		owned[n] = append(owned[n], id)
		if cur[id] != n {
			set[id] = n
		}
	}
	return set, del
}
