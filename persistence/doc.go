// Package persistence owns loadnode's one Pebble (v2) database per node: job
// create snapshots, the state journal, per-partition progress, job
// statistics, bounded error rows, table schemas and table rows.
//
// # Durability
//
// Every write is one Pebble batch committed with pebble.Sync; no write method
// returns before that commit. InitStarts alone shares its fsync: its batch
// is committed without one and the call returns once a later synced commit
// (or its own sync, after at most shareSyncWait) has made it durable
// (syncshare.go), so a job's first schedule rides on the next create's
// write instead of making that create wait behind a second fsync. CommitBatch puts a batch's rows, the new
// progress of exactly the partitions it covers, the job statistics and its
// error rows in one batch, so they become durable (or not) together.
//
// # Fatal store errors
//
// Pebble treats a failed WAL write or fsync (and a failed MANIFEST write) as
// fatal: it calls Logger.Fatalf and, if Fatalf returns, carries on as if the
// commit had succeeded. The Store therefore gives Pebble a logger whose
// Fatalf never returns: it records the failure (Failed becomes non-nil), logs
// "persistence: fatal store error, the process must stop: ..." at ERROR,
// calls Options.OnFatal (default: exit the process with status 70) and then
// panics with a private value. Every Store method recovers only that value and
// returns an error wrapping ErrStoreFailed; any other panic is re-raised.
// Once failed, every call (reads included) returns the failure at once. A
// Fatalf raised on a Pebble background goroutine (flush, compaction) is not
// recovered and stops the process, after the message has been logged: that
// is the intended stop.
//
// A corrupt table block (Pebble's DataCorruption event) is fatal the same
// way, marked pebble.ErrCorruption so that FatalAdvice says a restart will
// not repair it.
//
// # Damaged write-ahead logs
//
// Pebble's replay stops at the first bad chunk of a WAL and drops the rest
// silently, whether that is a write torn by a crash or corruption with
// intact records after it, unless a later chunk's synced offset proves
// corruption: then it fails with its own error. Open reads every WAL first,
// to the end of the file, as pebble/record's reader does (wal.go: block
// padding by the chunk kind in use, zeros and another log's chunks as the
// end when nothing of this log follows), holding the directory lock: a
// torn tail is logged at WARN; damage followed by intact records (or by the
// end mark of a clean close, or by that proof) is logged at ERROR with what
// would be dropped and refused with ErrWALCorrupt, unless
// Options.AcceptWALLoss, which cuts the log at the damaged record so that
// Pebble replays what comes before it.
//
// A write to the data directory that fails for want of space (ENOSPC,
// EDQUOT) is fatal (ErrDiskFull, OnFatal) wherever it happens, so that a
// full disk stops loading explicitly, on a running node and on one started
// on the full disk alike. The Store sees it first: Pebble's filesystem is
// wrapped (fullFS) so that OnFatal runs, on the goroutine of the write,
// before Pebble gets the error. Pebble would retry a failed flush or
// compaction forever (a background error; the Store treats a full disk
// there as fatal too), and on one path it cannot fail cleanly at all: a
// batch larger than half a memtable rotates the WAL inside the commit, and
// a write refused there makes Pebble panic with its mutex released, a fatal
// runtime error ("sync: unlock of unlocked mutex", exit status 2) that no
// recover catches. An OnFatal that returns (tests) hands the error on to
// Pebble unchanged. Other background errors are logged at most once per
// 10 s. FatalAdvice says what to do about each kind of fatal error.
//
// Any other failure to create, write, sync or close a WAL file is fatal at
// the same point, before Pebble sees it (fullFS, Store.walFailed): a
// commit that finds the log writer already failed panics holding Pebble's
// commit mutex, and a rotation that finds it failed (a full memtable, the
// flush at Close) panics as above. A panic raised inside Pebble's code is
// fatal too (recoverFatal): the store fails for good, OnFatal runs, and
// Close does not call into that Pebble again (it may hold its mutexes).
// Any other panic goes on to the caller. Before this, the commit's panic
// reached the actor's supervisor, which restarted the actor against a
// Pebble whose later commits blocked forever (TestPebblePanicFailsStore).
//
// Reads are refused too, because after a failed WAL sync Pebble has already
// applied the batch to its memtable: a read could return a write that was
// never durable. A failed Store is only good for Close; restart recovers the
// durable state.
//
// Pebble publishes a synced commit to readers before its WAL sync has
// finished (the committer then waits for the sync). So a concurrent reader
// can see a write a moment before the writing call returns; it is durable
// once that call returns nil, and if the sync fails the process stops. No
// decision that must be durable may rest on such a read: that is why the
// read-check-write methods below hold a lock across their own commit.
//
// # The data directory and backups
//
// Besides Pebble's files the data directory holds NodeIDFile, the node's
// id (NodeID: made once, 0600), which owns the node's job state in shared
// databases. A backup (Checkpoint) is a directory holding everything a
// restore needs: a Pebble checkpoint of the store (which records its
// format version), the node's id, and last its manifest
// (BackupManifestFile, JSON: the backup format, the node id, the store's
// format version, when it was taken). A restore is a store opened on the
// backup: Open refuses one whose manifest is of a backup format this
// binary does not read, or whose node id is missing or not the manifest's
// (ErrBackupFormat), before it touches the store.
//
// # Concurrency
//
// A Store is safe for concurrent use. Read methods read Pebble directly.
// Methods that read, check and then write (AppendTransition, InitProgress,
// CommitBatch) hold a per-job mutex until their commit has returned, taken
// from a reference-counted map so that unrelated jobs never contend and idle
// jobs cost nothing; CreateJob and CreateJobs hold a store-wide create mutex
// so that the name, id and table checks and the id bookkeeping are atomic. The single-writer discipline
// for a job's progress remains the caller's (its job actor); the per-job mutex
// only makes CommitBatch's fence check safe on its own. Close may run
// concurrently with other calls: every call that uses Pebble is admitted
// by a gate (enter/leave) that Close shuts first; Close then waits (up to
// a minute) for the admitted calls to return before it closes Pebble, and
// a call that arrives later gets ErrClosed. (Pebble closed under a live
// iterator panics: "element has outstanding references".) LoadAllJobs
// stops early, with ErrClosed, when Close is waiting for it.
//
// # Key layout
//
// Integers in keys are big-endian so that byte order is numeric order. A
// partition is an int32 partition or shard index, stored as
// uint32(partition) XOR 0x80000000 so that negative values also sort in
// numeric order. Values marked "proto" are protobuf encodings of api types.
//
//	key                              value                   written by
//	-------------------------------  ----------------------  ------------------------------
//	m/format_version                 uint32 store format     Open (when absent: a new store, or one
//	                                 version (FormatVersion) written before the key existed, version 1)
//	m/last_job_id                    uint64                  CreateJob (max of ids written)
//	n/<job name>                     uint64 job id           CreateJob (name index)
//	j/<id8>/s                        proto api.JobRecord     CreateJob (create snapshot)
//	j/<id8>/t/<seq8>                 proto api.Transition    CreateJob (seq 1), AppendTransition
//	j/<id8>/p/<partition4>           int64 next position     InitProgress, CommitBatch
//	j/<id8>/k/<partition4>           opaque source           InitStarts, CommitBatch, AlterJobStarts
//	                                 checkpoint (Kinesis)    (same batch as the progress)
//	j/<id8>/f                        uint64 fence (newest    CommitBatch
//	                                 task generation)
//	j/<id8>/x                        proto api.JobStats      CommitBatch
//	j/<id8>/e/<seq8>                 proto api.ErrorRow      CommitBatch (newest MaxErrorRowsKept kept)
//	j/<id8>/w                        uint64 first, uint64    CommitBatch (error-row window: seqs
//	                                 next                    [first, next) are stored)
//	t/<table name>\x00s              proto api.TableSpec     CreateJob (when it creates the table)
//	t/<table name>\x00b/<row key>    row block: the rows     CommitBatch, InsertRows (DUPLICATE tables,
//	                                 from <row key> on       format 2, rows compressed from format 3;
//	                                                         rowblock.go)
//	t/<table name>\x00r/<row key>    row value bytes         CommitBatch (UNIQUE, AGGREGATE; DUPLICATE
//	                                                         in format 1), InsertRows (keyed tables)
//	t/<table name>\x00d/<row key>    row value of a delete   CommitBatch (UNIQUE with a sequence column: tombstones)
//
// <id8> is the job id as 8 bytes, <seq8> a uint64 sequence number as 8
// bytes, <partition4> 4 bytes. Table names must not contain a NUL byte, so
// "t/<name>\x00" is a prefix of no other table's keys. Row keys and row values
// are built by the table package (for DUPLICATE, from job, partition and
// offset; for UNIQUE and AGGREGATE, from the key columns). The store
// interprets them only for keyed tables, whose rows merge with the stored
// ones (table.Schema.Merge) in the commit's synced batch (models.go).
// A DUPLICATE table's rows are stored as row blocks, consecutive rows of
// one stream under one key (at most 64 KiB and 4,096 rows a block; a
// bigger row alone): Pebble's flushes and compactions work per key. The
// rows a store of format 1 holds one per key stay; every reader merges the
// two in key order, and no per-row key lies within a block's range
// (rowblock.go, its INVARIANT). A scan decodes whole blocks: a page at a
// cursor decodes its first block from the start. A block's rows are
// compressed once, as they are committed, when that saves an eighth of
// them (format 3): Pebble had compressed them at every flush and
// compaction. Pebble's table blocks go through its adaptive compressor
// (store.go, tableCompression): MinLZ where a sample of blocks shrinks by
// an eighth, none where it does not (packed rows that do not compress
// again), so a flush or compaction does not compress them a second time
// for nothing.
package persistence
