// Package config owns loadnode's two file formats: the job spec file (YAML,
// with the property names of Apache Doris Routine Load) that becomes an
// api.JobSpec, and the node config file read by `loadnode serve`. SPEC.md in
// this directory is the user-facing reference; this comment is the same
// reference for Go readers.
//
// Everything here is a pure function of its arguments: no I/O beyond the bytes
// the caller passes, no globals, safe for concurrent use.
//
// # Job spec
//
// ParseJobSpec reads a spec strictly (unknown or duplicate keys are errors
// that name the key and its line), fills defaults with ApplyDefaults,
// validates with ValidateJobSpec and returns the wire spec. A spec built by a
// Go program goes through ApplyDefaults then ValidateJobSpec. MarshalJobSpec
// writes a spec back in the same format. Every problem with a field is a
// *FieldError naming the field by its YAML path. Fields (absent or null means
// "use the default"; an explicit value must be valid):
//
//	name                       string, required. ^[A-Za-z_][A-Za-z0-9_-]{0,127}$. Unique per node.
//	table.name                 string, required, same pattern as name. Created on first use; later
//	                           jobs loading into it must declare the same columns.
//	table.model                optional; duplicate (the default), unique or aggregate;
//	                           table.keys, table.sequence_column, columns[i].aggregation.
//	table.columns              list of {name, type}, at least one. Column names match
//	                           ^[A-Za-z_][A-Za-z0-9_]{0,127}$ and are unique, case-insensitively.
//	                           Types (case-insensitive): int64 (bigint, int), float64 (double,
//	                           float), string (varchar, text), bool (boolean), timestamp (datetime).
//	format                     csv | json (case-insensitive). Default csv (as in Doris).
//	column_separator           csv only. Default ",". Any non-empty string without a newline,
//	                           carriage return or double quote; use YAML escapes for "\t" or "\x01".
//	jsonpaths                  json only. One path per column, each starting with "$" ("$.a.b");
//	                           with columns_mapping, the i-th path for the i-th field (as Doris:
//	                           a field past the last path is missing, a path past the last
//	                           field unused).
//	                           A YAML list, or a string holding a JSON array as in Doris
//	                           ('["$.a","$.b"]'). Default: "$.<column name>" for every column
//	                           (Doris matches JSON keys by column name).
//	desired_concurrent_number  tasks per job, 1..64. Default 3 (Doris). A job runs
//	                           min(this, partitions) tasks.
//	max_batch_interval         longest time a task reads before it commits: a Go duration
//	                           ("10s", "500ms", "1m30s") or an integer number of seconds (Doris).
//	                           100ms..1h, whole milliseconds. Default 10s. api: max_batch_interval_ms.
//	max_batch_rows             rows per batch, 1..10,000,000. Default 200000.
//	max_batch_size             bytes per batch: an integer, or an integer with a unit B, KB, MB,
//	                           GB (powers of 1000), KiB, MiB, GiB (powers of 1024), e.g. "64MiB".
//	                           1KiB..10GiB. Default 100MiB (104857600).
//	max_error_number           error rows allowed within a sampling window of max_batch_rows*10
//	                           rows; >= 0. Default 0 (any error row pauses the job).
//	strict_mode, max_filter_ratio, timezone, columns_mapping, where, json_root,
//	empty_field_as_null, enclose, escape, trim_double_quotes, skip_lines, num_as_string
//	                           Doris's row semantics; see SPEC.md for each (defaults: strict
//	                           true, ratio 1, UTC, no mapping, no filter, '"' encloses).
//	kafka                      the source, or kinesis: a job has exactly one (see SPEC.md
//	                           for the kinesis section).
//	kafka.brokers              required, host:port each (host a name or IP address, port
//	                           1..65535; IPv6 as [::1]:9092). A list or a
//	                           comma-separated string (Doris kafka_broker_list).
//	kafka.topic                required, a valid Kafka topic name: ^[A-Za-z0-9._-]{1,249}$,
//	                           not "." or "..".
//	kafka.partitions           partitions to load, each >= 0, unique. A list, a comma-separated
//	                           string, or one number. Empty (the default) means all partitions,
//	                           including ones added later.
//	kafka.offsets              start offset per partition: a non-negative integer,
//	                           OFFSET_BEGINNING or OFFSET_END (also lower-case). Either a list
//	                           (or comma-separated string) aligned with kafka.partitions, which
//	                           is then required and of the same length (Doris kafka_offsets), or
//	                           a map {partition: offset}, whose keys must be in kafka.partitions
//	                           when that is set. Default: none.
//	kafka.default_offset       start offset of partitions without one in kafka.offsets (including
//	                           partitions added later). Default OFFSET_END (Doris).
//	kafka.properties           string -> string client settings (names match
//	                           ^[A-Za-z0-9._-]{1,255}$: security.protocol,
//	                           sasl.mechanism, ...), passed to the Kafka source, which validates
//	                           them. Non-string scalars are taken as written (30000, true).
//	kafka.commit_group         a consumer group the job commits its positions to after its
//	                           commits, for lag tools (observational). Default none.
//	error_topic                a Kafka topic every error row is also produced to (at least
//	                           once, after its commit), with error_topic_brokers and
//	                           error_topic_properties for another cluster (required for a
//	                           kinesis job). Default none. See SPEC.md.
//
// Integers may also be written as strings of decimal digits, as Doris
// properties are; digits with leading zeros are decimal, never octal.
//
// ApplyDefaults also canonicalizes: format in lower case, offsets as
// OFFSET_BEGINNING / OFFSET_END / a decimal number without leading zeros. A
// spec returned by ParseJobSpec is canonical, so
// ParseJobSpec(MarshalJobSpec(s)) equals s.
//
// # Node config
//
// Node holds the settings of `loadnode serve`; DefaultNode has every default,
// LoadNode reads a YAML file strictly over it, Node.Validate checks it, and
// Node.Values writes it back (what `serve --check-config` prints). Every key
// is declared once, with its default, decoding, validation and doc line, in
// nodeKeys (nodekeys.go; NodeKeys exports the table): SPEC.md's node-config
// table is generated from it by `go generate ./config`.
package config
