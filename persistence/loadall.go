package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// journalWalk is how many journal entries of a job LoadAllJobs reads one
// by one before it seeks to the last. A seek costs more than tens of
// steps (measured at 100,000 jobs of ~20 entries: 2.7 s with a seek after
// 4, 2.0 s without), so only long journals are jumped.
const journalWalk = 64

// LoadAllJobs reads every job's durable state in one pass over the job key
// space, in job id order, and calls fn with each (what LoadJob returns for
// it). It is what recovery uses: one iterator for all jobs instead of a
// handful of reads per job. Error rows are skipped (a seek past them); a
// job whose create snapshot is missing is skipped too. fn's error stops the
// scan and is returned.
func (s *Store) LoadAllJobs(fn func(st *JobState) error) (err error) {
	return s.loadAllJobs(fn, true)
}

// loadAllJobs is LoadAllJobs; without positions it jumps past each job's
// progress and checkpoints (the metadata store's recovery scan: a job
// loads its positions from its sink).
//
// The scan reads one snapshot, split by job id into up to loadParts
// ranges read in parallel (decoding the records is most of its CPU: at
// 100,000 jobs, 1.6 s on one core); fn is called in job id order after.
func (s *Store) loadAllJobs(fn func(st *JobState) error, positions bool) (err error) {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit(&err)
	snap := s.db.NewSnapshot()
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("persistence: load jobs: %w", cerr)
		}
	}()
	bounds, err := jobRanges(snap, loadParts())
	if err != nil {
		return err
	}
	parts := make([][]*JobState, len(bounds)-1)
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for i := range parts {
		wg.Go(func() {
			errs[i] = s.scanJobs(snap, bounds[i], bounds[i+1], positions, func(st *JobState) error {
				parts[i] = append(parts[i], st)
				return nil
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	k := 0
	for i, p := range parts {
		for j, st := range p {
			p[j] = nil
			if err := fn(st); err != nil {
				return err
			}
			// Close waits for this call: stop early.
			if k++; k%1024 == 0 && s.closingDown() {
				return fmt.Errorf("persistence: load jobs: %w", ErrClosed)
			}
		}
		parts[i] = nil
	}
	return nil
}

// loadParts is how many ranges the recovery scan reads in parallel.
func loadParts() int { return min(runtime.GOMAXPROCS(0), 8) }

// minRangeJobs is the fewest job ids a parallel scan range covers: a small
// store is read in one.
var minRangeJobs uint64 = 4096 // a var: tests split small stores

// jobRanges splits the job key space of r into up to parts ranges of
// about as many job ids each: bounds[i] to bounds[i+1].
func jobRanges(r pebble.Reader, parts int) (bounds [][]byte, err error) {
	lower, upper := []byte(jobPrefix), prefixEnd([]byte(jobPrefix))
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("persistence: load jobs: %w", err)
	}
	defer closeIter(it, &err)
	head := len(jobPrefix) + 8
	if !it.First() || len(it.Key()) < head {
		return [][]byte{lower, upper}, it.Error()
	}
	first := binary.BigEndian.Uint64(it.Key()[len(jobPrefix):])
	if !it.Last() || len(it.Key()) < head {
		return [][]byte{lower, upper}, it.Error()
	}
	last := binary.BigEndian.Uint64(it.Key()[len(jobPrefix):])
	n := uint64(1)
	if last > first {
		n = min(uint64(max(parts, 1)), max(1, (last-first+1)/minRangeJobs))
	}
	bounds = [][]byte{lower}
	step := (last - first + 1) / n
	for i := uint64(1); i < n; i++ {
		bounds = append(bounds, jobKeyPrefix(first+i*step))
	}
	return append(bounds, upper), nil
}

// scanJobs is the recovery scan of the job keys in [lower, upper) of r,
// calling fn with each job in id order. It runs in its own goroutine: a
// panic (a fatal store error) becomes its error.
func (s *Store) scanJobs(r pebble.Reader, lower, upper []byte, positions bool, fn func(st *JobState) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if fp, ok := p.(fatalPanic); ok {
				err = fmt.Errorf("%w: %w", ErrStoreFailed, fp.err)
			} else {
				err = fmt.Errorf("persistence: load jobs: panic: %v", p)
			}
		}
	}()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("persistence: load jobs: %w", err)
	}
	defer closeIter(it, &err)

	var cur *JobState
	var curID uint64
	var journalSeen int    // journal entries of cur read so far
	var journalJumped bool // cur's journal was skipped to its last entry
	var lastRaw []byte
	var jobs int // jobs seen
	flush := func() error {
		if cur == nil || cur.Record == nil {
			cur, lastRaw = nil, lastRaw[:0]
			return nil
		}
		st := cur
		cur = nil
		if len(lastRaw) > 0 {
			t, err := decodeTransition(lastRaw, nil)
			if err != nil {
				return fmt.Errorf("persistence: load jobs: job %d: %w", curID, err)
			}
			st.Last = t
			lastRaw = lastRaw[:0]
			// What recovery appends next is checked against this head.
			s.seedHead(curID, t.GetSeq())
		}
		return fn(st)
	}
	head := len(jobPrefix) + 8 + 1 // "j/<id8>/"
	for valid := it.First(); valid; {
		k := it.Key()
		if len(k) < head+1 {
			return fmt.Errorf("persistence: load jobs: malformed key %q", k)
		}
		id := binary.BigEndian.Uint64(k[len(jobPrefix):])
		if cur == nil || id != curID {
			if err := flush(); err != nil {
				return err
			}
			// Close waits for this scan: at 100,000 jobs, stop early.
			if jobs++; jobs%1024 == 0 && s.closingDown() {
				return fmt.Errorf("persistence: load jobs: %w", ErrClosed)
			}
			curID, journalSeen, journalJumped = id, 0, false
			cur = &JobState{Progress: map[int32]int64{}, Checkpoints: map[int32][]byte{}, Stats: &api.JobStats{}}
		}
		suffix := k[head]
		if suffix == jobErrorSuffix || !positions && (suffix == jobProgressSuffix || suffix == jobCheckpointSuffix) {
			// Error rows can be many (and partitions too): jump past them.
			valid = it.SeekGE(jobKey(id, suffix+1))
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return fmt.Errorf("persistence: load jobs: job %d: %w", id, err)
		}
		switch suffix {
		case jobRecordSuffix:
			rec := &api.JobRecord{}
			if err := proto.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("persistence: load jobs: corrupt record of job %d: %w", id, err)
			}
			cur.Record = rec
		case jobJournalSuffix:
			// Ascending seqs: the last one seen is the head; only it is
			// decoded (at flush). A long journal (a job that has run for
			// months) is not walked: past a few entries, jump to its end.
			lastRaw = append(lastRaw[:0], v...)
			if journalSeen++; journalSeen >= journalWalk && !journalJumped {
				journalJumped = true
				valid = it.SeekLT(prefixEnd(jobSubPrefix(id, jobJournalSuffix)))
				continue
			}
		case jobFenceSuffix:
			if cur.Fence, err = decodeUint64(v); err != nil {
				return fmt.Errorf("persistence: load jobs: job %d fence: %w", id, err)
			}
		case jobStatsSuffix:
			if err := proto.Unmarshal(v, cur.Stats); err != nil {
				return fmt.Errorf("persistence: load jobs: corrupt stats of job %d: %w", id, err)
			}
		case jobProgressSuffix, jobCheckpointSuffix:
			if len(k) != head+2+4 {
				return fmt.Errorf("persistence: load jobs: malformed key %q", k)
			}
			p := decodePartition(binary.BigEndian.Uint32(k[head+2:]))
			if suffix == jobProgressSuffix {
				pos, err := decodeInt64(v)
				if err != nil {
					return fmt.Errorf("persistence: load jobs: job %d partition %d: %w", id, p, err)
				}
				cur.Progress[p] = pos
			} else {
				cur.Checkpoints[p] = slices.Clone(v)
			}
		}
		valid = it.Next()
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("persistence: load jobs: %w", err)
	}
	return flush()
}

// ShowData reads what `job show` needs from the store: the newest
// maxTransitions journal entries and the newest maxErrorRows error rows,
// both oldest first, with one iterator over the job's keys and no separate
// existence check (the caller holds the job's snapshot). An unknown job has
// an empty journal.
func (s *Store) ShowData(id uint64, maxTransitions, maxErrorRows int) (hist []*api.Transition, rows []*api.ErrorRow, err error) {
	if err := s.enter(); err != nil {
		return nil, nil, err
	}
	defer s.exit(&err)
	lower := jobSubPrefix(id, jobErrorSuffix)
	upper := prefixEnd(jobSubPrefix(id, jobJournalSuffix))
	it, err := s.newIter(lower, upper)
	if err != nil {
		return nil, nil, fmt.Errorf("persistence: show job %d: %w", id, err)
	}
	defer closeIter(it, &err)
	jp := jobSubPrefix(id, jobJournalSuffix)
	for valid := it.SeekLT(upper); valid && len(hist) < maxTransitions && bytes.HasPrefix(it.Key(), jp); valid = it.Prev() {
		t, err := decodeTransition(it.ValueAndErr())
		if err != nil {
			return nil, nil, fmt.Errorf("persistence: show job %d: %w", id, err)
		}
		hist = append(hist, t)
	}
	ep := jobSubPrefix(id, jobErrorSuffix)
	for valid := it.SeekLT(prefixEnd(ep)); valid && len(rows) < maxErrorRows && bytes.HasPrefix(it.Key(), ep); valid = it.Prev() {
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, fmt.Errorf("persistence: show job %d: %w", id, err)
		}
		r := &api.ErrorRow{}
		if err := proto.Unmarshal(v, r); err != nil {
			return nil, nil, fmt.Errorf("persistence: show job %d: corrupt error row: %w", id, err)
		}
		rows = append(rows, r)
	}
	if err := it.Error(); err != nil {
		return nil, nil, fmt.Errorf("persistence: show job %d: %w", id, err)
	}
	slices.Reverse(hist)
	slices.Reverse(rows)
	return hist, rows, nil
}
