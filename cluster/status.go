package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// MemberStatus is one live member as etcd has it.
type MemberStatus struct {
	Name, Addr string
	// Jobs is how many jobs are assigned to it.
	Jobs int
	// LeaseTTL is what is left of its lease; LeaseGranted the lease's TTL.
	LeaseTTL, LeaseGranted time.Duration
	// Since is when it registered (its current session).
	Since time.Time
}

// Status is the cluster as etcd has it, read by any member.
type Status struct {
	Leader     string
	Members    []MemberStatus
	Assigned   int
	Unassigned int
	// Orphaned counts jobs assigned to a member that is not live.
	Orphaned int
}

// Status reads the cluster's members, leader and assignments.
func (m *Member) Status(ctx context.Context) (*Status, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	k := m.keys
	r, err := m.cfg.Client.Txn(ctx).Then(
		clientv3.OpGet(k.Members(), clientv3.WithPrefix()),
		clientv3.OpGet(k.Leader(), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend), clientv3.WithLimit(1)),
		clientv3.OpGet(k.Assignments(), clientv3.WithPrefix()),
		clientv3.OpGet(k.Records(), clientv3.WithPrefix(), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return nil, err
	}
	st := &Status{}
	if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		st.Leader = string(kvs[0].Value)
	}
	idx := map[string]int{}
	for _, kv := range r.Responses[0].GetResponseRange().Kvs {
		var v memberValue
		_ = json.Unmarshal(kv.Value, &v)
		ms := MemberStatus{Name: strings.TrimPrefix(string(kv.Key), k.Members()), Addr: v.Addr, Since: time.UnixMilli(v.StartedUnixMs)}
		if ttl, err := m.cfg.Client.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
			ms.LeaseTTL, ms.LeaseGranted = time.Duration(ttl.TTL)*time.Second, time.Duration(ttl.GrantedTTL)*time.Second
		}
		idx[ms.Name] = len(st.Members)
		st.Members = append(st.Members, ms)
	}
	for _, kv := range r.Responses[2].GetResponseRange().Kvs {
		st.Assigned++
		if i, ok := idx[string(kv.Value)]; ok {
			st.Members[i].Jobs++
		} else {
			st.Orphaned++
		}
	}
	// Jobs without an assignment (final jobs have none, so this is an
	// upper bound of the ones waiting for a member).
	st.Unassigned = max(0, int(r.Responses[3].GetResponseRange().Count)-st.Assigned)
	slices.SortFunc(st.Members, func(a, b MemberStatus) int { return strings.Compare(a.Name, b.Name) })
	return st, nil
}
