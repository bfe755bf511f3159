package doris

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// TestTableModels: UNIQUE KEY (with a sequence column) and AGGREGATE KEY
// (with aggregation types) become keyed table specs.
func TestTableModels(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want *api.TableSpec
	}{
		{`CREATE TABLE t (id INT NOT NULL, name VARCHAR(50), update_time BIGINT) UNIQUE KEY(ID)
			DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ("replication_num" = "1", "function_column.sequence_col" = "Update_Time",
			"enable_unique_key_merge_on_write" = "true")`,
			&api.TableSpec{Name: "t", Model: api.TableModel_UNIQUE, KeyColumns: []string{"id"}, SequenceColumn: "update_time", Columns: []*api.Column{
				{Name: "id", Type: api.ColumnType_INT32, NotNull: true}, {Name: "name", Type: api.ColumnType_VARCHAR, Length: 50},
				{Name: "update_time", Type: api.ColumnType_INT64}}}},
		{`CREATE TABLE table_range (k1 DATE, k2 INT, v1 VARCHAR(2048) REPLACE, v2 INT SUM DEFAULT "1", v3 BIGINT MAX, v4 BIGINT MIN,
			v5 STRING REPLACE_IF_NOT_NULL) AGGREGATE KEY(k1, k2)`,
			&api.TableSpec{Name: "table_range", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k1", "k2"}, Columns: []*api.Column{
				{Name: "k1", Type: api.ColumnType_DATE}, {Name: "k2", Type: api.ColumnType_INT32},
				{Name: "v1", Type: api.ColumnType_VARCHAR, Length: 2048, Aggregation: api.Aggregation_REPLACE},
				{Name: "v2", Type: api.ColumnType_INT32, DefaultValue: proto.String("1"), Aggregation: api.Aggregation_SUM},
				{Name: "v3", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MAX},
				{Name: "v4", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MIN},
				{Name: "v5", Type: api.ColumnType_STRING, Aggregation: api.Aggregation_REPLACE_IF_NOT_NULL}}}},
	} {
		st, err := Parse(c.sql)
		if err != nil {
			t.Errorf("Parse(%s): %v", c.sql, err)
			continue
		}
		if !proto.Equal(st.CreateTable, c.want) {
			t.Errorf("Parse(%s)\n got %v\nwant %v", c.sql, st.CreateTable, c.want)
		}
	}
}

// TestMergeTypes: WITH MERGE | DELETE, DELETE ON, ORDER BY and the partial
// update properties map onto the job spec.
func TestMergeTypes(t *testing.T) {
	st, err := Parse(`CREATE ROUTINE LOAD example_db.test1 ON example_tbl
   WITH MERGE
   COLUMNS(k1, k2, k3, v1, v2, v3),
   WHERE k1 > 100 and k2 like "%doris%",
   DELETE ON v3 >100,
   ORDER BY v2
   PROPERTIES ("desired_concurrent_number"="3", "partial_columns" = "true", "partial_update_new_key_behavior" = "error")
   FROM KAFKA ("kafka_broker_list" = "broker1:9092", "kafka_topic" = "my_topic");`)
	if err != nil {
		t.Fatal(err)
	}
	s := st.CreateRoutineLoad
	if s.GetMergeType() != api.MergeType_MERGE || s.GetDeleteOn() != "v3 >100" || s.GetSequenceColumn() != "v2" ||
		!s.GetPartialColumns() || s.GetPartialUpdateNewKeyBehavior() != "ERROR" || s.GetWhere() != `k1 > 100 and k2 like "%doris%"` {
		t.Errorf("spec = %v", s)
	}
	st, err = Parse(`CREATE ROUTINE LOAD j ON t WITH DELETE COLUMNS(k1) FROM KAFKA ("kafka_broker_list" = "b:9092", "kafka_topic" = "t")`)
	if err != nil || st.CreateRoutineLoad.GetMergeType() != api.MergeType_DELETE {
		t.Errorf("WITH DELETE: %v, %v", st, err)
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j ON t WITH UPSERT FROM KAFKA ("kafka_broker_list" = "b:9092", "kafka_topic" = "t")`); err == nil ||
		!strings.Contains(err.Error(), "unknown merge type") {
		t.Errorf("WITH UPSERT: %v", err)
	}
}

// TestInsert: INSERT INTO ... VALUES keeps each value as text, NULL as
// NULL, a sign with its number.
func TestInsert(t *testing.T) {
	st, err := Parse(`INSERT INTO db.t (id, name, score) VALUES (1, 'alice', -100), (2, NULL, +3.5), (3, "x", TRUE)`)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.TableInsertRequest{Table: "t", Columns: []string{"id", "name", "score"}, Rows: []*api.InsertRow{
		{Cells: []*api.InsertCell{{Text: "1"}, {Text: "alice"}, {Text: "-100"}}},
		{Cells: []*api.InsertCell{{Text: "2"}, {Null: true}, {Text: "3.5"}}},
		{Cells: []*api.InsertCell{{Text: "3"}, {Text: "x"}, {Text: "true"}}},
	}}
	if !proto.Equal(st.Insert, want) {
		t.Errorf("got %v\nwant %v", st.Insert, want)
	}
	if _, err := Parse(`INSERT INTO t SELECT * FROM u`); err == nil || !strings.Contains(err.Error(), "only VALUES") {
		t.Errorf("INSERT ... SELECT: %v", err)
	}
}

// TestAggregateWithoutKeyClause: a table without a KEY clause whose columns
// carry an aggregation is an AGGREGATE table keyed by the columns before the
// first aggregated one, as Doris infers it; without an aggregation it stays
// DUPLICATE.
func TestAggregateWithoutKeyClause(t *testing.T) {
	st, err := Parse(`CREATE TABLE IF NOT EXISTS t (id INT DEFAULT '10', city VARCHAR(32) DEFAULT '', code BIGINT SUM DEFAULT '0')
		DISTRIBUTED BY RANDOM BUCKETS 10 PROPERTIES("replication_num" = "1")`)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.TableSpec{Name: "t", Model: api.TableModel_AGGREGATE, KeyColumns: []string{"id", "city"}, RandomDistribution: true, Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT32, DefaultValue: proto.String("10")},
		{Name: "city", Type: api.ColumnType_VARCHAR, Length: 32, DefaultValue: proto.String("")},
		{Name: "code", Type: api.ColumnType_INT64, DefaultValue: proto.String("0"), Aggregation: api.Aggregation_SUM}}}
	if !proto.Equal(st.CreateTable, want) {
		t.Errorf("got %v\nwant %v", st.CreateTable, want)
	}
	// A later column without an aggregation is a value column without
	// one: the table is refused when it is made (table.NewSchema), as Doris
	// refuses it.
	st, err = Parse(`CREATE TABLE t (k INT, v BIGINT MAX, w INT) DISTRIBUTED BY HASH(k)`)
	if err != nil || st.CreateTable.GetModel() != api.TableModel_AGGREGATE || len(st.CreateTable.GetKeyColumns()) != 1 {
		t.Errorf("k, v MAX, w: %v, %v", st, err)
	}
	if _, err := Parse(`CREATE TABLE t (v BIGINT SUM, k INT)`); err == nil || !strings.Contains(err.Error(), "no key column") {
		t.Errorf("first column aggregated: %v", err)
	}
	st, err = Parse(`CREATE TABLE t (k INT, v BIGINT)`)
	if err != nil || st.CreateTable.GetModel() != api.TableModel_DUPLICATE || len(st.CreateTable.GetKeyColumns()) != 0 {
		t.Errorf("no aggregation: %v, %v", st, err)
	}
	// An explicit DUPLICATE KEY keeps the model: the aggregation is then
	// refused by table.NewSchema.
	st, err = Parse(`CREATE TABLE t (k INT, v BIGINT SUM) DUPLICATE KEY(k)`)
	if err != nil || st.CreateTable.GetModel() != api.TableModel_DUPLICATE {
		t.Errorf("DUPLICATE KEY with SUM: %v, %v", st, err)
	}
}

// TestLoadToSingleTablet: "load_to_single_tablet" = "true" is reported in
// Statement.LoadToSingleTablet (the caller checks the table is DISTRIBUTED
// BY RANDOM, as Doris does); "false" is the default; another value, or
// "true" in an ALTER, is refused by name.
func TestLoadToSingleTablet(t *testing.T) {
	const from = ` FROM KAFKA ("kafka_broker_list" = "b:9092", "kafka_topic" = "t")`
	for v, want := range map[string]bool{"true": true, "TRUE": true, "false": false} {
		st, err := Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("load_to_single_tablet" = "` + v + `")` + from)
		if err != nil || st.LoadToSingleTablet != want {
			t.Errorf("%s: %v, %v; want LoadToSingleTablet %v", v, st, err, want)
		}
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("load_to_single_tablet" = "yes")` + from); err == nil ||
		!strings.Contains(err.Error(), "load_to_single_tablet") {
		t.Errorf("yes: %v", err)
	}
	if _, err := Parse(`ALTER ROUTINE LOAD FOR j PROPERTIES ("load_to_single_tablet" = "true")`); err == nil ||
		!strings.Contains(err.Error(), "cannot be altered") {
		t.Errorf("ALTER true: %v", err)
	}
	if _, err := Parse(`ALTER ROUTINE LOAD FOR j PROPERTIES ("load_to_single_tablet" = "false")`); err != nil {
		t.Errorf("ALTER false: %v", err)
	}
}

// TestDefaultCurrentTimestamp: DEFAULT CURRENT_TIMESTAMP[(p)] on a DATETIME
// column makes it take the load time; on another type, or with a precision
// above the column's, it is refused as Doris refuses it.
func TestDefaultCurrentTimestamp(t *testing.T) {
	st, err := Parse(`CREATE TABLE t (id INT, dt_1 DATETIME DEFAULT CURRENT_TIMESTAMP, dt_3 DATETIMEV2(3) DEFAULT CURRENT_TIMESTAMP,
		dt_6 DATETIME(6) NULL DEFAULT CURRENT_TIMESTAMP(6) COMMENT 'x')`)
	if err != nil {
		t.Fatal(err)
	}
	want := []*api.Column{
		{Name: "id", Type: api.ColumnType_INT32},
		{Name: "dt_1", Type: api.ColumnType_DATETIME, DefaultCurrentTimestamp: true},
		{Name: "dt_3", Type: api.ColumnType_DATETIME, Precision: 3, DefaultCurrentTimestamp: true},
		{Name: "dt_6", Type: api.ColumnType_DATETIME, Precision: 6, DefaultCurrentTimestamp: true, DefaultCurrentTimestampPrecision: 6}}
	if got := st.CreateTable.GetColumns(); len(got) != len(want) {
		t.Fatalf("columns = %v", got)
	} else {
		for i := range want {
			if !proto.Equal(got[i], want[i]) {
				t.Errorf("column %d = %v, want %v", i, got[i], want[i])
			}
		}
	}
	for sql, msg := range map[string]string{
		`CREATE TABLE t (b VARCHAR(100) DEFAULT CURRENT_TIMESTAMP)`:       "types other than DATETIME",
		`CREATE TABLE t (d DATE DEFAULT CURRENT_TIMESTAMP)`:               "types other than DATETIME",
		`CREATE TABLE t (d DATETIME(3) DEFAULT CURRENT_TIMESTAMP(6))`:     "greater than the column's",
		`CREATE TABLE t (d DATETIME DEFAULT CURRENT_TIMESTAMP(x))`:        "expected a precision",
		`CREATE TABLE t (d DATETIME DEFAULT CURRENT_TIMESTAMP DEFAULT 1)`: "DEFAULT given twice",
	} {
		if _, err := Parse(sql); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v; want %q", sql, err, msg)
		}
	}
}

// TestTimestampType: Doris's TIMESTAMP is an instant whose zone-less text is
// read in the job's zone (TIMESTAMP with text_in_job_zone); TIMESTAMP(p) is
// refused by name.
func TestTimestampType(t *testing.T) {
	st, err := Parse(`CREATE TABLE t (id int, t timestamp) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2`)
	if err != nil {
		t.Fatal(err)
	}
	if c := st.CreateTable.GetColumns()[1]; !proto.Equal(c, &api.Column{Name: "t", Type: api.ColumnType_TIMESTAMP, TextInJobZone: true}) {
		t.Errorf("t = %v", c)
	}
	if _, err := Parse(`CREATE TABLE t (t TIMESTAMP(3))`); err == nil || !strings.Contains(err.Error(), "TIMESTAMP(p) not supported") {
		t.Errorf("TIMESTAMP(3): %v", err)
	}
}

// TestRandomDistributionRefused: as Doris, DISTRIBUTED BY RANDOM is refused
// for a UNIQUE table and for an AGGREGATE table with a REPLACE column
// (inferred or not); SUM, MIN and MAX are fine.
func TestRandomDistributionRefused(t *testing.T) {
	for sql, want := range map[string]string{
		`CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY RANDOM`:                       "keys type is unique",
		`CREATE TABLE t (k INT, v INT REPLACE) AGGREGATE KEY(k) DISTRIBUTED BY RANDOM BUCKETS 2`:  "[v] is invalid",
		`CREATE TABLE t (k INT, v INT REPLACE_IF_NOT_NULL) DISTRIBUTED BY RANDOM`:                 "[v] is invalid",
		`CREATE TABLE t (k INT, v INT SUM, w INT MAX) DISTRIBUTED BY RANDOM`:                      "",
		`CREATE TABLE t (k INT, v INT REPLACE) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2`: "",
	} {
		_, err := Parse(sql)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", sql, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v; want %q", sql, err, want)
		}
	}
}

// TestHiddenSequenceType: "function_column.sequence_type" gives a UNIQUE
// table a hidden sequence of that type, no column of the table.
func TestHiddenSequenceType(t *testing.T) {
	st, err := Parse(`CREATE TABLE IF NOT EXISTS test_unique_key_with_delete (
		k1 int(11) NULL, k2 tinyint(4) NULL, v1 varchar(1024)) ENGINE=OLAP UNIQUE KEY(k1, k2)
		DISTRIBUTED BY HASH(k1) BUCKETS 3
		PROPERTIES ("function_column.sequence_type" = "int", "replication_allocation" = "tag.location.default: 1")`)
	if err != nil {
		t.Fatal(err)
	}
	spec := st.CreateTable
	if spec.GetHiddenSequenceType() != api.ColumnType_INT32 || spec.GetSequenceColumn() != "" || len(spec.GetColumns()) != 3 {
		t.Fatalf("spec = %v: want a hidden INT sequence and the 3 columns", spec)
	}
	for typ, want := range map[string]api.ColumnType{"bigint": api.ColumnType_INT64, "Date": api.ColumnType_DATE, "datetime": api.ColumnType_DATETIME, "largeint": api.ColumnType_INT128} {
		st, err := Parse(`CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) PROPERTIES ("function_column.sequence_type" = "` + typ + `")`)
		if err != nil || st.CreateTable.GetHiddenSequenceType() != want {
			t.Errorf("sequence_type %s: %v, %v; want %v", typ, st, err, want)
		}
	}
}
