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
//	CREATE TABLE [IF NOT EXISTS] [db.]name (col type [KEY] [NULL | NOT NULL] [DEFAULT v] [COMMENT '...'], INDEX ..., ...)
//	    [ENGINE=OLAP] [DUPLICATE KEY(cols)] [COMMENT '...']
//	    [DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO]] [PROPERTIES (...)]
//	                                        (one comma before the column list's ")" is
//	                                        allowed, as in Doris)
//	CREATE ROUTINE LOAD [db.]name ON [db.]table [WITH APPEND|MERGE|DELETE]
//	    [COLUMNS TERMINATED BY 'sep'] [,] [COLUMNS (c1, tmp, c3 = expr, ...)] [,] [WHERE expr]
//	    [,] [DELETE ON expr] [,] [ORDER BY col] [,] [PARTITION (p, ...) | TEMPORARY PARTITION (tp)]
//	    [PROPERTIES (...)] FROM KAFKA (...) [COMMENT '...']
//	CREATE ROUTINE LOAD [db.]name [COLUMNS TERMINATED BY 'sep'] [PROPERTIES (...)]
//	    FROM KAFKA (...)                    (no ON: a multi-table load, see below)
//	ALTER ROUTINE LOAD FOR [db.]name [COLUMNS TERMINATED BY 'sep'] [,] [COLUMNS (...)] [,]
//	    [WHERE expr] [,] [DELETE ON expr] [,] [ORDER BY col] [PROPERTIES (...)] [FROM KAFKA (...)]
//	PAUSE [ALL] ROUTINE LOAD [FOR [db.]name]      (FOR without ALL, none with ALL)
//	RESUME [ALL] ROUTINE LOAD [FOR [db.]name]
//	STOP ROUTINE LOAD FOR [db.]name
//	SHOW [ALL] ROUTINE LOAD [FOR [db.]name | LIKE "pattern"] [ORDER BY col [ASC|DESC], ...]
//	    [LIMIT [offset,] count | LIMIT count OFFSET offset]
//	                                        (ALL: STOPPED and CANCELLED jobs too; LIKE: the jobs
//	                                        whose names match, % and _, case-sensitive as in Doris;
//	                                        ORDER BY a column of the 22, integers compared as
//	                                        numbers, ties in job id order)
//	SHOW ROUTINE LOAD TASK [FROM db] WHERE JobName = "name" | SHOW ROUTINE LOAD TASK FOR [db.]name
//	SHOW [ALL] CREATE ROUTINE LOAD FOR [db.]name
//	TRUNCATE TABLE [db.]name                (every row goes; jobs keep their progress)
//	INSERT INTO [db.]table [TEMPORARY PARTITION (tp)] [(cols)] VALUES (v, ...) [, (v, ...)]
//	                                        (strings, numbers, TRUE, FALSE, NULL; one
//	                                        atomic write, merged into a UNIQUE or
//	                                        AGGREGATE table; INSERT ... SELECT refused)
//	SYNC                                    (Doris's FE metadata sync: nothing to do, loadnode's
//	                                        metadata is current when a statement answers)
//	SHOW TABLES                             (every table: database, jobs; no FROM/LIKE)
//	DESC | DESCRIBE [db.]name               (columns, database, jobs, row count)
//	SHOW [FULL] COLUMNS|FIELDS FROM|IN [db.]name [FROM|IN db]
//	                                        (DESC's answer)
//	SHOW CREATE TABLE [db.]name             (Table, Create Table: the table's Doris DDL, which
//	                                        CREATE TABLE reads back into the same table:
//	                                        columns, types, NULL, DEFAULT, aggregations, KEY,
//	                                        PARTITION BY, DISTRIBUTED BY RANDOM, the sequence
//	                                        and skip-bitmap PROPERTIES; CreateTableStatement)
//	DROP TABLE [IF EXISTS] [db.]name        (refused while a job that is not deleted loads into it
//	                                        or into one of its temporary partitions, which go with it)
//	ALTER TABLE [db.]name ADD TEMPORARY PARTITION tp [VALUES LESS THAN (...) | VALUES [(...), (...))
//	    | VALUES IN (...)] [(properties)] [DISTRIBUTED BY ...]
//	                                        (no VALUES without PARTITION BY; Doris's rules: no name
//	                                        of a partition or temporary partition, no overlap with
//	                                        another temporary partition; embedded-store tables only)
//	ALTER TABLE [db.]name DROP TEMPORARY PARTITION [IF EXISTS] tp
//	SELECT [DISTINCT] items FROM [db.]table [WHERE expr] [GROUP BY ...] [HAVING expr] [ORDER BY ...] [LIMIT n [OFFSET m]]
//	                                        (not parsed here: exec.Exec hands it to package
//	                                        query, which runs it over the table's paged scan;
//	                                        count/sum/min/max/avg [DISTINCT], expressions over them;
//	                                        JOIN, subqueries, UNION refused;
//	                                        FROM t TEMPORARY PARTITION (tp) reads that temporary
//	                                        partition's rows only)
//
// Keywords are case-insensitive, identifiers may be `backquoted`, strings are
// single- or double-quoted with MySQL escapes (\n \t \\ \' \" ...; other
// backslash sequences such as \x01 are kept as written), `-- ...`, `# ...`
// and `/* ... */` comments are skipped, and one trailing ";" is allowed. A
// database qualifier (db.) is accepted everywhere and reported in
// Statement.DB, JobRef.DB, Alter.DB and Show.DB. exec.Exec maps
// Statement.DB of CREATE TABLE and CREATE ROUTINE LOAD to table.database
// (a database of the node config; none: the embedded store); job names
// are one namespace per node, so the others ignore it.
//
// # SHOW ROUTINE LOAD, SHOW ROUTINE LOAD TASK, SHOW CREATE ROUTINE LOAD
//
// exec.Exec answers them with Doris's result set (ExecResponse.Result,
// shaped by RoutineLoadRow, RoutineLoadTaskRows and CreateRoutineLoadRow
// from the node's api.JobInfo) as well as the typed job(s); `loadnode sql`
// prints it as Doris's \G does. SHOW ROUTINE LOAD has Doris's 22 columns
// in Doris's order (RoutineLoadColumns), so that a row read by position
// ([8] State, [11] JobProperties, [14] Statistic, [17]
// ReasonOfStateChanged) reads the same cell:
//
//	Id, Name                 the job's id and name
//	CreateTime, PauseTime,   "2006-01-02 15:04:05" in the client's time zone, from the
//	EndTime                  journal; NULL when not paused now / not ended
//	DbName, TableName        table.database, table.name (a multi-table load: its
//	                         tables, comma-separated)
//	IsMultiTable             true for a multi-table load (no ON), else false
//	State                    NEED_SCHEDULE, RUNNING, PAUSED, STOPPED, CANCELLED
//	DataSourceType           KAFKA or KINESIS
//	CurrentTaskNum           the job's running tasks
//	JobProperties            JSON, Doris's keys for the spec's settings (max_batch_interval
//	                         in seconds, or "100ms" under a whole second, merge_type,
//	                         columnToColumnExpr, whereExpr, ...)
//	DataSourceProperties     JSON: topic, brokerList, currentKafkaPartitions (Kinesis:
//	                         stream, region, endpoint, currentShards)
//	CustomProperties         JSON: the client properties (secrets redacted),
//	                         kafka_default_offsets, group.id
//	Statistic                JSON: receivedBytes, loadedRows, errorRows, unselectedRows,
//	                         totalRows (the three summed, as Doris), committedTaskNum and
//	                         abortedTaskNum (batches), loadRowsRate (rows/s, last
//	                         minute), runningTxns (always []: no transaction stays open).
//	                         Doris's errorRowsAfterResumed, receivedBytesRate and
//	                         taskExecuteTimeMs are left out: loadnode does not keep them.
//	Progress                 JSON: per partition the last offset consumed, as Doris
//	                         shows it (the next offset to read minus one; -1: none);
//	                         Kinesis: per shard the last sequence number
//	Lag                      JSON: per partition the records behind the high watermark
//	                         (-1: not known yet); Kinesis: MillisBehindLatest
//	ReasonOfStateChanged     the reason of PAUSED, STOPPED, CANCELLED; else empty
//	ErrorLogUrls, User,      empty (error rows: `loadnode job errors`)
//	Comment
//	OtherMsg                 the failure being retried, if any; what the node could not
//	                         read of the job's sink for this show (its database down or
//	                         not answering: "sink unreachable: error rows unavailable:
//	                         <reason>", or for a stopped job "progress and statistics
//	                         unavailable", its Statistic then {}), "; "-separated
//
// Without ALL, SHOW ROUTINE LOAD leaves out STOPPED and CANCELLED jobs, and
// SHOW ROUTINE LOAD FOR (or SHOW CREATE) of one is an error that says to
// add ALL, as in Doris. SHOW ROUTINE LOAD TASK has Doris's 9 columns: one
// row per current task (none unless the job is RUNNING and reading):
// TaskId "<generation>-<index>", TxnId the task generation (its commits'
// fence), TxnStatus PREPARE, JobId, CreateTime and ExecuteStartTime when
// the generation started, Timeout the batch interval in seconds, BeId -1
// (no backends), DataSourceProperties the task's partitions with their
// next offset to read. SHOW CREATE ROUTINE LOAD has JobId, JobName,
// CreateStmt: a CREATE ROUTINE LOAD that Parse reads back to the same
// spec (every setting explicit, the spec's start offsets rather than the
// job's progress; redacted secrets must be given again;
// loadnode.error_topic_properties are not rendered).
//
// PAUSE ALL / RESUME ALL send the command to every job that is not final
// and skip jobs it does not apply to (answered "sent to N jobs"). Doris has
// no STOP ALL.
//
// # CREATE ROUTINE LOAD: how it maps onto api.JobSpec
//
//	Doris                                  api.JobSpec (YAML name)
//	job name                               name
//	ON table                               table.name
//	COLUMNS (c1, tmp, c3 = expr, ...)      columns_mapping: each item as written (field
//	                                       names, temporaries, "col = expression"; see
//	                                       table/mapping.go and table/expr.go)
//	WHERE expr                             where (rows it leaves out are unselected rows)
//	COLUMNS TERMINATED BY 'sep'            column_separator; \xHH is the byte HH. Without
//	                                       it, csv jobs get "\t", the Doris default
//	                                       (loadnode's own default is ","). With format
//	                                       json it is accepted and ignored, as in Doris.
//	WITH APPEND                            accepted (the only merge type)
//	"desired_concurrent_number"            desired_concurrent_number (positive integer)
//	"max_batch_interval"                   max_batch_interval_ms: integer seconds as in
//	                                       Doris, or a Go duration ("500ms")
//	"max_batch_rows"                       max_batch_rows (positive integer)
//	"max_batch_size"                       max_batch_size: bytes, or with a unit
//	                                       (B, KB, MB, GB, KiB, MiB, GiB)
//	"max_error_number"                     max_error_number (integer >= 0)
//	"format"                               format: csv, csv_with_names,
//	                                       csv_with_names_and_types, hive_text, json,
//	                                       avro or protobuf (Doris reads none of the last
//	                                       two; they need the schema registry properties
//	                                       below)
//	"jsonpaths"                            jsonpaths: a JSON array of paths, the i-th
//	                                       for the i-th COLUMNS field (the table's
//	                                       columns when COLUMNS names none); as Doris, a
//	                                       field past the last path is missing (its
//	                                       DEFAULT), a path past the last field unused;
//	                                       "$." is the whole document
//	"json_root"                            json_root
//	"strip_outer_array"                    strip_outer_array (json): a record is a JSON
//	                                       array (with json_root, an object whose
//	                                       json_root is one), each element a row; with
//	                                       jsonpaths json_root also applies to each
//	                                       element (Doris's rules: table/strip.go)
//	"empty_field_as_null"                  empty_field_as_null (default false)
//	"trim_double_quotes", "skip_lines"     trim_double_quotes, skip_lines (csv formats;
//	                                       lines skipped at the start of each record);
//	                                       not in ALTER
//	"num_as_string"                        num_as_string (json)
//	"enclose", "escape"                    enclose, escape: one character each; without
//	                                       enclose, quotes are literal (as Doris); with
//	                                       it, fields split and unescape as Doris's
//	                                       reader does (table/enclose.go)
//	"fill_missing_columns"                 "true" (as if left out): a missing JSON key
//	                                       loads the column's DEFAULT (NULL without
//	                                       one); "false": the same, plus Doris's check
//	                                       that a COLUMNS list names the table's
//	                                       sequence column, else the job pauses when
//	                                       it starts ("need to specify the sequence
//	                                       column")
//	"partial_columns", "partial_update_new_key_behavior"
//	                                       UNIQUE tables: see Table models;
//	                                       partial_update_new_key_behavior only with
//	                                       "partial_columns" = "true" (else refused, as
//	                                       Doris: "can only be set when partial update
//	                                       is enabled")
//	"unique_key_update_mode"               unique_key_update_mode: UPSERT,
//	                                       UPDATE_FIXED_COLUMNS (partial_columns) or
//	                                       UPDATE_FLEXIBLE_COLUMNS (json; a table with
//	                                       enable_unique_key_skip_bitmap_column; no
//	                                       COLUMNS list): each record changes only the
//	                                       columns it has a key for, a new key takes
//	                                       the others' DEFAULT or NULL; alterable
//	                                       while PAUSED
//	"loadnode.error_topic"                 error_topic (loadnode's own: Doris has no
//	                                       dead-letter topic); not in ALTER
//	"loadnode.error_topic_brokers"         error_topic_brokers (comma-separated)
//	FROM KAFKA "kafka_broker_list"         kafka.brokers (comma-separated)
//	"kafka_topic"                          kafka.topic
//	"kafka_partitions"                     kafka.partitions ("0, 1, 2")
//	"kafka_offsets"                        kafka.offsets, paired with kafka_partitions:
//	                                       a number, OFFSET_BEGINNING, OFFSET_END or a
//	                                       time "2021-05-22 11:00:00" in the job's
//	                                       timezone (TIME:<epoch ms>: the first offset
//	                                       at or after it, by record timestamp)
//	"property.kafka_default_offsets"       kafka.default_offset (also without "property.")
//	"property.schema.registry.url"         schema_registry.url (the Confluent name); also
//	                                       .username, .password_file, .password_env,
//	                                       .bearer_token_file, .ssl.ca.location (ca_file),
//	                                       .insecure_skip_verify, .timeout (registry.go);
//	                                       the Confluent inline secrets basic.auth.user.info
//	                                       and bearer.auth.token are refused by name; not
//	                                       alterable
//	COLUMNS (k = __key, ...)               source metadata in expressions, as in YAML:
//	                                       __key, __topic, __partition, __offset,
//	                                       __timestamp, `__header.NAME`, ... (table/meta.go)
//	"property.group.id"                    kafka.commit_group: the job commits its positions
//	                                       to that group after each commit, for lag tools
//	                                       (observational; never read back)
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
// returned JobSpec.Table has only Name; COLUMNS (...) goes to
// columns_mapping. The caller (the node) fills in the columns from the
// stored table before ApplyDefaults and ValidateJobSpec, and compiles the
// mapping against them (an unknown field or function is refused by the
// mapping item's name, columns_mapping[i]).
//
// "fuzzy_parse" ("true" or "false"; Doris's hint that every object of a
// JSON array has the keys of the first, in the same order) is accepted and
// changes nothing: loadnode reads every object by its keys, as Doris's
// default JSON reader (simdjson) does whatever the hint. Doris's older
// reader (BE enable_simdjson_reader = false) reads the later objects of an
// array at the positions of the first object's keys instead, so objects
// whose keys are in another order load differently there. With
// "unique_key_update_mode" = "UPDATE_FLEXIBLE_COLUMNS" in the same
// statement it is refused, as in Doris ("Flexible partial update does not
// support fuzzy_parse"). It is not kept with the job.
//
// "load_to_single_tablet" (where Doris writes a batch: no difference to
// the rows) is accepted as "false", and as "true" into a table DISTRIBUTED
// BY RANDOM only: into any other table the CREATE is refused with Doris's
// message (exec.Exec checks the stored table; a table made before
// loadnode kept its distribution counts as HASH). ALTER takes only
// "false"; the property is not kept with the job (SHOW CREATE leaves it
// out).
//
// Job properties with their meaning and Doris's default when left out:
//
//	"strict_mode"       strict_mode; default "false" (as Doris): a value that does not
//	                    convert loads as NULL (a DECIMAL out of range too), a CHAR or
//	                    VARCHAR text too long is cut at the last whole character within
//	                    its length in bytes, an error row only in a NOT NULL column;
//	                    "true": the record is an error row
//	"max_filter_ratio"  max_filter_ratio, 0..1; default 1 (no ratio limit): a batch (a
//	                    Doris task) whose error rows exceed this share of its rows is
//	                    not committed, and the job pauses naming the limit
//	"timezone"          timezone (IANA name, +hh:mm or +h:mm); default UTC, not the Doris
//	                    node's zone (loadnode has no session zone)
//	"lc_time_names"     lc_time_names (a locale MySQL lists, any case); default en_US: the
//	                    language of DAYNAME and MONTHNAME in COLUMNS, WHERE and DELETE ON
//	                    (a Doris session variable; Doris's routine load has no such property)
//
// # Multi-table loads
//
// CREATE ROUTINE LOAD without ON is a multi-table load, as in Doris: each
// record is "table|record" (the text before the first "|" names the table,
// the rest is the record in the job's format, CSV or JSON) and goes to that
// table. The job loads the tables of the statement's database (the
// embedded store's without a qualifier) that exist when it is created
// (JobSpec.tables); unlike Doris, a table created later is not loaded. A
// record without "|" or naming another table is an error row whose reason
// names the table. It loads the DUPLICATE tables of the database: its
// UNIQUE and AGGREGATE tables are left out (the answer names them; a
// record naming one is an error row), and a database without a DUPLICATE
// table refuses the statement. COLUMNS, WHERE and WITH MERGE|DELETE are
// refused with it. All tables' rows of a batch commit
// with its progress in one sink commit. A CREATE ROUTINE LOAD may take the
// name of a STOPPED or CANCELLED job, as in Doris: the client deletes that
// job first (its rows stay; its history goes).
//
// # ALTER ROUTINE LOAD
//
// PROPERTIES may change desired_concurrent_number, max_batch_interval,
// max_batch_rows, max_batch_size, max_error_number, strict_mode,
// max_filter_ratio, timezone, lc_time_names, json_root, num_as_string, empty_field_as_null, enclose,
// escape and jsonpaths (and carry fuzzy_parse, which changes nothing);
// "format", partial_columns, partial_update_new_key_behavior and
// fill_missing_columns cannot be altered. The load properties COLUMNS TERMINATED BY, COLUMNS (...), WHERE,
// DELETE ON and ORDER BY (Doris's load_property clauses) replace the job's,
// and, with jsonpaths, only a PAUSED job's (as Doris, which alters only
// PAUSED jobs; any other state is FAILED_PRECONDITION naming the fields):
// the new mapping is compiled against the table by the ALTER, journaled
// before it answers, and read by the tasks the RESUME starts. A json job
// given COLUMNS without jsonpaths drops the paths loadnode defaulted (one
// per column), so its fields are read by name. ON [db.]table (right after
// the job's name, as Doris) moves a PAUSED job to another table of its
// database with its progress (the node fills the table from its catalog;
// jsonpaths loadnode derived from the old table's columns are derived
// again). PRECEDING FILTER and PARTITION are refused as in CREATE. FROM KAFKA may change
// kafka_broker_list, kafka_topic, property.kafka_default_offsets and
// property.<name> (merged into the job's client properties), and set new
// start offsets with kafka_partitions and kafka_offsets together (for
// partitions the job loads; without a new kafka_topic the set of
// partitions never changes; a statement with only these sends no spec,
// only the reset, which needs the job PAUSED); property.group.id cannot be
// altered. A new kafka_topic, as
// in Doris, needs the job PAUSED and drops the old topic's progress: the
// new topic's partitions start at kafka_offsets for the kafka_partitions
// given (which are then the partitions the job loads), else at
// property.kafka_default_offsets (OFFSET_BEGINNING, OFFSET_END or a
// datetime), else at the job's default offset; the old topic's rows stay.
// A new kafka_broker_list alone keeps the progress. Alter.Changed names the changed spec fields;
// Alter.Spec applies the changes to a job's current spec and validates the
// result.
//
// # CREATE TABLE: types and clauses
//
//	Doris type                              loadnode type (api.ColumnType)
//	TINYINT, SMALLINT, INT (INTEGER)        INT8, INT16, INT32: range-checked
//	BIGINT                                  INT64 (an integer's display width is ignored)
//	LARGEINT                                INT128 (signed 128-bit)
//	FLOAT, DOUBLE                           FLOAT32, FLOAT64
//	DECIMAL[(p[,s])], DECIMALV2, DECIMALV3  DECIMAL, p <= 38 (default (9,0)), exact
//	CHAR[(n)], VARCHAR[(n)]                 CHAR (default 1), VARCHAR (default 65533):
//	                                        n in bytes, as Doris
//	STRING, TEXT                            STRING
//	BOOLEAN, BOOL                           BOOL
//	DATE, DATEV2                            DATE
//	DATETIME[(p)], DATETIMEV2[(p)]          DATETIME: a wall clock, no zone, p <= 6;
//	                                        text ending in a zone (Z, +08:00, UTC+8,
//	                                        Asia/Shanghai), loaded or in a CAST, is the
//	                                        job timezone's wall clock; a DATE keeps the
//	                                        date written
//	TIMESTAMP                               TIMESTAMP with text_in_job_zone: an instant;
//	                                        text without an offset is a wall clock in
//	                                        the job's timezone (to whole seconds), as
//	                                        Doris reads it; TIMESTAMP(p) refused
//	JSON, JSONB                             JSON (validated, kept compact)
//	anything else (HLL, BITMAP, ARRAY,      refused, naming the type
//	MAP, STRUCT, VARIANT, ...)
//
// Column options: NULL, NOT NULL (a NULL value makes an error row), DEFAULT
// "v" | number | NULL (the value of a column a load does not fill; checked
// against the type), DEFAULT CURRENT_TIMESTAMP[(n)] (DATETIME only, n at
// most the column's precision, as Doris: the load time, one per batch, as a
// wall clock in the job's timezone with n fraction digits; an INSERT's in
// UTC), KEY, COMMENT.
//
// Accepted and listed in Statement.Ignored (the client's answer names
// them), because they make no difference to which rows a loadnode table
// holds or their values: ENGINE=OLAP, DUPLICATE KEY(cols) (Doris sort
// columns; loadnode keys rows by source position; the columns must exist),
// COMMENTs, DISTRIBUTED BY HASH(cols)|RANDOM [BUCKETS n|AUTO] (the columns
// must exist; RANDOM is kept, TableSpec.random_distribution, for
// load_to_single_tablet), AUTO PARTITION BY (Doris makes the partition a row needs), INDEX
// ... USING INVERTED|NGRAM_BF|BITMAP, and the PROPERTIES about replication,
// storage medium, compression, compaction, colocation and bloom filters:
// replication_num, replication_allocation, storage_medium,
// storage_cooldown_time, storage_format, compression, light_schema_change,
// disable_auto_compaction, enable_single_replica_compaction,
// enable_duplicate_without_keys_by_default, skip_write_index_on_load,
// compaction_policy, time_series_compaction_*, in_memory, is_being_synced,
// colocate_with, store_row_column, bloom_filter_columns, bloom_filter_fpp,
// estimate_partition_size, group_commit_*.
//
// # Partitions
//
// PARTITION BY RANGE (cols) (...) and PARTITION BY LIST (cols) (...) are
// kept with the table (TableSpec.partitioning) and decide which rows it
// takes, as in Doris: a row whose partition columns fall in no partition
// is an error row, "no partition for this tuple. tuple=(col=value)",
// found after the WHERE filter, in both sinks alike. The forms:
//
//	PARTITION p VALUES LESS THAN ("v", ...) | MAXVALUE | (..., MAXVALUE)
//	                     from the largest upper bound below it (or below
//	                     every value, NULL included) to v
//	PARTITION p VALUES [("lo", ...), ("hi", ...))   lo <= key < hi
//	PARTITION p VALUES IN ("v", ...) | (("v1", "v2"), ...)   LIST
//
// A bound with fewer values than columns takes each missing column's
// smallest value (Doris); NULL is below every value, and a LIST value never
// matches NULL. RANGE columns are the integer types, DATE and DATETIME;
// LIST also CHAR, VARCHAR and BOOLEAN; a UNIQUE or AGGREGATE table is
// partitioned by key columns only (as Doris). Overlapping ranges, a LIST value in
// two partitions, values that do not convert, more than 4096 partitions
// are refused with the table. Refused by name: batch partitions (FROM ...
// TO ... INTERVAL), partition expressions without AUTO, NULL partition
// values. A routine load's PARTITION (p1, p2) (or PARTITION p1) loads only
// into those partitions: a row of another is an error row too
// (JobSpec.target_partitions).
//
// # Table models
//
//	DUPLICATE KEY(cols)  the default: every row kept (the columns are Doris's
//	                     sort columns; loadnode keys rows by source position)
//	UNIQUE KEY(cols)     merge-on-write: a later row with the same key replaces
//	                     the stored one, in source order within a partition.
//	                     PROPERTIES ("function_column.sequence_col" = "col"): a
//	                     row replaces only when its col is >= the stored one
//	                     (NULL is the smallest); a delete honours it too and is
//	                     remembered (a tombstone), so a late, older row stays
//	                     deleted. "enable_unique_key_merge_on_write" is accepted
//	                     (true or false read the same).
//	                     "function_column.sequence_type" = "int" (an integer
//	                     type, DATE or DATETIME; not with sequence_col): a
//	                     hidden sequence, as Doris's __DORIS_SEQUENCE_COL__,
//	                     no column of the table (not in DESC or SELECT *); a
//	                     load's ORDER BY col (a field of its COLUMNS list or a
//	                     table column) gives each row's value, and a job
//	                     without one pauses ("need to specify the sequence
//	                     column"), but a partial update; an INSERT must name
//	                     __DORIS_SEQUENCE_COL__ in its column list.
//	                     "enable_unique_key_skip_bitmap_column" = "true": the
//	                     table takes flexible partial updates (below); no
//	                     hidden column is made or shown.
//	AGGREGATE KEY(cols)  each value column names its aggregation: SUM (numbers;
//	                     integers wrap at their width, DECIMAL holds at its
//	                     largest), MIN, MAX (NULL ignored), REPLACE,
//	                     REPLACE_IF_NOT_NULL; a value column without one is refused
//	                     (HLL_UNION, BITMAP_UNION, QUANTILE_UNION, GENERIC are refused)
//	no KEY clause        as Doris infers it: if a column names an aggregation,
//	                     an AGGREGATE table keyed by the columns before the
//	                     first such column (a first column with one has no key:
//	                     refused); else DUPLICATE
//
// FLOAT, DOUBLE and JSON columns cannot be key columns. Rows merge in the
// commit that moves the job's progress, so a batch replayed after a crash
// never merges twice.
//
// A routine load into a UNIQUE table may say WITH APPEND (the default:
// every row upserts), WITH DELETE (every row deletes its key), WITH MERGE
// with DELETE ON <expr> (a row for which the expression is true deletes
// its key; the expression sees the table columns after the mapping and the
// temporaries), ORDER BY col (the sequence column, for a table that names
// none), "partial_columns" = "true" (only the columns the COLUMNS list
// names or computes change for a stored key; every key column must be
// named) and "partial_update_new_key_behavior" = "APPEND" (the default: a
// new key is inserted, the other columns take their DEFAULT or NULL) |
// "ERROR" (a batch with a new key is refused and the job pauses with
// STORE_FAILURE, naming it; Doris fails the load). Merge types, ORDER BY
// and partial updates on a DUPLICATE or AGGREGATE table are refused.
//
// # Refused, by name
//
//	CREATE TABLE   PRIMARY KEY, ROLLUP, DEFAULT CURRENT_DATE, AUTO_INCREMENT,
//	               ON UPDATE, generated columns, HLL_UNION / BITMAP_UNION /
//	               QUANTILE_UNION / GENERIC, ENGINE other than OLAP, CREATE TABLE
//	               LIKE / AS SELECT, any other table property (dynamic_partition.*,
//	               storage_policy, ...),
//	               DISTRIBUTED BY RANDOM on a UNIQUE table or an AGGREGATE table
//	               with a REPLACE or REPLACE_IF_NOT_NULL column (as Doris)
//	ROUTINE LOAD   COLUMNS, WHERE, PARTITION, TEMPORARY PARTITION or a merge type without ON,
//	               PARTITION with TEMPORARY PARTITION, more than one temporary partition,
//	               PRECEDING FILTER, ROWS TERMINATED BY, COLUMNS TERMINATED BY with
//	               avro or protobuf, formats other than csv, csv_with_names(_and_types),
//	               hive_text, json, avro and protobuf, kafka_offsets without
//	               kafka_partitions, "FILE:" property values (Doris CREATE FILE), every
//	               other job property
//	               (exec_mem_limit, send_batch_parallelism, workload_group, ...), every other
//	               FROM KAFKA property
//	FROM KINESIS   every property but kinesis_stream, kinesis_region | aws.region,
//	               kinesis_endpoint | aws.endpoint, aws.access_key | aws.access_key_id,
//	               aws.secret_key | aws.secret_access_key, aws.session_token,
//	               aws.profile, kinesis_shards, kinesis_positions (one per shard,
//	               needs kinesis_shards), property.kinesis_default_position; FROM
//	               KINESIS in ALTER (reset positions with job alter --position)
//	ALTER          "format", kafka_partitions without kafka_offsets (unless with a
//	               new kafka_topic), a new kafka_topic of a job that is not PAUSED,
//	               load properties or jsonpaths of a job that is not PAUSED,
//	               PRECEDING FILTER, PARTITION, TEMPORARY PARTITION, property.group.id
//	ALTER TABLE    everything but ADD / DROP TEMPORARY PARTITION: REPLACE PARTITION ... WITH
//	               TEMPORARY PARTITION (no atomic replace), ADD IF NOT EXISTS, columns,
//	               properties, ...; temporary partitions of a PostgreSQL table
//	SELECT         FROM t TEMPORARY PARTITION with more than one partition
//	SHOW           WHERE on SHOW ROUTINE LOAD; ALL or any condition
//	               but JobName = "name" on SHOW ROUTINE LOAD TASK
//	STOP           STOP ALL
//	other          any other statement
//
// # Functions
//
// COLUMNS, WHERE and DELETE ON expressions (and the YAML spec's
// columns_mapping and where) call the functions of the expression engine
// (package table), in any case; a function not listed here is refused by
// name ("unknown function X"). This list is generated from the engine's
// registry (table.Functions):
//
//	(functions: generated by go generate ./doris from table.Functions; do not edit)
//	ABS                          1 argument
//	ADDDATE                      (date, n) or (date, INTERVAL n unit)
//	AES_DECRYPT                  2 arguments
//	AES_ENCRYPT                  2 arguments
//	ASCII                        1 argument
//	CEIL                         1 to 2 arguments
//	CEILING                      1 to 2 arguments
//	CHARACTER_LENGTH             1 argument
//	CHAR_LENGTH                  1 argument
//	COALESCE                     1 or more arguments
//	CONCAT                       1 or more arguments
//	CONCAT_WS                    2 or more arguments
//	CONVERT_TZ                   3 arguments
//	DATE                         1 argument
//	DATEDIFF                     2 arguments
//	DATE_ADD                     (date, n) or (date, INTERVAL n unit)
//	DATE_CEIL                    (date, n) or (date, INTERVAL n unit)
//	DATE_FLOOR                   (date, n) or (date, INTERVAL n unit)
//	DATE_FORMAT                  2 arguments
//	DATE_SUB                     (date, n) or (date, INTERVAL n unit)
//	DATE_TRUNC                   2 arguments
//	DAY                          1 argument
//	DAYNAME                      1 argument
//	DAYOFMONTH                   1 argument
//	DAYOFWEEK                    1 argument
//	DAYOFYEAR                    1 argument
//	DAYS_ADD                     (date, n) or (date, INTERVAL n unit)
//	DAYS_DIFF                    2 arguments
//	DAYS_SUB                     (date, n) or (date, INTERVAL n unit)
//	DAY_CEIL                     1 to 3 arguments
//	DAY_FLOOR                    1 to 3 arguments
//	DCEIL                        1 to 2 arguments
//	DFLOOR                       1 to 2 arguments
//	DSQRT                        1 argument
//	ENDS_WITH                    2 arguments
//	EXP                          1 argument
//	EXTRACT                      1 argument
//	FLOOR                        1 to 2 arguments
//	FROM_BASE64                  1 argument
//	FROM_DAYS                    1 argument
//	FROM_ISO8601_DATE            1 argument
//	FROM_MICROSECOND             1 argument
//	FROM_MILLISECOND             1 argument
//	FROM_SECOND                  1 argument
//	FROM_UNIXTIME                1 to 2 arguments
//	GET_JSON_BIGINT              2 arguments
//	GET_JSON_DOUBLE              2 arguments
//	GET_JSON_INT                 2 arguments
//	GET_JSON_STRING              2 arguments
//	GREATEST                     1 or more arguments
//	HOUR                         1 argument
//	HOURS_ADD                    2 arguments
//	HOURS_DIFF                   2 arguments
//	HOURS_SUB                    2 arguments
//	HOUR_CEIL                    1 to 3 arguments
//	HOUR_FLOOR                   1 to 3 arguments
//	IF                           3 arguments
//	IFNULL                       2 arguments
//	INSTR                        2 arguments
//	JSONB_EXISTS_PATH            2 arguments
//	JSONB_EXTRACT                2 or more arguments
//	JSONB_EXTRACT_BIGINT         2 arguments
//	JSONB_EXTRACT_BOOL           2 arguments
//	JSONB_EXTRACT_DOUBLE         2 arguments
//	JSONB_EXTRACT_INT            2 arguments
//	JSONB_EXTRACT_ISNULL         2 arguments
//	JSONB_EXTRACT_STRING         2 arguments
//	JSON_ARRAY                   0 or more arguments
//	JSON_EXISTS_PATH             2 arguments
//	JSON_EXTRACT                 2 or more arguments
//	JSON_EXTRACT_BIGINT          2 arguments
//	JSON_EXTRACT_BOOL            2 arguments
//	JSON_EXTRACT_DOUBLE          2 arguments
//	JSON_EXTRACT_INT             2 arguments
//	JSON_EXTRACT_ISNULL          2 arguments
//	JSON_EXTRACT_STRING          2 arguments
//	JSON_UNQUOTE                 1 argument
//	LAST_DAY                     1 argument
//	LCASE                        1 argument
//	LEAST                        1 or more arguments
//	LEFT                         2 arguments
//	LENGTH                       1 argument
//	LN                           1 argument
//	LOCATE                       2 to 3 arguments
//	LOG10                        1 argument
//	LOG2                         1 argument
//	LOWER                        1 argument
//	LPAD                         3 arguments
//	LTRIM                        1 to 2 arguments
//	MAKEDATE                     2 arguments
//	MICROSECOND                  1 argument
//	MICROSECONDS_ADD             2 arguments
//	MICROSECONDS_DIFF            2 arguments
//	MICROSECONDS_SUB             2 arguments
//	MICROSECOND_TIMESTAMP        1 argument
//	MILLISECONDS_ADD             2 arguments
//	MILLISECONDS_DIFF            2 arguments
//	MILLISECONDS_SUB             2 arguments
//	MILLISECOND_TIMESTAMP        1 argument
//	MINUTE                       1 argument
//	MINUTES_ADD                  2 arguments
//	MINUTES_DIFF                 2 arguments
//	MINUTES_SUB                  2 arguments
//	MINUTE_CEIL                  1 to 3 arguments
//	MINUTE_FLOOR                 1 to 3 arguments
//	MOD                          2 arguments
//	MONTH                        1 argument
//	MONTHNAME                    1 argument
//	MONTHS_ADD                   2 arguments
//	MONTHS_BETWEEN               2 to 3 arguments
//	MONTHS_DIFF                  2 arguments
//	MONTHS_SUB                   2 arguments
//	MONTH_CEIL                   1 to 3 arguments
//	MONTH_FLOOR                  1 to 3 arguments
//	NEXT_DAY                     2 arguments
//	NULLIF                       2 arguments
//	NVL                          2 arguments
//	POW                          2 arguments
//	POWER                        2 arguments
//	QUARTER                      1 argument
//	QUARTERS_ADD                 2 arguments
//	QUARTERS_DIFF                2 arguments
//	QUARTERS_SUB                 2 arguments
//	QUARTER_CEIL                 1 to 3 arguments
//	QUARTER_FLOOR                1 to 3 arguments
//	REPEAT                       2 arguments
//	REPLACE                      3 arguments
//	REVERSE                      1 argument
//	RIGHT                        2 arguments
//	ROUND                        1 to 2 arguments
//	RPAD                         3 arguments
//	RTRIM                        1 to 2 arguments
//	SECOND                       1 argument
//	SECONDS_ADD                  2 arguments
//	SECONDS_DIFF                 2 arguments
//	SECONDS_SUB                  2 arguments
//	SECOND_CEIL                  1 to 3 arguments
//	SECOND_FLOOR                 1 to 3 arguments
//	SECOND_TIMESTAMP             1 argument
//	SEC_TO_TIME                  1 argument
//	SIGN                         1 argument
//	SPACE                        1 argument
//	SPLIT_PART                   3 arguments
//	SQRT                         1 argument
//	STARTS_WITH                  2 arguments
//	STR_TO_DATE                  2 arguments
//	SUBDATE                      (date, n) or (date, INTERVAL n unit)
//	SUBSTR                       2 to 3 arguments
//	SUBSTRING                    2 to 3 arguments
//	TIME                         1 argument
//	TIMEDIFF                     2 arguments
//	TIMESTAMP                    1 argument
//	TIMESTAMPADD                 3 arguments
//	TIMESTAMPDIFF                3 arguments
//	TIME_TO_SEC                  1 argument
//	TO_BASE64                    1 argument
//	TO_DATE                      1 argument
//	TO_DAYS                      1 argument
//	TO_ISO8601                   1 argument
//	TO_MONDAY                    1 argument
//	TRIM                         1 to 2 arguments
//	TRUNCATE                     1 to 2 arguments
//	UCASE                        1 argument
//	UNIX_TIMESTAMP               0 to 2 arguments
//	UPPER                        1 argument
//	WEEK                         1 to 2 arguments
//	WEEKDAY                      1 argument
//	WEEKOFYEAR                   1 argument
//	WEEKS_ADD                    2 arguments
//	WEEKS_DIFF                   2 arguments
//	WEEKS_SUB                    2 arguments
//	WEEK_CEIL                    1 to 3 arguments
//	WEEK_FLOOR                   1 to 3 arguments
//	YEAR                         1 argument
//	YEARS_ADD                    2 arguments
//	YEARS_DIFF                   2 arguments
//	YEARS_SUB                    2 arguments
//	YEARWEEK                     1 to 2 arguments
//	YEAR_CEIL                    1 to 3 arguments
//	YEAR_FLOOR                   1 to 3 arguments
//	YEAR_OF_WEEK                 1 argument
//	YOW                          1 argument
//	(end of functions)
package doris
