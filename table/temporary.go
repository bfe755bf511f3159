package table

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// Temporary partitions (Doris ALTER TABLE t ADD TEMPORARY PARTITION tp):
// a temporary partition's rows are a table of their own in the catalog,
// named TemporaryPartitionTable(t, tp) = "t#tp". '#' is in no table or
// partition name (checkName), so that name is no user's table, and its
// rows are under their own keys: a scan of t never reads them, a scan of
// "t#tp" reads only them. Its spec is t's with that name and, when t is
// partitioned, t's partition kind and columns with the one partition tp
// (TemporaryPartitionSpec): a row outside tp's values is an error row,
// as a Doris load into a temporary partition refuses it ("no partition
// for this tuple"). The catalog hides these tables (SHOW TABLES) and
// drops them with t.

// temporarySep separates a table's name from a temporary partition's.
const temporarySep = "#"

// TemporaryPartitionTable is the catalog name of temporary partition part
// of table.
func TemporaryPartitionTable(table, part string) string {
	return table + temporarySep + part
}

// SplitTemporaryPartition splits a catalog name made by
// TemporaryPartitionTable into the table's name and the partition's; ok
// is false for any other name.
func SplitTemporaryPartition(name string) (table, part string, ok bool) {
	table, part, ok = strings.Cut(name, temporarySep)
	if !ok || checkName(table) != nil || checkName(part) != nil {
		return "", "", false
	}
	return table, part, true
}

// IsTemporaryPartition reports whether name is a temporary partition's
// catalog name.
func IsTemporaryPartition(name string) bool {
	_, _, ok := SplitTemporaryPartition(name)
	return ok
}

// DisplayName names a catalog table for people: "temporary partition tp
// of table t" for a temporary partition's, else "table t".
func DisplayName(name string) string {
	if t, p, ok := SplitTemporaryPartition(name); ok {
		return "temporary partition " + p + " of table " + t
	}
	return "table " + name
}

// checkTableName is checkName for a table's name, which may also be a
// temporary partition's catalog name.
func checkTableName(n string) error {
	if strings.Contains(n, temporarySep) {
		if _, _, ok := SplitTemporaryPartition(n); !ok {
			t, p, _ := strings.Cut(n, temporarySep)
			if err := checkName(t); err != nil {
				return err
			}
			if err := checkName(p); err != nil {
				return fmt.Errorf("temporary partition: %w", err)
			}
		}
		return nil
	}
	return checkName(n)
}

// TemporaryPartitionSpec is the spec of temporary partition name of
// table parent (its catalog table): parent's columns, model and keys;
// when parent is partitioned, its partition kind and columns with the one
// partition p, whose values follow them (RANGE: upper and maybe lower;
// LIST: in). An unpartitioned parent's temporary partition has no values
// (p nil or without any). Errors are *FieldError.
func TemporaryPartitionSpec(parent *api.TableSpec, name string, p *api.TablePartition) (*api.TableSpec, error) {
	const f = "temporary_partition"
	if err := checkName(name); err != nil {
		return nil, fieldErr(f, "partition name: %s", err)
	}
	if IsTemporaryPartition(parent.GetName()) {
		return nil, fieldErr(f, "%s has no temporary partitions of its own", DisplayName(parent.GetName()))
	}
	spec := proto.Clone(parent).(*api.TableSpec)
	spec.Name = TemporaryPartitionTable(parent.GetName(), name)
	hasValues := p != nil && (p.GetLower() != nil || p.GetUpper() != nil || len(p.GetIn()) > 0)
	ps := parent.GetPartitioning()
	switch {
	case ps == nil && hasValues:
		return nil, fieldErr(f, "table %s has no PARTITION BY: its temporary partition %s takes no VALUES", parent.GetName(), name)
	case ps == nil:
		return spec, nil
	case !hasValues:
		kind := "VALUES LESS THAN (...) or VALUES [(...), (...))"
		if ps.GetList() {
			kind = "VALUES IN (...)"
		}
		return nil, fieldErr(f, "table %s is partitioned by %s: temporary partition %s needs %s", parent.GetName(), partitionKind(ps), name, kind)
	}
	tp := proto.Clone(p).(*api.TablePartition)
	tp.Name = name
	spec.Partitioning = &api.TablePartitioning{List: ps.GetList(), Columns: ps.GetColumns(), Partitions: []*api.TablePartition{tp}}
	return spec, nil
}

func partitionKind(ps *api.TablePartitioning) string {
	kind := "RANGE"
	if ps.GetList() {
		kind = "LIST"
	}
	return kind + " (" + strings.Join(ps.GetColumns(), ", ") + ")"
}

// ResolveTemporaryPartition checks spec, the catalog table of a
// temporary partition about to be added to table parent, which has the
// temporary partitions others (their catalog tables), as Doris adds one,
// and returns it as the catalog keeps it: spec is TemporaryPartitionSpec
// of parent; its name is neither a partition of parent (for an
// unpartitioned table: the table's own name, which Doris gives its one
// partition) nor another temporary partition; its values do not overlap
// another temporary partition's (they may overlap parent's partitions).
// A RANGE partition given by VALUES LESS THAN starts at the largest upper
// bound of the other temporary partitions below its own (else it is
// unbounded below), as in Doris; the result says so with its lower
// bound, so that its range stays what it was when it was added. Errors
// are *FieldError.
func ResolveTemporaryPartition(parent, spec *api.TableSpec, others []*api.TableSpec) (*api.TableSpec, error) {
	const f = "temporary_partition"
	t, name, ok := SplitTemporaryPartition(spec.GetName())
	if !ok || t != parent.GetName() {
		return nil, fieldErr(f, "%q is not the name of a temporary partition of table %s", spec.GetName(), parent.GetName())
	}
	var p *api.TablePartition
	if ps := spec.GetPartitioning(); ps != nil && len(ps.GetPartitions()) == 1 {
		p = ps.GetPartitions()[0]
	}
	want, err := TemporaryPartitionSpec(parent, name, p)
	if err != nil {
		return nil, err
	}
	if !proto.Equal(want, spec) {
		return nil, fieldErr(f, "temporary partition %s of table %s: its table must be the table's columns, model, keys and partitioning with the one partition %s", name, parent.GetName(), name)
	}
	if _, err := NewSchema(spec); err != nil {
		return nil, err
	}
	if parent.GetPartitioning() == nil && strings.EqualFold(name, parent.GetName()) {
		return nil, fieldErr(f, "Duplicate partition name %s: the one partition of table %s has that name", name, parent.GetName())
	}
	for _, fp := range parent.GetPartitioning().GetPartitions() {
		if strings.EqualFold(fp.GetName(), name) {
			return nil, fieldErr(f, "Duplicate partition name %s: table %s has a partition of that name", name, parent.GetName())
		}
	}
	for _, o := range others {
		if _, on, _ := SplitTemporaryPartition(o.GetName()); strings.EqualFold(on, name) {
			return nil, fieldErr(f, "Duplicate partition name %s: table %s has a temporary partition of that name", name, parent.GetName())
		}
	}
	if spec.GetPartitioning() == nil {
		return spec, nil
	}
	// The temporary partitions of a table together, the new one last,
	// must be a valid partitioning: none overlaps another, and a LESS
	// THAN range starts where compilePartitions starts it.
	all := proto.Clone(spec).(*api.TableSpec)
	var ops []*api.TablePartition
	for _, o := range others {
		ops = append(ops, o.GetPartitioning().GetPartitions()...)
	}
	all.Partitioning.Partitions = append(ops, p)
	s, err := NewSchema(all)
	if err != nil {
		msg := err.Error()
		if fe, ok := err.(*FieldError); ok {
			msg = fe.Msg
		}
		return nil, fieldErr(f, "temporary partition %s of table %s: %s (the temporary partitions of a table must not overlap)", name, parent.GetName(), msg)
	}
	out := proto.Clone(spec).(*api.TableSpec)
	if lo := s.parts.parts[len(ops)].lo; lo != nil && p.GetLower() == nil && !s.parts.list {
		for k := range ops {
			if s.parts.compareBounds(s.parts.parts[k].hi, lo) == 0 {
				out.Partitioning.Partitions[0].Lower = proto.Clone(ops[k].GetUpper()).(*api.PartitionBound)
				break
			}
		}
	}
	return out, nil
}
