// Package kafka is the Kafka source of loadnode, on franz-go: a Cluster
// handle (admin client for metadata, offsets and watermarks) shared per
// (brokers, properties), and Readers that consume a fixed set of partitions
// directly from exact offsets through consuming clients the Cluster's
// readers share (fetch.go).
//
// Clusters opens a node's Kafka jobs: each gets a JobSource, its handle on
// the Cluster its spec's brokers and properties name (one key: brokers in
// any order, properties by name), shared with the other jobs of that
// cluster together with a watermark cache, a partition-list cache and one
// poller per watched topic (jobs.go, topics.go); the Cluster closes with its
// last job. Offset listings of one topic (the start offsets of jobs starting
// together, watermarks) running at once share one request, sent after each
// of them asked (offsetlists.go). A JobSource is one job's source as the actors see it (their
// Source and Watcher): which partitions the job reads and where they start
// (kafka.partitions, offsets, default_offset; Choose), a user's offset
// reset, and watermarks; it does not import the actors.
//
// No consumer group is joined and no offset is ever committed to Kafka: a
// job's progress lives in the loadnode store, and a Reader starts exactly
// where that progress says. Readers consume read_committed, keep control
// records internally so that a position moves past transaction markers (and
// reaches the high watermark after the last transaction), and never reset an
// offset: OffsetOutOfRange (retention deleted data the job still needs, or a
// position beyond the end) is returned as *sources.OutOfRangeError.
//
// # Properties
//
// KafkaSpec.properties accepts these keys (Kafka's names); any other key is a
// *sources.ConfigError naming it:
//
//	client.id                               client id sent to brokers (default "loadnode")
//	security.protocol                       PLAINTEXT (default) | SSL | SASL_PLAINTEXT | SASL_SSL
//	ssl.ca.location                         PEM file of CAs to trust (default: system roots)
//	ssl.certificate.location                PEM client certificate (with ssl.key.location)
//	ssl.key.location                        PEM client key, unencrypted (with ssl.certificate.location)
//	ssl.endpoint.identification.algorithm   https (default: verify the broker host name) | none (verify the chain only)
//	sasl.mechanism                          PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (required with SASL_*)
//	sasl.username, sasl.password            SASL credentials (required with SASL_*)
//	sasl.password_file                      file holding the SASL password, read by the node (instead of sasl.password)
//	fetch.max.bytes                         bytes per fetch response (default 50 MiB)
//	max.partition.fetch.bytes               bytes per partition per fetch (default 1 MiB)
//	fetch.min.bytes                         bytes a broker waits for before answering (default 1)
//	fetch.max.wait.ms                       how long a broker holds a fetch without data (default 500 ms: a new or resumed reader joins a shared client's next fetch)
//	request.timeout.ms                      client-side response timeout overhead (default 10000 ms)
//	metadata.max.age.ms                     metadata refresh interval (default 300000 ms)
//	connections.max.idle.ms                 idle connection reaping (default 30000 ms)
//	socket.connection.setup.timeout.ms      dial timeout (default 10000 ms)
//	enable.partition.eof                    accepted, no effect (a librdkafka setting: loadnode ends batches by its own bounds)
//
// ssl.* keys require security.protocol SSL or SASL_SSL, sasl.* keys require
// SASL_PLAINTEXT or SASL_SSL. group.id is rejected: there is no group
// (kafka.commit_group publishes the job's positions to one, see
// publish.go).
// Properties whose name holds "password", "secret" or "token" (but not a
// "_file" path) are secrets: shown as api.Redacted, never logged.
//
// # Positions
//
// Batch.Next is the consumer's position after what Read returned: the offset
// after the last record taken from the log for that partition, control
// records included. Aborted transactional records are dropped by franz-go and
// the abort marker that follows them moves the position past them.
//
// Known limit: a compacted batch whose tail records were removed (KAFKA-5443)
// moves franz-go's internal position past its last offset, but franz-go does
// not expose that position, so Next stays at the last record seen + 1 until a
// later record arrives. Compacted topics can thus show a lag of a few offsets
// while idle; nothing is skipped or repeated.
//
// # Concurrency
//
// A Cluster, Clusters and a JobSource are safe for concurrent use; a
// watched topic's poller runs on its own goroutine until its last watcher
// stops or its Cluster closes. A Reader is used by one goroutine at a time.
//
// # Shared fetching
//
// The readers of one Cluster on a node share a few consuming franz-go
// clients (lanes, at most 4): a job start adds its partitions to one
// instead of opening a client (its goroutines, metadata requests and a
// connection per broker). A reader goes to the lane of its lowest
// partition mod 4, so that a job's tasks (dealt partitions round-robin)
// fetch concurrently on lanes of their own, and readers of one partition
// (many single-partition jobs) share one. Everything below is per lane.
// The lane's client fetches in the background and reports connection
// health through hooks (every reader sees the lane's health); its
// dispatcher goroutine polls it and queues each partition's records and
// errors on the routes of the readers of that partition, which Read takes
// from. franz-go consumes a partition once per client, so a partition is
// one stream however many readers read it (jobs loading one topic into
// several tables): a reader at or ahead of the stream's position takes
// the stream's records from its own position on, a reader behind it takes
// the stream's recent records (the last 256 KiB it delivered) if they
// reach back to its position, else sets the stream back (the others skip
// what they already have). Partitions
// join, are set back and leave the client only on the dispatcher between
// two polls, so that a reader reopened at an earlier or later offset (a
// rewind) starts exactly there. A reader whose queue passes its bound
// (max.partition.fetch.bytes per partition, at least 1 MiB, at most
// fetch.max.bytes) is queued nothing more until Read takes it down to
// half (a partition none of whose readers takes is paused), then rejoins
// the stream where it left. An OffsetOutOfRange goes to the readers at
// the stream's position only; a reader ahead of another reader of its
// partition sees one beyond the end only once it is the lowest. The lane
// closes with its last reader. Setting a stream back or closing a reader
// stops the client's fetch session, which drops what it buffered for the
// other readers (fetched again, never lost: the client's positions move
// only when a poll takes records).
package kafka
