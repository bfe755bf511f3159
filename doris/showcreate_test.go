package doris

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// TestCreateTableStatementRoundTrip: SHOW CREATE TABLE's statement parses
// back into the table it shows, for every clause loadnode keeps.
func TestCreateTableStatementRoundTrip(t *testing.T) {
	for _, ddl := range []string{
		"CREATE TABLE t (id BIGINT, name VARCHAR(64), amount DECIMAL(10, 2), at DATETIME(3), d DATE, f DOUBLE, ok BOOLEAN, s STRING, j JSON, c CHAR(4), ti TINYINT, si SMALLINT, i INT, li LARGEINT, fl FLOAT, ts TIMESTAMP)",
		"CREATE TABLE `Weird` (`a_b` INT NOT NULL DEFAULT \"-1\", `q` VARCHAR(32) DEFAULT 'it''s \"x\"\\\\ \\n', at DATETIME(6) DEFAULT CURRENT_TIMESTAMP(3), at0 DATETIME DEFAULT CURRENT_TIMESTAMP) DUPLICATE KEY(`a_b`) DISTRIBUTED BY HASH(`a_b`) BUCKETS 3",
		"CREATE TABLE analytics.u (k1 INT, k2 VARCHAR(16), v BIGINT, seq INT) UNIQUE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 1 PROPERTIES (\"function_column.sequence_col\" = \"seq\", \"replication_num\" = \"1\")",
		"CREATE TABLE h (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) PROPERTIES (\"function_column.sequence_type\" = \"bigint\", \"enable_unique_key_skip_bitmap_column\" = \"true\")",
		"CREATE TABLE a (k INT, d DATE, s BIGINT SUM DEFAULT \"0\", mx INT MAX, r VARCHAR(8) REPLACE_IF_NOT_NULL NULL, rp INT REPLACE) AGGREGATE KEY(k, d) DISTRIBUTED BY HASH(k) BUCKETS 2",
		"CREATE TABLE a2 (k INT, s BIGINT SUM, m INT MIN) DISTRIBUTED BY RANDOM BUCKETS 1",
		"CREATE TABLE p (k INT, d DATE, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(d, k) (PARTITION p1 VALUES LESS THAN (\"2024-01-01\"), PARTITION `p 2` VALUES [(\"2024-01-01\", \"-5\"), (\"2025-01-01\", \"10\")), PARTITION p3 VALUES LESS THAN (MAXVALUE, MAXVALUE)) DISTRIBUTED BY RANDOM",
		"CREATE TABLE l (k INT, city VARCHAR(16)) PARTITION BY LIST(city, k) (PARTITION p1 VALUES IN ((\"paris\", \"1\"), (\"rome\", \"2\")), PARTITION p2 VALUES IN ((\"o\\\"slo\", \"3\")))",
		"CREATE TABLE l1 (k INT, city VARCHAR(16)) PARTITION BY LIST(city) (PARTITION p1 VALUES IN (\"paris\", \"rome\"), PARTITION p2 VALUES IN (\"oslo\"))",
		"CREATE TABLE e (k INT) PARTITION BY RANGE(k) ()",
	} {
		st, err := Parse(ddl)
		if err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
		if err := roundTrip(st); err != nil {
			t.Errorf("%s: %v", ddl, err)
		}
	}
}

// roundTrip checks that the SHOW CREATE TABLE statement of st's table
// parses back into the same table, and is a fixed point.
func roundTrip(st *Statement) error {
	spec := proto.Clone(st.CreateTable).(*api.TableSpec)
	spec.Database = st.DB
	out := CreateTableStatement(spec)
	back, err := Parse(out)
	if err != nil {
		return fmt.Errorf("SHOW CREATE TABLE gave\n%s\nwhich does not parse: %v", out, err)
	}
	back.CreateTable.Database = back.DB
	if !proto.Equal(back.CreateTable, spec) {
		return fmt.Errorf("SHOW CREATE TABLE gave\n%s\nwhich parses to\n%v\nnot\n%v", out, back.CreateTable, spec)
	}
	if again := CreateTableStatement(back.CreateTable); again != out {
		return fmt.Errorf("not a fixed point:\n%s\n%s", out, again)
	}
	return nil
}

func TestCreateTableStatementText(t *testing.T) {
	st, err := Parse("create table orders (id bigint not null, customer varchar(64), amount decimal(10,2) default '0', at datetime) unique key(id) distributed by hash(id) buckets 4")
	if err != nil {
		t.Fatal(err)
	}
	want := "CREATE TABLE `orders` (\n" +
		"  `id` BIGINT NOT NULL,\n" +
		"  `customer` VARCHAR(64) NULL,\n" +
		"  `amount` DECIMAL(10,2) NULL DEFAULT \"0\",\n" +
		"  `at` DATETIME NULL\n" +
		") ENGINE=OLAP\n" +
		"UNIQUE KEY(`id`)\n" +
		"DISTRIBUTED BY HASH(`id`) BUCKETS AUTO;"
	if got := CreateTableStatement(st.CreateTable); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestShowCreateTableAndColumns(t *testing.T) {
	for stmt, want := range map[string]string{
		"SHOW CREATE TABLE db.orders;":        "create db.orders",
		"show create table `orders`":          "create .orders",
		"SHOW COLUMNS FROM orders":            "desc .orders",
		"SHOW FULL COLUMNS IN db.orders":      "desc db.orders",
		"show fields from orders from db":     "desc db.orders",
		"SHOW CREATE TABLE orders extra":      "SHOW CREATE TABLE: unexpected",
		"SHOW COLUMNS orders":                 "SHOW COLUMNS: expected FROM or IN",
		"SHOW FULL COLUMNS FROM t LIKE 'a%'":  "LIKE and WHERE are not supported",
		"SHOW COLUMNS FROM orders FROM":       "expected a database name",
		"SHOW CREATE ROUTINE LOAD FOR orders": "routine load",
		"sync;":                               "sync",
		"SYNC now":                            "SYNC: unexpected",
	} {
		st, err := Parse(stmt)
		var got string
		switch {
		case err != nil:
			got = err.Error()
		case st.ShowCreateTable != nil:
			got = "create " + st.ShowCreateTable.DB + "." + st.ShowCreateTable.Name
		case st.Describe != nil:
			got = "desc " + st.Describe.DB + "." + st.Describe.Name
		case st.Show != nil && st.Show.Create:
			got = "routine load"
		case st.Sync:
			got = "sync"
		}
		if !strings.Contains(got, want) {
			t.Errorf("%s: got %q, want %q", stmt, got, want)
		}
	}
}

func TestShowLists(t *testing.T) {
	for _, tc := range []struct {
		stmt, name string
		want       bool
	}{
		{`SHOW ROUTINE LOAD`, "anything", true},
		{`SHOW ROUTINE LOAD LIKE "%test%"`, "my_test_1", true},
		{`SHOW ROUTINE LOAD LIKE "%test%"`, "MY_TEST", false}, // case-sensitive, as Doris
		{`SHOW ROUTINE LOAD LIKE "job\_%"`, "job_a", true},
		{`SHOW ROUTINE LOAD LIKE "job\_%"`, "jobxa", false},
		{`SHOW ROUTINE LOAD LIKE "j_b"`, "job", true},
		{`SHOW ROUTINE LOAD LIKE ""`, "job", false},
	} {
		st, err := Parse(tc.stmt)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Show.Lists(tc.name); got != tc.want {
			t.Errorf("%s lists %s: %v, want %v", tc.stmt, tc.name, got, tc.want)
		}
	}
}

func TestShowPage(t *testing.T) {
	rows := [][]string{{"9", "b"}, {"10", "a"}, {"11", "b"}}
	for _, tc := range []struct {
		stmt string
		want []int
	}{
		{"SHOW ROUTINE LOAD", []int{0, 1, 2}},
		{"SHOW ROUTINE LOAD ORDER BY Id DESC", []int{2, 1, 0}}, // numbers as numbers: 11, 10, 9
		{"SHOW ROUTINE LOAD ORDER BY Name, Id DESC", []int{1, 2, 0}},
		{"SHOW ROUTINE LOAD ORDER BY Name DESC", []int{0, 2, 1}}, // ties in their order
		{"SHOW ROUTINE LOAD LIMIT 2", []int{0, 1}},
		{"SHOW ROUTINE LOAD LIMIT 1, 1", []int{1}},
		{"SHOW ROUTINE LOAD ORDER BY Id LIMIT 5 OFFSET 2", []int{2}},
		{"SHOW ROUTINE LOAD LIMIT 9, 1", []int{}},
		{"SHOW ROUTINE LOAD LIMIT 0", []int{}},
	} {
		st, err := Parse(tc.stmt)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Show.Page(rows); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.stmt, got, tc.want)
		}
	}
}
