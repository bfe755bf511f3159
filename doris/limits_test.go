package doris

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/table"
)

// TestExprDepth (probe 2026-12-02, D6): a COLUMNS or WHERE expression
// nesting deeper than table.MaxExprDepth is refused where it is written,
// naming the limit, and so is the statement the table parser would
// refuse; one at the limit is read.
func TestExprDepth(t *testing.T) {
	const n = 100_000
	deep := strings.Repeat("(", n) + "k1" + strings.Repeat(")", n)
	from := ` FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`
	for _, tt := range []struct{ name, sql, clause string }{
		{"COLUMNS", "CREATE ROUTINE LOAD j ON t COLUMNS(k1, v = " + deep + ")" + from, `COLUMNS "v"`},
		{"WHERE", "CREATE ROUTINE LOAD j ON t COLUMNS(k1), WHERE " + deep + from, "WHERE"},
		{"unclosed", "CREATE ROUTINE LOAD j ON t COLUMNS(k1), WHERE " + strings.Repeat("(", n) + from, "WHERE"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.sql)
			var e *Error
			if !errors.As(err, &e) || e.Clause != tt.clause || e.Msg != "expression nests deeper than 3000 levels" {
				t.Fatalf("Parse = %.300v, want %s: the depth limit", err, tt.clause)
			}
		})
	}
	at := strings.Repeat("(", 3000) + "k1" + strings.Repeat(")", 3000)
	if _, err := Parse("CREATE ROUTINE LOAD j ON t COLUMNS(k1, v = " + at + "), WHERE " + at + from); err != nil {
		t.Fatalf("at the limit: %.300v", err)
	}
}

// TestPartitionInBounded: a partition's IN list, in CREATE TABLE and in
// ALTER TABLE ADD TEMPORARY PARTITION, holds at most
// table.MaxTablePartitions values.
func TestPartitionInBounded(t *testing.T) {
	vals := strings.TrimSuffix(strings.Repeat("1,", table.MaxTablePartitions+1), ",")
	for _, sql := range []string{
		"CREATE TABLE t (k INT) DUPLICATE KEY(k) PARTITION BY LIST(k) (PARTITION p VALUES IN (" + vals + ")) DISTRIBUTED BY HASH(k) BUCKETS 1",
		"ALTER TABLE t ADD TEMPORARY PARTITION tp VALUES IN (" + vals + ")",
	} {
		if _, err := Parse(sql); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d values", table.MaxTablePartitions)) {
			t.Errorf("%.60s...: %v, want more than %d values", sql, err, table.MaxTablePartitions)
		}
	}
}
