package doris

import "testing"

// TestInsertedMessage: the answer counts rows in English and names the
// table (a temporary partition as Doris names it).
func TestInsertedMessage(t *testing.T) {
	for _, tc := range []struct {
		rows   int64
		target string
		want   string
	}{
		{0, "t", "0 rows inserted into table t"},
		{1, "t", "1 row inserted into table t"},
		{2, "t#tp", "2 rows inserted into temporary partition tp of table t"},
	} {
		if got := InsertedMessage(tc.rows, tc.target); got != tc.want {
			t.Errorf("%d into %s: %q, want %q", tc.rows, tc.target, got, tc.want)
		}
	}
}
