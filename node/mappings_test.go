package node

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// TestMappingCache: the cache accepts exactly what checkMapping accepts,
// whatever passed before; specs that differ only in name and source share
// one entry, and any other difference is a new one.
func TestMappingCache(t *testing.T) {
	base := func(name string) *api.JobSpec {
		s := &api.JobSpec{Name: name, Format: "csv",
			Table: &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}, {Name: "w", Type: api.ColumnType_STRING}}},
			Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Topic: "topic_" + name}}
		config.ApplyDefaults(s)
		return s
	}
	with := func(name string, edit func(*api.JobSpec)) *api.JobSpec {
		s := base(name)
		edit(s)
		return s
	}
	c := newMappingCache()
	for _, tc := range []struct {
		name    string
		spec    *api.JobSpec
		entries int // cached mappings after the check
	}{
		{"first", base("a"), 1},
		{"other name and topic", base("b"), 1},
		{"kinesis source", with("c", func(s *api.JobSpec) { s.Kafka = nil; s.Kinesis = &api.KinesisSpec{Stream: "s"} }), 1},
		{"bad column mapping", with("d", func(s *api.JobSpec) { s.ColumnsMapping = []string{"v = nosuch + 1"} }), 1},
		{"good column mapping", with("e", func(s *api.JobSpec) { s.ColumnsMapping = []string{"v", "w"} }), 2},
		{"bad where", with("f", func(s *api.JobSpec) { s.Where = "nosuch > 1" }), 2},
		{"other table", with("g", func(s *api.JobSpec) { s.Table.Name = "t2" }), 3},
		{"bad sequence column", with("h", func(s *api.JobSpec) { s.SequenceColumn = "v" }), 3},
		{"first again", base("i"), 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := checkMapping(proto.Clone(tc.spec).(*api.JobSpec))
			got := c.check(tc.spec)
			if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
				t.Fatalf("cached check = %v, checkMapping = %v", got, want)
			}
			if n := len(c.ok); n != tc.entries {
				t.Fatalf("%d mappings cached, want %d", n, tc.entries)
			}
		})
	}
	var nilCache *mappingCache
	if err := nilCache.check(with("j", func(s *api.JobSpec) { s.Where = "nosuch > 1" })); err == nil {
		t.Fatal("a nil cache accepted a bad mapping")
	}
}
