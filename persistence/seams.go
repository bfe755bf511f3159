package persistence

import (
	"fmt"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
)

// Meta is the Store seen as the node's metadata store: job snapshots, the
// journal and the table catalog. It shares the Store's database, durability
// and failure handling.
type Meta struct{ s *Store }

// Sink is the Store seen as the embedded sink: table rows, per-partition
// progress and checkpoints, statistics, error rows and the commit fence.
type Sink struct{ s *Store }

var (
	_ metastore.Store = (*Meta)(nil)
	_ sink.Sink       = (*Sink)(nil)
)

// Meta returns the Store's metadata-store face.
func (s *Store) Meta() *Meta { return &Meta{s: s} }

// Sink returns the Store's sink face.
func (s *Store) Sink() *Sink { return &Sink{s: s} }

func (m *Meta) LastJobID() (uint64, error) { return m.s.LastJobID() }

func (m *Meta) CreateJobs(jobs []metastore.NewJob) []error { return m.s.CreateJobs(jobs) }

func (m *Meta) Table(name string) (*api.TableSpec, error) { return m.s.Table(name) }

func (m *Meta) CreateTable(spec *api.TableSpec) (bool, error) { return m.s.CreateTable(spec) }

// LoadAllJobs reads every job in one pass (see Store.LoadAllJobs), with
// its progress in the embedded sink (SinkProgress): this store is both,
// and the scan reads it in passing (at a restart of 100,000 jobs, reading
// it again per job actor was half of the respawn's CPU).
func (m *Meta) LoadAllJobs(fn func(st *metastore.JobState) error) error {
	return m.s.loadAllJobs(func(st *JobState) error {
		return fn(&metastore.JobState{Record: st.Record, Last: st.Last, SinkProgress: &sink.Progress{
			Positions: st.Progress, Checkpoints: st.Checkpoints, Stats: st.Stats, Fence: st.Fence}})
	}, true)
}

// LoadJob reads the job's record and newest transition under the job's
// lock, which AlterJob and the appends hold until their commit returns:
// the two are of one write, never the record of one alter with the
// journal head of the next.
func (m *Meta) LoadJob(id uint64) (_ *metastore.JobState, err error) {
	if err := m.s.enter(); err != nil {
		return nil, err
	}
	defer m.s.leave()
	unlock := m.s.jobs.lock(id)
	defer unlock()
	defer m.s.recoverFatal(&err)
	rec, err := m.s.record(id)
	if err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	last, err := m.s.lastTransition(id)
	if err != nil {
		return nil, fmt.Errorf("persistence: load job %d: %w", id, err)
	}
	return &metastore.JobState{Record: rec, Last: last}, nil
}

func (m *Meta) Journal(id uint64) ([]*api.Transition, error) { return m.s.Journal(id) }

func (m *Meta) History(id uint64, max int) ([]*api.Transition, error) {
	hist, _, err := m.s.ShowData(id, max, 0)
	return hist, err
}

func (m *Meta) AppendTransition(id uint64, t *api.Transition) error {
	return m.s.AppendTransition(id, t)
}

func (m *Meta) AppendTransitions(ts []metastore.JobTransition) error {
	jt := make([]JobTransition, len(ts))
	for i, t := range ts {
		jt[i] = JobTransition{JobID: t.JobID, T: t.T}
	}
	return m.s.AppendTransitions(jt)
}

func (m *Meta) AlterJob(rec *api.JobRecord, t *api.Transition) error {
	return m.s.AlterJobStarts(rec, nil, nil, t)
}

// DeleteJob removes the job's name, snapshot and journal. The sink's part
// of the job (progress, statistics, error rows, fence) shares its key
// prefix here and goes in the same batch; Sink.DropJob is then a no-op.
func (m *Meta) DeleteJob(id uint64, name string) error { return m.s.DeleteJob(id, name) }

// PrepareTable: the embedded store keeps its rows beside its catalog, where
// the job's create put the table.
func (k *Sink) PrepareTable(spec *api.TableSpec) error {
	if _, err := k.s.Table(spec.GetName()); err != nil {
		return fmt.Errorf("persistence: prepare table: %w", err)
	}
	return nil
}

func (k *Sink) InitStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) error {
	return k.s.InitStarts(job, positions, checkpoints, nil)
}

// Journals reports whether meta is this store's metadata face: then the
// sink may journal a transition with a job's initial positions.
func (k *Sink) Journals(meta metastore.Store) bool {
	m, ok := meta.(*Meta)
	return ok && m.s == k.s
}

// InitStartsJournaled is InitStarts with t journaled in the same synced
// batch (a job's first schedule: RUNNING with its initial positions, one
// fsync). Only for a job whose metadata store is this store (Journals).
func (k *Sink) InitStartsJournaled(job uint64, positions map[int32]int64, checkpoints map[int32][]byte, t *api.Transition) error {
	return k.s.InitStarts(job, positions, checkpoints, t)
}

func (k *Sink) Commit(c *sink.Commit) error { return k.s.CommitBatch(c) }

// ResetStarts overwrites the partitions' progress and checkpoints in one
// synced batch.
func (k *Sink) ResetStarts(job uint64, positions map[int32]int64, checkpoints map[int32][]byte) (err error) {
	s := k.s
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	unlock := s.jobs.lock(job)
	defer unlock()
	_ = s.takeUnstarted(job) // it writes progress (Store.heads.unstarted)
	defer s.recoverFatal(&err)
	for p := range checkpoints {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("persistence: reset progress of job %d: checkpoint for partition %d without a position", job, p)
		}
	}
	if len(positions) == 0 {
		return nil
	}
	b := s.db.NewBatch()
	for p, o := range positions {
		_ = b.Set(progressKey(job, p), encodeInt64(o), nil)
		if c, ok := checkpoints[p]; ok {
			_ = b.Set(checkpointKey(job, p), c, nil)
		}
	}
	return s.commit(b, fmt.Sprintf("reset progress of job %d", job))
}

// RebaseStarts replaces the job's progress and checkpoints and raises
// its fence in one synced batch.
func (k *Sink) RebaseStarts(job, fence uint64, positions map[int32]int64, checkpoints map[int32][]byte) (err error) {
	s := k.s
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	for p := range checkpoints {
		if _, ok := positions[p]; !ok {
			return fmt.Errorf("persistence: rebase progress of job %d: checkpoint for partition %d without a position", job, p)
		}
	}
	unlock := s.jobs.lock(job)
	defer unlock()
	_ = s.takeUnstarted(job) // it writes progress (Store.heads.unstarted)
	defer s.recoverFatal(&err)
	stored, _, err := s.getUint64(jobKey(job, jobFenceSuffix))
	if err != nil {
		return fmt.Errorf("persistence: rebase progress of job %d: %w", job, err)
	}
	if stored > fence {
		return fmt.Errorf("persistence: rebase progress of job %d: fence %d is older than the stored %d: %w", job, fence, stored, ErrStaleCommit)
	}
	b := s.db.NewBatch()
	for _, suffix := range []byte{jobProgressSuffix, jobCheckpointSuffix} {
		p := jobSubPrefix(job, suffix)
		_ = b.DeleteRange(p, prefixEnd(p), nil)
	}
	for p, o := range positions {
		_ = b.Set(progressKey(job, p), encodeInt64(o), nil)
		if c, ok := checkpoints[p]; ok {
			_ = b.Set(checkpointKey(job, p), c, nil)
		}
	}
	_ = b.Set(jobKey(job, jobFenceSuffix), encodeUint64(fence), nil)
	return s.commit(b, fmt.Sprintf("rebase progress of job %d", job))
}

// Progress reads the job's progress, checkpoints, statistics and fence.
// It holds the job's lock, which every write of them holds until its
// commit has returned: the four reads are one committed state (never
// positions from after a commit and statistics from before it), and one
// that is durable (see the package comment on reads during a sync).
func (k *Sink) Progress(job uint64) (p *sink.Progress, err error) {
	s := k.s
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	unlock := s.jobs.lock(job)
	defer unlock()
	defer s.recoverFatal(&err)
	p = &sink.Progress{Stats: &api.JobStats{}}
	if _, err := s.getProto(jobKey(job, jobStatsSuffix), p.Stats); err != nil {
		return nil, fmt.Errorf("persistence: progress of job %d: %w", job, err)
	}
	if p.Positions, err = s.progress(job); err != nil {
		return nil, fmt.Errorf("persistence: progress of job %d: %w", job, err)
	}
	if p.Checkpoints, err = s.checkpoints(job); err != nil {
		return nil, fmt.Errorf("persistence: progress of job %d: %w", job, err)
	}
	if p.Fence, _, err = s.getUint64(jobKey(job, jobFenceSuffix)); err != nil {
		return nil, fmt.Errorf("persistence: progress of job %d: %w", job, err)
	}
	return p, nil
}

func (k *Sink) ErrorRows(job uint64, limit int) ([]*api.ErrorRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	_, rows, err := k.s.ShowData(job, 0, limit)
	return rows, err
}

// DropJob removes the job's progress, checkpoints, statistics, fence and
// error rows (Meta.DeleteJob removes them already when the job is deleted).
func (k *Sink) DropJob(job uint64) (err error) {
	s := k.s
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	unlock := s.jobs.lock(job)
	defer unlock()
	defer s.recoverFatal(&err)
	b := s.db.NewBatch()
	for _, suffix := range []byte{jobProgressSuffix, jobCheckpointSuffix, jobErrorSuffix} {
		p := jobSubPrefix(job, suffix)
		_ = b.DeleteRange(p, prefixEnd(p), nil)
	}
	for _, suffix := range []byte{jobStatsSuffix, jobErrWinSuffix, jobFenceSuffix} {
		_ = b.Delete(jobKey(job, suffix), nil)
	}
	return s.commit(b, fmt.Sprintf("drop job %d", job))
}

func (k *Sink) CountRows(table string) (int64, error) { return k.s.CountRows(table) }

// TruncateTable implements sink.Truncater.
func (k *Sink) TruncateTable(table string) error { return k.s.TruncateTable(table) }

var _ sink.Truncater = (*Sink)(nil)

func (k *Sink) ScanRowsAfter(table string, after []byte, limit int, fn func(key, value []byte) error) error {
	return k.s.ScanRowsAfter(table, after, limit, fn)
}
