package etcdmeta

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/jobgroup"
	"github.com/loadnode/loadnode/metastore"
)

// ErrUnavailable wraps a failure to reach etcd (or a call that timed out):
// nothing was decided, the write may or may not have happened only if the
// error says "ambiguous".
var ErrUnavailable = errors.New("etcdmeta: etcd unavailable")

// Options configure a Store.
type Options struct {
	// Prefix is the key prefix of this cluster's metadata. Default
	// "/loadnode/". It must end with "/".
	Prefix string
	// RequestTimeout bounds every etcd call. Default 5s.
	RequestTimeout time.Duration
}

func defaultOptions() Options { return Options{Prefix: "/loadnode/", RequestTimeout: 5 * time.Second} }

// Validate reports a setting out of range.
func (o Options) Validate() error {
	if !strings.HasSuffix(o.Prefix, "/") {
		return fmt.Errorf("etcdmeta: prefix %q must end with /", o.Prefix)
	}
	if o.RequestTimeout <= 0 {
		return fmt.Errorf("etcdmeta: request timeout %v must be > 0", o.RequestTimeout)
	}
	return nil
}

const (
	// createChunk jobs per create transaction: 4 puts each (name, record,
	// head, first entry) and a table, under etcd's default 128 ops.
	createChunk = 24
	// appendChunk entries per append transaction: 2 puts each.
	appendChunk = 60
	// loadPage records (and heads) per read of LoadAllJobs.
	loadPage = 1000
	// idBlock ids are reserved per counter update at least, so that
	// members creating at once do not contend on the counter for every
	// create batch; the ids a process reserved and did not use (it
	// stopped) are skipped, never reused.
	idBlock = 128
	// lastIDWidth is the width of meta/last_job_id's value, zero-padded,
	// so that etcd's byte-wise compare of two values is numeric.
	lastIDWidth = 20
	// tableFresh is how long Table answers from what it read last
	// (every create in the mailbox asks for its table: a round trip to
	// etcd each was most of a create's time in a cluster). A table
	// another member dropped or made meanwhile shows that late; a
	// create's own write still checks a table it makes (createChunk).
	tableFresh = time.Second
	// maxCachedTables bounds Table's cache; it starts again empty when
	// full.
	maxCachedTables = 4096
	// casRetries bounds the re-read loops of a compare that keeps failing
	// under contention.
	casRetries = 1000
)

// Store is the etcd metadata store. The client is the caller's: Close does
// not close it.
type Store struct {
	c    *clientv3.Client
	opts Options
	keys Keys
	// createMu serializes this process's id allocations (they would only
	// retry against each other); other members are fenced by the
	// counter's compare.
	createMu sync.Mutex
	// ids is the rest of the block of ids this process reserved last
	// (AllocJobIDs): ids next..end-1 are its own; spare, when not nil,
	// brings the next block (reserved in the background once the
	// current one is half used, so that creates do not wait for it).
	// REQUIRES: createMu.
	ids struct {
		next, end uint64
		spare     chan reservedIDs
	}
	// tables is Table's cache.
	tables struct {
		sync.Mutex
		m map[string]cachedTable
	}
	// seen is what createChunk learnt of keys other writers rarely
	// change, so that a create need not read them first; a compare that
	// fails on stale knowledge reads again.
	seen struct {
		sync.Mutex
		lastPadded bool
		tables     map[string]seenTable
	}
	// appends groups concurrent AppendTransition calls (appendgroup.go).
	appends jobgroup.Group[*appendCall]
}

var _ metastore.Store = (*Store)(nil)

// New returns a Store over c. Zero fields of opts take their defaults.
func New(c *clientv3.Client, opts Options) (*Store, error) {
	d := defaultOptions()
	if opts.Prefix == "" {
		opts.Prefix = d.Prefix
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = d.RequestTimeout
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st := &Store{c: c, opts: opts, keys: Keys{Prefix: opts.Prefix}}
	st.seen.tables = map[string]seenTable{}
	st.tables.m = map[string]cachedTable{}
	return st, nil
}

// Client is the store's etcd client.
func (s *Store) Client() *clientv3.Client { return s.c }

// Prefix is the store's key prefix.
func (s *Store) Prefix() string { return s.opts.Prefix }

// Keys spells the store's keys.
func (s *Store) Keys() Keys { return s.keys }

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opts.RequestTimeout)
}

func unavailable(what string, err error) error {
	return fmt.Errorf("etcdmeta: %s: %w: %w", what, ErrUnavailable, err)
}

func parseUint(b []byte) (uint64, error) { return strconv.ParseUint(string(b), 10, 64) }

func validateTableName(name string) error {
	if name == "" {
		return errors.New("etcdmeta: empty table name")
	}
	return nil
}

// LastJobID returns the largest job id written, 0 if none.
func (s *Store) LastJobID() (uint64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Get(ctx, s.keys.LastJobID())
	if err != nil {
		return 0, unavailable("last job id", err)
	}
	if len(r.Kvs) == 0 {
		return 0, nil
	}
	id, err := parseUint(r.Kvs[0].Value)
	if err != nil {
		return 0, fmt.Errorf("etcdmeta: last job id: corrupt value %q", r.Kvs[0].Value)
	}
	return id, nil
}

// AllocJobIDs reserves n consecutive job ids, unique across every member
// of the cluster, and returns the first. They come from a block of at
// least idBlock ids this process reserved (one counter update per block;
// the next block is reserved in the background once half of one is
// used), above every id written when the block was reserved (LastJobID),
// and are never handed out again, whether or not they are used.
func (s *Store) AllocJobIDs(n int) (uint64, error) {
	if n <= 0 {
		return 0, fmt.Errorf("etcdmeta: allocate %d job ids", n)
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if s.ids.end-s.ids.next < uint64(n) && s.ids.spare != nil {
		// The rest of the current block is dropped (never handed out).
		r := <-s.ids.spare
		s.ids.spare = nil
		if r.err == nil {
			s.ids.next, s.ids.end = r.first, r.first+idBlock
		}
	}
	if s.ids.end-s.ids.next < uint64(n) {
		want := max(n, idBlock)
		first, err := s.reserveIDs(want)
		if err != nil {
			return 0, err
		}
		s.ids.next, s.ids.end = first, first+uint64(want)
	}
	first := s.ids.next
	s.ids.next += uint64(n)
	if s.ids.spare == nil && s.ids.end-s.ids.next < idBlock/2 {
		spare := make(chan reservedIDs, 1)
		s.ids.spare = spare
		go func() {
			first, err := s.reserveIDs(idBlock)
			spare <- reservedIDs{first: first, err: err}
		}()
	}
	return first, nil
}

// reservedIDs is a block of idBlock ids reserved in the background (or
// why it could not be).
type reservedIDs struct {
	first uint64
	err   error
}

// reserveIDs moves the cluster's id counter past n ids and returns the
// first. One runs at a time in a process: AllocJobIDs, holding createMu,
// starts one in the background only when none is in flight, and waits
// for that one before it reserves itself.
func (s *Store) reserveIDs(n int) (uint64, error) {
	for range casRetries {
		ctx, cancel := s.ctx()
		r, err := s.c.Txn(ctx).Then(clientv3.OpGet(s.keys.NextJobID()), clientv3.OpGet(s.keys.LastJobID())).Commit()
		if err != nil {
			cancel()
			return 0, unavailable("allocate job ids", err)
		}
		next, rev := uint64(1), int64(0)
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
			if next, err = parseUint(kvs[0].Value); err != nil {
				cancel()
				return 0, fmt.Errorf("etcdmeta: allocate job ids: corrupt counter %q", kvs[0].Value)
			}
			rev = kvs[0].ModRevision
		}
		if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
			if last, err := parseUint(kvs[0].Value); err == nil && last >= next {
				next = last + 1
			}
		}
		w, err := s.c.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(s.keys.NextJobID()), "=", rev)).
			Then(clientv3.OpPut(s.keys.NextJobID(), strconv.FormatUint(next+uint64(n), 10))).Commit()
		cancel()
		if err != nil {
			return 0, unavailable("allocate job ids", err)
		}
		if w.Succeeded {
			return next, nil
		}
	}
	return 0, errors.New("etcdmeta: allocate job ids: counter contended beyond retries")
}

// CreateJobs writes every job that passes its checks, in transactions of
// at most createChunk jobs, and returns one error per job.
func (s *Store) CreateJobs(jobs []metastore.NewJob) []error {
	errs := make([]error, len(jobs))
	type prepared struct {
		i                  int
		rec                *api.JobRecord
		recB, firstB, tblB []byte
		table              *api.TableSpec
	}
	var ok []prepared
	for i, j := range jobs {
		p, err := prepare(j)
		if err != nil {
			errs[i] = err
			continue
		}
		ok = append(ok, prepared{i: i, rec: j.Record, recB: p.rec, firstB: p.first, tblB: p.table, table: j.NewTable})
	}
	// Creates of one process run concurrently (a member keeps a few
	// create writes in flight): the transactions' compares order them.
	// Within one call: the first of a name, and of a table, wins.
	names := map[string]bool{}
	tables := map[string]*api.TableSpec{}
	var chunk []prepared
	for _, p := range ok {
		name := p.rec.GetName()
		if names[name] {
			errs[p.i] = fmt.Errorf("etcdmeta: create job %q: name given twice: %w", name, metastore.ErrNameTaken)
			continue
		}
		if p.table != nil {
			if prev, seen := tables[p.table.GetName()]; seen && !proto.Equal(prev, p.table) {
				errs[p.i] = fmt.Errorf("etcdmeta: create job %q: table %q given twice with different schemas: %w", name, p.table.GetName(), metastore.ErrTableExists)
				continue
			} else if !seen {
				tables[p.table.GetName()] = p.table
			}
		}
		names[name] = true
		chunk = append(chunk, p)
	}
	for start := 0; start < len(chunk); start += createChunk {
		part := chunk[start:min(start+createChunk, len(chunk))]
		batch := make([]createItem, len(part))
		for k, p := range part {
			batch[k] = createItem{rec: p.rec, recB: p.recB, firstB: p.firstB, tblB: p.tblB, table: p.table}
		}
		for k, err := range s.createChunk(batch) {
			errs[part[k].i] = err
		}
	}
	return errs
}

type createItem struct {
	rec                *api.JobRecord
	recB, firstB, tblB []byte
	table              *api.TableSpec
}

// createChunk writes one transaction of creates, re-reading and
// re-checking on a failed compare until each job is written or refused.
// The first attempt writes without reading when what the checks need is
// known from this process's earlier creates (the tables' revisions,
// meta/last_job_id padded): the write's compares (names and records
// absent, tables unchanged) hold exactly when a read would have found
// nothing in the way, and a failed compare reads and checks as before.
func (s *Store) createChunk(items []createItem) []error {
	errs := make([]error, len(items))
	pending := make([]int, len(items))
	for i := range items {
		pending[i] = i
	}
	for attempt := range casRetries {
		if len(pending) == 0 {
			return errs
		}
		ctx, cancel := s.ctx()
		var r *clientv3.TxnResponse
		if attempt > 0 || !s.knowsChecks(items, pending) {
			// Read what the checks need, at one revision.
			reads := []clientv3.Op{clientv3.OpGet(s.keys.LastJobID())}
			for _, i := range pending {
				it := items[i]
				reads = append(reads, clientv3.OpGet(s.keys.Name(it.rec.GetName())), clientv3.OpGet(s.keys.Record(it.rec.GetId()), clientv3.WithCountOnly()))
				if it.table != nil {
					reads = append(reads, clientv3.OpGet(s.keys.Table(it.table.GetName())))
				} else {
					reads = append(reads, clientv3.OpGet(s.keys.LastJobID(), clientv3.WithCountOnly())) // placeholder, keeps 3 per job
				}
			}
			var err error
			if r, err = s.c.Txn(ctx).Then(reads...).Commit(); err != nil {
				cancel()
				for _, i := range pending {
					errs[i] = unavailable(fmt.Sprintf("create job %q", items[i].rec.GetName()), err)
				}
				return errs
			}
		}
		s.seen.Lock()
		last, lastRev, padded := uint64(0), int64(0), s.seen.lastPadded
		s.seen.Unlock()
		if r != nil {
			padded = false
			if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
				last, _ = parseUint(kvs[0].Value)
				lastRev, padded = kvs[0].ModRevision, len(kvs[0].Value) == lastIDWidth
			}
		}
		written := uint64(0)
		var cmps []clientv3.Cmp
		var puts []clientv3.Op
		var writing []int
		tableDone := map[string]bool{}
		for k, i := range pending {
			it := items[i]
			name := it.rec.GetName()
			if r != nil {
				nameR := r.Responses[1+3*k].GetResponseRange()
				recR := r.Responses[2+3*k].GetResponseRange()
				if len(nameR.Kvs) == 1 {
					errs[i] = fmt.Errorf("etcdmeta: create job %q: name used by job %s: %w", name, nameR.Kvs[0].Value, metastore.ErrNameTaken)
					continue
				}
				if recR.Count > 0 {
					errs[i] = fmt.Errorf("etcdmeta: create job %q: id %d is already used", name, it.rec.GetId())
					continue
				}
			}
			if it.table != nil && !tableDone[it.table.GetName()] {
				tkey := s.keys.Table(it.table.GetName())
				var cur seenTable // rev 0: absent
				if r != nil {
					if kvs := r.Responses[3+3*k].GetResponseRange().Kvs; len(kvs) == 1 {
						cur = seenTable{rev: kvs[0].ModRevision, val: kvs[0].Value}
					}
				} else {
					s.seen.Lock()
					cur = s.seen.tables[it.table.GetName()]
					s.seen.Unlock()
				}
				if cur.rev != 0 {
					spec := &api.TableSpec{}
					if err := proto.Unmarshal(cur.val, spec); err != nil {
						errs[i] = fmt.Errorf("etcdmeta: create job %q: corrupt table %q: %w", name, it.table.GetName(), err)
						continue
					}
					if !proto.Equal(spec, it.table) {
						errs[i] = fmt.Errorf("etcdmeta: create job %q: table %q: %w", name, it.table.GetName(), metastore.ErrTableExists)
						continue
					}
					cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(tkey), "=", cur.rev))
					s.seen.Lock()
					s.seen.tables[it.table.GetName()] = cur
					s.seen.Unlock()
				} else {
					cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(tkey), "=", 0))
					puts = append(puts, clientv3.OpPut(tkey, string(it.tblB)))
				}
				tableDone[it.table.GetName()] = true
			}
			id := it.rec.GetId()
			cmps = append(cmps,
				clientv3.Compare(clientv3.CreateRevision(s.keys.Name(name)), "=", 0),
				clientv3.Compare(clientv3.CreateRevision(s.keys.Record(id)), "=", 0))
			puts = append(puts,
				clientv3.OpPut(s.keys.Name(name), strconv.FormatUint(id, 10)),
				clientv3.OpPut(s.keys.Record(id), string(it.recB)),
				clientv3.OpPut(s.keys.Head(id), string(it.firstB)),
				clientv3.OpPut(s.keys.LogEntry(id, 1), string(it.firstB)))
			written = max(written, id)
			writing = append(writing, i)
		}
		if len(writing) == 0 {
			cancel()
			return errs
		}
		lkey := s.keys.LastJobID()
		if padded {
			// Raised only if below, in a nested transaction: members
			// creating at once do not fail each other's compares.
			v := fmt.Sprintf("%0*d", lastIDWidth, written)
			puts = append(puts, clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.Value(lkey), "<", v)},
				[]clientv3.Op{clientv3.OpPut(lkey, v)}, nil))
		} else {
			// Absent, or written unpadded by an older version: this
			// write pads it.
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(lkey), "=", lastRev))
			puts = append(puts, clientv3.OpPut(lkey, fmt.Sprintf("%0*d", lastIDWidth, max(last, written))))
		}
		w, err := s.c.Txn(ctx).If(cmps...).Then(puts...).Commit()
		cancel()
		if err != nil {
			for _, i := range writing {
				errs[i] = unavailable(fmt.Sprintf("create job %q (ambiguous: it may have been written)", items[i].rec.GetName()), err)
			}
			return errs
		}
		if w.Succeeded {
			s.seen.Lock()
			s.seen.lastPadded = true
			for _, i := range writing {
				if t := items[i].table; t != nil && items[i].tblB != nil {
					if _, had := s.seen.tables[t.GetName()]; !had {
						s.seen.tables[t.GetName()] = seenTable{rev: w.Header.Revision, val: items[i].tblB}
					}
				}
			}
			s.seen.Unlock()
			return errs
		}
		// Someone wrote meanwhile (or what this process knew is stale):
		// check again the ones we meant to write.
		pending = writing
	}
	for _, i := range pending {
		errs[i] = fmt.Errorf("etcdmeta: create job %q: contended beyond retries", items[i].rec.GetName())
	}
	return errs
}

// knowsChecks reports whether createChunk can write pending without
// reading first: meta/last_job_id was seen padded and every table the
// items name was seen (its revision).
func (s *Store) knowsChecks(items []createItem, pending []int) bool {
	s.seen.Lock()
	defer s.seen.Unlock()
	if !s.seen.lastPadded {
		return false
	}
	for _, i := range pending {
		if t := items[i].table; t != nil && s.seen.tables[t.GetName()].rev == 0 {
			return false
		}
	}
	return true
}

// seenTable is a table key's value and revision as this process last
// read or wrote it.
type seenTable struct {
	rev int64
	val []byte
}

type preparedBytes struct{ rec, first, table []byte }

func prepare(j metastore.NewJob) (preparedBytes, error) {
	var p preparedBytes
	rec := j.Record
	first, err := j.Check()
	if err != nil {
		return p, fmt.Errorf("etcdmeta: %w", err)
	}
	if p.rec, err = proto.Marshal(rec); err != nil {
		return p, fmt.Errorf("etcdmeta: create job %q: marshal record: %w", rec.GetName(), err)
	}
	if p.first, err = proto.Marshal(first); err != nil {
		return p, fmt.Errorf("etcdmeta: create job %q: marshal transition: %w", rec.GetName(), err)
	}
	if j.NewTable != nil {
		if p.table, err = proto.Marshal(j.NewTable); err != nil {
			return p, fmt.Errorf("etcdmeta: create job %q: marshal table: %w", rec.GetName(), err)
		}
	}
	return p, nil
}

// Table returns a table's schema, or an error wrapping ErrNotFound.
func (s *Store) Table(name string) (*api.TableSpec, error) {
	s.tables.Lock()
	c, ok := s.tables.m[name]
	s.tables.Unlock()
	if ok && time.Since(c.at) < tableFresh {
		return proto.CloneOf(c.spec), nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Get(ctx, s.keys.Table(name))
	if err != nil {
		return nil, unavailable(fmt.Sprintf("table %q", name), err)
	}
	if len(r.Kvs) == 0 {
		s.forgetTable(name)
		return nil, fmt.Errorf("etcdmeta: table %q: %w", name, metastore.ErrNotFound)
	}
	t := &api.TableSpec{}
	if err := proto.Unmarshal(r.Kvs[0].Value, t); err != nil {
		return nil, fmt.Errorf("etcdmeta: table %q: corrupt: %w", name, err)
	}
	s.tables.Lock()
	if len(s.tables.m) >= maxCachedTables {
		clear(s.tables.m)
	}
	s.tables.m[name] = cachedTable{spec: proto.CloneOf(t), at: time.Now()}
	s.tables.Unlock()
	return t, nil
}

// forgetTable drops name from Table's cache (this process changed it).
func (s *Store) forgetTable(name string) {
	s.tables.Lock()
	delete(s.tables.m, name)
	s.tables.Unlock()
}

// cachedTable is a table Table read, and when.
type cachedTable struct {
	spec *api.TableSpec
	at   time.Time
}

// CreateTable adds a table if absent; an identical one is not an error.
func (s *Store) CreateTable(spec *api.TableSpec) (bool, error) {
	defer s.forgetTable(spec.GetName())
	if err := validateTableName(spec.GetName()); err != nil {
		return false, fmt.Errorf("etcdmeta: create table: %w", err)
	}
	b, err := proto.Marshal(spec)
	if err != nil {
		return false, fmt.Errorf("etcdmeta: create table %q: %w", spec.GetName(), err)
	}
	key := s.keys.Table(spec.GetName())
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(b))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return false, unavailable(fmt.Sprintf("create table %q", spec.GetName()), err)
	}
	if r.Succeeded {
		return true, nil
	}
	cur := &api.TableSpec{}
	if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		if err := proto.Unmarshal(kvs[0].Value, cur); err != nil {
			return false, fmt.Errorf("etcdmeta: create table %q: corrupt stored table: %w", spec.GetName(), err)
		}
	}
	if !proto.Equal(cur, spec) {
		return false, fmt.Errorf("etcdmeta: create table %q: %w", spec.GetName(), metastore.ErrTableExists)
	}
	return false, nil
}

func decodeState(id uint64, recB, headB []byte) (*metastore.JobState, error) {
	st := &metastore.JobState{Record: &api.JobRecord{}}
	if err := proto.Unmarshal(recB, st.Record); err != nil {
		return nil, fmt.Errorf("etcdmeta: job %d: corrupt record: %w", id, err)
	}
	if headB != nil {
		st.Last = &api.Transition{}
		if err := proto.Unmarshal(headB, st.Last); err != nil {
			return nil, fmt.Errorf("etcdmeta: job %d: corrupt head: %w", id, err)
		}
	}
	return st, nil
}

// LoadJob reads a job's record and newest transition in one transaction.
func (s *Store) LoadJob(id uint64) (*metastore.JobState, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Txn(ctx).Then(clientv3.OpGet(s.keys.Record(id)), clientv3.OpGet(s.keys.Head(id))).Commit()
	if err != nil {
		return nil, unavailable(fmt.Sprintf("load job %d", id), err)
	}
	rec := r.Responses[0].GetResponseRange().Kvs
	if len(rec) == 0 {
		return nil, fmt.Errorf("etcdmeta: load job %d: %w", id, metastore.ErrNotFound)
	}
	var head []byte
	if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		head = kvs[0].Value
	}
	return decodeState(id, rec[0].Value, head)
}

// loadChunk is how many jobs one LoadJobs transaction reads (two gets
// each, under etcd's default --max-txn-ops of 128).
const loadChunk = 60

// LoadJobs reads many jobs' records and newest transitions, loadChunk
// jobs per read-only transaction, up to 8 transactions at once; gone
// lists the ids that are not stored.
func (s *Store) LoadJobs(ids []uint64) (states map[uint64]*metastore.JobState, gone []uint64, err error) {
	states = make(map[uint64]*metastore.JobState, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	sem := make(chan struct{}, 8)
	load := func(chunk []uint64) error {
		ops := make([]clientv3.Op, 0, 2*len(chunk))
		for _, id := range chunk {
			ops = append(ops, clientv3.OpGet(s.keys.Record(id)), clientv3.OpGet(s.keys.Head(id)))
		}
		ctx, cancel := s.ctx()
		defer cancel()
		r, err := s.c.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return unavailable(fmt.Sprintf("load %d jobs", len(chunk)), err)
		}
		mu.Lock()
		defer mu.Unlock()
		for i, id := range chunk {
			rec := r.Responses[2*i].GetResponseRange().Kvs
			if len(rec) == 0 {
				gone = append(gone, id)
				continue
			}
			var head []byte
			if kvs := r.Responses[2*i+1].GetResponseRange().Kvs; len(kvs) == 1 {
				head = kvs[0].Value
			}
			st, err := decodeState(id, rec[0].Value, head)
			if err != nil {
				return err
			}
			states[id] = st
		}
		return nil
	}
	for start := 0; start < len(ids); start += loadChunk {
		chunk := ids[start:min(start+loadChunk, len(ids))]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := load(chunk); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	return states, gone, nil
}

// LoadAllJobs calls fn for every job in id order, from one revision.
func (s *Store) LoadAllJobs(fn func(st *metastore.JobState) error) error {
	rev := int64(0)
	from := s.keys.Records()
	end := clientv3.GetPrefixRangeEnd(s.keys.Records())
	for {
		ctx, cancel := s.ctx()
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(loadPage)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		r, err := s.c.Get(ctx, from, opts...)
		if err != nil {
			cancel()
			return unavailable("load jobs", err)
		}
		if rev == 0 {
			rev = r.Header.Revision
		}
		if len(r.Kvs) == 0 {
			cancel()
			return nil
		}
		firstID := strings.TrimPrefix(string(r.Kvs[0].Key), s.keys.Records())
		lastID := strings.TrimPrefix(string(r.Kvs[len(r.Kvs)-1].Key), s.keys.Records())
		h, err := s.c.Get(ctx, s.keys.Heads()+firstID, clientv3.WithRange(s.keys.Heads()+lastID+"\x00"), clientv3.WithRev(rev))
		cancel()
		if err != nil {
			return unavailable("load jobs", err)
		}
		heads := make(map[string][]byte, len(h.Kvs))
		for _, kv := range h.Kvs {
			heads[strings.TrimPrefix(string(kv.Key), s.keys.Heads())] = kv.Value
		}
		for _, kv := range r.Kvs {
			ids := strings.TrimPrefix(string(kv.Key), s.keys.Records())
			id, err := strconv.ParseUint(ids, 10, 64)
			if err != nil {
				return fmt.Errorf("etcdmeta: load jobs: malformed key %q", kv.Key)
			}
			st, err := decodeState(id, kv.Value, heads[ids])
			if err != nil {
				return err
			}
			if err := fn(st); err != nil {
				return err
			}
		}
		if !r.More {
			return nil
		}
		from = string(r.Kvs[len(r.Kvs)-1].Key) + "\x00"
	}
}

func decodeLog(id uint64, r *clientv3.GetResponse) ([]*api.Transition, error) {
	ts := make([]*api.Transition, 0, len(r.Kvs))
	for _, kv := range r.Kvs {
		t := &api.Transition{}
		if err := proto.Unmarshal(kv.Value, t); err != nil {
			return nil, fmt.Errorf("etcdmeta: journal of job %d: corrupt entry %q: %w", id, kv.Key, err)
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Journal returns a job's transitions, oldest first.
func (s *Store) Journal(id uint64) ([]*api.Transition, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Get(ctx, s.keys.Log(id), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, unavailable(fmt.Sprintf("journal of job %d", id), err)
	}
	return decodeLog(id, r)
}

// History returns a job's newest max transitions, oldest first.
func (s *Store) History(id uint64, max int) ([]*api.Transition, error) {
	if max <= 0 {
		return nil, nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Get(ctx, s.keys.Log(id), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(int64(max)))
	if err != nil {
		return nil, unavailable(fmt.Sprintf("history of job %d", id), err)
	}
	ts, err := decodeLog(id, r)
	slices.Reverse(ts)
	return ts, err
}

// head reads a job's newest transition and its ModRevision.
func (s *Store) heads(ctx context.Context, ids []uint64) ([]*api.Transition, []int64, error) {
	ops := make([]clientv3.Op, len(ids))
	for i, id := range ids {
		ops[i] = clientv3.OpGet(s.keys.Head(id))
	}
	r, err := s.c.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, nil, err
	}
	ts := make([]*api.Transition, len(ids))
	revs := make([]int64, len(ids))
	for i, resp := range r.Responses {
		kvs := resp.GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue
		}
		t := &api.Transition{}
		if err := proto.Unmarshal(kvs[0].Value, t); err != nil {
			return nil, nil, fmt.Errorf("etcdmeta: job %d: corrupt head: %w", ids[i], err)
		}
		ts[i], revs[i] = t, kvs[0].ModRevision
	}
	return ts, revs, nil
}

func checkNext(id uint64, head, t *api.Transition) error {
	if head == nil {
		return fmt.Errorf("job %d: %w", id, metastore.ErrNotFound)
	}
	if want := head.GetSeq() + 1; t.GetSeq() != want {
		return fmt.Errorf("job %d: seq %d, want %d", id, t.GetSeq(), want)
	}
	return nil
}

// AppendTransition journals t; t.Seq must follow the newest. Calls for
// different jobs that overlap share one transaction (appendgroup.go).
func (s *Store) AppendTransition(id uint64, t *api.Transition) error {
	if t == nil {
		return fmt.Errorf("etcdmeta: append transition to job %d: nil transition", id)
	}
	if err := s.appendGrouped(id, t); err != nil {
		return fmt.Errorf("etcdmeta: append transition to job %d: %w", id, err)
	}
	return nil
}

// AppendTransitions journals entries of many jobs; every entry is checked
// before any is written, and each transaction of at most appendChunk
// entries is atomic.
func (s *Store) AppendTransitions(ts []metastore.JobTransition) error {
	if len(ts) == 0 {
		return nil
	}
	seen := map[uint64]bool{}
	for _, jt := range ts {
		if jt.T == nil {
			return fmt.Errorf("etcdmeta: append transitions: job %d: nil transition", jt.JobID)
		}
		if seen[jt.JobID] {
			return fmt.Errorf("etcdmeta: append transitions: job %d given twice", jt.JobID)
		}
		seen[jt.JobID] = true
	}
	if len(ts) > appendChunk {
		// Check all first, so that a refused batch writes nothing.
		ctx, cancel := s.ctx()
		for start := 0; start < len(ts); start += appendChunk {
			part := ts[start:min(start+appendChunk, len(ts))]
			ids := make([]uint64, len(part))
			for i, jt := range part {
				ids[i] = jt.JobID
			}
			heads, _, err := s.heads(ctx, ids)
			if err != nil {
				cancel()
				return unavailable("append transitions", err)
			}
			for i, jt := range part {
				if err := checkNext(jt.JobID, heads[i], jt.T); err != nil {
					cancel()
					return fmt.Errorf("etcdmeta: append transitions: %w", err)
				}
			}
		}
		cancel()
	}
	for start := 0; start < len(ts); start += appendChunk {
		if err := s.appendChunk(ts[start:min(start+appendChunk, len(ts))], nil); err != nil {
			return fmt.Errorf("etcdmeta: append transitions: %w", err)
		}
	}
	return nil
}

// appendChunk writes entries (and, for an alter, the new record) in one
// transaction, guarded by each head's ModRevision.
func (s *Store) appendChunk(ts []metastore.JobTransition, rec *api.JobRecord) error {
	ids := make([]uint64, len(ts))
	vals := make([][]byte, len(ts))
	for i, jt := range ts {
		ids[i] = jt.JobID
		b, err := proto.Marshal(jt.T)
		if err != nil {
			return fmt.Errorf("job %d: marshal transition: %w", jt.JobID, err)
		}
		vals[i] = b
	}
	var recB []byte
	if rec != nil {
		var err error
		if recB, err = proto.Marshal(rec); err != nil {
			return fmt.Errorf("job %d: marshal record: %w", rec.GetId(), err)
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	var recCmp []clientv3.Cmp
	var recPut []clientv3.Op
	if rec != nil {
		recCmp = []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(s.keys.Record(rec.GetId())), ">", 0)}
		recPut = []clientv3.Op{clientv3.OpPut(s.keys.Record(rec.GetId()), string(recB))}
	}
	// First without reading the heads: a journal is entries 1..n with no
	// gap (CreateJobs writes 1, each append the next, nothing trims it;
	// DeleteJob removes it whole) and its head is entry n, so entry seq-1
	// present and entry seq absent hold exactly when the head's seq is
	// seq-1, as checkNext wants. A failed compare reads the heads and
	// checks them, as below, to say what is wrong (or to write if a
	// writer moved the head meanwhile to where t follows).
	if fast := len(ts) > 0; fast {
		cmps := slices.Clone(recCmp)
		puts := slices.Clone(recPut)
		for i, jt := range ts {
			seq := jt.T.GetSeq()
			if seq < 2 {
				fast = false
				break
			}
			cmps = append(cmps,
				clientv3.Compare(clientv3.CreateRevision(s.keys.LogEntry(jt.JobID, seq-1)), ">", 0),
				clientv3.Compare(clientv3.CreateRevision(s.keys.LogEntry(jt.JobID, seq)), "=", 0))
			puts = append(puts, clientv3.OpPut(s.keys.Head(jt.JobID), string(vals[i])), clientv3.OpPut(s.keys.LogEntry(jt.JobID, seq), string(vals[i])))
		}
		if fast {
			w, err := s.c.Txn(ctx).If(cmps...).Then(puts...).Commit()
			if err != nil {
				return unavailable("write (ambiguous: it may have been written)", err)
			}
			if w.Succeeded {
				return nil
			}
		}
	}
	heads, revs, err := s.heads(ctx, ids)
	if err != nil {
		return unavailable("read heads", err)
	}
	cmps := make([]clientv3.Cmp, 0, len(ts)+1)
	puts := make([]clientv3.Op, 0, 2*len(ts)+1)
	for i, jt := range ts {
		if err := checkNext(jt.JobID, heads[i], jt.T); err != nil {
			return err
		}
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(s.keys.Head(jt.JobID)), "=", revs[i]))
		puts = append(puts, clientv3.OpPut(s.keys.Head(jt.JobID), string(vals[i])), clientv3.OpPut(s.keys.LogEntry(jt.JobID, jt.T.GetSeq()), string(vals[i])))
	}
	cmps, puts = append(cmps, recCmp...), append(puts, recPut...)
	w, err := s.c.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return unavailable("write (ambiguous: it may have been written)", err)
	}
	if !w.Succeeded {
		return errors.New("a concurrent writer appended first (the journal has one writer)")
	}
	return nil
}

// AlterJob replaces a job's record and journals t in one transaction.
func (s *Store) AlterJob(rec *api.JobRecord, t *api.Transition) error {
	if rec == nil || t == nil {
		return errors.New("etcdmeta: alter job: nil record or transition")
	}
	if err := s.appendChunk([]metastore.JobTransition{{JobID: rec.GetId(), T: t}}, rec); err != nil {
		return fmt.Errorf("etcdmeta: alter job %d: %w", rec.GetId(), err)
	}
	return nil
}

// DeleteJob removes a job's record, journal and name in one transaction;
// its table stays.
func (s *Store) DeleteJob(id uint64, name string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	nk := s.keys.Name(name)
	w, err := s.c.Txn(ctx).If(clientv3.Compare(clientv3.Value(nk), "=", strconv.FormatUint(id, 10))).Then(
		clientv3.OpDelete(nk),
		clientv3.OpDelete(s.keys.Record(id)),
		clientv3.OpDelete(s.keys.Head(id)),
		clientv3.OpDelete(s.keys.Log(id), clientv3.WithPrefix()),
	).Commit()
	if err != nil {
		return unavailable(fmt.Sprintf("delete job %q", name), err)
	}
	if !w.Succeeded {
		return fmt.Errorf("etcdmeta: delete job %q (id %d): %w", name, id, metastore.ErrNotFound)
	}
	return nil
}

// Tables returns every table of the catalog, by name.
func (s *Store) Tables() ([]*api.TableSpec, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	prefix := s.keys.Tables()
	r, err := s.c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, unavailable("tables", err)
	}
	out := make([]*api.TableSpec, 0, len(r.Kvs))
	for _, kv := range r.Kvs {
		t := &api.TableSpec{}
		if err := proto.Unmarshal(kv.Value, t); err != nil {
			return nil, fmt.Errorf("etcdmeta: table %q: corrupt: %w", strings.TrimPrefix(string(kv.Key), prefix), err)
		}
		out = append(out, t)
	}
	return out, nil
}

// DropTable removes a table from the catalog (the rows of a cluster's
// tables live in their database: the caller drops them there).
func (s *Store) DropTable(name string) error {
	defer s.forgetTable(name)
	ctx, cancel := s.ctx()
	defer cancel()
	r, err := s.c.Delete(ctx, s.keys.Table(name))
	if err != nil {
		return unavailable(fmt.Sprintf("drop table %q", name), err)
	}
	if r.Deleted == 0 {
		return fmt.Errorf("etcdmeta: table %q: %w", name, metastore.ErrNotFound)
	}
	return nil
}
