package persistence

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"google.golang.org/protobuf/proto"
)

// JobState is a job's durable state as LoadJob reads it.
type JobState struct {
	Record *api.JobRecord
	// Last is the newest journal entry (nil only if the journal is empty,
	// which CreateJob never leaves).
	Last *api.Transition
	// Progress maps partition to the next position to read. Never nil.
	Progress map[int32]int64
	// Checkpoints maps partition to its opaque source checkpoint, for the
	// partitions of a checkpointed source (Kinesis). Never nil.
	Checkpoints map[int32][]byte
	// Stats is the job's statistics; zero until the first commit. Never nil.
	Stats *api.JobStats
	// Fence is the newest commit fence stored (sink.Commit.Fence).
	Fence uint64
}

// LastJobID returns the largest job id CreateJob has written, 0 if none.
func (s *Store) LastJobID() (id uint64, err error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.exit(&err)
	id, _, err = s.getUint64([]byte(lastJobIDKey))
	if err != nil {
		return 0, fmt.Errorf("persistence: last job id: %w", err)
	}
	return id, nil
}

// NewJob is one job for CreateJobs (metastore.NewJob).
type NewJob = metastore.NewJob

// CreateJob writes, in one batch committed with pebble.Sync: the name index,
// the JobRecord snapshot, the first journal entry (stored with seq 1; first.Seq
// must be 0 or 1), m/last_job_id = max(stored, rec.Id), and the table schema
// if newTable != nil.
//
// It writes nothing and returns an error wrapping ErrNameTaken if the name is
// in the index, ErrTableExists if a table of that name exists with another
// schema (an identical one is kept as is), or a plain error if the id is
// already used or an argument is invalid.
//
// INVARIANT: when CreateJob returns nil the job's snapshot, journal head and
// name are durable; when it returns an error, none of them was acknowledged.
func (s *Store) CreateJob(rec *api.JobRecord, first *api.Transition, newTable *api.TableSpec) error {
	return s.CreateJobs([]NewJob{{Record: rec, First: first, NewTable: newTable}})[0]
}

// CreateJobs is CreateJob for many jobs at once: every job that passes its
// checks is written in ONE batch committed with pebble.Sync, so that a burst
// of creates costs one fsync. It returns one error per job (nil: durable).
// A job that fails its checks (name or id taken, also within the call; its
// table existing, or given earlier in the call, with another schema) is left
// out and gets its error; if the commit fails, every job that was in it gets that error.
func (s *Store) CreateJobs(jobs []NewJob) (errs []error) {
	errs = make([]error, len(jobs))
	if err := s.enter(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	defer s.leave()
	type prepared struct {
		i                            int
		rec                          *api.JobRecord
		recBytes, firstBytes, tblBin []byte
		table                        string
	}
	var ok []prepared
	for i, j := range jobs {
		p, err := prepareJob(j)
		if err != nil {
			errs[i] = err
			continue
		}
		ok = append(ok, prepared{i: i, rec: j.Record, recBytes: p.rec, firstBytes: p.first, tblBin: p.table, table: j.NewTable.GetName()})
	}
	if len(ok) == 0 {
		return errs
	}

	s.createMu.Lock()
	defer s.createMu.Unlock()
	var err error
	defer func() {
		if err != nil {
			for _, p := range ok {
				if errs[p.i] == nil {
					errs[p.i] = err
				}
			}
		}
	}()
	defer s.recoverFatal(&err)

	last, _, err := s.getUint64([]byte(lastJobIDKey))
	if err != nil {
		err = fmt.Errorf("persistence: create jobs: %w", err)
		return errs
	}
	names, ids, tables := map[string]bool{}, map[uint64]bool{}, map[string]bool{}
	tableBin := map[string][]byte{}
	b := s.db.NewBatch()
	written := 0
	for _, p := range ok {
		rec := p.rec
		fail := func(e error) { errs[p.i] = e }
		if names[rec.GetName()] {
			fail(fmt.Errorf("persistence: create job %q: name given twice: %w", rec.GetName(), ErrNameTaken))
			continue
		}
		if owner, found, gerr := s.getUint64(nameKey(rec.GetName())); gerr != nil {
			fail(fmt.Errorf("persistence: create job %q: %w", rec.GetName(), gerr))
			continue
		} else if found {
			fail(fmt.Errorf("persistence: create job %q: name used by job %d: %w", rec.GetName(), owner, ErrNameTaken))
			continue
		}
		if _, found, gerr := s.get(jobKey(rec.GetId(), jobRecordSuffix)); gerr != nil {
			fail(fmt.Errorf("persistence: create job %q: %w", rec.GetName(), gerr))
			continue
		} else if found || ids[rec.GetId()] {
			fail(fmt.Errorf("persistence: create job %q: id %d is already used", rec.GetName(), rec.GetId()))
			continue
		}
		if p.tblBin != nil && !tables[p.table] {
			// Create the table if absent; an identical stored schema is
			// fine (creates race for a new table), a different one is not.
			if cur, found, gerr := s.get(tableSpecKey(p.table)); gerr != nil {
				fail(fmt.Errorf("persistence: create job %q: %w", rec.GetName(), gerr))
				continue
			} else if found && !bytes.Equal(cur, p.tblBin) {
				fail(fmt.Errorf("persistence: create job %q: table %q: %w", rec.GetName(), p.table, ErrTableExists))
				continue
			} else if !found {
				_ = b.Set(tableSpecKey(p.table), p.tblBin, nil)
			}
			tables[p.table] = true
			tableBin[p.table] = p.tblBin
		} else if p.tblBin != nil && !bytes.Equal(tableBin[p.table], p.tblBin) {
			fail(fmt.Errorf("persistence: create job %q: table %q given twice with different schemas: %w", rec.GetName(), p.table, ErrTableExists))
			continue
		}
		names[rec.GetName()], ids[rec.GetId()] = true, true
		_ = b.Set(nameKey(rec.GetName()), encodeUint64(rec.GetId()), nil)
		_ = b.Set(jobKey(rec.GetId(), jobRecordSuffix), p.recBytes, nil)
		_ = b.Set(journalKey(rec.GetId(), 1), p.firstBytes, nil)
		last = max(last, rec.GetId())
		written++
	}
	if written == 0 {
		_ = b.Close()
		return errs
	}
	_ = b.Set([]byte(lastJobIDKey), encodeUint64(last), nil)
	if err = s.commit(b, fmt.Sprintf("create %d job(s)", written)); err != nil {
		return errs
	}
	// Each new journal's head is seq 1: the first schedule's InitStarts
	// and the first AppendTransition need not read the record and the
	// journal back.
	for _, p := range ok {
		if errs[p.i] == nil {
			s.setHead(p.rec.GetId(), 1)
			s.markUnstarted(p.rec.GetId())
		}
	}
	return errs
}

type preparedBytes struct{ rec, first, table []byte }

// prepareJob checks one NewJob's arguments and marshals its records.
func prepareJob(j NewJob) (preparedBytes, error) {
	var p preparedBytes
	rec, newTable := j.Record, j.NewTable
	first, err := j.Check()
	if err != nil {
		return p, fmt.Errorf("persistence: %w", err)
	}
	if newTable != nil {
		// The key layout's own rule (keys.go): no NUL byte in a name.
		if err := validateTableName(newTable.GetName()); err != nil {
			return p, fmt.Errorf("persistence: create job %q: %w", rec.GetName(), err)
		}
	}
	if p.rec, err = proto.Marshal(rec); err != nil {
		return p, fmt.Errorf("persistence: create job %q: marshal record: %w", rec.GetName(), err)
	}
	if p.first, err = proto.Marshal(first); err != nil {
		return p, fmt.Errorf("persistence: create job %q: marshal transition: %w", rec.GetName(), err)
	}
	if newTable != nil {
		if p.table, err = proto.Marshal(newTable); err != nil {
			return p, fmt.Errorf("persistence: create job %q: marshal table: %w", rec.GetName(), err)
		}
	}
	return p, nil
}

// Table returns a table's schema, or an error wrapping ErrNotFound.
func (s *Store) Table(name string) (t *api.TableSpec, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if err := validateTableName(name); err != nil {
		return nil, err
	}
	defer s.recoverFatal(&err)
	t = &api.TableSpec{}
	ok, err := s.getProto(tableSpecKey(name), t)
	if err != nil {
		return nil, fmt.Errorf("persistence: table %q: %w", name, err)
	}
	if !ok {
		return nil, fmt.Errorf("persistence: table %q: %w", name, ErrNotFound)
	}
	return t, nil
}

// JobRecords returns every job's create snapshot, ascending by id.
func (s *Store) JobRecords() (recs []*api.JobRecord, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	lower := []byte(jobPrefix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, fmt.Errorf("persistence: job records: %w", err)
	}
	defer closeIter(it, &err)
	// Visit one key per job: seek to its record, then past all its keys.
	for valid := it.First(); valid; {
		k := it.Key()
		if len(k) < len(jobPrefix)+8 {
			return nil, fmt.Errorf("persistence: job records: malformed key %q", k)
		}
		id := binary.BigEndian.Uint64(k[len(jobPrefix):])
		rk := jobKey(id, jobRecordSuffix)
		if it.SeekGE(rk) && bytes.Equal(it.Key(), rk) {
			v, err := it.ValueAndErr()
			if err != nil {
				return nil, fmt.Errorf("persistence: job records: job %d: %w", id, err)
			}
			rec := &api.JobRecord{}
			if err := proto.Unmarshal(v, rec); err != nil {
				return nil, fmt.Errorf("persistence: job records: corrupt record of job %d: %w", id, err)
			}
			recs = append(recs, rec)
		}
		if id == ^uint64(0) {
			break
		}
		valid = it.SeekGE(jobKeyPrefix(id + 1))
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: job records: %w", err)
	}
	return recs, nil
}

// LoadJob returns a job's record, newest transition, progress and stats, or
// an error wrapping ErrNotFound.
func (s *Store) LoadJob(id uint64) (st *JobState, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	rec, err := s.record(id)
	if err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	st = &JobState{Record: rec, Progress: map[int32]int64{}, Stats: &api.JobStats{}}
	if st.Last, err = s.lastTransition(id); err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	if _, err := s.getProto(jobKey(id, jobStatsSuffix), st.Stats); err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	if st.Progress, err = s.progress(id); err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	if st.Checkpoints, err = s.checkpoints(id); err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	if st.Fence, _, err = s.getUint64(jobKey(id, jobFenceSuffix)); err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	return st, nil
}

// Journal returns a job's transitions, ascending by seq, or an error
// wrapping ErrNotFound.
func (s *Store) Journal(id uint64) (ts []*api.Transition, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit(&err)
	if _, err := s.record(id); err != nil {
		return nil, fmt.Errorf("persistence: journal of job %d: %w", id, err)
	}
	lower := jobSubPrefix(id, jobJournalSuffix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, fmt.Errorf("persistence: journal of job %d: %w", id, err)
	}
	defer closeIter(it, &err)
	for valid := it.First(); valid; valid = it.Next() {
		t, err := decodeTransition(it.ValueAndErr())
		if err != nil {
			return nil, fmt.Errorf("persistence: journal of job %d: %w", id, err)
		}
		ts = append(ts, t)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("persistence: journal of job %d: %w", id, err)
	}
	return ts, nil
}

// AppendTransition journals t for job id with pebble.Sync. t.Seq must be the
// stored last seq + 1; otherwise nothing is written and an error is returned.
func (s *Store) AppendTransition(id uint64, t *api.Transition) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if t == nil {
		return fmt.Errorf("persistence: append transition to job %d: nil transition", id)
	}
	v, err := proto.Marshal(t)
	if err != nil {
		return fmt.Errorf("persistence: append transition to job %d: %w", id, err)
	}
	unlock := s.jobs.lock(id)
	defer unlock()
	defer s.recoverFatal(&err)
	if err := s.checkNextSeq(id, t); err != nil {
		return fmt.Errorf("persistence: append transition to job %d: %w", id, err)
	}
	b := s.db.NewBatch()
	_ = b.Set(journalKey(id, t.GetSeq()), v, nil)
	if err := s.commit(b, fmt.Sprintf("append transition %d to job %d", t.GetSeq(), id)); err != nil {
		return err
	}
	s.setHead(id, t.GetSeq())
	return nil
}

// checkNextSeq checks that t is the next entry of job id's journal: its
// seq is the head's + 1, the head cached or read back (an unknown job is
// ErrNotFound). The caller holds the job's lock.
func (s *Store) checkNextSeq(id uint64, t *api.Transition) error {
	lastSeq, ok := s.head(id)
	if !ok {
		if _, err := s.record(id); err != nil {
			return err
		}
		last, err := s.lastTransition(id)
		if err != nil {
			return err
		}
		lastSeq = last.GetSeq()
	}
	if want := lastSeq + 1; t.GetSeq() != want {
		return fmt.Errorf("seq %d, want %d", t.GetSeq(), want)
	}
	return nil
}

// JobTransition is one journal entry for AppendTransitions.
type JobTransition struct {
	JobID uint64
	T     *api.Transition
}

// AppendTransitions journals one transition for each of several jobs in ONE
// synced batch (recovery turns every stored RUNNING job into NEED_SCHEDULE
// this way). Each must have its job's next seq; on any mismatch or unknown
// job nothing is written. A job may appear once.
func (s *Store) AppendTransitions(ts []JobTransition) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if len(ts) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	seen := make(map[uint64]bool, len(ts))
	unlocks := make([]func(), 0, len(ts))
	defer func() {
		for _, u := range unlocks {
			u()
		}
	}()
	for _, jt := range ts {
		if jt.T == nil || seen[jt.JobID] {
			_ = b.Close()
			return fmt.Errorf("persistence: append transitions: job %d: nil or repeated transition", jt.JobID)
		}
		seen[jt.JobID] = true
		unlocks = append(unlocks, s.jobs.lock(jt.JobID))
	}
	defer s.recoverFatal(&err)
	// The journal heads come from the cache (recovery's LoadAllJobs seeds
	// it); the rest from one iterator for all (an iterator per job was most
	// of a 100,000-job recovery).
	var it *pebble.Iterator
	for _, jt := range ts {
		lastSeq, ok := s.head(jt.JobID)
		if !ok {
			if it == nil {
				lower := []byte(jobPrefix)
				if it, err = s.newIter(lower, prefixEnd(lower)); err != nil {
					_ = b.Close()
					return fmt.Errorf("persistence: append transitions: %w", err)
				}
				defer closeIter(it, &err)
			}
			jp := jobSubPrefix(jt.JobID, jobJournalSuffix)
			if !it.SeekLT(prefixEnd(jp)) || !bytes.HasPrefix(it.Key(), jp) || len(it.Key()) != len(jp)+8 {
				_ = b.Close()
				return fmt.Errorf("persistence: append transitions: job %d: %w", jt.JobID, ErrNotFound)
			}
			lastSeq = binary.BigEndian.Uint64(it.Key()[len(jp):])
		}
		if want := lastSeq + 1; jt.T.GetSeq() != want {
			_ = b.Close()
			return fmt.Errorf("persistence: append transitions: job %d: seq %d, want %d", jt.JobID, jt.T.GetSeq(), want)
		}
		v, err := proto.Marshal(jt.T)
		if err != nil {
			_ = b.Close()
			return fmt.Errorf("persistence: append transitions: job %d: %w", jt.JobID, err)
		}
		_ = b.Set(journalKey(jt.JobID, jt.T.GetSeq()), v, nil)
	}
	if err := s.commit(b, fmt.Sprintf("append %d transitions", len(ts))); err != nil {
		return err
	}
	for _, jt := range ts {
		s.setHead(jt.JobID, jt.T.GetSeq())
	}
	return nil
}

// InitProgress persists initial positions for partitions that have none,
// with pebble.Sync. If any listed partition already has progress it writes
// nothing and returns an error wrapping ErrProgressExists that names the
// partition (the lowest such partition). An unknown job gives ErrNotFound.
func (s *Store) InitProgress(id uint64, positions map[int32]int64) error {
	return s.InitStarts(id, positions, nil, nil)
}

// InitStarts is InitProgress with, for a checkpointed source, each new
// partition's initial checkpoint (a partition in checkpoints must be in
// positions), written in the same synced batch. A non-nil t is journaled
// in that batch too, checked as AppendTransition checks it (a job's first
// schedule: RUNNING with its initial positions, one fsync). It returns
// once the batch is durable; the fsync is shared with the next synced
// commit of the store when one comes soon enough (commitSharedSync).
func (s *Store) InitStarts(id uint64, positions map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	unlock := s.jobs.lock(id)
	defer unlock()
	defer s.recoverFatal(&err)
	if _, known := s.head(id); !known {
		// A cached journal head is a job this Store created or read and
		// has not deleted (DeleteJob forgets it, under this lock).
		if _, err := s.record(id); err != nil {
			return fmt.Errorf("persistence: init progress of job %d: %w", id, err)
		}
	}
	for p := range checkpoints {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("persistence: init progress of job %d: checkpoint for partition %d without a position", id, p)
		}
	}
	if len(positions) == 0 && t == nil {
		return nil
	}
	var tv []byte
	if t != nil {
		if err := s.checkNextSeq(id, t); err != nil {
			return fmt.Errorf("persistence: init progress of job %d: %w", id, err)
		}
		if tv, err = proto.Marshal(t); err != nil {
			return fmt.Errorf("persistence: init progress of job %d: %w", id, err)
		}
	}
	parts := slices.Sorted(maps.Keys(positions))
	// A job this Store created and nothing has started yet has no
	// progress (Store.heads.unstarted): no need to read each key.
	if !s.takeUnstarted(id) {
		for _, p := range parts {
			v, ok, err := s.get(progressKey(id, p))
			if err != nil {
				return fmt.Errorf("persistence: init progress of job %d: %w", id, err)
			}
			if ok {
				cur, _ := decodeInt64(v)
				return fmt.Errorf("persistence: init progress of job %d: partition %d is at %d: %w", id, p, cur, ErrProgressExists)
			}
		}
	}
	b := s.db.NewBatch()
	for _, p := range parts {
		_ = b.Set(progressKey(id, p), encodeInt64(positions[p]), nil)
		if c, ok := checkpoints[p]; ok {
			_ = b.Set(checkpointKey(id, p), c, nil)
		}
	}
	if t != nil {
		_ = b.Set(journalKey(id, t.GetSeq()), tv, nil)
	}
	// The initial positions share the next synced commit's fsync (a
	// create's group write, usually): InitStarts returns only once they are
	// durable, as after a synced commit of their own (syncshare.go).
	if err := s.commitSharedSync(b, fmt.Sprintf("init progress of job %d", id)); err != nil {
		return err
	}
	if t != nil {
		s.setHead(id, t.GetSeq())
	}
	return nil
}

// record reads a job's create snapshot; ErrNotFound when absent.
func (s *Store) record(id uint64) (*api.JobRecord, error) {
	rec := &api.JobRecord{}
	ok, err := s.getProto(jobKey(id, jobRecordSuffix), rec)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotFound
	}
	return rec, nil
}

// lastTransition returns the newest journal entry, nil if none.
func (s *Store) lastTransition(id uint64) (t *api.Transition, err error) {
	lower := jobSubPrefix(id, jobJournalSuffix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, err
	}
	defer closeIter(it, &err)
	if !it.Last() {
		return nil, it.Error()
	}
	return decodeTransition(it.ValueAndErr())
}

func decodeTransition(v []byte, err error) (*api.Transition, error) {
	if err != nil {
		return nil, err
	}
	t := &api.Transition{}
	if err := proto.Unmarshal(v, t); err != nil {
		return nil, fmt.Errorf("corrupt transition: %w", err)
	}
	return t, nil
}

// progress reads all stored progress of a job.
func (s *Store) progress(id uint64) (m map[int32]int64, err error) {
	lower := jobSubPrefix(id, jobProgressSuffix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, err
	}
	defer closeIter(it, &err)
	m = map[int32]int64{}
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != len(lower)+4 {
			return nil, fmt.Errorf("malformed progress key %q", k)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		pos, err := decodeInt64(v)
		if err != nil {
			return nil, err
		}
		m[decodePartition(binary.BigEndian.Uint32(k[len(lower):]))] = pos
	}
	return m, it.Error()
}

// checkpoints reads all stored checkpoints of a job.
func (s *Store) checkpoints(id uint64) (m map[int32][]byte, err error) {
	lower := jobSubPrefix(id, jobCheckpointSuffix)
	it, err := s.newIter(lower, prefixEnd(lower))
	if err != nil {
		return nil, err
	}
	defer closeIter(it, &err)
	m = map[int32][]byte{}
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != len(lower)+4 {
			return nil, fmt.Errorf("malformed checkpoint key %q", k)
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, err
		}
		m[decodePartition(binary.BigEndian.Uint32(k[len(lower):]))] = slices.Clone(v)
	}
	return m, it.Error()
}
