package cluster

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Joining: a member proves the cluster's credential, then claims its name.
//
// INVARIANT (one holder per name): members/<name> is written only by a
// transaction that finds it absent (and the credential verifier as this
// member checked it), so a second process never takes over a live
// member's record. A record of this name is removed only by its own
// holder (its lease revoked or run out), or revoked by a new process of
// the same node (same node id: the same data directory) at its start: the
// former incarnation of a member that was killed.
//
// INVARIANT (credential): a member registers only while the verifier
// stored at auth/verifier is the one its own token gives. The verifier is
// an HMAC-SHA256 keyed by the token (never the token itself); the first
// member writes it, and a member with a token that gives another one is
// refused at start. Only when no member is live may a starting member
// replace it (token rotation: every member restarted with the new token).

// ErrNameHeld is the error of a start refused because a live member holds
// the name.
var ErrNameHeld = errors.New("cluster: name held by a live member")

// ErrCredential is the error of a start refused because the member's
// token is not the cluster's.
var ErrCredential = errors.New("cluster: auth token differs from the cluster's")

// heldError is ErrNameHeld with the holder.
type heldError struct {
	name   string
	holder memberValue
}

func (e *heldError) Error() string {
	since := "?"
	if e.holder.StartedUnixMs > 0 {
		since = time.UnixMilli(e.holder.StartedUnixMs).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("cluster: the name %q is held by a live member at %s (node %s, registered %s): every member needs its own cluster.name; "+
		"if that process is gone, its lease was renewed meanwhile: retry once it has run out", e.name, e.holder.Addr, orUnknown(e.holder.NodeID), since)
}

func (e *heldError) Unwrap() error { return ErrNameHeld }

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// verifierMessage is what the token signs, with the cluster's prefix.
const verifierMessage = "loadnode cluster credential v1\x00"

// verifier is the stored proof of the cluster's token.
type verifier struct {
	HMAC  string `json:"hmac_sha256"`
	Token bool   `json:"token"` // the token is not empty
	By    string `json:"by"`    // the member that wrote it
}

// Verifier is the HMAC-SHA256 of the cluster prefix keyed by token, in hex:
// what auth/verifier holds of the members' token.
func Verifier(token, prefix string) string {
	h := hmac.New(sha256.New, []byte(token))
	h.Write([]byte(verifierMessage + prefix))
	return hex.EncodeToString(h.Sum(nil))
}

// newIncarnation is a random id of this process's Member.
func newIncarnation() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// join makes a session and registers members/<name> under it: the
// credential proven, a former incarnation's record revoked (at start
// only), a record of another holder waited for until its lease runs out
// or the holder shows it is live (ErrNameHeld). It returns when ctx ends,
// with ctx's error. sctx is the session's life (the member's, not ctx).
func (m *Member) join(ctx, sctx context.Context, atStart bool) (*concurrency.Session, error) {
	ttl := int(m.cfg.Lease / time.Second)
	s, err := concurrency.NewSession(m.cfg.Client, concurrency.WithTTL(ttl), concurrency.WithContext(sctx))
	if err != nil {
		return nil, fmt.Errorf("cluster: new session: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			m.revoke(s.Lease())
			s.Orphan()
		}
	}()
	key := m.keys.Member(m.cfg.Name)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		guard, err := m.credential(ctx)
		if err != nil {
			return nil, err
		}
		val, _ := json.Marshal(memberValue{Addr: m.cfg.Addr, StartedUnixMs: time.Now().UnixMilli(), CertSHA256: m.cfg.CertFingerprint,
			NodeID: m.cfg.NodeID, Incarnation: m.incarnation})
		tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Txn(tctx).If(
			clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
			clientv3.Compare(clientv3.Value(m.keys.Verifier()), "=", guard),
		).Then(clientv3.OpPut(key, string(val), clientv3.WithLease(s.Lease()))).Else(clientv3.OpGet(key)).Commit()
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cluster: register %s: %w", key, err)
		}
		if r.Succeeded {
			ok = true
			return s, nil
		}
		kvs := r.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // the verifier changed under us: prove it again
		}
		if err := m.held(ctx, kvs[0], atStart); err != nil {
			return nil, err
		}
	}
}

// held deals with a record of this name that is not this session's: nil
// when it is gone (or was this node's own and is revoked now), a
// *heldError when its holder is live, ctx's error when ctx ends first.
func (m *Member) held(ctx context.Context, kv *mvccpb.KeyValue, atStart bool) error {
	var holder memberValue
	_ = json.Unmarshal(kv.Value, &holder)
	lease := clientv3.LeaseID(kv.Lease)
	own := holder.Incarnation == m.incarnation ||
		(atStart && m.cfg.NodeID != "" && holder.NodeID == m.cfg.NodeID)
	switch {
	case lease == clientv3.NoLease:
		// Nobody's session (written by hand): it would never run out.
		m.log.Warn("cluster: replacing a membership record without a lease", "holder", holder.Addr)
		tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		defer cancel()
		_, err := m.cfg.Client.Txn(tctx).If(clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(string(kv.Key))).Commit()
		return err
	case own:
		// This node's former incarnation (killed without revoking its
		// lease) or this process's former session: it does not come
		// back; waiting out its lease would only delay the start.
		m.log.Info("cluster: revoking this node's former membership", "lease", fmt.Sprintf("%x", int64(lease)),
			"incarnation", holder.Incarnation, "addr", holder.Addr)
		return m.revokeErr(ctx, lease)
	}
	return m.waitHolder(ctx, string(kv.Key), lease, holder)
}

// waitHolder waits until the holder's record is gone or its lease runs
// out (nil), or the holder shows it is live (*heldError): its lease was
// renewed, or outlived its granted TTL (and a margin) while watched.
func (m *Member) waitHolder(ctx context.Context, key string, lease clientv3.LeaseID, holder memberValue) error {
	held := &heldError{name: m.cfg.Name, holder: holder}
	tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	ttl, err := m.cfg.Client.TimeToLive(tctx, lease)
	cancel()
	if err != nil {
		return fmt.Errorf("cluster: lease of the record of %q: %w", m.cfg.Name, err)
	}
	if ttl.TTL < 0 {
		return nil // ran out meanwhile
	}
	granted := time.Duration(ttl.GrantedTTL) * time.Second
	m.log.Warn("cluster: the name is held by another node's record; waiting for its lease to run out (a live holder renews it, and this member is refused)",
		"holder", holder.Addr, "node", orUnknown(holder.NodeID), "lease_left", time.Duration(ttl.TTL)*time.Second)
	deadline := time.Now().Add(granted + holderMargin)
	least := ttl.TTL
	tick := time.NewTicker(holderPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: waiting for the lease of the record of %q (held by %s, node %s) to run out: %w",
				m.cfg.Name, holder.Addr, orUnknown(holder.NodeID), ctx.Err())
		case <-tick.C:
		}
		tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Get(tctx, key)
		if err == nil && (len(r.Kvs) == 0 || clientv3.LeaseID(r.Kvs[0].Lease) != lease) {
			cancel()
			return nil
		}
		var t *clientv3.LeaseTimeToLiveResponse
		if err == nil {
			t, err = m.cfg.Client.TimeToLive(tctx, lease)
		}
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			m.log.Warn("cluster: waiting for the holder of the name", "err", err)
		case err != nil:
		case t.TTL < 0:
			return nil
		case t.TTL > least:
			return held // renewed: its holder is alive
		default:
			least = t.TTL
		}
		if time.Now().After(deadline) {
			return held
		}
	}
}

// holderPoll is how often a joining member looks at the lease of a record
// holding its name; holderMargin is how long past the lease's granted TTL
// a record that is not renewed may take to go (etcd expires leases in
// passes).
const (
	holderPoll   = 250 * time.Millisecond
	holderMargin = 3 * time.Second
)

// credential checks this member's token against the cluster's verifier
// (writing it if there is none, or replacing it if no member is live)
// and returns the stored value, which registration is guarded by.
func (m *Member) credential(ctx context.Context) (string, error) {
	key := m.keys.Verifier()
	mine := Verifier(m.cfg.Credential, m.cfg.Prefix)
	own, _ := json.Marshal(verifier{HMAC: mine, Token: m.cfg.Credential != "", By: m.cfg.Name})
	for {
		tctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		r, err := m.cfg.Client.Get(tctx, key)
		cancel()
		if err != nil {
			return "", fmt.Errorf("cluster: read %s: %w", key, err)
		}
		if len(r.Kvs) == 1 {
			var v verifier
			if json.Unmarshal(r.Kvs[0].Value, &v) == nil && hmac.Equal([]byte(v.HMAC), []byte(mine)) {
				return string(r.Kvs[0].Value), nil
			}
		}
		members := m.keys.Members()
		var w *clientv3.TxnResponse
		tctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
		if len(r.Kvs) == 0 {
			// The first member (or the first since the verifier came in)
			// writes it.
			w, err = m.cfg.Client.Txn(tctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, string(own))).Commit()
		} else {
			// Another token's: replaced only while no member is live.
			w, err = m.cfg.Client.Txn(tctx).If(
				clientv3.Compare(clientv3.ModRevision(key), "=", r.Kvs[0].ModRevision),
				clientv3.Compare(clientv3.CreateRevision(members), "=", 0).WithPrefix(),
			).Then(clientv3.OpPut(key, string(own))).
				Else(clientv3.OpGet(key), clientv3.OpGet(members, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(1))).Commit()
		}
		cancel()
		if err != nil {
			return "", fmt.Errorf("cluster: write %s: %w", key, err)
		}
		if w.Succeeded {
			if len(r.Kvs) == 1 {
				m.log.Warn("cluster: no member is live and the stored token verifier is another token's: this member's token is the cluster's from now on")
			} else {
				m.log.Info("cluster: the token verifier is written (first member)")
			}
			return string(own), nil
		}
		if len(r.Kvs) == 0 {
			continue // another member wrote it first: compare with it
		}
		cur := w.Responses[0].GetResponseRange().Kvs
		live := w.Responses[1].GetResponseRange().Kvs
		if len(cur) == 0 || len(live) == 0 || cur[0].ModRevision != r.Kvs[0].ModRevision {
			continue // it changed meanwhile: look again
		}
		var v verifier
		_ = json.Unmarshal(cur[0].Value, &v)
		if hmac.Equal([]byte(v.HMAC), []byte(mine)) {
			return string(cur[0].Value), nil
		}
		why := "was derived from another token"
		switch {
		case m.cfg.Credential == "" && v.Token:
			why = "is of a token, and this member has none"
		case m.cfg.Credential != "" && !v.Token:
			why = "is of no token, and this member has one"
		}
		return "", fmt.Errorf("%w: member %q: the verifier in etcd (%s, written by member %q) %s; every member of a cluster needs the same auth_token_file "+
			"(to change the token, stop every member and start them all with the new one)", ErrCredential, m.cfg.Name, key, v.By, why)
	}
}

func isLeaseNotFound(err error) bool { return errors.Is(err, rpctypes.ErrLeaseNotFound) }

// revoke revokes lease, ignoring errors (it may be gone already).
func (m *Member) revoke(lease clientv3.LeaseID) {
	rctx, cancel := context.WithTimeout(context.Background(), m.cfg.RequestTimeout)
	_, _ = m.cfg.Client.Revoke(rctx, lease)
	cancel()
}

// revokeErr revokes lease; one that is gone already is no error.
func (m *Member) revokeErr(ctx context.Context, lease clientv3.LeaseID) error {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	if _, err := m.cfg.Client.Revoke(rctx, lease); err != nil && !isLeaseNotFound(err) {
		return fmt.Errorf("cluster: revoke the former membership's lease: %w", err)
	}
	return nil
}
