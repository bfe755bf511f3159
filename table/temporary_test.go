package table

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

func TestTemporaryPartitionNames(t *testing.T) {
	name := TemporaryPartitionTable("orders", "tp1")
	if tb, p, ok := SplitTemporaryPartition(name); !ok || tb != "orders" || p != "tp1" {
		t.Errorf("SplitTemporaryPartition(%q) = %q, %q, %v", name, tb, p, ok)
	}
	for _, n := range []string{"orders", "#tp", "orders#", "a#b#c", "1a#b", "a#b-c"} {
		if _, _, ok := SplitTemporaryPartition(n); ok {
			t.Errorf("SplitTemporaryPartition(%q): ok, want not a temporary partition's name", n)
		}
	}
	if got := DisplayName(name); got != "temporary partition tp1 of table orders" {
		t.Errorf("DisplayName = %q", got)
	}
	spec := proto.Clone(typedSchema(t, "id int").Spec()).(*api.TableSpec)
	spec.Name = name
	if _, err := NewSchema(spec); err != nil {
		t.Errorf("NewSchema of a temporary partition's table: %v", err)
	}
	for _, bad := range []string{"a#b#c", "a#", "a#1b"} {
		spec.Name = bad
		if _, err := NewSchema(spec); err == nil {
			t.Errorf("NewSchema named %q: no error", bad)
		}
	}
}

// TestTemporaryPartitionSpec: a temporary partition's table is its
// table's, with the one partition; its values follow the table's
// partitioning (none without PARTITION BY).
func TestTemporaryPartitionSpec(t *testing.T) {
	plain := proto.Clone(typedSchema(t, "k1 int", "k2 float").Spec()).(*api.TableSpec)
	plain.Name = "t"
	got, err := TemporaryPartitionSpec(plain, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "t#test" || got.GetPartitioning() != nil || len(got.GetColumns()) != 2 {
		t.Errorf("spec = %v", got)
	}
	if _, err := TemporaryPartitionSpec(plain, "test", lessThan("", "10")); err == nil || !strings.Contains(err.Error(), "takes no VALUES") {
		t.Errorf("VALUES on an unpartitioned table: %v", err)
	}
	ranged := proto.Clone(plain).(*api.TableSpec)
	ranged.Partitioning = &api.TablePartitioning{Columns: []string{"k1"}, Partitions: []*api.TablePartition{lessThan("p1", "10")}}
	if _, err := TemporaryPartitionSpec(ranged, "tp", nil); err == nil || !strings.Contains(err.Error(), "needs VALUES LESS THAN") {
		t.Errorf("no VALUES on a RANGE table: %v", err)
	}
	got, err = TemporaryPartitionSpec(ranged, "tp", lessThan("", "20"))
	if err != nil {
		t.Fatal(err)
	}
	if ps := got.GetPartitioning(); len(ps.GetPartitions()) != 1 || ps.GetPartitions()[0].GetName() != "tp" || ps.GetColumns()[0] != "k1" {
		t.Errorf("partitioning = %v", ps)
	}
}

// TestResolveTemporaryPartition: Doris's rules for adding a temporary
// partition: no name of a partition or temporary partition of the table,
// no overlap with another temporary partition (a formal partition's
// range may overlap), a LESS THAN range starting at the largest upper
// bound of the temporary partitions below it; and the resolved range
// decides which rows the temporary partition takes.
func TestResolveTemporaryPartition(t *testing.T) {
	parent := proto.Clone(typedSchema(t, "k1 int", "v string").Spec()).(*api.TableSpec)
	parent.Name = "t"
	parent.Partitioning = &api.TablePartitioning{Columns: []string{"k1"}, Partitions: []*api.TablePartition{lessThan("p1", "10"), lessThan("p2", "20")}}
	add := func(others []*api.TableSpec, name string, p *api.TablePartition) (*api.TableSpec, error) {
		spec, err := TemporaryPartitionSpec(parent, name, p)
		if err != nil {
			return nil, err
		}
		return ResolveTemporaryPartition(parent, spec, others)
	}
	tp1, err := add(nil, "tp1", lessThan("", "15")) // overlaps p1 and p2: allowed
	if err != nil {
		t.Fatal(err)
	}
	if tp1.GetPartitioning().GetPartitions()[0].GetLower() != nil {
		t.Errorf("tp1 alone has a lower bound: %v", tp1.GetPartitioning())
	}
	tp2, err := add([]*api.TableSpec{tp1}, "tp2", lessThan("", "30"))
	if err != nil {
		t.Fatal(err)
	}
	if lo := tp2.GetPartitioning().GetPartitions()[0].GetLower(); lo == nil || lo.GetValues()[0].GetText() != "15" {
		t.Errorf("tp2's lower bound = %v, want 15 (tp1's upper)", lo)
	}
	s, err := NewSchema(tp2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(s, Format{ColumnSeparator: "|", NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	for rec, ok := range map[string]bool{"14|a": false, "15|a": true, "29|a": true, "30|a": false} {
		if _, err := p.Parse([]byte(rec), nil); (err == nil) != ok {
			t.Errorf("tp2 row %s: %v, want taken %v", rec, err, ok)
		}
	}
	refused := []struct {
		name   string
		p      *api.TablePartition
		others []*api.TableSpec
		want   string
	}{
		{"p1", lessThan("", "40"), nil, "Duplicate partition name p1"},
		{"TP1", lessThan("", "40"), []*api.TableSpec{tp1}, "Duplicate partition name TP1"},
		{"tp3", fixed("", []string{"12"}, []string{"40"}), []*api.TableSpec{tp1, tp2}, "overlaps"},
	}
	for _, r := range refused {
		if _, err := add(r.others, r.name, r.p); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("add %s: %v, want %q", r.name, err, r.want)
		}
	}
	plain := proto.Clone(parent).(*api.TableSpec)
	plain.Partitioning = nil
	spec, _ := TemporaryPartitionSpec(plain, "t", nil)
	if _, err := ResolveTemporaryPartition(plain, spec, nil); err == nil || !strings.Contains(err.Error(), "Duplicate partition name t") {
		t.Errorf("a temporary partition named as an unpartitioned table: %v", err)
	}
	forged := proto.Clone(tp1).(*api.TableSpec)
	forged.Columns = forged.Columns[:1]
	if _, err := ResolveTemporaryPartition(parent, forged, nil); err == nil {
		t.Error("a temporary partition's table with other columns: no error")
	}
}
