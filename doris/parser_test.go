package doris

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// Statements marked "Doris docs" are taken as they are from Apache Doris's
// documentation (CREATE ROUTINE LOAD, ALTER ROUTINE LOAD, SHOW ROUTINE LOAD,
// CREATE TABLE reference pages and the Routine Load manual); "adapted" ones
// drop the parts loadnode refuses, which other cases check.

func TestParseCreateRoutineLoad(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		db   string
		want *api.JobSpec
	}{
		{
			name: "Doris docs: quick start csv",
			sql: `CREATE ROUTINE LOAD testdb.example_routine_load_csv ON test_routineload_tbl
    COLUMNS TERMINATED BY ",",
    COLUMNS(user_id, name, age)
    FROM KAFKA(
        "kafka_broker_list" = "192.168.88.62:9092",
        "kafka_topic" = "test-routine-load-csv",
        "property.kafka_default_offsets" = "OFFSET_BEGINNING"
    );`,
			db: "testdb",
			want: &api.JobSpec{
				Name:  "example_routine_load_csv",
				Table: &api.TableSpec{Name: "test_routineload_tbl"}, ColumnsMapping: []string{"user_id", "name", "age"},
				ColumnSeparator: ",",
				Kafka: &api.KafkaSpec{
					Brokers:       []string{"192.168.88.62:9092"},
					Topic:         "test-routine-load-csv",
					DefaultOffset: "OFFSET_BEGINNING",
				},
			},
		},
		{
			// Doris's csv properties (test_csv_with_double_quotes,
			// test_csv_with_skip_lines); csv_with_names keeps Doris's
			// default separator.
			name: "csv_with_names, trim_double_quotes, skip_lines",
			sql:  `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "csv_with_names", "trim_double_quotes" = "true", "skip_lines" = "3") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, Format: "csv_with_names", ColumnSeparator: "\t",
				TrimDoubleQuotes: true, SkipLines: 3,
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
		{
			// hive_text without a separator: its own (0x01, ApplyDefaults).
			name: "hive_text",
			sql:  `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "hive_text") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, Format: "hive_text",
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
		{
			// loadnode has no tablets: either value describes it
			// (test_json_load sets "true").
			name: "load_to_single_tablet true",
			sql:  `CREATE ROUTINE LOAD j ON t PROPERTIES ("load_to_single_tablet" = "true") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, ColumnSeparator: "\t",
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
		{
			name: "num_as_string",
			sql:  `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "num_as_string" = "true") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, Format: "json", NumAsString: true,
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
		{
			// Doris reads a JSON record's fields by name: the separator
			// is accepted and has no effect (test_stream_load_cast).
			name: "separator with json is ignored",
			sql:  `CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY ",", COLUMNS(a) PROPERTIES ("format" = "json") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, ColumnsMapping: []string{"a"}, Format: "json",
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
		{
			name: "Doris docs: quick start json with jsonpaths (topic added)",
			sql: `CREATE ROUTINE LOAD testdb.example_routine_load_json ON test_routineload_tbl
    COLUMNS(user_id, name, age)
    PROPERTIES(
        "format"="json",
        "jsonpaths"="[\"$.user_id\",\"$.name\",\"$.age\"]"
    )
    FROM KAFKA(
        "kafka_broker_list" = "192.168.88.62:9092",
        "kafka_topic" = "test-routine-load-json"
    );`,
			db: "testdb",
			want: &api.JobSpec{
				Name:  "example_routine_load_json",
				Table: &api.TableSpec{Name: "test_routineload_tbl"}, ColumnsMapping: []string{"user_id", "name", "age"},
				Format:    "json",
				Jsonpaths: []string{"$.user_id", "$.name", "$.age"},
				Kafka: &api.KafkaSpec{
					Brokers: []string{"192.168.88.62:9092"},
					Topic:   "test-routine-load-json",
				},
			},
		},
		{
			name: "Doris docs: json with partitions and offsets (adapted: strict_mode true)",
			sql: `CREATE ROUTINE LOAD example_db.test_json_label_1 ON table1
   COLUMNS(category,price,author)
   PROPERTIES
   (
       "desired_concurrent_number"="3",
       "max_batch_interval" = "20",
       "max_batch_rows" = "300000",
       "max_batch_size" = "209715200",
       "strict_mode" = "true",
       "format" = "json"
   )
   FROM KAFKA
   (
       "kafka_broker_list" = "broker1:9092,broker2:9092,broker3:9092",
       "kafka_topic" = "my_topic",
       "kafka_partitions" = "0,1,2",
       "kafka_offsets" = "0,0,0"
   );`,
			db: "example_db",
			want: &api.JobSpec{
				StrictMode: proto.Bool(true),
				Name:       "test_json_label_1",
				Table:      &api.TableSpec{Name: "table1"}, ColumnsMapping: []string{"category", "price", "author"},
				Format:                  "json",
				DesiredConcurrentNumber: 3,
				MaxBatchIntervalMs:      20_000,
				MaxBatchRows:            300_000,
				MaxBatchSize:            209_715_200,
				Kafka: &api.KafkaSpec{
					Brokers:    []string{"broker1:9092", "broker2:9092", "broker3:9092"},
					Topic:      "my_topic",
					Partitions: []int32{0, 1, 2},
					Offsets:    map[int32]string{0: "0", 1: "0", 2: "0"},
				},
			},
		},
		{
			name: "Doris docs: offsets, OFFSET_BEGINNING and OFFSET_END per partition",
			sql: `CREATE ROUTINE LOAD example_db.test_job ON example_tbl
   PROPERTIES
   (
       "desired_concurrent_number"="3",
       "max_batch_interval" = "30",
       "max_batch_rows" = "300000",
       "max_batch_size" = "209715200"
   ) FROM KAFKA
   (
       "kafka_broker_list" = "broker1:9092,broker2:9092",
       "kafka_topic" = "my_topic",
       "kafka_partitions" = "0,1,2,3",
       "kafka_offsets" = "101,0,OFFSET_BEGINNING,OFFSET_END"
   );`,
			db: "example_db",
			want: &api.JobSpec{
				Name:                    "test_job",
				Table:                   &api.TableSpec{Name: "example_tbl"},
				ColumnSeparator:         "\t",
				DesiredConcurrentNumber: 3,
				MaxBatchIntervalMs:      30_000,
				MaxBatchRows:            300_000,
				MaxBatchSize:            209_715_200,
				Kafka: &api.KafkaSpec{
					Brokers:    []string{"broker1:9092", "broker2:9092"},
					Topic:      "my_topic",
					Partitions: []int32{0, 1, 2, 3},
					Offsets:    map[int32]string{0: "101", 1: "0", 2: "OFFSET_BEGINNING", 3: "OFFSET_END"},
				},
			},
		},
		{
			name: "Doris docs: SASL PLAIN properties and client.id (adapted)",
			sql: `CREATE ROUTINE LOAD demo.kafka_job03 ON routine_test03
        COLUMNS TERMINATED BY ",",
        COLUMNS(id, name, age)
        PROPERTIES
        (
            "desired_concurrent_number"="1",
            "strict_mode" = "true",
            "timezone" = "UTC"
        )
        FROM KAFKA
        (
            "kafka_broker_list" = "10.16.10.6:9092",
            "kafka_topic" = "routineLoad01",
            "property.security.protocol"="SASL_PLAINTEXT",
            "property.sasl.mechanism"="PLAIN",
            "property.sasl.username"="admin",
            "property.sasl.password"="admin_passwd",
            "property.client.id" = "kafka_client_03",
            "property.kafka_default_offsets" = "OFFSET_BEGINNING"
        );`,
			db: "demo",
			want: &api.JobSpec{
				StrictMode: proto.Bool(true), Timezone: "UTC",
				Name:  "kafka_job03",
				Table: &api.TableSpec{Name: "routine_test03"}, ColumnsMapping: []string{"id", "name", "age"},
				ColumnSeparator:         ",",
				DesiredConcurrentNumber: 1,
				Kafka: &api.KafkaSpec{
					Brokers:       []string{"10.16.10.6:9092"},
					Topic:         "routineLoad01",
					DefaultOffset: "OFFSET_BEGINNING",
					Properties: map[string]string{
						"security.protocol": "SASL_PLAINTEXT",
						"sasl.mechanism":    "PLAIN",
						"sasl.username":     "admin",
						"sasl.password":     "admin_passwd",
						"client.id":         "kafka_client_03",
					},
				},
			},
		},
		{
			name: "Doris docs: one partition from an offset, group.id is the commit group",
			sql: `CREATE ROUTINE LOAD demo.kafka_job02 ON routine_test02
        COLUMNS TERMINATED BY ",",
        COLUMNS(id, name, age)
        PROPERTIES
        (
            "desired_concurrent_number"="1"
        )
        FROM KAFKA
        (
            "kafka_broker_list" = "10.16.10.6:9092",
            "kafka_topic" = "routineLoad02",
            "property.group.id" = "kafka_job",
            "kafka_partitions" = "0",
            "kafka_offsets" = "3"
        );`,
			db: "demo",
			want: &api.JobSpec{
				Name:  "kafka_job02",
				Table: &api.TableSpec{Name: "routine_test02"}, ColumnsMapping: []string{"id", "name", "age"},
				ColumnSeparator:         ",",
				DesiredConcurrentNumber: 1,
				Kafka: &api.KafkaSpec{
					Brokers:     []string{"10.16.10.6:9092"},
					Topic:       "routineLoad02",
					Partitions:  []int32{0},
					Offsets:     map[int32]string{0: "3"},
					CommitGroup: "kafka_job",
				},
			},
		},
		{
			name: "loadnode's dead-letter properties",
			sql: `CREATE ROUTINE LOAD j ON t
        PROPERTIES ("loadnode.error_topic" = "t-dlq", "loadnode.error_topic_brokers" = "h1:9092, h2:9092")
        FROM KAFKA ("kafka_broker_list" = "h:9092", "kafka_topic" = "t");`,
			want: &api.JobSpec{
				Name:  "j",
				Table: &api.TableSpec{Name: "t"}, ColumnSeparator: "\t", ErrorTopic: "t-dlq", ErrorTopicBrokers: []string{"h1:9092", "h2:9092"},
				Kafka: &api.KafkaSpec{Brokers: []string{"h:9092"}, Topic: "t"},
			},
		},
		{
			name: "Doris-style spellings: case, backquotes, comments, escapes, units, no db",
			sql: "-- a comment\ncreate routine load `job-1` on `t1` with append\n" +
				"columns terminated by '\\x01' /* SOH */\n" +
				"properties ('MAX_BATCH_INTERVAL' = '500ms', 'max_batch_size' = '64MiB', 'max_error_number' = 0,\n" +
				"  'format' = 'CSV', 'strip_outer_array' = 'False', 'max_filter_ratio' = '1.0')\n" +
				"from kafka ('kafka_broker_list' = ' k1:9092 , k2:9092 ', 'kafka_topic' = 'clicks',\n" +
				"  'kafka_partitions' = '2, 0', 'kafka_offsets' = 'offset_end, 0010',\n" +
				"  'kafka_default_offsets' = 'offset_beginning', 'property.ssl.ca.location' = '/etc/ca.pem')\n" +
				"comment 'clicks job';",
			want: &api.JobSpec{
				MaxFilterRatio:     proto.Float64(1),
				Name:               "job-1",
				Table:              &api.TableSpec{Name: "t1"},
				Format:             "csv",
				ColumnSeparator:    "\x01",
				MaxBatchIntervalMs: 500,
				MaxBatchSize:       64 << 20,
				Kafka: &api.KafkaSpec{
					Brokers:       []string{"k1:9092", "k2:9092"},
					Topic:         "clicks",
					Partitions:    []int32{2, 0},
					Offsets:       map[int32]string{2: "OFFSET_END", 0: "10"},
					DefaultOffset: "OFFSET_BEGINNING",
					Properties:    map[string]string{"ssl.ca.location": "/etc/ca.pem"},
				},
			},
		},
		{
			name: "tab separator written as an escape",
			sql:  `CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY "\t" FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			want: &api.JobSpec{
				Name: "j", Table: &api.TableSpec{Name: "t"}, ColumnSeparator: "\t",
				Kafka: &api.KafkaSpec{Brokers: []string{"b:1"}, Topic: "x"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			if st.CreateRoutineLoad == nil {
				t.Fatalf("not a CREATE ROUTINE LOAD: %+v", st)
			}
			want := proto.Clone(tt.want).(*api.JobSpec)
			if want.StrictMode == nil {
				want.StrictMode = proto.Bool(false) // Doris's default
			}
			if want.Enclose == nil && want.Format != "json" {
				want.Enclose = proto.String("") // Doris: quotes are literal
			}
			if !proto.Equal(st.CreateRoutineLoad, want) {
				t.Errorf("spec:\n got %v\nwant %v", st.CreateRoutineLoad, want)
			}
			if st.DB != tt.db {
				t.Errorf("DB = %q, want %q", st.DB, tt.db)
			}
		})
	}
}

// TestCreateRoutineLoadCompletes checks the column contract: once the caller
// fills the column types from the stored table, ApplyDefaults and
// ValidateJobSpec accept the spec.
func TestCreateRoutineLoadKinesis(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD example_db.k1 ON example_tbl
   COLUMNS TERMINATED BY ","
   COLUMNS(k1, k2)
   PROPERTIES ("desired_concurrent_number" = "2")
   FROM KINESIS (
       "kinesis_stream" = "orders",
       "aws.region" = "us-west-2",
       "aws.access_key" = "AK", "aws.secret_key" = "SK",
       "kinesis_shards" = "shardId-000000000000, shardId-000000000001",
       "kinesis_positions" = "TRIM_HORIZON, 49590338271490256608559692538361571095921575989136588898",
       "property.kinesis_default_position" = "latest")`)
	spec := st.CreateRoutineLoad
	want := &api.KinesisSpec{Stream: "orders", Region: "us-west-2", AccessKeyId: "AK", SecretAccessKey: "SK",
		Shards:          []string{"shardId-000000000000", "shardId-000000000001"},
		Positions:       map[string]string{"shardId-000000000000": "TRIM_HORIZON", "shardId-000000000001": "49590338271490256608559692538361571095921575989136588898"},
		DefaultPosition: "LATEST"}
	if !proto.Equal(spec.Kinesis, want) || spec.Kafka != nil {
		t.Fatalf("kinesis = %v (kafka %v), want %v", spec.Kinesis, spec.Kafka, want)
	}
	spec.Table.Columns = []*api.Column{{Name: "a", Type: api.ColumnType_STRING}}
	config.ApplyDefaults(spec)
	if err := config.ValidateJobSpec(spec); err != nil {
		t.Fatalf("ValidateJobSpec: %v", err)
	}
}

func TestCreateRoutineLoadCompletes(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD example_db.test1 ON example_tbl
   COLUMNS(category, author, price)
   PROPERTIES ("format" = "json", "desired_concurrent_number" = "3")
   FROM KAFKA ("kafka_broker_list" = "broker1:9092", "kafka_topic" = "my_topic")`)
	spec := st.CreateRoutineLoad
	if len(spec.Table.Columns) != 0 {
		t.Fatalf("table columns %v: the node fills them from the stored table", spec.Table.Columns)
	}
	if want := []string{"category", "author", "price"}; !slices.Equal(spec.ColumnsMapping, want) {
		t.Errorf("columns_mapping = %q, want %q", spec.ColumnsMapping, want)
	}
	// What the node does: the stored table's columns, then the defaults.
	for _, n := range []string{"author", "category", "price"} {
		spec.Table.Columns = append(spec.Table.Columns, &api.Column{Name: n, Type: api.ColumnType_STRING})
	}
	config.ApplyDefaults(spec)
	if err := config.ValidateJobSpec(spec); err != nil {
		t.Fatalf("ValidateJobSpec: %v", err)
	}
	if len(spec.Jsonpaths) != 0 {
		t.Errorf("jsonpaths = %q: with a mapping, fields are read by name", spec.Jsonpaths)
	}
}

func TestParseCreateTable(t *testing.T) {
	tests := []struct {
		name        string
		sql         string
		db          string
		ifNotExists bool
		want        *api.TableSpec
	}{
		{
			name: "Doris docs: colocation table t1",
			sql: `CREATE TABLE t1 (
        id int(11) COMMENT "",
        value varchar(8) COMMENT ""
    )
    DUPLICATE KEY(id)
    DISTRIBUTED BY HASH(id) BUCKETS 10
    PROPERTIES (
        "colocate_with" = "group1"
    );`,
			want: &api.TableSpec{Name: "t1", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT32},
				{Name: "value", Type: api.ColumnType_VARCHAR, Length: 8},
			}},
		},
		{
			name: "Doris docs: colocation table t2 with backquotes",
			sql: `CREATE TABLE t2 (
        id int(11) COMMENT "",
        value1 varchar(8) COMMENT "",
        value2 varchar(8) COMMENT ""
    )
    DUPLICATE KEY(` + "`id`" + `)
    DISTRIBUTED BY HASH(` + "`id`" + `) BUCKETS 10
    PROPERTIES (
        "colocate_with" = "group1"
    );`,
			want: &api.TableSpec{Name: "t2", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT32},
				{Name: "value1", Type: api.ColumnType_VARCHAR, Length: 8},
				{Name: "value2", Type: api.ColumnType_VARCHAR, Length: 8},
			}},
		},
		{
			name: "Doris docs: detailed model table (adapted: no DEFAULT, no NOT NULL)",
			sql: `CREATE TABLE example_db.table_hash
    (
        k1 TINYINT,
        k2 DECIMAL(10, 2),
        k3 CHAR(10) COMMENT "string column",
        k4 INT COMMENT "int column"
    )
    COMMENT "my first table"
    DISTRIBUTED BY HASH(k1) BUCKETS 32`,
			db: "example_db",
			want: &api.TableSpec{Name: "table_hash", Columns: []*api.Column{
				{Name: "k1", Type: api.ColumnType_INT8},
				{Name: "k2", Type: api.ColumnType_DECIMAL, Precision: 10, Scale: 2},
				{Name: "k3", Type: api.ColumnType_CHAR, Length: 10},
				{Name: "k4", Type: api.ColumnType_INT32},
			}},
		},
		{
			name: "Doris docs: routine load manual table (adapted: no NOT NULL)",
			sql: `CREATE TABLE demo.routine_test06 (
        id      INT                      COMMENT "id",
        name    VARCHAR(30)              COMMENT "name",
        age     INT                      COMMENT "age",
        date    DATETIME                 COMMENT "date"
    )
    DUPLICATE KEY(id)
    DISTRIBUTED BY HASH(id) BUCKETS 1;`,
			db: "demo",
			want: &api.TableSpec{Name: "routine_test06", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT32},
				{Name: "name", Type: api.ColumnType_VARCHAR, Length: 30},
				{Name: "age", Type: api.ColumnType_INT32},
				{Name: "date", Type: api.ColumnType_DATETIME},
			}},
		},
		{
			name:        "every accepted type and clause",
			sql:         "create table if not exists `db`.`all` (a tinyint key null, b smallint, c integer, d bigint(20), e float, f double, g decimal, h decimalv3(15,15), i char, j string, k text, l boolean, m bool, n date, o datev2, p datetime(6), q datetimev2, r varchar default null, s largeint not null default -5, t json, index i1 (a) using inverted properties('parser' = 'english'), index i2 (b) using ngram_bf) engine = olap duplicate key(a, b) comment 'x' distributed by random buckets auto properties ('replication_num' = '1', 'compression' = 'zstd');",
			db:          "db",
			ifNotExists: true,
			want: &api.TableSpec{Name: "all", Columns: []*api.Column{
				{Name: "a", Type: api.ColumnType_INT8},
				{Name: "b", Type: api.ColumnType_INT16},
				{Name: "c", Type: api.ColumnType_INT32},
				{Name: "d", Type: api.ColumnType_INT64},
				{Name: "e", Type: api.ColumnType_FLOAT32},
				{Name: "f", Type: api.ColumnType_FLOAT64},
				{Name: "g", Type: api.ColumnType_DECIMAL, Precision: 9},
				{Name: "h", Type: api.ColumnType_DECIMAL, Precision: 15, Scale: 15},
				{Name: "i", Type: api.ColumnType_CHAR, Length: 1},
				{Name: "j", Type: api.ColumnType_STRING},
				{Name: "k", Type: api.ColumnType_STRING},
				{Name: "l", Type: api.ColumnType_BOOL},
				{Name: "m", Type: api.ColumnType_BOOL},
				{Name: "n", Type: api.ColumnType_DATE},
				{Name: "o", Type: api.ColumnType_DATE},
				{Name: "p", Type: api.ColumnType_DATETIME, Precision: 6},
				{Name: "q", Type: api.ColumnType_DATETIME},
				{Name: "r", Type: api.ColumnType_VARCHAR, Length: 65533},
				{Name: "s", Type: api.ColumnType_INT128, NotNull: true, DefaultValue: proto.String("-5")},
				{Name: "t", Type: api.ColumnType_JSON},
			}, RandomDistribution: true},
		},
		{
			// Doris's grammar: ( columnDefs (, indexDefs)? ,? ). Corpus case
			// test_csv_split_line__sql__2 (ddl.sql) ends its columns so.
			name: "Doris suites: trailing comma after the last column",
			sql: `create table test_csv_split_line2 (
    a int ,
    b varchar(30),
)
DUPLICATE KEY(` + "`a`" + `)
DISTRIBUTED BY HASH(` + "`a`" + `) BUCKETS 10`,
			want: &api.TableSpec{Name: "test_csv_split_line2", Columns: []*api.Column{
				{Name: "a", Type: api.ColumnType_INT32},
				{Name: "b", Type: api.ColumnType_VARCHAR, Length: 30},
			}},
		},
		{
			name: "trailing comma after an index",
			sql:  "CREATE TABLE t (a INT, b STRING, INDEX i (b) USING INVERTED,) DUPLICATE KEY(a)",
			want: &api.TableSpec{Name: "t", Columns: []*api.Column{
				{Name: "a", Type: api.ColumnType_INT32},
				{Name: "b", Type: api.ColumnType_STRING},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			if st.CreateTable == nil {
				t.Fatalf("not a CREATE TABLE: %+v", st)
			}
			if !proto.Equal(st.CreateTable, tt.want) {
				t.Errorf("table:\n got %v\nwant %v", st.CreateTable, tt.want)
			}
			if st.DB != tt.db || st.IfNotExists != tt.ifNotExists {
				t.Errorf("DB, IfNotExists = %q, %v; want %q, %v", st.DB, st.IfNotExists, tt.db, tt.ifNotExists)
			}
		})
	}
}

func TestParseJobCommands(t *testing.T) {
	tests := []struct {
		sql  string
		want Statement
	}{
		// Doris docs
		{"PAUSE ROUTINE LOAD FOR test1;", Statement{Pause: &JobRef{Name: "test1"}}},
		{"PAUSE ALL ROUTINE LOAD;", Statement{Pause: &JobRef{All: true}}},
		{"RESUME ROUTINE LOAD FOR test1;", Statement{Resume: &JobRef{Name: "test1"}}},
		{"RESUME ALL ROUTINE LOAD;", Statement{Resume: &JobRef{All: true}}},
		{"STOP ROUTINE LOAD FOR test1;", Statement{Stop: &JobRef{Name: "test1"}}},
		{"PAUSE ROUTINE LOAD FOR testdb.example_routine_load_csv;", Statement{Pause: &JobRef{DB: "testdb", Name: "example_routine_load_csv"}}},
		{"RESUME ROUTINE LOAD FOR testdb.example_routine_load_csv;", Statement{Resume: &JobRef{DB: "testdb", Name: "example_routine_load_csv"}}},
		{"STOP ROUTINE LOAD FOR testdb.example_routine_load_csv;", Statement{Stop: &JobRef{DB: "testdb", Name: "example_routine_load_csv"}}},
		{"SHOW ALL ROUTINE LOAD FOR test1;", Statement{Show: &Show{Name: "test1", All: true}}},
		{"SHOW ROUTINE LOAD FOR test1;", Statement{Show: &Show{Name: "test1"}}},
		{"SHOW ALL ROUTINE LOAD;", Statement{Show: &Show{All: true}}},
		{"SHOW ROUTINE LOAD;", Statement{Show: &Show{}}},
		{"SHOW ROUTINE LOAD FOR example_db.test1;", Statement{Show: &Show{DB: "example_db", Name: "test1"}}},
		{"SHOW ALL ROUTINE LOAD FOR example_db.test1;", Statement{Show: &Show{DB: "example_db", Name: "test1", All: true}}},
		{`SHOW ROUTINE LOAD TASK WHERE JobName = "test1";`, Statement{Show: &Show{Name: "test1", Task: true}}},
		{`show routine load task from example_db where jobname = 'test1'`, Statement{Show: &Show{DB: "example_db", Name: "test1", Task: true}}},
		{"SHOW CREATE ROUTINE LOAD FOR example_db.test1;", Statement{Show: &Show{DB: "example_db", Name: "test1", Create: true}}},
		{"SHOW ALL CREATE ROUTINE LOAD FOR test1", Statement{Show: &Show{Name: "test1", Create: true, All: true}}},
		{`SHOW ROUTINE LOAD LIKE "%test1%";`, Statement{Show: &Show{Like: ptr("%test1%")}}}, // Doris's suites
		{`show all routine load like 'job\_%'`, Statement{Show: &Show{All: true, Like: ptr(`job\_%`)}}},
		// test_show_routine_load_expr
		{"SHOW ROUTINE LOAD ORDER BY Name DESC", Statement{Show: &Show{OrderBy: []ShowOrder{{Column: 1, Desc: true}}}}},
		{"SHOW ROUTINE LOAD ORDER BY Name", Statement{Show: &Show{OrderBy: []ShowOrder{{Column: 1}}}}},
		{"SHOW ROUTINE LOAD LIMIT 1", Statement{Show: &Show{HasLimit: true, Limit: 1}}},
		{"SHOW ROUTINE LOAD LIMIT 1 , 1", Statement{Show: &Show{HasLimit: true, Offset: 1, Limit: 1}}},
		{"show all routine load like '%a%' order by state asc, id desc limit 2 offset 3", Statement{Show: &Show{All: true, Like: ptr("%a%"),
			OrderBy: []ShowOrder{{Column: 8}, {Column: 0, Desc: true}}, HasLimit: true, Limit: 2, Offset: 3}}},
		// test_show_routine_load
		{"SHOW ROUTINE LOAD TASK FOR db1.job1", Statement{Show: &Show{DB: "db1", Name: "job1", Task: true}}},
		// spellings
		{"  show routine load for `my job` -- trailing comment", Statement{Show: &Show{Name: "my job"}}},
		{"Pause Routine Load For j/*x*/;  ", Statement{Pause: &JobRef{Name: "j"}}},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			check := func(what string, got, want any) {
				t.Helper()
				switch g := got.(type) {
				case *JobRef:
					w := want.(*JobRef)
					if (g == nil) != (w == nil) || g != nil && *g != *w {
						t.Errorf("%s = %+v, want %+v", what, g, w)
					}
				case *Show:
					w := want.(*Show)
					if (g == nil) != (w == nil) || g != nil && !reflect.DeepEqual(g, w) {
						t.Errorf("%s = %+v, want %+v", what, g, w)
					}
				}
			}
			check("Pause", st.Pause, tt.want.Pause)
			check("Resume", st.Resume, tt.want.Resume)
			check("Stop", st.Stop, tt.want.Stop)
			check("Show", st.Show, tt.want.Show)
			if n := setFields(st); n != 1 {
				t.Errorf("%d fields set", n)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// baseSpec is a complete, valid spec to alter.
func baseSpec() *api.JobSpec {
	s := &api.JobSpec{
		Name: "label1",
		Table: &api.TableSpec{Name: "t", Columns: []*api.Column{
			{Name: "a", Type: api.ColumnType_INT64}, {Name: "b", Type: api.ColumnType_STRING},
		}},
		Format: "json",
		Kafka: &api.KafkaSpec{
			Brokers:    []string{"b1:9092"},
			Topic:      "t1",
			Partitions: []int32{0, 1, 2},
			Offsets:    map[int32]string{0: "5"},
			Properties: map[string]string{"client.id": "x"},
		},
	}
	config.ApplyDefaults(s)
	return s
}

func TestParseAlter(t *testing.T) {
	tests := []struct {
		name    string
		sql     string
		db      string
		props   map[string]string
		kafka   *api.KafkaSpec
		changed []string
		want    func(s *api.JobSpec) // applied to baseSpec() for the expected Spec result
		refused string               // the field config.Alter refuses, if any
		noReset bool                 // kafka.offsets are the new topic's, not a reset
	}{
		{
			name:    "Doris docs: change desired_concurrent_number",
			sql:     "ALTER ROUTINE LOAD FOR db1.label1\n   PROPERTIES\n   (\n       \"desired_concurrent_number\" = \"1\"\n   );",
			db:      "db1",
			props:   map[string]string{"desired_concurrent_number": "1"},
			changed: []string{"desired_concurrent_number"},
			want:    func(s *api.JobSpec) { s.DesiredConcurrentNumber = 1 },
		},
		{
			name: "Doris docs: concurrency and partition offsets (adapted: no group.id)",
			sql: `ALTER ROUTINE LOAD FOR db1.label1
   PROPERTIES
   (
       "desired_concurrent_number" = "10"
   )
   FROM kafka
   (
       "kafka_partitions" = "0, 1, 2",
       "kafka_offsets" = "100, 200, 100",
       "property.client.id" = "new_client"
   );`,
			db:      "db1",
			props:   map[string]string{"desired_concurrent_number": "10"},
			kafka:   &api.KafkaSpec{Offsets: map[int32]string{0: "100", 1: "200", 2: "100"}, Properties: map[string]string{"client.id": "new_client"}},
			changed: []string{"desired_concurrent_number", "kafka.offsets", "kafka.properties"},
			want: func(s *api.JobSpec) {
				// kafka.offsets become the request's ResetOffsets.
				s.DesiredConcurrentNumber = 10
				s.Kafka.Properties["client.id"] = "new_client"
			},
		},
		{
			name: "Doris docs: concurrency and brokers and topic",
			sql: `ALTER ROUTINE LOAD FOR testdb.label1
PROPERTIES(
    "desired_concurrent_number" = "3"
)
FROM KAFKA(
    "kafka_broker_list" = "192.168.88.60:9092",
    "kafka_topic" = "test-topic"
);`,
			db:      "testdb",
			props:   map[string]string{"desired_concurrent_number": "3"},
			kafka:   &api.KafkaSpec{Brokers: []string{"192.168.88.60:9092"}, Topic: "test-topic"},
			changed: []string{"desired_concurrent_number", "kafka.brokers", "kafka.topic"},
			want: func(s *api.JobSpec) {
				s.DesiredConcurrentNumber = 3
				// The old topic's partitions and offsets do not carry over.
				s.Kafka.Brokers, s.Kafka.Topic, s.Kafka.Partitions, s.Kafka.Offsets = []string{"192.168.88.60:9092"}, "test-topic", nil, nil
			},
		},
		{
			name: "a new topic with its partitions and offsets",
			sql: `ALTER ROUTINE LOAD FOR label1 FROM KAFKA(
    "kafka_topic" = "test-topic",
    "kafka_partitions" = "0, 2",
    "kafka_offsets" = "OFFSET_BEGINNING, 5"
);`,
			kafka:   &api.KafkaSpec{Topic: "test-topic", Partitions: []int32{0, 2}, Offsets: map[int32]string{0: "OFFSET_BEGINNING", 2: "5"}},
			changed: []string{"kafka.topic", "kafka.partitions", "kafka.offsets"},
			want: func(s *api.JobSpec) {
				s.Kafka.Topic, s.Kafka.Partitions, s.Kafka.Offsets = "test-topic", []int32{0, 2}, map[int32]string{0: "OFFSET_BEGINNING", 2: "5"}
			},
			noReset: true,
		},
		{
			name: "jsonpaths (only a PAUSED job's: config.PausedOnly)",
			sql: `alter routine load for label1 properties ("max_batch_interval" = "5", "max_batch_rows" = "1000",
				"max_batch_size" = "1048576", "max_error_number" = "7", "jsonpaths" = '["$.x", "$.y"]', "strict_mode" = "true")
				from kafka ("property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
			props: map[string]string{"max_batch_interval": "5", "max_batch_rows": "1000", "max_batch_size": "1048576",
				"max_error_number": "7", "jsonpaths": `["$.x", "$.y"]`, "strict_mode": "true"},
			kafka:   &api.KafkaSpec{DefaultOffset: "OFFSET_BEGINNING"},
			changed: []string{"max_batch_interval", "max_batch_rows", "max_batch_size", "max_error_number", "strict_mode", "jsonpaths", "kafka.default_offset"},
			want: func(s *api.JobSpec) {
				s.MaxBatchIntervalMs, s.MaxBatchRows, s.MaxBatchSize, s.MaxErrorNumber = 5000, 1000, 1<<20, 7
				s.StrictMode, s.Jsonpaths = proto.Bool(true), []string{"$.x", "$.y"}
				s.Kafka.DefaultOffset = "OFFSET_BEGINNING"
			},
		},
		{
			// The case: Doris's offset reset, no PROPERTIES.
			name:    "Doris docs: partition offsets alone",
			sql:     `ALTER ROUTINE LOAD FOR label1 FROM KAFKA ("kafka_partitions" = "0, 1", "kafka_offsets" = "100, OFFSET_BEGINNING");`,
			kafka:   &api.KafkaSpec{Offsets: map[int32]string{0: "100", 1: "OFFSET_BEGINNING"}},
			changed: []string{"kafka.offsets"},
			want:    func(s *api.JobSpec) {},
		},
		{
			name:    "client properties alone",
			sql:     `ALTER ROUTINE LOAD FOR label1 FROM KAFKA ("property.client.id" = "y")`,
			kafka:   &api.KafkaSpec{Properties: map[string]string{"client.id": "y"}},
			changed: []string{"kafka.properties"},
			want:    func(s *api.JobSpec) { s.Kafka.Properties["client.id"] = "y" },
		},
		{
			// Doris suite test_routine_load_alter: ALTER ... COLUMNS(...) of a
			// PAUSED job. The json job's default paths (one per column) go:
			// with a mapping, fields are read by their own names.
			name:    "Doris suites: COLUMNS of a json job",
			sql:     `ALTER ROUTINE LOAD FOR label1 COLUMNS(a, tmp, b = concat(tmp, 'x'));`,
			changed: []string{"columns_mapping"},
			want: func(s *api.JobSpec) {
				s.ColumnsMapping, s.Jsonpaths = []string{"a", "tmp", "b = concat(tmp, 'x')"}, nil
			},
		},
		{
			name:    "Doris grammar: WHERE and ORDER BY, then PROPERTIES",
			sql:     `ALTER ROUTINE LOAD FOR label1 WHERE a > 1, ORDER BY b PROPERTIES ("max_error_number" = "3")`,
			props:   map[string]string{"max_error_number": "3"},
			changed: []string{"max_error_number", "where", "sequence_column"},
			want:    func(s *api.JobSpec) { s.Where, s.SequenceColumn, s.MaxErrorNumber = "a > 1", "b", 3 },
		},
		{
			name:    "COLUMNS TERMINATED BY of a json job",
			sql:     `ALTER ROUTINE LOAD FOR label1 COLUMNS TERMINATED BY ','`,
			changed: []string{"column_separator"},
			refused: "column_separator",
		},
		{
			// The node's table checks refuse it without WITH MERGE.
			name:    "DELETE ON",
			sql:     `ALTER ROUTINE LOAD FOR label1 DELETE ON a = 1`,
			changed: []string{"delete_on"},
			want:    func(s *api.JobSpec) { s.DeleteOn = "a = 1" },
		},
		{
			name: "every alterable property",
			sql: `alter routine load for label1 properties ("max_batch_interval" = "5", "max_batch_rows" = "1000",
				"max_batch_size" = "1048576", "max_error_number" = "7", "strict_mode" = "true")
				from kafka ("property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
			props: map[string]string{"max_batch_interval": "5", "max_batch_rows": "1000", "max_batch_size": "1048576",
				"max_error_number": "7", "strict_mode": "true"},
			kafka:   &api.KafkaSpec{DefaultOffset: "OFFSET_BEGINNING"},
			changed: []string{"max_batch_interval", "max_batch_rows", "max_batch_size", "max_error_number", "strict_mode", "kafka.default_offset"},
			want: func(s *api.JobSpec) {
				s.MaxBatchIntervalMs = 5000
				s.MaxBatchRows = 1000
				s.MaxBatchSize = 1 << 20
				s.StrictMode = proto.Bool(true)
				s.MaxErrorNumber = 7
				s.Kafka.DefaultOffset = "OFFSET_BEGINNING"
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			a := st.Alter
			if a == nil {
				t.Fatalf("not an ALTER: %+v", st)
			}
			if a.DB != tt.db || a.Name != "label1" {
				t.Errorf("DB, Name = %q, %q", a.DB, a.Name)
			}
			if !maps.Equal(a.Properties, tt.props) {
				t.Errorf("Properties = %v, want %v", a.Properties, tt.props)
			}
			if (a.Kafka == nil) != (tt.kafka == nil) || !proto.Equal(a.Kafka, tt.kafka) {
				t.Errorf("Kafka = %v, want %v", a.Kafka, tt.kafka)
			}
			if !slices.Equal(a.Changed, tt.changed) {
				t.Errorf("Changed = %q, want %q", a.Changed, tt.changed)
			}
			old := baseSpec()
			oldCopy := proto.Clone(old)
			got, _, _, err := config.Alter(old, a.Request)
			if !proto.Equal(old, oldCopy) {
				t.Errorf("Alter modified old")
			}
			if tt.refused != "" {
				var fe *config.FieldError
				if !errors.As(err, &fe) || fe.Field != tt.refused {
					t.Fatalf("config.Alter(Request) = %v, want a refusal naming %s", err, tt.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("config.Alter(Request): %v", err)
			}
			want := baseSpec()
			tt.want(want)
			if !proto.Equal(got, want) {
				t.Errorf("Spec:\n got %v\nwant %v", got, want)
			}
			if tt.noReset && len(a.Request.ResetOffsets) > 0 {
				t.Errorf("ResetOffsets = %v, want none (a new topic's offsets are in the spec)", a.Request.ResetOffsets)
			}
			if !tt.noReset && !maps.Equal(a.Request.ResetOffsets, tt.kafka.GetOffsets()) {
				t.Errorf("ResetOffsets = %v, want %v", a.Request.ResetOffsets, tt.kafka.GetOffsets())
			}
		})
	}
}

func TestAlterSpecErrors(t *testing.T) {
	tests := []struct {
		sql   string
		field string // the *config.FieldError field
	}{
		{`ALTER ROUTINE LOAD FOR label1 PROPERTIES ("max_batch_rows" = "99999999999")`, "max_batch_rows"},
		{`ALTER ROUTINE LOAD FOR label1 FROM KAFKA ("kafka_broker_list" = "nohost")`, "kafka.brokers[0]"},
		{`ALTER ROUTINE LOAD FOR label1 FROM KAFKA ("kafka_topic" = "no topic")`, "kafka.topic"},
	}
	for _, tt := range tests {
		t.Run(tt.sql, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			got, _, _, err := config.Alter(baseSpec(), st.Alter.Request)
			if err == nil {
				t.Fatalf("Alter = %v, want an error", got)
			}
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("error %v, want a config.FieldError for %s", err, tt.field)
			}
		})
	}
	// Offsets of partitions the job does not read are the source's to
	// refuse (ResolveReset); the statement carries them as they are.
	st := mustParse(t, `ALTER ROUTINE LOAD FOR label1 FROM KAFKA ("kafka_partitions" = "7", "kafka_offsets" = "1")`)
	if got := st.Alter.Request.GetResetOffsets(); !maps.Equal(got, map[int32]string{7: "1"}) {
		t.Errorf("ResetOffsets = %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name      string
		sql       string
		clause    string
		line, col int
		msg       string // a part of Msg
	}{
		// CREATE ROUTINE LOAD: Doris docs statements loadnode refuses
		{"Doris docs: PRECEDING FILTER", `CREATE ROUTINE LOAD example_db.test1 ON example_tbl
   COLUMNS(k1, k2, k3, v1, v2),
   PRECEDING FILTER k1 = 1,
   WHERE k1 > 100 and k2 like "%doris%"
   PROPERTIES ("strict_mode" = "true")
   FROM KAFKA ("kafka_broker_list" = "broker1:9092", "kafka_topic" = "my_topic");`,
			"PRECEDING FILTER", 3, 4, "filtering"},
		{"TEMPORARY PARTITION of two", `CREATE ROUTINE LOAD demo.kafka_job05 ON routine_test05
        TEMPORARY PARTITION(tp1, tp2)
        FROM KAFKA ("kafka_broker_list" = "10.16.10.6:9092", "kafka_topic" = "routineLoad05");`,
			"TEMPORARY PARTITION", 2, 34, "more than one temporary partition"},
		{"TEMPORARY PARTITION and PARTITION", `CREATE ROUTINE LOAD j ON t PARTITION (p1), TEMPORARY PARTITION (tp1) FROM KAFKA ()`,
			"TEMPORARY PARTITION", 1, 44, "not both"},
		{"TEMPORARY PARTITION without ON", `CREATE ROUTINE LOAD j TEMPORARY PARTITION (tp1) FROM KAFKA ()`,
			"TEMPORARY PARTITION", 1, 23, "multi-table"},
		{"ALTER ROUTINE LOAD TEMPORARY PARTITION", `ALTER ROUTINE LOAD FOR j TEMPORARY PARTITION (tp1)`,
			"TEMPORARY PARTITION", 1, 26, "cannot be altered"},
		{"REPLACE PARTITION", `ALTER TABLE t REPLACE PARTITION (p1) WITH TEMPORARY PARTITION (tp1)`,
			"ALTER TABLE REPLACE PARTITION", 1, 15, "not supported by loadnode"},
		{"REPLACE WITH TABLE", `ALTER TABLE t2 REPLACE WITH TABLE t1 PROPERTIES('swap' = 'true')`,
			"ALTER TABLE REPLACE WITH TABLE", 1, 16, "swapping or replacing tables not supported"},
		{"ALTER TABLE ADD COLUMN", `ALTER TABLE t ADD COLUMN c INT`,
			"ALTER TABLE ADD", 1, 15, "not supported by loadnode"},
		{"ADD TEMPORARY PARTITION VALUES", `ALTER TABLE t ADD TEMPORARY PARTITION tp VALUES ABOVE (1)`,
			"ADD TEMPORARY PARTITION tp VALUES", 1, 49, "expected LESS THAN"},
		{"PARTITION given twice", `CREATE ROUTINE LOAD j ON t PARTITION(p1), PARTITION(p2) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			"PARTITION", 1, 43, "given twice"},
		{"strip_outer_array not a bool", `CREATE ROUTINE LOAD j ON t PROPERTIES ("strip_outer_array" = "yes") FROM KAFKA ()`, `PROPERTIES "strip_outer_array"`, 1, 62, "true or false"},
		{"PARTITION BY FROM TO INTERVAL", `CREATE TABLE t (k DATE) PARTITION BY RANGE(k) (FROM ("2000-01-01") TO ("2022-01-01") INTERVAL 1 YEAR)`,
			"PARTITION BY RANGE FROM ... TO ... INTERVAL", 1, 48, "batch partitions"},
		{"PARTITION BY NULL value", `CREATE TABLE t (k INT) PARTITION BY LIST(k) (PARTITION p VALUES IN ((NULL)))`,
			"PARTITION p", 1, 70, "NULL partition values"},
		{"PARTITION BY expression", `CREATE TABLE t (k DATETIME) PARTITION BY RANGE(date_trunc(k, 'day')) ()`,
			"PARTITION BY RANGE (date_trunc(...))", 1, 48, "partition expression"},
		{"PARTITION BY unknown column", `CREATE TABLE t (k INT) PARTITION BY RANGE(x) ()`,
			"PARTITION BY RANGE", 1, 43, `unknown column "x"`},
		{"LIST partition with LESS THAN", `CREATE TABLE t (k INT) PARTITION BY LIST(k) (PARTITION p VALUES LESS THAN ("1"))`,
			"PARTITION p VALUES LESS THAN", 1, 65, "VALUES IN"},
		{"exec_mem_limit", `CREATE ROUTINE LOAD j ON t PROPERTIES ("exec_mem_limit" = "4294967296") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			`PROPERTIES "exec_mem_limit"`, 1, 40, "not supported by loadnode"},
		{"Doris docs: FILE: values", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x",
       "property.security.protocol" = "ssl",
       "property.ssl.ca.location" = "FILE:ca.pem")`,
			`FROM KAFKA "property.ssl.ca.location"`, 3, 37, "CREATE FILE"},
		{"unknown kinesis property", `CREATE ROUTINE LOAD j ON t FROM KINESIS ("stream" = "s")`, `FROM KINESIS "stream"`, 1, 42, "not supported by loadnode"},
		{"kinesis without stream", `CREATE ROUTINE LOAD j ON t FROM KINESIS ("aws.region" = "us-east-1")`, "FROM KINESIS", 1, 33, "kinesis_stream is required"},
		{"kinesis positions without shards", `CREATE ROUTINE LOAD j ON t FROM KINESIS ("kinesis_stream" = "s", "kinesis_positions" = "LATEST")`, `FROM KINESIS "kinesis_positions"`, 1, 66, "requires kinesis_shards"},
		{"kinesis bad position", `CREATE ROUTINE LOAD j ON t FROM KINESIS ("kinesis_stream" = "s", "kinesis_shards" = "shardId-000000000000", "kinesis_positions" = "OFFSET_END")`, `FROM KINESIS "kinesis_positions"`, 1, 131, "TRIM_HORIZON"},
		{"alter from kinesis", `ALTER ROUTINE LOAD FOR j FROM KINESIS ("kinesis_stream" = "s")`, "FROM KINESIS", 1, 31, "not supported in ALTER"},
		{"FROM other", `CREATE ROUTINE LOAD j ON t FROM PULSAR ()`, "FROM PULSAR", 1, 33, "unknown data source"},
		{"unknown kafka property", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_brokers" = "b:1")`, `FROM KAFKA "kafka_brokers"`, 1, 40, "not supported by loadnode"},
		{"offsets without partitions", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_offsets" = "1")`,
			`FROM KAFKA "kafka_offsets"`, 1, 90, "requires kafka_partitions"},
		{"offsets count", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "0,1", "kafka_offsets" = "1")`,
			`FROM KAFKA "kafka_offsets"`, 1, 136, "1 offsets for 2 partitions"},
		{"bad offset", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "0", "kafka_offsets" = "latest")`,
			`FROM KAFKA "kafka_offsets"`, 1, 134, "OFFSET_BEGINNING"},
		{"bad partitions", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "0,-1")`,
			`FROM KAFKA "kafka_partitions"`, 1, 111, "partition numbers"},
		{"duplicate partition", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "1,1")`,
			`FROM KAFKA "kafka_partitions"`, 1, 111, "twice"},
		{"missing topic", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1")`, "FROM KAFKA", 1, 33, "kafka_topic is required"},
		{"missing brokers", `CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_topic" = "x")`, "FROM KAFKA", 1, 33, "kafka_broker_list is required"},
		{"missing FROM", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_rows" = "10")`, "FROM", 1, 64, "expected FROM KAFKA"},
		{"bad number", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_rows" = "ten") FROM KAFKA ()`, `PROPERTIES "max_batch_rows"`, 1, 59, "positive integer"},
		{"zero rows", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_rows" = "0") FROM KAFKA ()`, `PROPERTIES "max_batch_rows"`, 1, 59, "positive integer"},
		{"zero concurrency", `CREATE ROUTINE LOAD j ON t PROPERTIES ("desired_concurrent_number" = "0") FROM KAFKA ()`, `PROPERTIES "desired_concurrent_number"`, 1, 70, "positive integer"},
		{"negative errors", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_error_number" = "-1") FROM KAFKA ()`, `PROPERTIES "max_error_number"`, 1, 61, ">= 0"},
		{"zero interval", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_interval" = "0") FROM KAFKA ()`, `PROPERTIES "max_batch_interval"`, 1, 63, "positive"},
		{"negative duration", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_interval" = "-5s") FROM KAFKA ()`, `PROPERTIES "max_batch_interval"`, 1, 63, "positive"},
		{"bad size", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_size" = "1.5GB") FROM KAFKA ()`, `PROPERTIES "max_batch_size"`, 1, 59, "64MiB"},
		{"bad format", `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "parquet") FROM KAFKA ()`, `PROPERTIES "format"`, 1, 51, "hive_text, json, avro or protobuf"},
		{"bad jsonpaths", `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "jsonpaths" = "$.a") FROM KAFKA ()`, `PROPERTIES "jsonpaths"`, 1, 73, "JSON array"},
		{"separator with avro", `CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY "," PROPERTIES ("format" = "avro") FROM KAFKA ()`, "COLUMNS TERMINATED BY", 1, 50, "only with format csv or json"},
		{"empty separator", `CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY "" FROM KAFKA ()`, "COLUMNS TERMINATED BY", 1, 50, "empty"},
		{"duplicate property", `CREATE ROUTINE LOAD j ON t PROPERTIES ("max_batch_rows" = "1", "MAX_BATCH_ROWS" = "2") FROM KAFKA ()`, `PROPERTIES "MAX_BATCH_ROWS"`, 1, 64, "given twice"},
		// Doris: "partial_update_new_key_behavior can only be set when partial update is enabled".
		{"new key behavior without partial_columns", `CREATE ROUTINE LOAD j ON t PROPERTIES ("partial_update_new_key_behavior" = "APPEND") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			`PROPERTIES "partial_update_new_key_behavior"`, 1, 40, "only be set when partial update is enabled"},
		{"new key behavior with partial_columns false", `CREATE ROUTINE LOAD j ON t PROPERTIES ("partial_update_new_key_behavior" = "ERROR", "partial_columns" = "false") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`,
			`PROPERTIES "partial_update_new_key_behavior"`, 1, 40, "only be set when partial update is enabled"},
		{"ROWS TERMINATED BY", `CREATE ROUTINE LOAD j ON t ROWS TERMINATED BY "\n" FROM KAFKA ()`, "ROWS TERMINATED BY", 1, 28, "row separator"},
		{"doc typo: missing comma", `CREATE ROUTINE LOAD j ON t PROPERTIES ("json_root" = "$.RECORDS"
       "strip_outer_array" = "true") FROM KAFKA ()`, "PROPERTIES", 2, 8, `expected ")"`},

		// ALTER
		{"alter format", `ALTER ROUTINE LOAD FOR j PROPERTIES ("format" = "csv")`, `PROPERTIES "format"`, 1, 38, "cannot be altered"},
		{"alter partitions alone", `ALTER ROUTINE LOAD FOR j FROM KAFKA ("kafka_partitions" = "0,1")`, `FROM KAFKA "kafka_partitions"`, 1, 38, "cannot change the partitions"},
		{"alter nothing", `ALTER ROUTINE LOAD FOR j;`, "ALTER ROUTINE LOAD", 1, 25, "expected ON, COLUMNS, WHERE, DELETE ON, ORDER BY, PROPERTIES"},
		{"Doris suites: alter PRECEDING FILTER", `ALTER ROUTINE LOAD FOR j PRECEDING FILTER id > 8`, "PRECEDING FILTER", 1, 26, "filtering"},
		{"alter PARTITION", `ALTER ROUTINE LOAD FOR j PARTITION(p1)`, "PARTITION", 1, 26, "cannot be altered"},
		{"alter COLUMNS twice", `ALTER ROUTINE LOAD FOR j COLUMNS(a), COLUMNS(b)`, "COLUMNS", 1, 38, "given twice"},
		{"alter fill_missing_columns", `ALTER ROUTINE LOAD FOR j PROPERTIES ("fill_missing_columns" = "true")`, `PROPERTIES "fill_missing_columns"`, 1, 38, "cannot be altered"},
		{"alter group.id", `ALTER ROUTINE LOAD FOR j FROM KAFKA ("property.group.id" = "g2")`, `FROM KAFKA "property.group.id"`, 1, 38, "cannot be altered"},
		{"alter unsupported property", `ALTER ROUTINE LOAD FOR j PROPERTIES ("send_batch_parallelism" = "2")`, `PROPERTIES "send_batch_parallelism"`, 1, 38, "not supported by loadnode"},
		{"alter trim_double_quotes", `ALTER ROUTINE LOAD FOR j PROPERTIES ("trim_double_quotes" = "true")`, `PROPERTIES "trim_double_quotes"`, 1, 38, "cannot be altered"},
		{"bad load_to_single_tablet", `CREATE ROUTINE LOAD j ON t PROPERTIES ("load_to_single_tablet" = "yes") FROM KAFKA ()`, `PROPERTIES "load_to_single_tablet"`, 1, 66, "true or false"},
		{"bad skip_lines", `CREATE ROUTINE LOAD j ON t PROPERTIES ("skip_lines" = "-1") FROM KAFKA ()`, `PROPERTIES "skip_lines"`, 1, 55, "integer >= 0"},

		// job commands
		{"stop all", `STOP ALL ROUTINE LOAD`, "STOP ALL", 1, 6, "not supported"},
		{"pause without name", `PAUSE ROUTINE LOAD`, "PAUSE ROUTINE LOAD", 1, 19, "expected FOR"},
		{"pause all for", `PAUSE ALL ROUTINE LOAD FOR j`, "PAUSE ALL ROUTINE LOAD", 1, 24, "ALL names no job"},
		{"show task without where", `SHOW ROUTINE LOAD TASK`, "SHOW ROUTINE LOAD TASK", 1, 23, "expected WHERE"},
		{"show task other column", `SHOW ROUTINE LOAD TASK WHERE State = "RUNNING"`, "WHERE", 1, 30, "only JobName"},
		{"show task unquoted name", `SHOW ROUTINE LOAD TASK WHERE JobName = test1`, "WHERE", 1, 40, "as a \"string\""},
		{"show all task", `SHOW ALL ROUTINE LOAD TASK WHERE JobName = "x"`, "SHOW ALL ROUTINE LOAD TASK", 1, 23, "ALL not supported"},
		{"show create without for", `SHOW CREATE ROUTINE LOAD`, "SHOW CREATE ROUTINE LOAD", 1, 25, "expected FOR"},
		{"show like no pattern", `SHOW ROUTINE LOAD LIKE test`, "SHOW ROUTINE LOAD LIKE", 1, 24, "expected a pattern string"},
		{"show order by no column", `SHOW ROUTINE LOAD ORDER BY Nope`, "SHOW ROUTINE LOAD ORDER BY", 1, 28, "no column \"Nope\""},
		{"show limit no number", `SHOW ROUTINE LOAD LIMIT x`, "SHOW ROUTINE LOAD LIMIT", 1, 25, "expected a number of rows"},
		{"show task neither", `SHOW ROUTINE LOAD TASK ORDER BY Name`, "SHOW ROUTINE LOAD TASK", 1, 24, "expected WHERE JobName"},
		{"show like then more", `SHOW ROUTINE LOAD LIKE "a%" FOR j`, "", 1, 29, "unexpected FOR"},
		{"show create view", `SHOW CREATE VIEW t`, "SHOW CREATE ROUTINE LOAD", 1, 13, "expected ROUTINE"},

		// CREATE TABLE: Doris docs statements loadnode refuses
		{"Doris docs: UNIQUE KEY", `CREATE TABLE example_db.table_hash
(
    k1 BIGINT,
    v1 VARCHAR(2048),
    v2 SMALLINT
)
UNIQUE KEY(k1, k2)
DISTRIBUTED BY HASH (k1, k2) BUCKETS 32
PROPERTIES("storage_medium" = "SSD");`, "UNIQUE KEY", 7, 16, `unknown column "k2"`},
		{"Doris docs: HLL", `CREATE TABLE example_db.example_table (k1 TINYINT, v1 HLL HLL_UNION) ENGINE=olap AGGREGATE KEY(k1) DISTRIBUTED BY HASH(k1) BUCKETS 32`,
			`column "v1"`, 1, 55, "type HLL not supported"},
		{"Doris docs: HLL aggregation", `CREATE TABLE t (k1 TINYINT, v1 BIGINT BITMAP_UNION) AGGREGATE KEY(k1)`,
			`column "v1" BITMAP_UNION`, 1, 39, "not supported by loadnode"},
		{"sequence type of a DUPLICATE table", `CREATE TABLE t (k1 INT, v INT) DUPLICATE KEY(k1) PROPERTIES ("function_column.sequence_type" = "int")`,
			`PROPERTIES "function_column.sequence_type"`, 1, 62, "needs a UNIQUE KEY table"},
		{"sequence type VARCHAR", `CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1) PROPERTIES ("function_column.sequence_type" = "varchar(10)")`,
			`PROPERTIES "function_column.sequence_type"`, 1, 93, "want an integer type, DATE or DATETIME"},
		{"sequence type and column", `CREATE TABLE t (k1 INT, v INT) UNIQUE KEY(k1) PROPERTIES ("function_column.sequence_col" = "v", "function_column.sequence_type" = "int")`,
			`PROPERTIES "function_column.sequence_type"`, 1, 97, "not both"},
		{"Doris docs: PARTITION BY RANGE", `CREATE TABLE example_db.dynamic_partition
(
    k1 DATE,
    k2 INT
)
DUPLICATE KEY(k1, k2)
PARTITION BY RANGE (k1) ()
DISTRIBUTED BY HASH(k2) BUCKETS 32
PROPERTIES("dynamic_partition.time_unit" = "DAY");`, `PROPERTIES "dynamic_partition.time_unit"`, 9, 12, "not supported by loadnode"},
		{"Doris docs: dynamic partition property", `CREATE TABLE t (k1 DATE) PROPERTIES ("replication_num" = "1", "dynamic_partition.enable" = "true")`,
			`PROPERTIES "dynamic_partition.enable"`, 1, 63, "not supported by loadnode"},
		{"Doris docs: ROLLUP", `CREATE TABLE t (event_day DATE, siteid INT) DUPLICATE KEY(event_day) DISTRIBUTED BY HASH(siteid) BUCKETS 10 ROLLUP (r1(event_day,siteid))`,
			"ROLLUP", 1, 109, "materialized views"},
		{"wide DECIMAL", `CREATE TABLE t (k DECIMAL(39, 9))`, `column "k"`, 1, 19, "precision 39: want 1..38"},
		{"NOT NULL DEFAULT NULL", `CREATE TABLE t (k INT NOT NULL DEFAULT NULL)`, `column "k" DEFAULT NULL`, 1, 40, "cannot default to NULL"},
		{"bad DEFAULT", `CREATE TABLE t (k TINYINT DEFAULT "300")`, `column "k" DEFAULT`, 1, 17, "out of range for TINYINT"},
		{"long CHAR DEFAULT", `CREATE TABLE t (k CHAR(2) DEFAULT "abc")`, `column "k" DEFAULT`, 1, 17, "longer than CHAR(2)"},
		{"ARRAY", `CREATE TABLE t (k ARRAY<INT>)`, `column "k"`, 1, 19, "type ARRAY not supported"},
		{"engine", `CREATE TABLE t (k INT) ENGINE=mysql`, "ENGINE=mysql", 1, 31, "only OLAP"},
		{"unknown key column", `CREATE TABLE t (k INT) DUPLICATE KEY(x)`, "DUPLICATE KEY", 1, 38, `unknown column "x"`},
		{"unknown hash column", `CREATE TABLE t (k INT) DISTRIBUTED BY HASH(x) BUCKETS 1`, "DISTRIBUTED BY HASH", 1, 44, `unknown column "x"`},
		{"bad buckets", `CREATE TABLE t (k INT) DISTRIBUTED BY RANDOM BUCKETS 0`, "BUCKETS", 1, 54, "positive"},
		{"type params", `CREATE TABLE t (k DOUBLE(10))`, `column "k"`, 1, 19, "takes no parameters"},
		{"ctas", `CREATE TABLE t AS SELECT * FROM u`, "CREATE TABLE AS SELECT", 1, 16, "not supported"},
		{"no columns", `CREATE TABLE t ()`, "CREATE TABLE", 1, 17, "expected a column name"},
		{"only a comma", `CREATE TABLE t (,)`, "CREATE TABLE", 1, 17, "expected a column name"},
		{"two trailing commas", `CREATE TABLE t (a INT,,)`, "CREATE TABLE", 1, 23, "expected a column name"},
		{"auto increment", "CREATE TABLE t (id BIGINT AUTO_INCREMENT)", `column "id" AUTO_INCREMENT`, 1, 27, "not supported"},

		// lexing and statements
		{"empty", "  -- nothing\n", "", 2, 1, "empty statement"},
		{"two statements", "SHOW ROUTINE LOAD; SHOW ROUTINE LOAD", "", 1, 20, "one statement at a time"},
		{"unterminated string", `SHOW ROUTINE LOAD FOR 'x`, "", 1, 23, "unterminated string"},
		{"unterminated comment", "SHOW /* x", "", 1, 6, "unterminated comment"},
		{"unterminated identifier", "SHOW ROUTINE LOAD FOR `x", "", 1, 23, "unterminated"},
		{"select", "SELECT 1", "SELECT", 1, 1, "statement not supported"},
		{"drop", "DROP VIEW v", "DROP VIEW", 1, 6, "statement not supported"},
		{"create database", "CREATE DATABASE d", "CREATE DATABASE", 1, 8, "statement not supported"},
		{"symbol", "; SHOW", "", 1, 1, "expected a statement"},
		{"unicode column", "SELECT é", "SELECT", 1, 1, "statement not supported"},
		{"col counts characters", "PAUSE ROUTINE LOAD FOR /*é*/ ", "PAUSE ROUTINE LOAD", 1, 30, "job name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := Parse(tt.sql)
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", st)
			}
			if st != nil {
				t.Errorf("statement and error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if e.Clause != tt.clause || e.Line != tt.line || e.Col != tt.col || !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("got  %q\nwant clause %q at %d:%d with %q", err, tt.clause, tt.line, tt.col, tt.msg)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	e := &Error{Line: 1, Col: 48, Clause: `PROPERTIES "strict_mode"`, Msg: "not supported by loadnode"}
	if got, want := e.Error(), `doris: line 1 col 48: PROPERTIES "strict_mode": not supported by loadnode`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	e = &Error{Line: 2, Col: 1, Msg: "empty statement"}
	if got, want := e.Error(), `doris: line 2 col 1: empty statement`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLexStrings(t *testing.T) {
	tests := map[string]string{
		`'a''b'`:       "a'b",
		`"a""b"`:       `a"b`,
		`'a\'b\\c'`:    `a'b\c`,
		`'\n\t\r\0\Z'`: "\n\t\r\x00\x1a",
		`'\x01\%'`:     `\x01\%`,
		`"é"`:          "é",
	}
	for src, want := range tests {
		toks, err := lex(src)
		if err != nil {
			t.Fatalf("lex(%s): %v", src, err)
		}
		if toks[0].kind != tokString || toks[0].text != want {
			t.Errorf("lex(%s) = %q, want %q", src, toks[0].text, want)
		}
	}
}

func mustParse(t *testing.T, sql string) *Statement {
	t.Helper()
	st, err := Parse(sql)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return st
}

// setFields counts the statement fields set.
func setFields(st *Statement) int {
	n := 0
	for _, set := range []bool{st.CreateTable != nil, st.CreateRoutineLoad != nil, st.Pause != nil,
		st.Resume != nil, st.Stop != nil, st.Alter != nil, st.Show != nil, st.AlterTable != nil,
		st.Truncate != nil, st.Insert != nil, st.ShowTables, st.Describe != nil, st.DropTable != nil, st.ShowCreateTable != nil, st.Sync} {
		if set {
			n++
		}
	}
	return n
}

func TestParseColumnsMappingAndWhere(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD example_db.test1 ON example_tbl
   COLUMNS TERMINATED BY ",",
   COLUMNS(k1, k2, tmp, v3 = k1 * 100, v4 = concat(tmp, ',', "x)"), v5 = if(k2 > 1, (k1 + 1) * 2, NULL)),
   WHERE k1 > 100 and k2 in (1, 2)
   PROPERTIES ("desired_concurrent_number"="3", "json_root" = "$.data", "empty_field_as_null" = "true")
   FROM KAFKA ("kafka_broker_list" = "broker1:9092", "kafka_topic" = "my_topic")`)
	spec := st.CreateRoutineLoad
	want := []string{"k1", "k2", "tmp", "v3 = k1 * 100", `v4 = concat(tmp, ',', "x)")`, "v5 = if(k2 > 1, (k1 + 1) * 2, NULL)"}
	if !slices.Equal(spec.ColumnsMapping, want) {
		t.Errorf("columns_mapping = %q\nwant %q", spec.ColumnsMapping, want)
	}
	if spec.Where != "k1 > 100 and k2 in (1, 2)" {
		t.Errorf("where = %q", spec.Where)
	}
	if spec.JsonRoot != "$.data" || !spec.EmptyFieldAsNull {
		t.Errorf("json_root %q, empty_field_as_null %v", spec.JsonRoot, spec.EmptyFieldAsNull)
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j ON t COLUMNS(a, b = (a + 1) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`); err == nil {
		t.Error("unbalanced expression accepted")
	}
}

func TestOffsetsByTime(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD j ON t PROPERTIES ("timezone" = "Asia/Shanghai")
	FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "0,1",
	"kafka_offsets" = "2021-05-22 11:00:00, OFFSET_END", "property.kafka_default_offsets" = "1970-01-01 08:00:01")`)
	k := st.CreateRoutineLoad.GetKafka()
	// 2021-05-22 11:00:00 +08:00 is 03:00:00 UTC.
	if got := k.GetOffsets()[0]; got != "TIME:1621652400000" {
		t.Errorf("offset 0 = %q", got)
	}
	if got := k.GetOffsets()[1]; got != "OFFSET_END" {
		t.Errorf("offset 1 = %q", got)
	}
	if got := k.GetDefaultOffset(); got != "TIME:1000" {
		t.Errorf("default offset = %q", got)
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j ON t FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x", "kafka_partitions" = "0", "kafka_offsets" = "2021-13-22 11:00:00")`); err == nil {
		t.Error("a bad time was accepted")
	}
}

func TestParseTruncate(t *testing.T) {
	for _, sql := range []string{"TRUNCATE TABLE db.t", "truncate table t;", "TRUNCATE t"} {
		st := mustParse(t, sql)
		if st.Truncate == nil || st.Truncate.Name != "t" {
			t.Errorf("%s: %+v", sql, st)
		}
	}
	if _, err := Parse("TRUNCATE TABLE t PARTITION (p1)"); err == nil {
		t.Error("TRUNCATE ... PARTITION accepted")
	}
}

func TestParseTableStatements(t *testing.T) {
	for _, tc := range []struct {
		sql   string
		check func(*Statement) bool
	}{
		{"SHOW TABLES", func(s *Statement) bool { return s.ShowTables }},
		{"show tables;", func(s *Statement) bool { return s.ShowTables }},
		{"DESC t", func(s *Statement) bool { return s.Describe != nil && s.Describe.Name == "t" }},
		{"DESCRIBE db.`t 1`", func(s *Statement) bool { return s.Describe != nil && s.Describe.Name == "t 1" && s.DB == "db" }},
		{"DROP TABLE t", func(s *Statement) bool { return s.DropTable != nil && s.DropTable.Name == "t" && !s.IfExists }},
		{"drop table if exists db.t;", func(s *Statement) bool {
			return s.DropTable != nil && s.DropTable.Name == "t" && s.IfExists && s.DB == "db"
		}},
	} {
		st, err := Parse(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if !tc.check(st) {
			t.Fatalf("%s: %+v", tc.sql, st)
		}
	}
	for sql, want := range map[string]string{
		"SHOW TABLES FROM db": "SHOW TABLES FROM",
		"DROP TABLE t FORCE":  "DROP TABLE FORCE",
		"DROP TABLE IF t":     "DROP TABLE IF EXISTS",
		"DROP DATABASE d":     "DROP DATABASE",
		"DESC t c":            "DESC",
	} {
		_, err := Parse(sql)
		var de *Error
		if !errors.As(err, &de) || de.Clause != want {
			t.Fatalf("%s: %v, want clause %q", sql, err, want)
		}
	}
}

// TestParseMultiTable: CREATE ROUTINE LOAD without ON (Doris's docs
// example) is a multi-table load; COLUMNS with it is refused by name.
func TestParseMultiTable(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD example_db.test1
   PROPERTIES
   (
       "desired_concurrent_number"="3"
   )
   FROM KAFKA ("kafka_broker_list" = "broker1:9092", "kafka_topic" = "my_topic");`)
	if !st.MultiTable || st.CreateRoutineLoad == nil || st.CreateRoutineLoad.Table != nil || st.DB != "example_db" {
		t.Fatalf("Parse = %+v, want a multi-table CREATE ROUTINE LOAD in example_db", st)
	}
	if st.CreateRoutineLoad.GetKafka().GetTopic() != "my_topic" || st.CreateRoutineLoad.GetDesiredConcurrentNumber() != 3 {
		t.Errorf("spec = %v", st.CreateRoutineLoad)
	}
	_, err := Parse(`CREATE ROUTINE LOAD j COLUMNS(a, b) FROM KAFKA ("kafka_broker_list" = "b:9092", "kafka_topic" = "t")`)
	if err == nil || !strings.Contains(err.Error(), "multi-table") {
		t.Fatalf("multi-table with COLUMNS: %v, want a refusal", err)
	}
}

// TestParsePartitions: PARTITION BY RANGE and LIST become the table's
// partitioning (table.NewSchema checks the values; a row outside every
// partition is an error row), a routine load's PARTITION (...) its
// target_partitions, and strip_outer_array the spec's.
func TestParsePartitions(t *testing.T) {
	v := func(vals ...string) *api.PartitionBound {
		b := &api.PartitionBound{}
		for _, x := range vals {
			if x == "MAX" {
				b.Values = append(b.Values, &api.PartitionBoundValue{Max: true})
			} else {
				b.Values = append(b.Values, &api.PartitionBoundValue{Text: x})
			}
		}
		return b
	}
	tests := []struct {
		name string
		sql  string
		want *api.TablePartitioning
	}{
		// corpus load/test_stream_load_strict_mode_and_filter_ratio__sql_no_partition_strict0 (ddl.sql)
		{"LESS THAN", `create table test_stream_load_strict_mode_and_filter_ratio (
  id int,
  name string
) PARTITION BY RANGE(` + "`id`" + `)
  (
      PARTITION ` + "`p0`" + ` VALUES LESS THAN ("60"),
      PARTITION ` + "`p1`" + ` VALUES LESS THAN ("80")
  )
properties (
  'replication_num' = '1'
);`, &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{
			{Name: "p0", Upper: v("60")}, {Name: "p1", Upper: v("80")}}}},
		// corpus load/test_stream_load__sql (ddl.sql, abridged)
		{"fixed ranges and MAXVALUE", `CREATE TABLE IF NOT EXISTS test_stream_load_strict (
    ` + "`k1`" + ` bigint(20) NULL,
    ` + "`k2`" + ` bigint(20) NULL,
    ` + "`v1`" + ` tinyint(4) SUM NULL
) ENGINE=OLAP
AGGREGATE KEY(` + "`k1`, `k2`" + `)
COMMENT 'OLAP'
PARTITION BY RANGE(` + "`k1`" + `)
(PARTITION partition_a VALUES [("-9223372036854775808"), ("100000")),
PARTITION partition_b VALUES [("100000"), ("1000000000")),
PARTITION partition_c VALUES [("1000000000"), ("10000000000")),
PARTITION partition_d VALUES [("10000000000"), (MAXVALUE)))
DISTRIBUTED BY HASH(` + "`k1`, `k2`" + `) BUCKETS 3
PROPERTIES ("replication_allocation" = "tag.location.default: 1");`,
			&api.TablePartitioning{Columns: []string{"k1"}, Partitions: []*api.TablePartition{
				{Name: "partition_a", Lower: v("-9223372036854775808"), Upper: v("100000")},
				{Name: "partition_b", Lower: v("100000"), Upper: v("1000000000")},
				{Name: "partition_c", Lower: v("1000000000"), Upper: v("10000000000")},
				{Name: "partition_d", Lower: v("10000000000"), Upper: v("MAX")}}}},
		// corpus load/load_nullable_to_not_nullable__sql (ddl.sql, abridged)
		{"LESS THAN MAXVALUE", `CREATE TABLE t (k1 int(32) NOT NULL, k2 smallint NOT NULL, k8 double max NOT NULL)
AGGREGATE KEY(k1,k2)
PARTITION BY RANGE(k2) (
    PARTITION partition_a VALUES LESS THAN MAXVALUE
)
DISTRIBUTED BY HASH(k1, k2) BUCKETS 3`,
			&api.TablePartitioning{Columns: []string{"k2"}, Partitions: []*api.TablePartition{{Name: "partition_a", Upper: v("MAX")}}}},
		{"multi-column LESS THAN, IF NOT EXISTS, partition properties", `CREATE TABLE t (d DATE, id INT) DUPLICATE KEY(d, id)
PARTITION BY RANGE(d, id) (
    PARTITION p1 VALUES LESS THAN ("2017-02-01", "1000") ("replication_num" = "1"),
    PARTITION IF NOT EXISTS p2 VALUES LESS THAN ("2017-03-01", MAXVALUE),
    PARTITION p3 VALUES LESS THAN (MAXVALUE)
)`,
			&api.TablePartitioning{Columns: []string{"d", "id"}, Partitions: []*api.TablePartition{
				{Name: "p1", Upper: v("2017-02-01", "1000")}, {Name: "p2", Upper: v("2017-03-01", "MAX")}, {Name: "p3", Upper: v("MAX")}}}},
		{"LIST, multi-column LIST", `CREATE TABLE t (id INT, city VARCHAR(20)) DUPLICATE KEY(id, city)
PARTITION BY LIST(id, city) (
    PARTITION p1 VALUES IN (("1", "Beijing"), ("1", "Shanghai")),
    PARTITION p2 VALUES IN ((-2, "Chengdu"))
)`,
			&api.TablePartitioning{List: true, Columns: []string{"id", "city"}, Partitions: []*api.TablePartition{
				{Name: "p1", In: []*api.PartitionBound{v("1", "Beijing"), v("1", "Shanghai")}},
				{Name: "p2", In: []*api.PartitionBound{v("-2", "Chengdu")}}}}},
		{"LIST of single values, no partition at all", `CREATE TABLE t (city VARCHAR(20)) PARTITION BY LIST(CITY) (PARTITION p_east VALUES IN ("Beijing", "Shanghai"))`,
			&api.TablePartitioning{List: true, Columns: []string{"city"}, Partitions: []*api.TablePartition{
				{Name: "p_east", In: []*api.PartitionBound{v("Beijing"), v("Shanghai")}}}}},
		{"no partitions", `CREATE TABLE t (k DATE) PARTITION BY RANGE(k) ()`, &api.TablePartitioning{Columns: []string{"k"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mustParse(t, tt.sql)
			if !proto.Equal(st.CreateTable.GetPartitioning(), tt.want) {
				t.Fatalf("partitioning:\n got %v\nwant %v", st.CreateTable.GetPartitioning(), tt.want)
			}
			for _, ig := range st.Ignored {
				if strings.HasPrefix(ig, "PARTITION BY") {
					t.Errorf("listed as ignored: %q", ig)
				}
			}
		})
	}
	// AUTO PARTITION makes the partitions rows need: ignored.
	st := mustParse(t, `CREATE TABLE t (k DATETIME NOT NULL) AUTO PARTITION BY RANGE (date_trunc(k, 'month')) ()`)
	if st.CreateTable.GetPartitioning() != nil || !slices.ContainsFunc(st.Ignored, func(s string) bool { return strings.HasPrefix(s, "AUTO PARTITION BY RANGE") }) {
		t.Errorf("AUTO PARTITION: %v, ignored %q", st.CreateTable.GetPartitioning(), st.Ignored)
	}

	// Doris docs (CREATE ROUTINE LOAD, example 5): PARTITION names the
	// partitions the job loads into.
	st = mustParse(t, `CREATE ROUTINE LOAD demo.kafka_job05 ON routine_test05
        COLUMNS TERMINATED BY ",",
        COLUMNS(id, name, age, date),
        PARTITION(p20240205)
        FROM KAFKA ("kafka_broker_list" = "10.16.10.6:9092", "kafka_topic" = "routineLoad05");`)
	if got := st.CreateRoutineLoad.GetTargetPartitions(); !slices.Equal(got, []string{"p20240205"}) {
		t.Errorf("PARTITION(p20240205): target_partitions %q", got)
	}
	st = mustParse(t, `CREATE ROUTINE LOAD j ON t PARTITION p1 PROPERTIES ("format" = "json", "strip_outer_array" = "true", "json_root" = "$.data") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	if s := st.CreateRoutineLoad; !slices.Equal(s.GetTargetPartitions(), []string{"p1"}) || !s.GetStripOuterArray() || s.GetJsonRoot() != "$.data" {
		t.Errorf("PARTITION p1, strip_outer_array: %v", s)
	}
	spec := proto.Clone(st.CreateRoutineLoad).(*api.JobSpec)
	config.ApplyDefaults(spec)
	if !strings.Contains(CreateStatement(spec), "PARTITION (`p1`)") || !strings.Contains(CreateStatement(spec), `"strip_outer_array" = "true"`) {
		t.Errorf("CreateStatement:\n%s", CreateStatement(spec))
	}
	back := mustParse(t, CreateStatement(spec))
	if !slices.Equal(back.CreateRoutineLoad.GetTargetPartitions(), []string{"p1"}) || !back.CreateRoutineLoad.GetStripOuterArray() {
		t.Errorf("CreateStatement does not read back: %v", back.CreateRoutineLoad)
	}
	// ALTER ... ON moves the job to another table (test_routine_load_alter):
	// the node fills its columns from the catalog.
	st = mustParse(t, `ALTER ROUTINE LOAD FOR db1.j ON dst`)
	if a := st.Alter; !slices.Equal(a.Changed, []string{"table"}) || !slices.Equal(a.Request.GetUpdateMask(), []string{"table"}) ||
		a.Request.GetSpec().GetTable().GetName() != "dst" || a.Request.GetSpec().GetTable().GetDatabase() != "db1" {
		t.Errorf("ALTER ... ON: changed %q, request %v", a.Changed, a.Request)
	}
	st = mustParse(t, `ALTER ROUTINE LOAD FOR j ON db2.dst COLUMNS(k, v) PROPERTIES ("max_batch_rows" = "300000")`)
	if a := st.Alter; !slices.Equal(a.Changed, []string{"max_batch_rows", "table", "columns_mapping"}) || a.Request.GetSpec().GetTable().GetDatabase() != "db2" {
		t.Errorf("ALTER ... ON with more: changed %q, request %v", a.Changed, a.Request)
	}
	// ALTER changes num_as_string, as Doris's suites do; not trim_double_quotes.
	st = mustParse(t, `ALTER ROUTINE LOAD FOR j PROPERTIES ("num_as_string" = "true")`)
	if a := st.Alter; !slices.Equal(a.Changed, []string{"num_as_string"}) || !slices.Equal(a.Request.GetUpdateMask(), []string{"num_as_string"}) || !a.Request.GetSpec().GetNumAsString() {
		t.Errorf("ALTER num_as_string: changed %q, request %v", a.Changed, a.Request)
	}
	if _, err := Parse(`ALTER ROUTINE LOAD FOR j PROPERTIES ("trim_double_quotes" = "true")`); err == nil || !strings.Contains(err.Error(), "cannot be altered") {
		t.Errorf("ALTER trim_double_quotes: %v", err)
	}
	// ALTER changes strip_outer_array, as Doris's.
	st = mustParse(t, `ALTER ROUTINE LOAD FOR j PROPERTIES ("strip_outer_array" = "true")`)
	if a := st.Alter; !slices.Equal(a.Changed, []string{"strip_outer_array"}) || !slices.Equal(a.Request.GetUpdateMask(), []string{"strip_outer_array"}) || !a.Request.GetSpec().GetStripOuterArray() {
		t.Errorf("ALTER strip_outer_array: changed %q, request %v", a.Changed, a.Request)
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j PARTITION (p1) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`); err == nil || !strings.Contains(err.Error(), "PARTITION") {
		t.Errorf("a multi-table load with PARTITION: %v", err)
	}
}

// TestLCTimeNamesProperty checks the routine load property lc_time_names:
// kept as written, an unknown locale refused by its name.
func TestLCTimeNamesProperty(t *testing.T) {
	st := mustParse(t, `CREATE ROUTINE LOAD j ON t COLUMNS(d, a = dayname(d)) PROPERTIES ("lc_time_names" = "fr_FR")
	FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	if got := st.CreateRoutineLoad.GetLcTimeNames(); got != "fr_FR" {
		t.Errorf("lc_time_names = %q, want fr_FR", got)
	}
	_, err := Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("lc_time_names" = "fr_XX") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	if err == nil || !strings.Contains(err.Error(), "fr_XX") {
		t.Errorf("lc_time_names fr_XX: %v, want an error naming it", err)
	}
}

// TestParseTemporaryPartitions: ALTER TABLE ADD and DROP TEMPORARY
// PARTITION, a routine load's TEMPORARY PARTITION (tp), which loads the
// temporary partition's catalog table, and SHOW CREATE ROUTINE LOAD's
// statement for it, which reads back.
func TestParseTemporaryPartitions(t *testing.T) {
	for sql, want := range map[string]*api.TablePartition{
		"ALTER TABLE test_temporary_partitions ADD TEMPORARY PARTITION test":                                                                                                {Name: "test"},
		`ALTER TABLE db.tbl1 ADD TEMPORARY PARTITION tp1 VALUES LESS THAN("2020-02-01") ("in_memory" = "true", "replication_num" = "1") DISTRIBUTED BY HASH(k1) BUCKETS 5;`: {Name: "tp1", Upper: &api.PartitionBound{Values: []*api.PartitionBoundValue{{Text: "2020-02-01"}}}},
		`ALTER TABLE tbl2 ADD TEMPORARY PARTITION tp1 VALUES [("2020-01-01"), ("2020-02-01"))`: {Name: "tp1",
			Lower: &api.PartitionBound{Values: []*api.PartitionBoundValue{{Text: "2020-01-01"}}}, Upper: &api.PartitionBound{Values: []*api.PartitionBoundValue{{Text: "2020-02-01"}}}},
		`ALTER TABLE tbl4 ADD TEMPORARY PARTITION tp1 VALUES IN ((1, "Beijing"), (1, "Shanghai"))`: {Name: "tp1", In: []*api.PartitionBound{
			{Values: []*api.PartitionBoundValue{{Text: "1"}, {Text: "Beijing"}}}, {Values: []*api.PartitionBoundValue{{Text: "1"}, {Text: "Shanghai"}}}}},
		`ALTER TABLE t ADD TEMPORARY PARTITION tp VALUES LESS THAN MAXVALUE`: {Name: "tp", Upper: &api.PartitionBound{Values: []*api.PartitionBoundValue{{Max: true}}}},
	} {
		st := mustParse(t, sql)
		if at := st.AlterTable; at == nil || !proto.Equal(at.AddTemporary, want) {
			t.Errorf("%s: %+v, want %v", sql, st.AlterTable, want)
		}
	}
	st := mustParse(t, "ALTER TABLE db.t DROP TEMPORARY PARTITION IF EXISTS tp1")
	if at := st.AlterTable; at == nil || at.Table != "t" || at.DB != "db" || at.DropTemporary != "tp1" || !st.IfExists || at.TemporaryTable("tp1") != "t#tp1" {
		t.Errorf("DROP TEMPORARY PARTITION: %+v", st.AlterTable)
	}
	st = mustParse(t, `CREATE ROUTINE LOAD j ON t TEMPORARY PARTITION (tp1) PROPERTIES ("format" = "json") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	if name := st.CreateRoutineLoad.GetTable().GetName(); name != "t#tp1" {
		t.Errorf("the job's table = %q, want t#tp1", name)
	}
	spec := proto.Clone(st.CreateRoutineLoad).(*api.JobSpec)
	config.ApplyDefaults(spec)
	cs := CreateStatement(spec)
	if !strings.Contains(cs, " ON `t`") || !strings.Contains(cs, "TEMPORARY PARTITION (`tp1`)") {
		t.Errorf("CreateStatement:\n%s", cs)
	}
	if back := mustParse(t, cs); back.CreateRoutineLoad.GetTable().GetName() != "t#tp1" {
		t.Errorf("CreateStatement reads back as table %q", back.CreateRoutineLoad.GetTable().GetName())
	}
	if got := mustParse(t, "INSERT INTO t TEMPORARY PARTITION (tp1) (a) VALUES (1)").Insert; got.GetTable() != "t#tp1" || len(got.GetColumns()) != 1 {
		t.Errorf("INSERT INTO ... TEMPORARY PARTITION: %v", got)
	}
	for sql, want := range map[string]string{
		"INSERT INTO t TEMPORARY PARTITION (tp1, tp2) VALUES (1)": "more than one temporary partition",
		"INSERT INTO t PARTITION (p1) VALUES (1)":                 "INSERT INTO ... PARTITION: not supported by loadnode",
	} {
		if _, err := Parse(sql); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", sql, err, want)
		}
	}
	if got := mustParse(t, `CREATE ROUTINE LOAD j ON t TEMPORARY PARTITION tp1 FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`).CreateRoutineLoad.GetTable().GetName(); got != "t#tp1" {
		t.Errorf("TEMPORARY PARTITION tp1 (no parentheses): table %q", got)
	}
}
