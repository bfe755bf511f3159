package table

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// bnd is a partition bound or LIST tuple; "MAX" is MAXVALUE.
func bnd(vals ...string) *api.PartitionBound {
	b := &api.PartitionBound{}
	for _, v := range vals {
		if v == "MAX" {
			b.Values = append(b.Values, &api.PartitionBoundValue{Max: true})
		} else {
			b.Values = append(b.Values, &api.PartitionBoundValue{Text: v})
		}
	}
	return b
}

func lessThan(name string, vals ...string) *api.TablePartition {
	return &api.TablePartition{Name: name, Upper: bnd(vals...)}
}

func fixed(name string, lo, hi []string) *api.TablePartition {
	return &api.TablePartition{Name: name, Lower: bnd(lo...), Upper: bnd(hi...)}
}

func in(name string, tuples ...[]string) *api.TablePartition {
	p := &api.TablePartition{Name: name}
	for _, t := range tuples {
		p.In = append(p.In, bnd(t...))
	}
	return p
}

// partitioned is typedSchema with partitioning.
func partitioned(t *testing.T, parts *api.TablePartitioning, cols ...string) (*Schema, error) {
	t.Helper()
	spec := proto.Clone(typedSchema(t, cols...).Spec()).(*api.TableSpec)
	spec.Partitioning = parts
	return NewSchema(spec)
}

// TestPartitionMembership: a row outside every partition is an error row
// whose reason is Doris's ("no partition for this tuple"); the others
// load. The first table is the corpus cases
// load/test_stream_load_strict_mode_and_filter_ratio__sql_no_partition_*
// (PARTITION BY RANGE(id): p0 LESS THAN ("60"), p1 LESS THAN ("80")),
// whose expected.out keeps ids 1..79 and filters 80 and above.
func TestPartitionMembership(t *testing.T) {
	type row struct {
		rec string
		ok  bool
	}
	tests := []struct {
		name    string
		parts   *api.TablePartitioning
		cols    []string
		targets []string
		rows    []row
	}{
		{"LESS THAN (corpus no_partition cases)",
			&api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("p0", "60"), lessThan("p1", "80")}},
			[]string{"id int", "name string"}, nil,
			[]row{{"1|a1", true}, {"59|a59", true}, {"60|a60", true}, {"79|a79", true}, {"80|a80", false}, {"100|a100", false}, {"-5|x", true}, {`\N|x`, true}}},
		{"LESS THAN MAXVALUE takes every row",
			&api.TablePartitioning{Columns: []string{"k"}, Partitions: []*api.TablePartition{lessThan("a", "MAX")}},
			[]string{"k smallint", "v int"}, nil,
			[]row{{"32767|1", true}, {"-32768|1", true}, {`\N|1`, true}}},
		{"fixed ranges with a gap, MAXVALUE above",
			&api.TablePartitioning{Columns: []string{"k"}, Partitions: []*api.TablePartition{
				fixed("a", []string{"-9223372036854775808"}, []string{"100000"}),
				fixed("b", []string{"200000"}, []string{"MAX"})}},
			[]string{"k bigint", "v int"}, nil,
			[]row{{"-9223372036854775808|1", true}, {"99999|1", true}, {"100000|1", false}, {"150000|1", false}, {"200000|1", true}, {"9223372036854775807|1", true}, {`\N|1`, false}}},
		{"LESS THAN after a fixed range starts at its upper bound",
			&api.TablePartitioning{Columns: []string{"d"}, Partitions: []*api.TablePartition{
				lessThan("p201701", "2017-02-01"),
				fixed("p2018", []string{"2018-01-01"}, []string{"2019-01-01"}),
				lessThan("other", "MAX")}},
			[]string{"d date", "v int"}, nil,
			[]row{{"2016-12-31|1", true}, {"2017-02-01|1", false}, {"2017-12-31|1", false}, {"2018-06-01|1", true}, {"2019-01-01|1", true}, {"2100-01-01|1", true}}},
		{"multi-column LESS THAN: missing values are the smallest",
			&api.TablePartitioning{Columns: []string{"d", "id"}, Partitions: []*api.TablePartition{
				lessThan("p1", "2017-02-01", "1000"), lessThan("p2", "2017-03-01")}},
			[]string{"d date", "id int"}, nil,
			[]row{{"2017-02-01|999|", true}, {"2017-02-01|1000", true}, {"2017-02-28|5", true}, {"2017-03-01|-2147483648", false}}},
		{"DATETIME bounds",
			&api.TablePartitioning{Columns: []string{"t"}, Partitions: []*api.TablePartition{lessThan("p", "2024-01-01 12:00:00")}},
			[]string{"t datetime", "v int"}, nil,
			[]row{{"2024-01-01 11:59:59|1", true}, {"2024-01-01 12:00:00|1", false}}},
		{"LIST",
			&api.TablePartitioning{List: true, Columns: []string{"city"}, Partitions: []*api.TablePartition{
				in("p_east", []string{"Beijing"}, []string{"Shanghai"}), in("p_west", []string{"Chengdu"})}},
			[]string{"city varchar(20)", "v int"}, nil,
			[]row{{"Beijing|1", true}, {"Chengdu|1", true}, {"beijing|1", false}, {`\N|1`, false}}},
		{"multi-column LIST",
			&api.TablePartitioning{List: true, Columns: []string{"id", "city"}, Partitions: []*api.TablePartition{
				in("p1", []string{"1", "Beijing"}, []string{"1", "Shanghai"})}},
			[]string{"id int", "city varchar(20)"}, nil,
			[]row{{"1|Beijing", true}, {"2|Beijing", false}}},
		{"PARTITION (p1): a row of another partition is an error row",
			&api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("p0", "60"), lessThan("p1", "80")}},
			[]string{"id int", "name string"}, []string{"P1"},
			[]row{{"60|a", true}, {"10|a", false}, {"90|a", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := partitioned(t, tt.parts, tt.cols...)
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewParser(s, Format{ColumnSeparator: "|", NonStrict: true, TargetPartitions: tt.targets})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tt.rows {
				rec := strings.TrimSuffix(r.rec, "|")
				_, err := p.Parse([]byte(rec), nil)
				switch {
				case r.ok && err != nil:
					t.Errorf("%s: %v, want a row", rec, err)
				case !r.ok && (err == nil || !strings.HasPrefix(err.Error(), "no partition for this tuple. tuple=(")):
					t.Errorf("%s: %v, want the error row \"no partition for this tuple. tuple=(...)\"", rec, err)
				}
			}
		})
	}
}

func TestPartitionReason(t *testing.T) {
	s, err := partitioned(t, &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("p0", "60"), lessThan("p1", "80")}}, "id int", "name string")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(s, Format{ColumnSeparator: "|", TargetPartitions: []string{"p0"}})
	if err != nil {
		t.Fatal(err)
	}
	for rec, want := range map[string]string{
		"80|x": "no partition for this tuple. tuple=(id=80)",
		"70|x": "no partition for this tuple. tuple=(id=70) (partition p1 is not among the partitions the load names)",
	} {
		if _, err := p.Parse([]byte(rec), nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", rec, err, want)
		}
	}
	// A WHERE that leaves the row out wins: Doris filters before it
	// looks for a partition.
	p, err = NewParser(s, Format{ColumnSeparator: "|", Columns: []string{"id", "name"}, Where: "id < 80"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]byte("90|x"), nil); !errors.Is(err, ErrFiltered) {
		t.Errorf("a row the WHERE leaves out: %v, want ErrFiltered", err)
	}
	// An INSERT outside every partition is refused.
	if _, err := s.RowOf(nil, []*api.InsertCell{{Text: "90"}, {Text: "x"}}, time.Time{}); err == nil || !strings.Contains(err.Error(), "no partition for this tuple") {
		t.Errorf("INSERT outside every partition: %v", err)
	}
}

// TestPartitioningRefused: partitionings Doris refuses (or loadnode cannot
// model) are refused by name when the table is made; a load naming a
// partition the table lacks is refused when the job is made.
func TestPartitioningRefused(t *testing.T) {
	tests := []struct {
		name  string
		parts *api.TablePartitioning
		cols  []string
		msg   string
	}{
		{"unknown column", &api.TablePartitioning{Columns: []string{"nope"}, Partitions: []*api.TablePartition{lessThan("p", "1")}}, []string{"id int"}, "unknown column"},
		{"RANGE on a string", &api.TablePartitioning{Columns: []string{"s"}, Partitions: []*api.TablePartition{lessThan("p", "a")}}, []string{"s varchar(10)"}, "Doris partitions by RANGE only"},
		{"RANGE on a double", &api.TablePartitioning{Columns: []string{"f"}, Partitions: []*api.TablePartition{lessThan("p", "1")}}, []string{"f double"}, "Doris partitions by RANGE only"},
		{"a value of the wrong type", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("p", "abc")}}, []string{"id int"}, `value "abc" of column id`},
		{"same upper bound", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("a", "10"), lessThan("b", "10")}}, []string{"id int"}, "same upper bound"},
		{"overlap", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{fixed("a", []string{"0"}, []string{"10"}), fixed("b", []string{"5"}, []string{"20"})}}, []string{"id int"}, "overlaps partition a"},
		{"empty range", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{fixed("a", []string{"10"}, []string{"10"})}}, []string{"id int"}, "not below the upper bound"},
		{"duplicate name", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("a", "1"), lessThan("A", "2")}}, []string{"id int"}, "duplicate partition"},
		{"a LIST value twice", &api.TablePartitioning{List: true, Columns: []string{"id"}, Partitions: []*api.TablePartition{in("a", []string{"1"}), in("b", []string{"1"})}}, []string{"id int"}, "also in partition a"},
		{"too many values", &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("a", "1", "2")}}, []string{"id int"}, "2 values for 1 partition columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := partitioned(t, tt.parts, tt.cols...)
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "table.partitioning") || !strings.Contains(fe.Msg, tt.msg) {
				t.Fatalf("NewSchema = %v, want a *FieldError on table.partitioning containing %q", err, tt.msg)
			}
		})
	}
	// Doris partitions a UNIQUE or AGGREGATE table by key columns only.
	spec := proto.Clone(typedSchema(t, "id int", "v bigint").Spec()).(*api.TableSpec)
	spec.Model, spec.KeyColumns = api.TableModel_UNIQUE, []string{"id"}
	spec.Partitioning = &api.TablePartitioning{Columns: []string{"v"}, Partitions: []*api.TablePartition{lessThan("p", "1")}}
	if _, err := NewSchema(spec); err == nil || !strings.Contains(err.Error(), "column v is not a key column of the UNIQUE table") {
		t.Errorf("UNIQUE table partitioned by a value column: %v", err)
	}
	spec.Partitioning.Columns = []string{"id"}
	if _, err := NewSchema(spec); err != nil {
		t.Errorf("UNIQUE table partitioned by its key: %v", err)
	}
	plain := typedSchema(t, "id int")
	if _, err := NewParser(plain, Format{TargetPartitions: []string{"p1"}}); err == nil || !strings.Contains(err.Error(), "has no partitions") {
		t.Errorf("PARTITION on a table without partitions: %v", err)
	}
	s, err := partitioned(t, &api.TablePartitioning{Columns: []string{"id"}, Partitions: []*api.TablePartition{lessThan("p0", "60")}}, "id int")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewParser(s, Format{TargetPartitions: []string{"p9"}}); err == nil || !strings.Contains(err.Error(), "has no partition p9 (it has p0)") {
		t.Errorf("PARTITION (p9): %v", err)
	}
}
