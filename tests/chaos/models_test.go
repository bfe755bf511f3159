package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/ledger"
)

// Model tables in the chaos suite: the same records as the ledger jobs,
// loaded into a UNIQUE table with a sequence column (updates whose
// sequence runs against source order, deletes that honour it) and into an
// AGGREGATE table (SUM, MIN, MAX), each checked at the end against a model
// of the expected final table (key -> row) computed from the produced
// records. Keyed rows are not one per source position, so the ledger check
// cannot see a batch applied twice or a late update that won; these checks
// can: a replayed batch shows in the sums and in the loaded-rows
// statistic, a lost sequence comparison in the UNIQUE table's rows.

// Model table mappings, from a record's writer w and sequence seq. A
// UNIQUE key belongs to one writer, so its rows are in one partition, in
// source order (Doris orders a key's rows within a partition only); its
// version ver runs against seq; every 7th row (d = 3) deletes its key.
// AGGREGATE keys span writers and partitions: SUM, MIN and MAX do not
// depend on the order commits of different tasks arrive in.
const (
	uniqueKeysPerWriter = 64
	aggregateKeys       = 32
)

func uniqueKey(p ledger.Payload) int64 { return p.W*1000 + p.Seq%uniqueKeysPerWriter }
func uniqueVer(p ledger.Payload) int64 { return (p.Seq * 7919) % 1000 }
func uniqueDel(p ledger.Payload) int64 { return p.Seq % 7 }

// uniqueSpec is a UNIQUE table keyed by k with sequence column ver, loaded
// WITH MERGE, DELETE ON d = 3.
func uniqueSpec(name, tbl, topic string, brokers []string, concurrency int32, batchRows int64) *api.JobSpec {
	s := chaosSpec(name, tbl, topic, brokers, concurrency, batchRows)
	s.Table = &api.TableSpec{Name: tbl, Model: api.TableModel_UNIQUE, KeyColumns: []string{"k"}, SequenceColumn: "ver",
		Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64}, {Name: "ver", Type: api.ColumnType_INT64},
			{Name: "w", Type: api.ColumnType_INT64}, {Name: "seq", Type: api.ColumnType_INT64}, {Name: "d", Type: api.ColumnType_INT64}}}
	s.Jsonpaths = []string{"$.w", "$.seq"}
	s.ColumnsMapping = []string{"w", "seq",
		fmt.Sprintf("k = w * 1000 + seq %% %d", uniqueKeysPerWriter), "ver = (seq * 7919) % 1000", "d = seq % 7"}
	s.MergeType, s.DeleteOn = api.MergeType_MERGE, "d = 3"
	return s
}

// aggregateSpec is an AGGREGATE table keyed by k = seq % 32 with n (SUM of
// 1: the rows), s (SUM of seq), mx (MAX) and mn (MIN).
func aggregateSpec(name, tbl, topic string, brokers []string, concurrency int32, batchRows int64) *api.JobSpec {
	s := chaosSpec(name, tbl, topic, brokers, concurrency, batchRows)
	s.Table = &api.TableSpec{Name: tbl, Model: api.TableModel_AGGREGATE, KeyColumns: []string{"k"},
		Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64},
			{Name: "n", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM},
			{Name: "s", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_SUM},
			{Name: "mx", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MAX},
			{Name: "mn", Type: api.ColumnType_INT64, Aggregation: api.Aggregation_MIN}}}
	s.Jsonpaths = []string{"$.w", "$.seq"}
	s.ColumnsMapping = []string{"w", "seq", fmt.Sprintf("k = seq %% %d", aggregateKeys), "n = 1", "s = seq", "mx = seq", "mn = seq"}
	return s
}

// modelRow is a row of a model table: its column values by name.
type modelRow map[string]int64

func (r modelRow) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(r)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", k, r[k])
	}
	return b.String()
}

// inSourceOrder lists the records by partition, then offset.
func inSourceOrder(recs map[ledger.PartOff]ledger.Payload) []ledger.PartOff {
	pos := slices.Collect(maps.Keys(recs))
	slices.SortFunc(pos, func(a, b ledger.PartOff) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(a.Offset - b.Offset)
	})
	return pos
}

// expectUnique is the UNIQUE table the records make: per key, in source
// order, a row (or a delete) replaces the key's state when its ver is >=
// the state's (a delete leaves a tombstone with its ver); the table holds
// the keys whose state is a row.
func expectUnique(recs map[ledger.PartOff]ledger.Payload) map[int64]modelRow {
	type state struct {
		row modelRow
		del bool
	}
	st := map[int64]*state{}
	for _, at := range inSourceOrder(recs) {
		p := recs[at]
		k, ver := uniqueKey(p), uniqueVer(p)
		if old := st[k]; old != nil && ver < old.row["ver"] {
			continue
		}
		st[k] = &state{row: modelRow{"k": k, "ver": ver, "w": p.W, "seq": p.Seq, "d": uniqueDel(p)}, del: uniqueDel(p) == 3}
	}
	out := map[int64]modelRow{}
	for k, s := range st {
		if !s.del {
			out[k] = s.row
		}
	}
	return out
}

// expectAggregate is the AGGREGATE table the records make.
func expectAggregate(recs map[ledger.PartOff]ledger.Payload) map[int64]modelRow {
	out := map[int64]modelRow{}
	for _, p := range recs {
		k := p.Seq % aggregateKeys
		r := out[k]
		if r == nil {
			out[k] = modelRow{"k": k, "n": 1, "s": p.Seq, "mx": p.Seq, "mn": p.Seq}
			continue
		}
		r["n"]++
		r["s"] += p.Seq
		r["mx"] = max(r["mx"], p.Seq)
		r["mn"] = min(r["mn"], p.Seq)
	}
	return out
}

// isModelJob reports whether a job loads a keyed (model) table.
func isModelJob(info *api.JobInfo) bool {
	m := info.GetSpec().GetTable().GetModel()
	return m == api.TableModel_UNIQUE || m == api.TableModel_AGGREGATE
}

// checkModel compares a drained model job's table with the model of it
// computed from every record of its topic, and its loaded-rows statistic
// with the record count (every record is a loaded row: an upsert or a
// delete). It returns the differences, at most a few.
func checkModel(c *client.Client, info *api.JobInfo, recs map[ledger.PartOff]ledger.Payload) (rows int, diffs []string) {
	spec := info.GetSpec()
	var want map[int64]modelRow
	if spec.GetTable().GetModel() == api.TableModel_UNIQUE {
		want = expectUnique(recs)
	} else {
		want = expectAggregate(recs)
	}
	ctx, cancel := ctxFor(120 * time.Second)
	defer cancel()
	schema, scanned, err := c.Scan(ctx, spec.GetTable().GetName(), 0)
	if err != nil {
		return 0, []string{fmt.Sprintf("scan: %v", err)}
	}
	got := map[int64]modelRow{}
	for _, r := range scanned {
		row := modelRow{}
		for i, col := range schema.GetColumns() {
			if i < len(r.GetValues()) {
				row[col.GetName()] = r.GetValues()[i].GetInt64()
			}
		}
		if _, dup := got[row["k"]]; dup {
			diffs = append(diffs, fmt.Sprintf("key %d twice", row["k"]))
		}
		got[row["k"]] = row
	}
	add := func(format string, a ...any) {
		if len(diffs) < maxDetails {
			diffs = append(diffs, fmt.Sprintf(format, a...))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[k]; {
		case !ok:
			add("key %d missing, want %s", k, want[k])
		case g.String() != want[k].String():
			add("key %d is %s, want %s", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			add("key %d is %s, want no row (deleted or never loaded)", k, got[k])
		}
	}
	if n := info.GetStats().GetLoadedRows(); n != int64(len(recs)) {
		add("loaded rows statistic %d, want %d (one per record)", n, len(recs))
	}
	return len(got), diffs
}
