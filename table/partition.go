package table

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// MaxTablePartitions bounds the partitions of a table (Doris's default
// max_multi_partition_num is 4096).
const MaxTablePartitions = 4096

// partitions is a table's compiled Doris partitioning (TableSpec
// partitioning): which rows the table takes. A row whose partition
// columns fall in no partition is an error row, as in Doris ("no
// partition for this tuple"). Immutable once built.
type partitions struct {
	list  bool
	cols  []int            // the partition columns, in order
	types []api.ColumnType // their types
	names []string         // their names
	parts []tablePartition
}

// tablePartition is one partition. RANGE: [lo, hi), lo nil for a lower
// bound that is unbounded (a LESS THAN partition with no partition below
// it: it takes NULL too, as in Doris). LIST: the value tuples in.
type tablePartition struct {
	name   string
	lo, hi []bound
	in     [][]Value
}

// bound is one component of a RANGE bound: a value, or MAXVALUE.
type bound struct {
	v   Value
	max bool
}

// rangeTypes are the column types Doris partitions by RANGE; listTypes
// those it partitions by LIST.
func rangeType(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64, api.ColumnType_INT128,
		api.ColumnType_DATE, api.ColumnType_DATETIME:
		return true
	}
	return false
}

func listType(t api.ColumnType) bool {
	return rangeType(t) || t == api.ColumnType_CHAR || t == api.ColumnType_VARCHAR || t == api.ColumnType_BOOL
}

// compilePartitions validates spec.partitioning against the columns of s
// and compiles it (nil without partitioning). Errors are *FieldError
// naming table.partitioning.
func (s *Schema) compilePartitions() (*partitions, error) {
	ps := s.spec.GetPartitioning()
	if ps == nil {
		return nil, nil
	}
	const f = "table.partitioning"
	kind := "RANGE"
	if ps.GetList() {
		kind = "LIST"
	}
	if len(ps.GetColumns()) == 0 {
		return nil, fieldErr(f+".columns", "PARTITION BY %s names no column", kind)
	}
	if n := len(ps.GetPartitions()); n > MaxTablePartitions {
		return nil, fieldErr(f+".partitions", "%d partitions: at most %d", n, MaxTablePartitions)
	}
	out := &partitions{list: ps.GetList()}
	for _, name := range ps.GetColumns() {
		i, ok := s.index[name]
		if !ok {
			return nil, fieldErr(f+".columns", "PARTITION BY %s: unknown column %q", kind, name)
		}
		for _, c := range out.cols {
			if c == i {
				return nil, fieldErr(f+".columns", "PARTITION BY %s names column %s twice", kind, name)
			}
		}
		if len(s.keys) > 0 && !slices.Contains(s.keys, i) {
			return nil, fieldErr(f+".columns", "PARTITION BY %s: column %s is not a key column of the %s table; Doris partitions by key columns only", kind, name, s.spec.GetModel())
		}
		if t := s.types[i]; !out.list && !rangeType(t) || out.list && !listType(t) {
			allowed := "TINYINT, SMALLINT, INT, BIGINT, LARGEINT, DATE, DATETIME"
			if out.list {
				allowed += ", CHAR, VARCHAR, BOOLEAN"
			}
			return nil, fieldErr(f+".columns", "PARTITION BY %s: column %s is %s; Doris partitions by %s only (%s)", kind, name, typeName(t), kind, allowed)
		}
		out.cols = append(out.cols, i)
		out.types = append(out.types, s.types[i])
		out.names = append(out.names, name)
	}
	seen := make(map[string]bool)
	for k, pd := range ps.GetPartitions() {
		pf := fmt.Sprintf("%s.partitions[%d]", f, k)
		name := pd.GetName()
		if err := checkName(name); err != nil {
			return nil, fieldErr(pf+".name", "partition name: %s", err)
		}
		if seen[strings.ToLower(name)] {
			return nil, fieldErr(pf+".name", "duplicate partition %s", name)
		}
		seen[strings.ToLower(name)] = true
		var err error
		if out.list {
			err = out.addList(s, pd, pf)
		} else {
			err = out.addRange(s, pd, pf)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// values converts the values of b (a RANGE bound when rng) for the
// partition columns: a RANGE bound may give fewer values than columns
// (the others are their type's smallest value) and MAXVALUE; a LIST tuple
// gives one value per column.
func (ps *partitions) values(s *Schema, b *api.PartitionBound, rng bool, field, what string) ([]bound, error) {
	vals := b.GetValues()
	switch {
	case len(vals) == 0:
		return nil, fieldErr(field, "partition %s has no value", what)
	case len(vals) > len(ps.cols):
		return nil, fieldErr(field, "partition %s has %d values for %d partition columns", what, len(vals), len(ps.cols))
	case !rng && len(vals) != len(ps.cols):
		return nil, fieldErr(field, "partition %s has %d values for %d partition columns", what, len(vals), len(ps.cols))
	}
	out := make([]bound, len(ps.cols))
	for i, col := range ps.cols {
		if i >= len(vals) {
			out[i] = bound{v: minValue(s.types[col])}
			continue
		}
		pv := vals[i]
		if pv.GetMax() {
			if !rng {
				return nil, fieldErr(field, "partition %s: MAXVALUE is a RANGE bound, not a LIST value", what)
			}
			out[i] = bound{max: true}
			continue
		}
		v, reason := convertText(s.types[col], s.meta[col], []byte(pv.GetText()))
		if reason != "" {
			return nil, fieldErr(field, "partition %s: value %s of column %s: %s", what, strconv.Quote(pv.GetText()), s.cols[col].GetName(), reason)
		}
		v.Str = strings.Clone(v.Str)
		out[i] = bound{v: v}
	}
	return out, nil
}

func (ps *partitions) addRange(s *Schema, pd *api.TablePartition, field string) error {
	if len(pd.GetIn()) > 0 || pd.GetUpper() == nil {
		return fieldErr(field, "partition %s of PARTITION BY RANGE needs VALUES LESS THAN or VALUES [lower, upper)", pd.GetName())
	}
	hi, err := ps.values(s, pd.GetUpper(), true, field+".upper", pd.GetName())
	if err != nil {
		return err
	}
	var lo []bound
	if pd.GetLower() != nil {
		if lo, err = ps.values(s, pd.GetLower(), true, field+".lower", pd.GetName()); err != nil {
			return err
		}
		if ps.compareBounds(lo, hi) >= 0 {
			return fieldErr(field, "partition %s: the lower bound is not below the upper bound", pd.GetName())
		}
	} else {
		// LESS THAN: the range starts at the largest upper bound below
		// its own (Doris), else it is unbounded below.
		for _, q := range ps.parts {
			switch c := ps.compareBounds(q.hi, hi); {
			case c == 0:
				return fieldErr(field, "partition %s: partition %s has the same upper bound", pd.GetName(), q.name)
			case c < 0 && (lo == nil || ps.compareBounds(q.hi, lo) > 0):
				lo = q.hi
			}
		}
	}
	for _, q := range ps.parts {
		// [lo, hi) and [q.lo, q.hi) intersect unless one ends before
		// the other starts (a nil lower bound is below everything).
		apart := (q.lo != nil && ps.compareBounds(hi, q.lo) <= 0) || (lo != nil && ps.compareBounds(q.hi, lo) <= 0)
		if !apart {
			return fieldErr(field, "partition %s overlaps partition %s", pd.GetName(), q.name)
		}
	}
	ps.parts = append(ps.parts, tablePartition{name: pd.GetName(), lo: lo, hi: hi})
	return nil
}

func (ps *partitions) addList(s *Schema, pd *api.TablePartition, field string) error {
	if pd.GetLower() != nil || pd.GetUpper() != nil || len(pd.GetIn()) == 0 {
		return fieldErr(field, "partition %s of PARTITION BY LIST needs VALUES IN (...)", pd.GetName())
	}
	p := tablePartition{name: pd.GetName()}
	for j, b := range pd.GetIn() {
		vals, err := ps.values(s, b, false, fmt.Sprintf("%s.in[%d]", field, j), pd.GetName())
		if err != nil {
			return err
		}
		tuple := make([]Value, len(vals))
		for i := range vals {
			tuple[i] = vals[i].v
		}
		for _, q := range append(ps.parts, p) {
			for _, t := range q.in {
				if ps.equalTuple(t, tuple) {
					return fieldErr(field, "partition %s: value %s is also in partition %s", pd.GetName(), ps.render(tuple), q.name)
				}
			}
		}
		p.in = append(p.in, tuple)
	}
	ps.parts = append(ps.parts, p)
	return nil
}

// minValue is the smallest value of a partition column type t, which a
// RANGE bound's missing values take (as Doris).
func minValue(t api.ColumnType) Value {
	switch t {
	case api.ColumnType_INT128:
		return Value{Hi: math.MinInt64}
	case api.ColumnType_DATE:
		return Value{Int: daysFromCivil(0, 1, 1)}
	case api.ColumnType_DATETIME:
		return Value{Int: daysFromCivil(0, 1, 1) * 86400 * 1e6}
	case api.ColumnType_CHAR, api.ColumnType_VARCHAR:
		return Value{}
	case api.ColumnType_BOOL:
		return Value{Bool: false}
	}
	lo, _ := intRange(t)
	return Value{Int: lo}
}

// compareBounds orders two RANGE bounds, component by component.
func (ps *partitions) compareBounds(a, b []bound) int {
	for i := range ps.cols {
		switch {
		case a[i].max && b[i].max:
			continue
		case a[i].max:
			return 1
		case b[i].max:
			return -1
		}
		if c := compareValues(ps.types[i], a[i].v, b[i].v); c != 0 {
			return c
		}
	}
	return 0
}

// compareRow orders a row's partition key against a bound (NULL below
// every value, as Doris).
func (ps *partitions) compareRow(row []Value, b []bound) int {
	for i, col := range ps.cols {
		if b[i].max {
			return -1
		}
		if c := compareValues(ps.types[i], row[col], b[i].v); c != 0 {
			return c
		}
	}
	return 0
}

// equalTuple reports whether two LIST tuples are equal (NULL equals
// nothing).
func (ps *partitions) equalTuple(a, b []Value) bool {
	for i := range a {
		if a[i].Null || b[i].Null || compareValues(ps.types[i], a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// rowIn reports whether a row's partition key is the LIST tuple t.
func (ps *partitions) rowIn(row []Value, t []Value) bool {
	for i, col := range ps.cols {
		if row[col].Null || compareValues(ps.types[i], row[col], t[i]) != 0 {
			return false
		}
	}
	return true
}

// find returns the index of the partition a table row falls in, or -1.
func (ps *partitions) find(row []Value) int {
	for k := range ps.parts {
		p := &ps.parts[k]
		if ps.list {
			for _, t := range p.in {
				if ps.rowIn(row, t) {
					return k
				}
			}
			continue
		}
		if (p.lo == nil || ps.compareRow(row, p.lo) >= 0) && ps.compareRow(row, p.hi) < 0 {
			return k
		}
	}
	return -1
}

// render writes a partition key tuple as Doris writes partition values:
// ("v1", "v2").
func (ps *partitions) render(tuple []Value) string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range tuple {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(renderKeyValue(ps.types[i], tuple[i]))
	}
	b.WriteByte(')')
	return b.String()
}

// describeRow is the tuple of an error row: the row's partition columns,
// name=value.
func (ps *partitions) describeRow(row []Value) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, col := range ps.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ps.names[i])
		b.WriteByte('=')
		b.WriteString(renderKeyValue(ps.types[i], row[col]))
	}
	b.WriteByte(')')
	return b.String()
}

// renderKeyValue renders a value of a partition column type.
func renderKeyValue(t api.ColumnType, v Value) string {
	if v.Null {
		return "NULL"
	}
	switch t {
	case api.ColumnType_INT128:
		return FormatDecimal(v, 0)
	case api.ColumnType_DATE:
		y, m, d := civilFromDays(v.Int)
		return fmt.Sprintf("%q", fmt.Sprintf("%04d-%02d-%02d", y, m, d))
	case api.ColumnType_DATETIME:
		days := floorDiv(v.Int, 86400*1e6)
		us := v.Int - days*86400*1e6
		y, m, d := civilFromDays(days)
		s := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, m, d, us/3600e6, us/60e6%60, us/1e6%60)
		if f := us % 1e6; f != 0 {
			s += strings.TrimRight(fmt.Sprintf(".%06d", f), "0")
		}
		return strconv.Quote(s)
	case api.ColumnType_CHAR, api.ColumnType_VARCHAR:
		if len(v.Str) > maxQuoted {
			return strconv.Quote(v.Str[:maxQuoted]) + "..."
		}
		return strconv.Quote(v.Str)
	case api.ColumnType_BOOL:
		return strconv.FormatBool(v.Bool)
	}
	return strconv.FormatInt(v.Int, 10)
}

// partitionFilter is a parser's check of its rows against the table's
// partitions: allowed, when not nil, marks the partitions the load names
// (Doris PARTITION (p1, p2)); a row of another is an error row too.
type partitionFilter struct {
	ps      *partitions
	allowed []bool
}

// newPartitionFilter checks a load's target partitions against s.
// Errors are *FieldError naming target_partitions.
func newPartitionFilter(s *Schema, targets []string) (*partitionFilter, error) {
	if s.parts == nil {
		if len(targets) > 0 {
			return nil, fieldErr("target_partitions", "table %s has no partitions (no PARTITION BY); the load names %s", s.Name(), strings.Join(targets, ", "))
		}
		return nil, nil
	}
	f := &partitionFilter{ps: s.parts}
	if len(targets) == 0 {
		return f, nil
	}
	f.allowed = make([]bool, len(s.parts.parts))
	for _, name := range targets {
		found := false
		for k := range s.parts.parts {
			if strings.EqualFold(s.parts.parts[k].name, name) {
				if f.allowed[k] {
					return nil, fieldErr("target_partitions", "partition %s named twice", name)
				}
				f.allowed[k], found = true, true
			}
		}
		if !found {
			names := make([]string, len(s.parts.parts))
			for k := range s.parts.parts {
				names[k] = s.parts.parts[k].name
			}
			return nil, fieldErr("target_partitions", "table %s has no partition %s (it has %s)", s.Name(), name, strings.Join(names, ", "))
		}
	}
	return f, nil
}

// check returns the error row of a table row outside every partition
// the load may write, as Doris words it, or nil.
func (f *partitionFilter) check(row []Value) *ParseError {
	k := f.ps.find(row)
	if k >= 0 && (f.allowed == nil || f.allowed[k]) {
		return nil
	}
	reason := "no partition for this tuple. tuple=" + f.ps.describeRow(row)
	if k >= 0 {
		reason += " (partition " + f.ps.parts[k].name + " is not among the partitions the load names)"
	}
	return &ParseError{Reason: reason}
}
