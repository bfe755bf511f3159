package persistence

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/metastore"
	"github.com/loadnode/loadnode/sink"
)

// Sentinel errors. Errors returned by the Store wrap them with %w and add
// context; test with errors.Is.
var (
	// ErrNotFound: the job or table does not exist (the metadata store's
	// sentinel: the Store is one).
	ErrNotFound = metastore.ErrNotFound
	// ErrNameTaken: CreateJob found the job name already in the name index.
	ErrNameTaken = metastore.ErrNameTaken
	// ErrTableExists: CreateJob was asked to create a table that exists.
	ErrTableExists = metastore.ErrTableExists
	// ErrStaleCommit: a CommitBatch range does not start at the stored
	// progress of its partition, its fence is old or the statistics moved
	// (the sink's sentinel: the Store is one).
	ErrStaleCommit = sink.ErrStaleCommit
	// ErrProgressExists: InitProgress found a partition that already has
	// progress.
	ErrProgressExists = sink.ErrProgressExists
	// ErrStoreFailed: Pebble reported a fatal error; the store accepts no
	// more writes and the process must stop.
	ErrStoreFailed = errors.New("persistence: store failed")
	// ErrClosed: the Store was closed.
	ErrClosed = errors.New("persistence: closed")
)

// DefaultMaxErrorRowsKept is the default of Options.MaxErrorRowsKept.
const DefaultMaxErrorRowsKept = 1000

// exitCodeStoreFailed is the process exit status of the default OnFatal
// (EX_SOFTWARE).
const exitCodeStoreFailed = 70

// Options configures Open.
type Options struct {
	// Dir is the database directory. Required.
	Dir string
	// FS is the filesystem. Default: the disk, with the data directory
	// 0700 and every file in it 0600 (privateFS); tests pass errorfs or
	// vfs.NewCrashableMem().
	FS vfs.FS
	// Logger receives the store's and Pebble's messages. Default: discard.
	Logger *slog.Logger
	// OnFatal is called once, on the goroutine that hit it, when Pebble
	// reports a fatal error (failed WAL write or fsync, MANIFEST failure,
	// corruption) or a write to the data directory finds the disk full
	// (then possibly on a Pebble goroutine, inside a Pebble call). Default:
	// log at ERROR and os.Exit(70). Tests set a func that records and
	// returns; the Store then fails the call in progress with
	// ErrStoreFailed (except where Pebble itself cannot survive the failed
	// write: see the package comment on a full disk).
	OnFatal func(err error)
	// MaxErrorRowsKept is the number of error rows kept per job; older ones
	// are deleted as new ones arrive; when it shrinks across a restart the
	// excess goes with the job's next error rows. 0 means the default,
	// DefaultMaxErrorRowsKept (1000).
	MaxErrorRowsKept int
	// AcceptWALLoss opens a store whose write-ahead log is damaged before
	// intact records (ErrWALCorrupt otherwise): the log is cut at the
	// damaged record (the whole file kept as .corrupt) and what follows is
	// dropped, logged at ERROR. A torn tail (damage with nothing intact
	// after it) never needs it.
	AcceptWALLoss bool

	// tune, if set, adjusts the Pebble options (tests: small memtables to
	// force flushes).
	tune func(*pebble.Options)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxErrorRowsKept == 0 {
		o.MaxErrorRowsKept = DefaultMaxErrorRowsKept
	}
	return o
}

// Validate reports a setting that cannot work.
func (o Options) Validate() error {
	if o.Dir == "" {
		return errors.New("persistence: Options.Dir is empty")
	}
	if o.MaxErrorRowsKept < 0 {
		return fmt.Errorf("persistence: Options.MaxErrorRowsKept is %d, want >= 0", o.MaxErrorRowsKept)
	}
	return nil
}

// Store is loadnode's Pebble database. See the package comment for the key
// layout, durability and concurrency.
type Store struct {
	db       *pebble.DB
	log      *slog.Logger
	onFatal  func(error)
	maxErrs  uint64
	fatalOne sync.Once

	dir    string
	lock   *pebble.Lock // the directory's, held from before the WAL check to Close
	fs     vfs.FS
	bg     bgErrors
	failed atomic.Pointer[error] // the first fatal cause; nil while healthy
	// wedged is set when Pebble panicked (recoverFatal): its mutexes may be
	// held for good, so Close leaves it alone.
	wedged atomic.Bool
	closed atomic.Bool

	// ops counts the calls in flight (enter/leave). Close waits for them
	// before it closes Pebble: a DB closed under a live iterator or read
	// panics inside Pebble ("element has outstanding references"), which
	// is how a node whose recovery outlived Start's wait used to crash.
	ops struct {
		sync.Mutex
		n       int           // calls in flight
		closing bool          // Close has begun: enter refuses
		drained chan struct{} // closed when n drops to 0 while closing
	}

	// createMu serializes CreateJob: name check, table check and
	// m/last_job_id bookkeeping.
	createMu sync.Mutex
	// nodeIDMu serializes NodeID, which makes the id when it is absent.
	nodeIDMu sync.Mutex
	// format is the store's format version, as Open read or recorded it.
	format uint32

	jobs jobLocks
	// models serializes merging commits per keyed table (models.go).
	models modelLocks

	// heads caches each job's journal head seq as this Store last wrote
	// it, so that AppendTransition need not read the journal back (at a
	// restart of 100,000 jobs, that read was most of the work). Set after
	// a successful commit, under the job's lock, or seeded by LoadAllJobs
	// where absent; an absent entry means "read it".
	heads struct {
		sync.Mutex
		m map[uint64]uint64
		// unstarted holds the jobs this Store created (CreateJobs) that
		// no write of progress has touched since: InitStarts need not
		// read their progress keys to find them absent.
		// INVARIANT: an id here has no progress key. CreateJobs adds an
		// id only after committing its record, having checked under
		// createMu that no record held it; ids are never reused (the
		// manager allocates above LastJobID, CreateJobs raises it, and
		// DeleteJob range-deletes a job's keys, progress included); only
		// InitStarts, AlterJob's reset, ResetStarts and RebaseStarts
		// write progress where there was none (CommitBatch needs stored
		// progress), and each removes the id first, under the job's lock.
		unstarted map[uint64]struct{}
	}

	// syncs tracks synced commits for the writes that share one
	// (commitSharedSync).
	syncs syncTickets
	// shareWait is shareSyncWait; tests lengthen it.
	shareWait time.Duration
	// afterSharedApply, if set (tests only), runs in commitSharedSync
	// after the batch is applied and its mark taken, before it waits.
	afterSharedApply func()

	// afterCommitCheck, if set (tests only), runs in CommitBatch between the
	// progress check and the commit.
	afterCommitCheck func()
}

// tableCompression is the store's table block compression: MinLZ
// (fastest) where it pays, none where it does not. Pebble's adaptive
// compressor tries MinLZ on one data block in ten and keeps a moving
// average of what it saved; the other blocks are compressed only while
// that average is at least AdaptiveReductionCutoffPercent. Blocks of packed
// row blocks (already compressed at commit) gain nothing, so after a few
// samples a flush or compaction of them copies them as they are; blocks of
// keyed tables' rows and of metadata compress well and stay compressed.
// Index and filter blocks (OtherBlocks, the adaptive compressor's
// fallback) are not compressed: they are small and read often. A block
// that compresses by less than MinReductionPercent is stored plain, as
// with the MinLZ profile before. Pebble reads each block with the codec it
// was written with: stores written with Snappy or MinLZ read as before.
// The profile's name is only written to Pebble's OPTIONS file, which
// Pebble does not check for compression when it opens a store.
var tableCompression = &sstable.CompressionProfile{
	Name:                           "loadnode-adaptive-minlz",
	DataBlocks:                     sstable.MinLZCompression.DataBlocks,
	ValueBlocks:                    sstable.MinLZCompression.ValueBlocks,
	OtherBlocks:                    sstable.NoCompression.OtherBlocks,
	MinReductionPercent:            12,
	AdaptiveReductionCutoffPercent: 12,
}

// Open opens (creating if needed) the database in opts.Dir.
func Open(opts Options) (s *Store, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.FS == nil {
		if err := prepareDir(opts.Dir, opts.Logger); err != nil {
			return nil, err
		}
		opts.FS = privateFS{vfs.Default}
	}
	s = &Store{
		log:     opts.Logger,
		dir:     opts.Dir,
		onFatal: opts.OnFatal,
		maxErrs: uint64(opts.MaxErrorRowsKept),
	}
	if s.onFatal == nil {
		s.onFatal = s.exitOnFatal
	}
	s.jobs.m = make(map[uint64]*jobLock)
	s.heads.m = make(map[uint64]uint64)
	s.heads.unstarted = make(map[uint64]struct{})
	s.shareWait = shareSyncWait

	defer s.recoverFatal(&err)
	// A restart reads every job's snapshot, journal head and progress: with
	// Pebble's 8 MB default block cache, 100,000 jobs' worth of blocks were
	// read from disk over and over. The cache only takes what is read.
	cache := pebble.NewCache(blockCacheBytes)
	defer cache.Unref()
	popts := &pebble.Options{
		Cache:              cache,
		FS:                 newFullFS(opts.FS, opts.Dir, s.diskFull, s.walFailed),
		Logger:             pebbleLogger{s},
		EventListener:      s.eventListener(),
		FormatMajorVersion: pebble.FormatNewest,
		// A loader writes batches of megabytes: with Pebble's 4 MiB default
		// memtable every commit became a flushable batch and a tiny L0
		// table that compactions then rewrote (the end-to-end profile spent
		// over 40% of its CPU in flushes and compactions). Bigger
		// memtables and a deeper L0 absorb batches and write fewer, larger
		// tables.
		MemTableSize:                64 << 20,
		MemTableStopWritesThreshold: 4,
		L0CompactionThreshold:       8,
		L0StopWritesThreshold:       32,
		CompactionConcurrencyRange:  func() (int, int) { return 1, 2 },
	}
	// MinLZ (its fastest setting) instead of Pebble's default Snappy, on
	// every level: Snappy's encoder was the largest single item of the
	// flushes (about 6% of an end-to-end load's CPU); MinLZ compresses the
	// rows as well for less CPU. (No compression on L0 cost more than it
	// saved: three times the bytes to write and checksum.) Pebble reads
	// each block with the codec it was written with, so a store written
	// with Snappy reads as before.
	//
	// Table blocks of tableBlockSize instead of Pebble's 4 KiB: see there.
	//
	// Data blocks go through Pebble's adaptive compressor (tableCompression):
	// a DUPLICATE table's row blocks are MinLZ-packed already (rowblock.go),
	// and MinLZ on them at each flush and compaction only cost CPU.
	for i := range popts.Levels {
		popts.Levels[i].Compression = func() *sstable.CompressionProfile { return tableCompression }
		popts.Levels[i].BlockSize = tableBlockSize
	}
	if opts.tune != nil {
		opts.tune(popts)
	}
	// The directory lock first: the WALs are read before Pebble replays
	// them, and no other process may write them meanwhile.
	if err := opts.FS.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("persistence: open %s: %w", opts.Dir, err)
	}
	lock, err := pebble.LockDirectory(opts.Dir, opts.FS)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, fmt.Errorf("persistence: another loadnode holds the lock on %s (one node per data directory): %w", opts.Dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("persistence: open %s: lock: %w", opts.Dir, err)
	}
	if err := checkRestore(opts.FS, opts.Dir); err != nil {
		_ = lock.Close()
		return nil, err
	}
	if err := checkWALs(opts.FS, opts.Dir, s.log, opts.AcceptWALLoss); err != nil {
		_ = lock.Close()
		return nil, err
	}
	popts.Lock = lock
	db, err := pebble.Open(opts.Dir, popts)
	if err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("persistence: open %s: %w", opts.Dir, err)
	}
	s.db, s.lock, s.fs = db, lock, opts.FS
	if err := s.checkFormatVersion(); err != nil {
		_ = db.Close()
		_ = lock.Close()
		return nil, err
	}
	return s, nil
}

// FS is the store's filesystem (the private disk FS unless Options.FS).
func (s *Store) FS() vfs.FS { return s.fs }

// tableBlockSize is the target uncompressed size of a table's data blocks
// (Pebble's default: 4 KiB). Pebble writes a table through a 4 KiB
// bufio.Writer: a block bigger than that goes out in one write(2) of its
// own. Measured on 2026-12-03 (1,000,000 records, 8 partitions, json):
// end to end, 12,400-12,800 write(2) calls against 14,000-14,800 with
// 4 KiB blocks; the store ceiling alone, ~11,500 either way (its writes
// are mostly the WAL's 32 KiB blocks). A point read that misses the block
// cache reads and decompresses 32 KiB instead of 4 KiB: BenchmarkPointGet
// (a row and a job's state, cache cold) 229 against 191 µs; with the
// cache warm it was no slower (41 against 74 µs). (Those reads were one
// key's; a DUPLICATE row is in a row block now, read by a one-row scan
// that decodes its block up to the row: see BenchmarkScanRows.)
const tableBlockSize = 32 << 10

// blockCacheBytes is the size of Pebble's block cache.
const blockCacheBytes = 128 << 20

// closeWait bounds how long Close waits for the calls in flight.
const closeWait = time.Minute

// closeFlushWait bounds Close's flush of the memtables.
const closeFlushWait = 5 * time.Second

// Close closes the database once the calls in flight have returned (new
// calls get ErrClosed from now on). If they have not within closeWait,
// Pebble is left open (the store is crash-consistent; the process is
// ending) and the error says so. On a failed Store it releases what it can
// and returns the failure. Close never panics: a panic inside Pebble's
// Close becomes its error, so that it cannot hide the error that led to
// the Close.
func (s *Store) Close() (err error) {
	s.ops.Lock()
	if s.closed.Swap(true) {
		s.ops.Unlock()
		return ErrClosed
	}
	s.ops.closing = true
	var drained chan struct{}
	if s.ops.n > 0 {
		drained = make(chan struct{})
		s.ops.drained = drained
	}
	inflight := s.ops.n
	s.ops.Unlock()
	if drained != nil {
		t := time.NewTimer(closeWait)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
			s.ops.Lock()
			n := s.ops.n
			s.ops.Unlock()
			return fmt.Errorf("persistence: close: %d calls still in flight after %v (of %d when Close began); the database is left open", n, closeWait, inflight)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if fp, ok := r.(fatalPanic); ok {
				err = fmt.Errorf("%w: %w", ErrStoreFailed, fp.err)
				return
			}
			err = fmt.Errorf("persistence: close: pebble panicked: %v", r)
		}
	}()
	if s.Failed() == nil {
		// The memtables go to table files now, so that the next Open does
		// not replay them from the write-ahead log (at 100,000 jobs, a
		// replay was up to 0.6 s of the restart). A failure loses nothing:
		// the log still holds them.
		// Bounded: on a full disk a flush is retried for as long as it fails.
		if done, ferr := s.db.AsyncFlush(); ferr != nil {
			s.log.Warn("persistence: flush at close failed; the next open replays the write-ahead log", "err", ferr)
		} else {
			t := time.NewTimer(closeFlushWait)
			select {
			case <-done:
			case <-t.C:
				s.log.Warn("persistence: flush at close not done; the next open replays the write-ahead log", "waited", closeFlushWait)
			}
			t.Stop()
		}
	}
	var cerr error
	if !s.wedged.Load() {
		// A Pebble that panicked may hold its mutexes: its Close would
		// block. Its goroutines and files are left to the process's exit,
		// which a fatal store error calls for anyway.
		cerr = s.db.Close()
	}
	if lerr := s.lock.Close(); cerr == nil && lerr != nil {
		cerr = lerr
	}
	if ferr := s.Failed(); ferr != nil {
		// Pebble's Close reports the same failure again; the first cause is
		// the one that matters.
		return ferr
	}
	if cerr != nil {
		return fmt.Errorf("persistence: close: %w", cerr)
	}
	return nil
}

// enter admits a call that uses Pebble, or returns why the Store refuses
// it: it is closed, or it has failed (ErrStoreFailed; a full disk's
// ErrDiskFull). A failed Store refuses reads too, because Pebble may have
// applied a failed commit to its memtable: reads could see writes that are
// not durable. Close waits for every admitted call to end. Every Store
// method that uses Pebble starts with this guard:
//
//	if err := s.enter(); err != nil {
//		return err
//	}
//	defer s.exit(&err) // or s.leave(), where recoverFatal is deferred later
func (s *Store) enter() error {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.ops.closing || s.closed.Load() {
		return ErrClosed
	}
	if err := s.Failed(); err != nil {
		return err
	}
	s.ops.n++
	return nil
}

// exit ends a call admitted by enter, as `defer s.exit(&err)`: it does
// what a deferred recoverFatal does, then leave.
func (s *Store) exit(errp *error) {
	defer s.leave()
	if r := recover(); r != nil {
		s.recovered(r, errp)
	}
}

// leave ends a call admitted by enter.
func (s *Store) leave() {
	s.ops.Lock()
	defer s.ops.Unlock()
	if s.ops.n--; s.ops.n == 0 && s.ops.drained != nil {
		close(s.ops.drained)
		s.ops.drained = nil
	}
}

// closingDown reports whether Close has begun: a long scan stops early.
func (s *Store) closingDown() bool {
	s.ops.Lock()
	defer s.ops.Unlock()
	return s.ops.closing
}

// Failed returns nil while the store is healthy, and an error wrapping
// ErrStoreFailed and the cause once Pebble has reported a fatal error.
func (s *Store) Failed() error {
	if p := s.failed.Load(); p != nil {
		return fmt.Errorf("%w: %w", ErrStoreFailed, *p)
	}
	return nil
}

// fatalPanic is the value pebbleLogger.Fatalf panics with; recoverFatal
// recovers only this type.
type fatalPanic struct{ err error }

// fatal records a fatal Pebble error, logs it, calls OnFatal (once) and
// panics with fatalPanic. It never returns.
func (s *Store) fatal(err error) {
	s.failed.CompareAndSwap(nil, &err)
	s.log.Error("persistence: fatal store error, the process must stop: "+err.Error(), "err", err)
	s.fatalOne.Do(func() { s.onFatal(err) })
	panic(fatalPanic{err: err})
}

func (s *Store) exitOnFatal(err error) {
	s.log.Error("persistence: stopping the process after a fatal store error: "+FatalAdvice(err, s.dir),
		"err", err, "exit_code", exitCodeStoreFailed)
	os.Exit(exitCodeStoreFailed)
}

// recoverFatal turns a fatalPanic raised on this goroutine, or a panic
// raised inside Pebble, into an error wrapping ErrStoreFailed; any other
// panic continues. Use as `defer s.recoverFatal(&err)` in every method that
// calls Pebble (or as part of `defer s.exit(&err)`, see enter).
//
// Pebble panics on some I/O failures instead of reporting them (a commit
// that finds its log writer failed panics holding the commit mutex), and a
// Pebble that panicked is not usable again: such a panic fails the store
// for good (OnFatal, as a fatal error does) and marks it wedged, so that
// Close does not call into Pebble either. Left to propagate, an actor's
// supervisor would recover it and restart the actor against a store whose
// every later commit blocks forever.
func (s *Store) recoverFatal(errp *error) {
	if r := recover(); r != nil {
		s.recovered(r, errp)
	}
}

// recovered is recoverFatal's handling of r, a value recovered from a
// panic (recover must be called by the deferred function itself).
func (s *Store) recovered(r any, errp *error) {
	if fp, ok := r.(fatalPanic); ok {
		*errp = fmt.Errorf("%w: %w", ErrStoreFailed, fp.err)
		return
	}
	stack := debug.Stack()
	if !panickedIn(stack, "github.com/cockroachdb/pebble") {
		panic(r)
	}
	cause, ok := r.(error)
	if !ok {
		cause = fmt.Errorf("%v", r)
	}
	cause = fmt.Errorf("persistence: pebble panicked: %w", cause)
	s.wedged.Store(true)
	s.failed.CompareAndSwap(nil, &cause)
	s.fatalOne.Do(func() {
		s.log.Error("persistence: fatal store error, the process must stop: "+cause.Error(), "err", cause, "stack", string(stack))
		s.onFatal(cause)
	})
	*errp = fmt.Errorf("%w: %w", ErrStoreFailed, cause)
}

// panickedIn reports whether the panic being recovered (stack is
// debug.Stack() taken in the deferred function that recovers it) was
// raised by code of the package path prefix pkg: the first frame below the
// innermost panic call that is not the runtime's (a nil dereference goes
// through runtime.sigpanic) belongs to pkg.
func panickedIn(stack []byte, pkg string) bool {
	text := string(stack)
	i := strings.Index(text, "\npanic(")
	if i < 0 {
		return false
	}
	lines := strings.Split(text[i+1:], "\n")
	// lines: "panic(...)", its file line, then function/file pairs.
	for j := 2; j < len(lines); j += 2 {
		fn := lines[j]
		if strings.HasPrefix(fn, "runtime.") {
			continue
		}
		return strings.HasPrefix(fn, pkg)
	}
	return false
}

// commit commits b with pebble.Sync and closes it.
// REQUIRES: the caller has deferred s.recoverFatal.
func (s *Store) commit(b *pebble.Batch, what string) error {
	defer func() { _ = b.Close() }()
	// Pebble commits an empty batch without writing or syncing the WAL, so
	// only a batch with records counts as a synced commit that covers the
	// writes before it (commitSharedSync).
	counted := !b.Empty()
	var ticket uint64
	if counted {
		ticket = s.syncs.enter()
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("persistence: %s: commit: %w", what, err)
	}
	if counted {
		s.syncs.finished(ticket)
	}
	return nil
}

// get returns a copy of the value of key, or (nil, false, nil) when absent.
func (s *Store) get(key []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := append([]byte(nil), v...)
	if err := closer.Close(); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// getProto unmarshals the value of key into m; false when absent.
func (s *Store) getProto(key []byte, m proto.Message) (bool, error) {
	v, ok, err := s.get(key)
	if err != nil || !ok {
		return ok, err
	}
	if err := proto.Unmarshal(v, m); err != nil {
		return false, fmt.Errorf("persistence: corrupt %T at %q: %w", m, key, err)
	}
	return true, nil
}

func (s *Store) getUint64(key []byte) (uint64, bool, error) {
	v, ok, err := s.get(key)
	if err != nil || !ok {
		return 0, ok, err
	}
	u, err := decodeUint64(v)
	return u, err == nil, err
}

func (s *Store) newIter(lower, upper []byte) (*pebble.Iterator, error) {
	return s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
}

// closeIter closes it, keeping the first error in *errp.
func closeIter(it *pebble.Iterator, errp *error) {
	if err := it.Close(); err != nil && *errp == nil {
		*errp = err
	}
}

// pebbleLogger bridges Pebble's Logger to slog. Its Fatalf never returns.
type pebbleLogger struct{ s *Store }

var _ pebble.Logger = pebbleLogger{}

func (l pebbleLogger) Infof(format string, args ...any) {
	l.s.log.Info(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.s.log.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf records the failure and panics; see Store.fatal.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	l.s.fatal(newFatalError(format, args))
}

// fatalError is a Fatalf message that still unwraps to the errors among its
// arguments (so that errors.Is finds an injected or OS error).
type fatalError struct {
	msg    string
	causes []error
}

func newFatalError(format string, args []any) *fatalError {
	e := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.causes = append(e.causes, err)
		}
	}
	return e
}

func (e *fatalError) Error() string   { return e.msg }
func (e *fatalError) Unwrap() []error { return e.causes }

// jobLocks hands out one mutex per job id, dropped when nobody holds or
// waits for it.
type jobLocks struct {
	mu sync.Mutex
	m  map[uint64]*jobLock // guarded by mu
}

type jobLock struct {
	sync.Mutex
	refs int // guarded by jobLocks.mu
}

// head returns the cached journal head seq of job id.
func (s *Store) head(id uint64) (uint64, bool) {
	s.heads.Lock()
	defer s.heads.Unlock()
	seq, ok := s.heads.m[id]
	return seq, ok
}

// setHead records job id's journal head after a successful commit; seq 0
// forgets it.
func (s *Store) setHead(id, seq uint64) {
	s.heads.Lock()
	defer s.heads.Unlock()
	if seq == 0 {
		delete(s.heads.m, id)
		delete(s.heads.unstarted, id)
		return
	}
	s.heads.m[id] = seq
}

// markUnstarted records that job id, just created by this Store, has no
// progress.
func (s *Store) markUnstarted(id uint64) {
	s.heads.Lock()
	defer s.heads.Unlock()
	s.heads.unstarted[id] = struct{}{}
}

// takeUnstarted reports whether job id is known to have no progress and
// forgets it: the caller is about to write its progress (or fail, when a
// later call reads the keys, which is always correct).
// REQUIRES: the job's lock is held.
func (s *Store) takeUnstarted(id uint64) bool {
	s.heads.Lock()
	defer s.heads.Unlock()
	_, ok := s.heads.unstarted[id]
	delete(s.heads.unstarted, id)
	return ok
}

// seedHead records job id's journal head as read from the store, unless a
// commit has already recorded one (which is newer than any earlier read).
func (s *Store) seedHead(id, seq uint64) {
	s.heads.Lock()
	defer s.heads.Unlock()
	if _, ok := s.heads.m[id]; !ok && seq > 0 {
		s.heads.m[id] = seq
	}
}

// lock locks job id's mutex and returns its unlock function.
func (l *jobLocks) lock(id uint64) (unlock func()) {
	l.mu.Lock()
	jl := l.m[id]
	if jl == nil {
		jl = &jobLock{}
		l.m[id] = jl
	}
	jl.refs++
	l.mu.Unlock()

	jl.Lock()
	return func() {
		jl.Unlock()
		l.mu.Lock()
		jl.refs--
		if jl.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
}

var _ io.Closer = (*Store)(nil)
