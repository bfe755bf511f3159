package etcdmeta

import "testing"

// TestKeys: the keys are the package doc's layout, ids sort numerically as
// bytes, and ParseID inverts the id-keyed builders under their prefix only.
func TestKeys(t *testing.T) {
	k := Keys{Prefix: "/p/"}
	for _, c := range [][2]string{
		{k.LastJobID(), "/p/meta/last_job_id"},
		{k.NextJobID(), "/p/meta/next_job_id"},
		{k.Name("orders"), "/p/name/orders"},
		{k.Record(7), "/p/rec/00000000000000000007"},
		{k.Head(7), "/p/head/00000000000000000007"},
		{k.Log(7), "/p/log/00000000000000000007/"},
		{k.LogEntry(7, 12), "/p/log/00000000000000000007/00000000000000000012"},
		{k.Table("t"), "/p/table/t"},
		{k.Member("n1"), "/p/members/n1"},
		{k.Verifier(), "/p/auth/verifier"},
		{k.Leader(), "/p/leader/"},
		{k.Assignment(7), "/p/assign/00000000000000000007"},
	} {
		if c[0] != c[1] {
			t.Errorf("key %q, want %q", c[0], c[1])
		}
	}
	if !(ID(9) < ID(10) && ID(10) < ID(1<<63)) {
		t.Error("ids do not sort numerically as bytes")
	}
	if id, ok := ParseID(k.Assignment(1<<40), k.Assignments()); !ok || id != 1<<40 {
		t.Errorf("ParseID(Assignment) = %d, %v", id, ok)
	}
	for _, key := range []string{k.Record(7), k.Assignments() + "x", "/q/assign/00000000000000000007"} {
		if _, ok := ParseID(key, k.Assignments()); ok {
			t.Errorf("ParseID(%q) under %q succeeded", key, k.Assignments())
		}
	}
}
