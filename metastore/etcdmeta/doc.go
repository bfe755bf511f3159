// Package etcdmeta is the metadata store of cluster mode: job create
// snapshots, the state journal, the table catalog and the cluster-wide job
// id counter, kept in etcd (go.etcd.io/etcd/client/v3). It implements
// metastore.Store and passes metastore/metastoretest against a real etcd
// server.
//
// # Durability and atomicity
//
// Every mutation is one etcd transaction: a quorum write, which is etcd's
// durable write, acknowledged only after the members' WAL sync. Each
// transaction carries the compares that make its read-check-write atomic
// across every member of the cluster, not only within one process:
//
//   - CreateJobs: for each job the name key and the record key must not
//     exist (CreateRevision == 0), a table it creates must not exist, and
//     the last-id key must be as read; on a failed compare (a concurrent
//     create, on any member) the call re-reads and re-checks, so of
//     concurrent creates of one name exactly one wins and the others get
//     metastore.ErrNameTaken. A table that exists is compared with
//     proto.Equal: identical is fine, different is ErrTableExists.
//   - AppendTransition(s), AlterJob: first without a read, the journal
//     entry seq-1 must exist and entry seq must not (a journal is 1..n
//     with no gap and its head is entry n, so this holds exactly when
//     the seq follows the head); if that compare fails, the head is read
//     and checked, and the job's head key must keep the ModRevision it
//     had then. Either way a second writer fails instead of forking the
//     journal; the entry, the head (and for an alter the record) are
//     written in that one transaction. AppendTransition calls of
//     different jobs that overlap in time go in one transaction
//     (appendgroup.go: no timer, the calls that queue while one is in
//     flight go together in the next); a group a check refuses is written
//     again one entry at a time, so each call gets its own answer.
//   - DeleteJob: record, head, journal and (if it still names this job)
//     the name key go in one transaction.
//   - AllocJobIDs: a compare-and-swap on the counter key per block of
//     ids (the next block reserved in the background once half of one is
//     used); ids are unique cluster-wide and never reused.
//
// etcd bounds one transaction (--max-txn-ops, default 128; request size
// 1.5 MiB by default). CreateJobs writes its jobs in transactions of at
// most createChunk jobs: each job is durable or refused on its own, as
// the contract asks. AppendTransitions of more than appendChunk entries is
// written in several transactions, each atomic: every entry's seq is
// checked first, so the split shows only under a concurrent writer of the
// same journal, which the single-writer discipline excludes.
//
// Reads are linearizable (etcd's default). LoadJob reads the record and
// the head in one transaction, so they are of one write. LoadAllJobs reads
// pages of records and heads at one revision (a consistent snapshot).
//
// # Key layout
//
// This is the one description of cluster mode's etcd keys; Keys spells
// every one of them, for the store and for package cluster (membership,
// the leader, assignments), which keeps its keys under the same prefix.
// All keys are under Options.Prefix (default "/loadnode/"). Ids and seqs
// are 20-digit zero-padded decimals (ID) so that byte order is numeric
// order.
//
//	key (Keys method)                  value                           written by
//	---------------------------------  ------------------------------  ----------------------------------
//	<p>meta/last_job_id (LastJobID)    20-digit decimal uint64         CreateJobs (max of ids written; raised
//	                                                                   in a nested txn, never compared by rev)
//	<p>meta/next_job_id (NextJobID)    decimal uint64                  AllocJobIDs (next block of >= 128 ids)
//	<p>name/<job name> (Name)          decimal job id                  CreateJobs (name index)
//	<p>rec/<id20> (Record)             proto api.JobRecord             CreateJobs, AlterJob
//	<p>head/<id20> (Head)              proto api.Transition            every journal write (the newest)
//	<p>log/<id20>/<seq20> (LogEntry)   proto api.Transition            CreateJobs (seq 1), appends, alters
//	<p>table/<table name> (Table)      proto api.TableSpec             CreateJobs, CreateTable
//	<p>members/<name> (Member)         JSON {addr, started_unix_ms,    cluster: a member's join, under its
//	                                   cert_sha256, node_id,           lease
//	                                   incarnation}
//	<p>auth/verifier (Verifier)        JSON {hmac_sha256, token, by}   cluster: the first member
//	                                                                   (cluster.Verifier)
//	<p>leader/<lease hex> (Leader)     member name                     cluster: concurrency.Election
//	<p>assign/<id20> (Assignment)      owner name (epoch =             cluster: the leader
//	                                   ModRevision)
//
// # Concurrency
//
// A Store is safe for concurrent use; it holds no lock across a network
// call except the create mutex, which only spares one process's concurrent
// creates from retrying against each other. Every call is bounded by
// Options.RequestTimeout; when etcd is unreachable calls fail with an
// error wrapping ErrUnavailable and change nothing.
package etcdmeta
