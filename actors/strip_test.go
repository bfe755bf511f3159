package actors

import (
	"context"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// TestCollectStripOuterArray: with strip_outer_array a record's elements
// are rows of a DUPLICATE table under distinct keys (none overwrites
// another), the same keys when the batch is read again (a replay rewrites
// them: exactly once), and an element that does not convert is an error
// row naming the element, with the element as its raw bytes.
func TestCollectStripOuterArray(t *testing.T) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}})
	if err != nil {
		t.Fatal(err)
	}
	f := table.Format{Kind: "json", StripOuterArray: true}
	recs := []string{`[{"id":1},{"id":2},{"id":3}]`, `[{"id":4},{"id":"x"}]`, `{"id":5}`}
	batch := &sources.Batch{Next: map[int32]int64{0: 3}}
	for i, r := range recs {
		batch.Records = append(batch.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(r)})
		batch.Bytes += int64(len(r))
	}
	cfg := taskConfig{jobID: 1, keySpace: 1, schema: schema, format: f, settings: testSettings(Settings{})}
	keys := func() []string {
		parser, err := table.NewParser(schema, f)
		if err != nil {
			t.Fatal(err)
		}
		out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
		if out.err != nil {
			t.Fatal(out.err)
		}
		c := out.commit
		if c.loaded != 4 || len(c.rows) != 4 || len(c.errorRows) != 2 {
			t.Fatalf("loaded %d (%d rows), %d error rows; want 4, 2", c.loaded, len(c.rows), len(c.errorRows))
		}
		if er := c.errorRows[0]; er.Offset != 1 || string(er.Raw) != `{"id":"x"}` || !strings.HasPrefix(er.Reason, `element 1: column id: "x" is not an INT64`) {
			t.Errorf("element error row: offset %d raw %q reason %q", er.Offset, er.Raw, er.Reason)
		}
		if er := c.errorRows[1]; er.Offset != 2 || !strings.Contains(er.Reason, "`strip_outer_array` must be FALSE") {
			t.Errorf("record error row: offset %d reason %q", er.Offset, er.Reason)
		}
		var out2 []string
		for _, kv := range c.rows {
			out2 = append(out2, string(kv.Key))
		}
		return out2
	}
	first, again := keys(), keys()
	seen := map[string]bool{}
	for i, k := range first {
		if seen[k] {
			t.Errorf("row %d: key %x used twice", i, k)
		}
		seen[k] = true
		if i > 0 && k <= first[i-1] {
			t.Errorf("row %d: key %x does not sort after %x", i, k, first[i-1])
		}
	}
	if strings.Join(first, ",") != strings.Join(again, ",") {
		t.Errorf("a replay makes other keys: %x, then %x", first, again)
	}
}

// TestCollectCSVLines: a csv record's lines are rows under distinct keys,
// the same on a replay; its header lines (skip_lines) are none, and a bad
// line is an error row with that line as its raw bytes.
func TestCollectCSVLines(t *testing.T) {
	schema, err := table.NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}})
	if err != nil {
		t.Fatal(err)
	}
	f := table.Format{Kind: "csv", SkipLines: 1}
	recs := []string{"id\n1\n2\n3\n", "id\n4\nx", "id"}
	batch := &sources.Batch{Next: map[int32]int64{0: 3}}
	for i, r := range recs {
		batch.Records = append(batch.Records, sources.Record{Partition: 0, Offset: int64(i), Value: []byte(r)})
		batch.Bytes += int64(len(r))
	}
	cfg := taskConfig{jobID: 1, keySpace: 1, schema: schema, format: f, settings: testSettings(Settings{})}
	keys := func() []string {
		parser, err := table.NewParser(schema, f)
		if err != nil {
			t.Fatal(err)
		}
		out := collect(context.Background(), cfg, fixedReader{batch}, parser, nil, map[int32]int64{0: 0}, nil)
		if out.err != nil {
			t.Fatal(out.err)
		}
		c := out.commit
		if c.loaded != 4 || len(c.rows) != 4 || len(c.errorRows) != 1 {
			t.Fatalf("loaded %d (%d rows), %d error rows; want 4, 1", c.loaded, len(c.rows), len(c.errorRows))
		}
		if er := c.errorRows[0]; er.Offset != 1 || string(er.Raw) != "x" || !strings.Contains(er.Reason, `"x" is not an INT64`) {
			t.Errorf("line error row: offset %d raw %q reason %q", er.Offset, er.Raw, er.Reason)
		}
		var out2 []string
		for _, kv := range c.rows {
			out2 = append(out2, string(kv.Key))
		}
		return out2
	}
	first, again := keys(), keys()
	seen := map[string]bool{}
	for i, k := range first {
		if seen[k] {
			t.Errorf("row %d: key %x used twice", i, k)
		}
		seen[k] = true
	}
	if strings.Join(first, ",") != strings.Join(again, ",") {
		t.Errorf("a replay makes other keys: %x, then %x", first, again)
	}
}
