package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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
// every Lease/2, while this member leads.
func (m *Member) lead(ctx context.Context, e *concurrency.Election) {
	dirty := make(chan struct{}, 1)
	mark := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	go func() {
		for ctx.Err() == nil {
			wch := m.cfg.Client.Watch(clientv3.WithRequireLeader(ctx), m.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
			for resp := range wch {
				if resp.Err() != nil {
					break
				}
				for _, ev := range resp.Events {
					k := string(ev.Kv.Key)
					if strings.HasPrefix(k, m.keys.Members()) || strings.HasPrefix(k, m.keys.Records()) ||
						strings.HasPrefix(k, m.keys.Heads()) || strings.HasPrefix(k, m.keys.Assignments()) {
						mark()
						break
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	tick := time.NewTicker(max(m.cfg.Lease/2, 500*time.Millisecond))
	defer tick.Stop()
	mark()
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
		if err := m.reconcile(ctx, e); err != nil && ctx.Err() == nil {
			m.log.Warn("cluster: reconcile assignments", "err", err)
		}
	}
}

// reconcile reads members, jobs and assignments at one revision and writes
// the changes the plan asks for, guarded by the leader's key.
func (m *Member) reconcile(ctx context.Context, e *concurrency.Election) error {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	k := m.keys
	r, err := m.cfg.Client.Txn(rctx).Then(
		clientv3.OpGet(k.Members(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
		clientv3.OpGet(k.Records(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
		clientv3.OpGet(k.Heads(), clientv3.WithPrefix()),
		clientv3.OpGet(k.Assignments(), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return err
	}
	var members []string
	for _, kv := range r.Responses[0].GetResponseRange().Kvs {
		members = append(members, strings.TrimPrefix(string(kv.Key), k.Members()))
	}
	final := map[uint64]bool{}
	for _, kv := range r.Responses[2].GetResponseRange().Kvs {
		id, ok := etcdmeta.ParseID(string(kv.Key), k.Heads())
		t := &api.Transition{}
		if ok && proto.Unmarshal(kv.Value, t) == nil && t.GetTo().Final() {
			final[id] = true
		}
	}
	var jobs []uint64
	for _, kv := range r.Responses[1].GetResponseRange().Kvs {
		if id, ok := etcdmeta.ParseID(string(kv.Key), k.Records()); ok && !final[id] {
			jobs = append(jobs, id)
		}
	}
	cur := map[uint64]string{}
	for _, kv := range r.Responses[3].GetResponseRange().Kvs {
		if id, ok := etcdmeta.ParseID(string(kv.Key), k.Assignments()); ok {
			cur[id] = string(kv.Value)
		}
	}
	set, del := Plan(jobs, members, cur, m.cfg.MaxJobsPerNode)
	if len(set) == 0 && len(del) == 0 {
		return nil
	}
	var ops []clientv3.Op
	for _, id := range slices.Sorted(maps.Keys(set)) {
		ops = append(ops, clientv3.OpPut(k.Assignment(id), set[id]))
	}
	for _, id := range del {
		ops = append(ops, clientv3.OpDelete(k.Assignment(id)))
	}
	guard := clientv3.Compare(clientv3.CreateRevision(e.Key()), "=", e.Rev())
	for start := 0; start < len(ops); start += leaderOps {
		w, err := m.cfg.Client.Txn(rctx).If(guard).Then(ops[start:min(start+leaderOps, len(ops))]...).Commit()
		if err != nil {
			return err
		}
		if !w.Succeeded {
			return errors.New("no longer the leader")
		}
	}
	m.log.Info("cluster: assignments written", "members", len(members), "jobs", len(jobs), "moved", len(set), "removed", len(del))
	return nil
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
