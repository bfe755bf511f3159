// Package doris owns loadnode's Doris-compatible statements: it parses the
// Apache Doris statements that create tables and manage routine loads into
// the same wire messages as the YAML job spec (package config), so that a
// Doris user can bring their statements as they are, and so that every part
// loadnode does not do is refused by name instead of being ignored.
//
// Parse is a pure function of its argument: no I/O, no globals, safe for
// concurrent use. It checks syntax and the syntax of property values
// (numbers are numbers, sizes and intervals positive); it does not apply
// defaults or validate the spec as a whole: the caller (the node) does that
// with config.ApplyDefaults and config.ValidateJobSpec once it has filled in
// what a statement leaves to the stored table (the column types of a routine
// load). Every error is an *Error naming the clause or property at fault and
// its line and column.
//
// # Statements
//
//	CREATE TABLE [IF NOT EXISTS] [db.]name (col type [KEY] [NULL] [DEFAULT NULL] [COMMENT '...'], ...)
//	    [ENGINE=OLAP] [DUPLICATE KEY(cols)] [COMMENT '...']
//	    [DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO]] [PROPERTIES (...)]
//	CREATE ROUTINE LOAD [db.]name ON [db.]table [WITH APPEND]
//	    [COLUMNS TERMINATED BY 'sep'] [,] [COLUMNS (c1, c2, ...)]
//	    [PROPERTIES (...)] FROM KAFKA (...) [COMMENT '...']
//	ALTER ROUTINE LOAD FOR [db.]name [PROPERTIES (...)] [FROM KAFKA (...)]
//	PAUSE [ALL] ROUTINE LOAD [FOR [db.]name]      (FOR without ALL, none with ALL)
//	RESUME [ALL] ROUTINE LOAD [FOR [db.]name]
//	STOP ROUTINE LOAD FOR [db.]name
//	SHOW [ALL] ROUTINE LOAD [FOR [db.]name]
//
// Keywords are case-insensitive, identifiers may be `backquoted`, strings are
// single- or double-quoted with MySQL escapes (\n \t \\ \' \" ...; other
// backslash sequences such as \x01 are kept as written), `-- ...`, `# ...`
// and `/* ... */` comments are skipped, and one trailing ";" is allowed. A
// database qualifier (db.) is accepted everywhere and reported in
// Statement.DB, JobRef.DB, Alter.DB and Show.DB. client.Exec maps
// Statement.DB of CREATE TABLE and CREATE ROUTINE LOAD to table.database
// (a database of the node config; none: the embedded store); job names
// are one namespace per node, so the others ignore it.
//
// # CREATE ROUTINE LOAD: how it maps onto api.JobSpec
//
//	Doris                                  api.JobSpec (YAML name)
//	job name                               name
//	ON table                               table.name
//	COLUMNS (c1, c2, ...)                  table.columns: the names in order, type
//	                                       COLUMN_TYPE_UNSPECIFIED (see below)
//	COLUMNS TERMINATED BY 'sep'            column_separator; \xHH is the byte HH. Without
//	                                       it, csv jobs get "\t", the Doris default
//	                                       (loadnode's own default is ",").
//	WITH APPEND                            accepted (the only merge type)
//	"desired_concurrent_number"            desired_concurrent_number (positive integer)
//	"max_batch_interval"                   max_batch_interval_ms: integer seconds as in
//	                                       Doris, or a Go duration ("500ms")
//	"max_batch_rows"                       max_batch_rows (positive integer)
//	"max_batch_size"                       max_batch_size: bytes, or with a unit
//	                                       (B, KB, MB, GB, KiB, MiB, GiB)
//	"max_error_number"                     max_error_number (integer >= 0)
//	"format"                               format: csv or json
//	"jsonpaths"                            jsonpaths: a JSON array of paths
//	FROM KAFKA "kafka_broker_list"         kafka.brokers (comma-separated)
//	"kafka_topic"                          kafka.topic
//	"kafka_partitions"                     kafka.partitions ("0, 1, 2")
//	"kafka_offsets"                        kafka.offsets, paired with kafka_partitions:
//	                                       a number, OFFSET_BEGINNING or OFFSET_END
//	"property.kafka_default_offsets"       kafka.default_offset (also without "property.")
//	"property.<name>"                      kafka.properties[<name>] (security.protocol,
//	                                       sasl.*, ssl.*, client.id, ...), passed to the
//	                                       Kafka source, which validates them
//	COMMENT '...' (after FROM KAFKA)       accepted and dropped
//
// Properties the statement does not give are left zero, so that
// config.ApplyDefaults gives them loadnode's defaults (which follow Doris,
// except where SPEC.md says otherwise).
//
// The column contract: a routine load loads into an existing table, so the
// returned JobSpec.Table has only Name and, when the statement has COLUMNS
// (...), one api.Column per listed name, in order, with Type
// COLUMN_TYPE_UNSPECIFIED; without COLUMNS it has no columns. The caller
// fills in the columns and their types from the stored table (and refuses a
// COLUMNS list that is not the table's columns in order, since loadnode maps
// csv fields and json paths to the table's columns by position) before
// ApplyDefaults (which derives default jsonpaths from the columns) and
// ValidateJobSpec.
//
// Job properties accepted only with the value that describes what loadnode
// does anyway (any other value is refused, naming the property):
//
//	"strict_mode" = "true"              a value that does not convert to its column's
//	                                    type makes the record an error row
//	"timezone" = "UTC" (also Etc/UTC,   timestamps without a zone are read as UTC
//	 GMT, +00:00)
//	"strip_outer_array" = "false"       one Kafka message is one row
//	"fuzzy_parse" = "false"
//	"load_to_single_tablet" = "false"
//	"partial_columns" = "false"
//	"max_filter_ratio" = "1"            error rows are limited by max_error_number alone
//
// Note that Doris's default strict_mode is "false" (a bad value loads as
// NULL), which loadnode does not do: statements that say "strict_mode" =
// "false" are refused.
//
// # ALTER ROUTINE LOAD
//
// PROPERTIES may change desired_concurrent_number, max_batch_interval,
// max_batch_rows, max_batch_size, max_error_number and jsonpaths (and carry
// the accepted no-op properties above); "format" cannot be altered. FROM
// KAFKA may change kafka_broker_list, kafka_topic,
// property.kafka_default_offsets and property.<name> (merged into the job's
// client properties), and set new start offsets with kafka_partitions and
// kafka_offsets together (for partitions the job loads; the set of
// partitions never changes). Alter.Changed names the changed spec fields;
// Alter.Spec applies the changes to a job's current spec and validates the
// result.
//
// # CREATE TABLE: types and clauses
//
//	Doris type                              loadnode type
//	TINYINT, SMALLINT, INT, INTEGER,        INT64 (values are not range-checked against
//	BIGINT [(width)]                        the narrower Doris types)
//	FLOAT, DOUBLE                           FLOAT64
//	DECIMAL[(p[,s])], DECIMALV2, DECIMALV3  FLOAT64, only for p <= 15: every decimal of at
//	                                        most 15 significant digits round-trips through
//	                                        a float64 exactly; wider DECIMALs are refused
//	CHAR[(n)], VARCHAR[(n)], STRING, TEXT   STRING (the length is not enforced)
//	BOOLEAN, BOOL                           BOOL
//	DATE, DATEV2                            TIMESTAMP (midnight UTC)
//	DATETIME[(n)], DATETIMEV2[(n)]          TIMESTAMP (microseconds)
//	anything else (LARGEINT, HLL, BITMAP,   refused, naming the type
//	ARRAY, MAP, STRUCT, JSON, VARIANT, ...)
//
// Accepted and ignored, because they make no difference to which rows a
// loadnode table holds or their values: ENGINE=OLAP, DUPLICATE KEY(cols)
// (Doris sort columns; loadnode keys rows by source position; the columns
// must exist), column KEY, NULL, DEFAULT NULL, COMMENTs, DISTRIBUTED BY
// HASH(cols)|RANDOM [BUCKETS n|AUTO] (the columns must exist), and the
// PROPERTIES about replication, storage medium, compression, compaction and
// colocation: replication_num, replication_allocation, storage_medium,
// storage_cooldown_time, storage_format, compression, light_schema_change,
// disable_auto_compaction, enable_single_replica_compaction,
// enable_duplicate_without_keys_by_default, skip_write_index_on_load,
// compaction_policy, time_series_compaction_*, in_memory, is_being_synced,
// colocate_with, store_row_column. The model is always DUPLICATE.
//
// # Refused, by name
//
//	CREATE TABLE   UNIQUE KEY, AGGREGATE KEY ("table model not supported yet"),
//	               PARTITION BY RANGE|LIST, AUTO PARTITION BY, ROLLUP, INDEX,
//	               column NOT NULL (loadnode columns are nullable), DEFAULT other than
//	               NULL, AUTO_INCREMENT, ON UPDATE, generated columns, aggregation types
//	               (SUM, REPLACE, ...), ENGINE other than OLAP, CREATE TABLE LIKE / AS
//	               SELECT, any other table property (dynamic_partition.*,
//	               bloom_filter_columns, function_column.*, storage_policy, ...)
//	ROUTINE LOAD   no ON table (multi-table load), WITH MERGE / WITH DELETE, WHERE,
//	               PRECEDING FILTER, PARTITION(...), TEMPORARY PARTITION, DELETE ON,
//	               ORDER BY, ROWS TERMINATED BY, COLUMNS mapping expressions
//	               (k2 = k1 + 1), COLUMNS TERMINATED BY with format json, formats
//	               other than csv and json, start offsets by time ("2021-05-22
//	               11:00:00"), kafka_offsets without kafka_partitions, "FILE:"
//	               property values (Doris CREATE FILE), every other job property (json_root, num_as_string,
//	               exec_mem_limit, send_batch_parallelism, enclose, escape,
//	               trim_double_quotes, workload_group, ...), every other
//	               FROM KAFKA property
//	FROM KINESIS   every property but kinesis_stream, kinesis_region | aws.region,
//	               kinesis_endpoint | aws.endpoint, aws.access_key | aws.access_key_id,
//	               aws.secret_key | aws.secret_access_key, aws.session_token,
//	               aws.profile, kinesis_shards, kinesis_positions (one per shard,
//	               needs kinesis_shards), property.kinesis_default_position; FROM
//	               KINESIS in ALTER (reset positions with job alter --position)
//	ALTER          "format", kafka_partitions without kafka_offsets
//	SHOW           SHOW ROUTINE LOAD TASK, LIKE, WHERE
//	STOP           STOP ALL
//	other          any other statement
package doris
