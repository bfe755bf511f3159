package persistence

import (
	"bytes"
	"testing"
)

func TestPartitionKeysSortNumerically(t *testing.T) {
	parts := []int32{-2147483648, -100, -1, 0, 1, 2, 255, 256, 65536, 2147483647}
	for i := 1; i < len(parts); i++ {
		a, b := progressKey(9, parts[i-1]), progressKey(9, parts[i])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key of partition %d does not sort before key of %d", parts[i-1], parts[i])
		}
	}
	for _, p := range parts {
		if got := decodePartition(encodePartition(p)); got != p {
			t.Errorf("partition %d round-trips to %d", p, got)
		}
	}
}

func TestJobKeysSortByID(t *testing.T) {
	ids := []uint64{0, 1, 255, 256, 1 << 32, ^uint64(0)}
	for i := 1; i < len(ids); i++ {
		if bytes.Compare(jobKey(ids[i-1], jobRecordSuffix), jobKey(ids[i], jobRecordSuffix)) >= 0 {
			t.Errorf("job %d does not sort before job %d", ids[i-1], ids[i])
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ in, want []byte }{
		{[]byte("j/"), []byte("j0")},
		{[]byte("t/a\x00r/"), []byte("t/a\x00r0")},
		{[]byte{'a', 0xff}, []byte{'b'}},
		{[]byte{0xff, 0xff}, nil},
	}
	for _, tt := range tests {
		if got := prefixEnd(tt.in); !bytes.Equal(got, tt.want) {
			t.Errorf("prefixEnd(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A table's rows must not include another table's rows whose name extends it.
func TestTableRowPrefixesDisjoint(t *testing.T) {
	a, ab := tableRowPrefix("a"), tableRowPrefix("ab")
	if bytes.HasPrefix(ab, a) || bytes.HasPrefix(a, ab) {
		t.Errorf("row prefixes %q and %q overlap", a, ab)
	}
	spec := tableSpecKey("a")
	end := prefixEnd(a)
	if bytes.Compare(spec, a) >= 0 && bytes.Compare(spec, end) < 0 {
		t.Errorf("spec key %q falls inside the row range of its table", spec)
	}
}

func TestValidateTableName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"with space/and slash", true},
		{"", false},
		{"nul\x00inside", false},
	}
	for _, tt := range tests {
		if err := validateTableName(tt.name); (err == nil) != tt.ok {
			t.Errorf("validateTableName(%q) = %v", tt.name, err)
		}
	}
}

func TestErrWindowDecode(t *testing.T) {
	good := errWindow{first: 3, next: 10}
	if w, err := decodeErrWindow(good.encode()); err != nil || w != good {
		t.Errorf("round trip = %v, %v", w, err)
	}
	for _, bad := range []errWindow{{first: 0, next: 1}, {first: 5, next: 4}} {
		if _, err := decodeErrWindow(bad.encode()); err == nil {
			t.Errorf("decodeErrWindow(%v) accepted a bad window", bad)
		}
	}
	if _, err := decodeErrWindow([]byte{1, 2}); err == nil {
		t.Error("decodeErrWindow accepted a short value")
	}
}
