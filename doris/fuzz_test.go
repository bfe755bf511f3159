package doris

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// FuzzParse checks that Parse never panics, that every error is an *Error
// with a position, and that every statement it returns has exactly one
// field set and is well formed, and that a table's SHOW CREATE TABLE
// statement parses back into the same table. The seed corpus (testdata/fuzz/FuzzParse)
// holds statements from Doris's documentation.
func FuzzParse(f *testing.F) {
	f.Add("SHOW ROUTINE LOAD FOR example_db.test1;")
	f.Add("PAUSE ALL ROUTINE LOAD;")
	f.Add("SHOW CREATE TABLE db.t;")
	f.Add(`SHOW ALL ROUTINE LOAD LIKE "a%";`)
	f.Add("SHOW FULL COLUMNS FROM t IN db")
	f.Add("sync")
	f.Add("SHOW ALL ROUTINE LOAD LIKE 'a%' ORDER BY Name DESC, Id LIMIT 1, 1")
	f.Add("SHOW ROUTINE LOAD TASK FOR db.j")
	f.Add("ALTER TABLE t2 REPLACE WITH TABLE t1 PROPERTIES('swap' = 'true')")
	f.Add(`ALTER ROUTINE LOAD FOR label1 PROPERTIES ("max_batch_rows" = "10") FROM KAFKA ("kafka_partitions" = "0", "kafka_offsets" = "1")`)
	// Deep nesting: parentheses in COLUMNS and WHERE, in a column type,
	// in a partition list.
	deep := strings.Repeat("(", 5000) // over table.MaxExprDepth
	f.Add("CREATE ROUTINE LOAD j ON t COLUMNS(k1, v = " + deep + "k1" + strings.Repeat(")", 5000) + `) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	f.Add("CREATE ROUTINE LOAD j ON t WHERE " + deep + ` FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	f.Add("CREATE TABLE t (k1 INT" + deep + ")")
	f.Add("CREATE TABLE t (k1 INT) DUPLICATE KEY(k1) PARTITION BY RANGE(k1) " + deep + strings.Repeat("[", 5000))
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := Parse(sql)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v, want *Error", err, err)
			}
			if st != nil {
				t.Fatalf("statement and error %v", err)
			}
			if e.Line < 1 || e.Col < 1 || e.Msg == "" || !strings.HasPrefix(err.Error(), "doris: line ") {
				t.Fatalf("malformed error %#v", e)
			}
			return
		}
		if n := setFields(st); n != 1 {
			t.Fatalf("%d fields set: %+v", n, st)
		}
		again, err := Parse(sql)
		if err != nil {
			t.Fatalf("second Parse: %v", err)
		}
		switch {
		case st.CreateRoutineLoad != nil:
			s := st.CreateRoutineLoad
			kafkaOK := len(s.Kafka.GetBrokers()) > 0 && s.Kafka.GetTopic() != ""
			// A multi-table load (no ON) names no table: each record does.
			tableOK := (s.Table.GetName() != "") != st.MultiTable
			if s.Name == "" || !tableOK || (s.Kafka == nil) == (s.Kinesis == nil) || (s.Kafka != nil && !kafkaOK) || (s.Kinesis != nil && s.Kinesis.GetStream() == "") {
				t.Fatalf("incomplete spec %v", s)
			}
			if !proto.Equal(s, again.CreateRoutineLoad) {
				t.Fatalf("not deterministic:\n%v\n%v", s, again.CreateRoutineLoad)
			}
		case st.CreateTable != nil:
			if st.CreateTable.Name == "" || len(st.CreateTable.Columns) == 0 {
				t.Fatalf("incomplete table %v", st.CreateTable)
			}
			for _, c := range st.CreateTable.Columns {
				if c.Name == "" || c.Type == api.ColumnType_COLUMN_TYPE_UNSPECIFIED {
					t.Fatalf("bad column %v", c)
				}
			}
			if !proto.Equal(st.CreateTable, again.CreateTable) {
				t.Fatalf("not deterministic:\n%v\n%v", st.CreateTable, again.CreateTable)
			}
			// SHOW CREATE TABLE's statement reads back into the table.
			if err := roundTrip(st); err != nil {
				t.Fatal(err)
			}
		case st.Alter != nil:
			a := st.Alter
			if a.Name == "" || a.Request == nil || a.Request.GetName() != a.Name {
				t.Fatalf("incomplete alter %+v", a)
			}
			old := baseSpec()
			old.Name = a.Name
			before := proto.Clone(old)
			if s, _, _, err := config.Alter(old, a.Request); err == nil && s == nil {
				t.Fatalf("Alter returned neither spec nor error")
			}
			if !proto.Equal(old, before) {
				t.Fatalf("Alter modified old")
			}
		}
	})
}
