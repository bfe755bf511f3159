package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/sink"
)

// rowsOf decodes a whole block, failing t on an error.
func blockRows(t testing.TB, first, v []byte) []KV {
	t.Helper()
	rows, err := decodeRowBlock(first, v)
	if err != nil {
		t.Fatalf("decode block %x: %v", first, err)
	}
	return rows
}

func kvsEqual(a, b []KV) bool {
	return slices.EqualFunc(a, b, func(x, y KV) bool { return bytes.Equal(x.Key, y.Key) && bytes.Equal(x.Value, y.Value) })
}

// randomRows returns n sorted rows with distinct keys of stream (job,
// partition), offsets from `from` with gaps, values of random sizes up to
// maxValue, some with an element suffix (table.AppendElement).
func randomRows(rng *rand.Rand, job uint64, partition int32, from int64, n, maxValue int) []KV {
	rows := make([]KV, 0, n)
	o := from
	for len(rows) < n {
		k := rowKey(job, partition, o)
		v := make([]byte, rng.IntN(maxValue+1))
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		rows = append(rows, KV{Key: k, Value: v})
		if rng.IntN(4) == 0 && len(rows) < n { // an element row of the same record
			rows = append(rows, KV{Key: binary.BigEndian.AppendUint32(slices.Clone(k), uint32(1+rng.IntN(3))), Value: []byte("el")})
		}
		o += 1 + int64(rng.IntN(3))
	}
	return rows
}

// TestRowBlockCodec: splitRowBlocks' blocks are within the bounds, sized
// exactly, and decode to the rows.
func TestRowBlockCodec(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, c := range []struct{ n, maxValue int }{{1, 0}, {1, 200 << 10}, {10, 10}, {5000, 0}, {3000, 300}, {50, 100 << 10}} {
		rows := randomRows(rng, 7, 2, 100, c.n, c.maxValue)
		var got []KV
		splitRowBlocks(rows, func(run []KV, size int) {
			if size != rowBlockSize(run) {
				t.Fatalf("size %d, rowBlockSize %d", size, rowBlockSize(run))
			}
			if len(run) > rowBlockMaxRows || (len(run) > 1 && size > rowBlockTarget) {
				t.Fatalf("block of %d rows, %d bytes", len(run), size)
			}
			v := appendRowBlock(nil, run)
			if len(v) != size {
				t.Fatalf("block of %d bytes, sized %d", len(v), size)
			}
			got = append(got, blockRows(t, run[0].Key, v)...)
			// The compressed block, when it is one, holds the same rows.
			if p, _, _, ok := packRowBlock(run, nil, nil); ok {
				if p[0] != rowBlockV2 || len(p) >= size {
					t.Fatalf("a packed block of %d bytes (format %d) from %d", len(p), p[0], size)
				}
				if again := blockRows(t, run[0].Key, p); !kvsEqual(again, run) {
					t.Fatalf("a packed block of %d rows decodes to %d other rows", len(run), len(again))
				}
			}
		})
		if !kvsEqual(got, rows) {
			t.Fatalf("%d rows of values up to %d bytes: blocks hold %d rows, not the same", c.n, c.maxValue, len(got))
		}
	}
}

// FuzzRowBlock: any bytes decode to rows or an error, never a panic; a
// block decodes to the rows it was made of.
func FuzzRowBlock(f *testing.F) {
	f.Add(appendRowBlock(nil, []KV{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b")}}), []byte("a"))
	f.Add([]byte{rowBlockV1, 1, 1, 'a', 1, 'a', 0}, []byte("a"))
	f.Add([]byte{rowBlockV1, 0xff, 0xff, 0xff, 0xff, 0x0f}, []byte{})
	packed := func(rows ...KV) []byte {
		p, _, _, ok := packRowBlock(rows, nil, nil)
		if !ok {
			panic("not packed")
		}
		return p
	}
	many := []KV{{Key: []byte("a"), Value: bytes.Repeat([]byte("xyz"), 100)}, {Key: []byte("b"), Value: bytes.Repeat([]byte("xyz"), 50)}}
	f.Add(packed(many...), []byte("a"))
	f.Add([]byte{rowBlockV2, 1, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0x0f, 0}, []byte("a"))
	f.Fuzz(func(t *testing.T, v, first []byte) {
		rows, err := decodeRowBlock(first, v)
		if err != nil {
			if !errors.Is(err, errRowBlock) {
				t.Fatalf("error %v does not wrap errRowBlock", err)
			}
			return
		}
		// What decodes, encodes to a block of the same rows, packed or not.
		if again := blockRows(t, first, appendRowBlock(nil, rows)); !kvsEqual(again, rows) {
			t.Fatalf("%x decodes to %d rows that encode to other rows", v, len(rows))
		}
		if p, _, _, ok := packRowBlock(rows, nil, nil); ok {
			if again := blockRows(t, first, p); !kvsEqual(again, rows) {
				t.Fatalf("%x decodes to %d rows that pack to other rows", v, len(rows))
			}
		}
		// Random rows made from the input round-trip.
		var made []KV
		for i := 0; i+2 <= len(v) && len(made) < 50; i += 2 {
			made = append(made, KV{Key: []byte{byte(len(made) >> 8), byte(len(made)), v[i]}, Value: v[i : i+int(v[i+1])%(len(v)-i)]})
		}
		if len(made) > 0 {
			if back := blockRows(t, made[0].Key, appendRowBlock(nil, made)); !kvsEqual(back, made) {
				t.Fatalf("rows %v decode to %v", made, back)
			}
		}
	})
}

// rowStore is a store with one DUPLICATE table and a model of its rows.
type rowStore struct {
	s     *Store
	name  string
	model map[string][]byte
}

func newRowStore(t *testing.T) *rowStore {
	s := openStore(t, vfs.NewMem(), Options{})
	spec := testTable("rows")
	if _, err := s.CreateTable(spec); err != nil {
		t.Fatal(err)
	}
	return &rowStore{s: s, name: spec.GetName(), model: map[string][]byte{}}
}

// write writes rows as a commit does (row blocks) when blocks, else as
// one key per row (a store written before row blocks).
func (r *rowStore) write(t *testing.T, blocks bool, rows ...KV) {
	t.Helper()
	b := r.s.db.NewBatch()
	if blocks {
		if err := r.s.writeRowBlocks(b, r.name, rows); err != nil {
			t.Fatal(err)
		}
	} else {
		for _, kv := range rows {
			_ = b.Set(append(tableRowPrefix(r.name), kv.Key...), kv.Value, nil)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	for _, kv := range rows {
		r.model[string(kv.Key)] = kv.Value
	}
}

func (r *rowStore) want() []KV {
	var out []KV
	for k, v := range r.model {
		out = append(out, KV{Key: []byte(k), Value: v})
	}
	slices.SortFunc(out, func(a, b KV) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// check compares the scans (whole, and paged at every page size given)
// and CountRows with the model, and checks the rowblock INVARIANT on the
// raw keys.
func (r *rowStore) check(t *testing.T, pages ...int) {
	t.Helper()
	want := r.want()
	if n, err := r.s.CountRows(r.name); err != nil || n != int64(len(want)) {
		t.Fatalf("CountRows = %d, %v; want %d", n, err, len(want))
	}
	for _, page := range append([]int{0}, pages...) {
		var got []KV
		var after []byte
		for {
			before := len(got)
			if err := r.s.ScanRowsAfter(r.name, after, page, func(k, v []byte) error {
				got = append(got, KV{Key: k, Value: v})
				return nil
			}); err != nil {
				t.Fatalf("ScanRowsAfter(%x, %d): %v", after, page, err)
			}
			if page <= 0 || len(got)-before < page {
				break
			}
			after = got[len(got)-1].Key
		}
		if !kvsEqual(got, want) {
			t.Fatalf("scan in pages of %d: %d rows, want %d (first difference at %d)", page, len(got), len(want), firstDiff(got, want))
		}
	}
	// INVARIANT: blocks' ranges are disjoint and hold no per-row key.
	bp, rp := tableBlockPrefix(r.name), tableRowPrefix(r.name)
	it, err := r.s.newIter(bp, prefixEnd(rp))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = it.Close() }()
	var ranges [][2][]byte
	var perRow [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		k := slices.Clone(it.Key())
		switch {
		case bytes.HasPrefix(k, bp):
			rows := blockRows(t, k[len(bp):], it.Value())
			ranges = append(ranges, [2][]byte{rows[0].Key, rows[len(rows)-1].Key})
		case bytes.HasPrefix(k, rp):
			perRow = append(perRow, k[len(rp):])
		}
	}
	for i := 1; i < len(ranges); i++ {
		if bytes.Compare(ranges[i-1][1], ranges[i][0]) >= 0 {
			t.Fatalf("block [%x, %x] overlaps the next [%x, %x]", ranges[i-1][0], ranges[i-1][1], ranges[i][0], ranges[i][1])
		}
	}
	for _, k := range perRow {
		for _, rg := range ranges {
			if bytes.Compare(rg[0], k) <= 0 && bytes.Compare(k, rg[1]) <= 0 {
				t.Fatalf("per-row key %x within block [%x, %x]", k, rg[0], rg[1])
			}
		}
	}
}

func firstDiff(a, b []KV) int {
	for i := range min(len(a), len(b)) {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestRowBlocksMixedScan: rows of a store written before row blocks (one
// key per row), blocks of several streams and key spaces, element rows,
// rows of INSERT (job 0) read back in key order, whole and in pages of
// every size around the block boundaries.
func TestRowBlocksMixedScan(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	r := newRowStore(t)
	r.write(t, false, randomRows(rng, 1, 0, 0, 30, 20)...)           // an old store's rows of partition 0
	r.write(t, true, randomRows(rng, 1, 0, 1000, 40, 5000)...)       // then blocks (several, values up to 5 KB)
	r.write(t, true, randomRows(rng, 1, 1, 0, 40, 3000)...)          // partition 1
	r.write(t, false, randomRows(rng, 1, 1, 2000, 5, 10)...)         // per-row keys after partition 1's blocks
	r.write(t, true, randomRows(rng, 1|1<<40, 0, 0, 30, 4000)...)    // a rewind's second key space
	r.write(t, true, randomRows(rng, 0, -1, 1<<40, 10, 100)...)      // INSERT's rows
	r.write(t, true, randomRows(rng, 2, 0, 0, 1, rowBlockTarget)...) // a row as big as a block
	pages := []int{1, 2, 3, 5, 7, 11, 13, 64, 1000}
	r.check(t, pages...)
	// A page limit exactly at each block boundary: the cursor is a
	// block's last row, the next page starts at the next block's first.
	var bounds []int
	n := 0
	it, err := r.s.newIter(tableBlockPrefix(r.name), prefixEnd(tableBlockPrefix(r.name)))
	if err != nil {
		t.Fatal(err)
	}
	for ok := it.First(); ok; ok = it.Next() {
		b, err := openRowBlock(it.Value())
		if err != nil {
			t.Fatal(err)
		}
		n += b.count
		bounds = append(bounds, n)
	}
	_ = it.Close()
	if len(bounds) < 5 {
		t.Fatalf("only %d blocks: the test wants several", len(bounds))
	}
	want := r.want()
	for _, b := range bounds[:len(bounds)-1] {
		// All rows up to the boundary in one page, then the rest after it.
		var got []KV
		collect := func(k, v []byte) error { got = append(got, KV{Key: k, Value: v}); return nil }
		if err := r.s.ScanRowsAfter(r.name, nil, b, collect); err != nil {
			t.Fatal(err)
		}
		if err := r.s.ScanRowsAfter(r.name, got[len(got)-1].Key, 0, collect); err != nil {
			t.Fatal(err)
		}
		if !kvsEqual(got, want) {
			t.Fatalf("a page of %d then the rest: %d rows, want %d", b, len(got), len(want))
		}
	}
	// A cursor that is no stored key, inside a block's range.
	mid := want[len(want)/2].Key
	after := append(slices.Clone(mid), 0xff) // between mid and its successor (or an element row of it)
	var got []KV
	if err := r.s.ScanRowsAfter(r.name, after, 3, func(k, v []byte) error { got = append(got, KV{Key: k, Value: v}); return nil }); err != nil {
		t.Fatal(err)
	}
	i, _ := slices.BinarySearchFunc(want, after, func(kv KV, k []byte) int { return bytes.Compare(kv.Key, k) })
	if !kvsEqual(got, want[i:i+3]) {
		t.Fatalf("after %x: %d rows, not the 3 following it", after, len(got))
	}
}

// TestRowBlockRewriteMerges: the sink contract lets a job write a key
// again (a reset of positions within a key space); a write whose range
// meets stored blocks or per-row keys merges with them, the new rows
// winning, and the INVARIANT still holds. Random writes against a model.
func TestRowBlockRewriteMerges(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	r := newRowStore(t)
	// A store written before row blocks: per-row keys, rewritten too.
	for range 10 {
		r.write(t, false, randomRows(rng, 1, int32(rng.IntN(3)), rng.Int64N(600), 1+rng.IntN(20), 100)...)
	}
	r.write(t, true, randomRows(rng, 1, 0, 0, 100, 1000)...)
	r.write(t, true, randomRows(rng, 1, 0, 50, 100, 1000)...) // over blocks and per-row keys
	r.check(t, 7)
	for range 40 {
		part := int32(rng.IntN(3))
		from := rng.Int64N(600)
		r.write(t, true, randomRows(rng, 1, part, from, 1+rng.IntN(80), 1+rng.IntN(3000))...)
	}
	r.check(t, 1, 9, 100)
	// Rows of one key given twice in one write: the last wins.
	k := rowKey(1, 0, 5)
	r.write(t, true, KV{Key: k, Value: []byte("first")}, KV{Key: rowKey(1, 0, 4), Value: []byte("x")}, KV{Key: k, Value: []byte("last")})
	if got := r.model[string(k)]; string(got) != "last" {
		t.Fatalf("model %q", got)
	}
	r.check(t)
}

// TestRowBlockCorrupt: a block that does not decode is an error naming
// the table and the block's key, from the scan, the count and a commit
// over its range; never a panic.
func TestRowBlockCorrupt(t *testing.T) {
	for _, bad := range [][]byte{
		nil,
		{9, 1},                          // an unknown format
		{rowBlockV1, 2, 1, 'b', 1, 'a'}, // rows past the end
		appendRowBlock(nil, []KV{{Key: []byte("b"), Value: []byte("1")}}), // its first row is not its key
		append(appendRowBlock(nil, []KV{{Key: []byte("a")}}), 0),          // a byte after the last row
		{rowBlockV1, 2, 1, 'a', 1, 'a', 0, 1, 'a', 0},                     // keys out of order
		corruptPacked(1), // compressed rows that do not decompress
		corruptPacked(2), // an uncompressed length the rows do not have
		corruptPacked(3), // an uncompressed length past the bound
	} {
		r := newRowStore(t)
		r.write(t, true, KV{Key: []byte("0"), Value: []byte("ok")})
		b := r.s.db.NewBatch()
		_ = b.Set(append(tableBlockPrefix(r.name), 'a'), bad, nil)
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
		named := func(what string, err error) {
			t.Helper()
			if err == nil || !strings.Contains(err.Error(), r.name) || !strings.Contains(err.Error(), "block 61") || !errors.Is(err, errRowBlock) {
				t.Errorf("%s over block %x: %v, want an error naming %s and block 61", what, bad, err, r.name)
			}
		}
		named("ScanRowsAfter", r.s.ScanRowsAfter(r.name, nil, 0, func(k, v []byte) error { return nil }))
		_, err := r.s.CountRows(r.name)
		if len(bad) > 0 && (bad[0] == rowBlockV1 || bad[0] == rowBlockV2) && err == nil {
			// CountRows reads the header only: a block whose header is
			// sound counts; the scan finds the rest.
		} else {
			named("CountRows", err)
		}
		b = r.s.db.NewBatch()
		err = r.s.writeRowBlocks(b, r.name, []KV{{Key: []byte("a"), Value: []byte("new")}})
		_ = b.Close()
		named("writeRowBlocks", err)
	}
}

// BenchmarkScanRows is what a scan costs over row blocks, and over the
// same rows one per key (a format-1 store): a whole table, and a page of
// 100 rows at a cursor (which decodes its block up to the cursor).
func BenchmarkScanRows(b *testing.B) {
	const rows = 100_000
	value := make([]byte, 200)
	kvs := make([]KV, rows)
	for i := range kvs {
		kvs[i] = KV{Key: rowKey(1, 0, int64(i)), Value: value}
	}
	for _, blocks := range []bool{true, false} {
		s := openStore(b, vfs.NewMem(), Options{})
		spec := testTable("rows")
		if _, err := s.CreateTable(spec); err != nil {
			b.Fatal(err)
		}
		batch := s.db.NewBatch()
		if blocks {
			if err := s.writeRowBlocks(batch, spec.GetName(), kvs); err != nil {
				b.Fatal(err)
			}
		} else {
			for _, kv := range kvs {
				_ = batch.Set(append(tableRowPrefix(spec.GetName()), kv.Key...), kv.Value, nil)
			}
		}
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
		layout := "blocks"
		if !blocks {
			layout = "per-row"
		}
		b.Run(layout+"/whole", func(b *testing.B) {
			for b.Loop() {
				n := 0
				if err := s.ScanRowsAfter(spec.GetName(), nil, 0, func(k, v []byte) error { n++; return nil }); err != nil || n != rows {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
		})
		rng := rand.New(rand.NewPCG(1, 1))
		b.Run(layout+"/page100", func(b *testing.B) {
			for b.Loop() {
				after := rowKey(1, 0, rng.Int64N(rows-100))
				if err := s.ScanRowsAfter(spec.GetName(), after, 100, func(k, v []byte) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRowBlocksMultiTableCommit: a commit's rows of its table and of More
// (the same table again, another table), interleaved partitions, each
// table read back in key order with each key once, over two commits.
func TestRowBlocksMultiTableCommit(t *testing.T) {
	s := openStore(t, vfs.NewMem(), Options{})
	rec := mustCreate(t, s, 1, "a")
	other := testTable("other")
	if _, err := s.CreateTable(other); err != nil {
		t.Fatal(err)
	}
	if err := s.InitProgress(rec.Id, map[int32]int64{0: 0, 1: 0}); err != nil {
		t.Fatal(err)
	}
	var wantOwn, wantOther []KV
	for from := int64(0); from < 2000; from += 1000 {
		r0, r1 := Range{Partition: 0, From: from, To: from + 1000}, Range{Partition: 1, From: from, To: from + 1000}
		c := &Commit{JobID: rec.Id, Table: rec.Spec.Table.Name, Ranges: []Range{r0, r1}}
		p0, p1 := rangeRows(rec.Id, r0), rangeRows(rec.Id, r1)
		// Partition 0's rows interleaved with partition 1's first half;
		// the second half in More, as a multi-table commit routes them.
		for i := range 500 {
			c.Rows = append(c.Rows, p0[i], p1[i])
		}
		c.Rows = append(c.Rows, p0[500:]...)
		c.More = []sink.TableRows{{Table: other.GetName(), Rows: rangeRows(7, r0)}, {Table: rec.Spec.Table.Name, Rows: p1[500:]}}
		if err := s.CommitBatch(c); err != nil {
			t.Fatal(err)
		}
		wantOwn = append(wantOwn, p0...)
		wantOther = append(wantOther, rangeRows(7, r0)...)
	}
	wantOwn = append(wantOwn, rangeRows(rec.Id, Range{Partition: 1, From: 0, To: 2000})...)
	slices.SortFunc(wantOwn, func(a, b KV) int { return bytes.Compare(a.Key, b.Key) })
	if got := scanAll(t, s, rec.Spec.Table.Name); !kvsEqual(got, wantOwn) {
		t.Fatalf("own table: %d rows, want %d (first difference at %d)", len(got), len(wantOwn), firstDiff(got, wantOwn))
	}
	if got := scanAll(t, s, other.GetName()); !kvsEqual(got, wantOther) {
		t.Fatalf("other table: %d rows, want %d", len(got), len(wantOther))
	}
	if n, err := s.CountRows(rec.Spec.Table.Name); err != nil || n != 4000 {
		t.Fatalf("CountRows = %d, %v", n, err)
	}
}

// corruptPacked is a compressed block of key "a" broken one way: 1, its
// compressed rows cut short; 2, its header's uncompressed length one
// more than the rows'; 3, that length past maxRowBlockRaw.
func corruptPacked(how int) []byte {
	rows := []KV{{Key: []byte("a"), Value: bytes.Repeat([]byte("abc"), 200)}}
	p, _, _, ok := packRowBlock(rows, nil, nil)
	if !ok {
		panic("not packed")
	}
	// Header: format, count 1, len 1, 'a', then the uncompressed length.
	head := 4
	raw, n := binary.Uvarint(p[head:])
	body := p[head+n:]
	out := append([]byte(nil), p[:head]...)
	switch how {
	case 1:
		return append(binary.AppendUvarint(out, raw), body[:len(body)/2]...)
	case 2:
		return append(binary.AppendUvarint(out, raw+1), body...)
	default:
		return append(binary.AppendUvarint(out, maxRowBlockRaw+1), body...)
	}
}

// TestRowBlocksPacked: a table's blocks of compressible rows are written
// compressed, blocks of rows that do not compress are not, and both read
// back as the rows written (scan and count).
func TestRowBlocksPacked(t *testing.T) {
	r := newRowStore(t)
	rng := rand.New(rand.NewPCG(7, 1))
	var rows []KV
	for i := range 3000 {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, 100)
		if i >= 1500 { // random bytes (and keys a small part): no eighth saved
			v = make([]byte, 400)
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
		}
		rows = append(rows, KV{Key: fmt.Appendf(nil, "%012d%08d", 0, i), Value: v})
	}
	r.write(t, true, rows...)
	formats := map[byte]int{}
	it, err := r.s.newIter(tableBlockPrefix(r.name), prefixEnd(tableBlockPrefix(r.name)))
	if err != nil {
		t.Fatal(err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		formats[it.Value()[0]]++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if formats[rowBlockV1] == 0 || formats[rowBlockV2] == 0 {
		t.Errorf("block formats %v: want both compressed and plain blocks", formats)
	}
	r.check(t)
}

// BenchmarkPackRowBlock: the cost of compressing a block's rows, and of
// trying to when they do not compress (the block is then written plain).
func BenchmarkPackRowBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []string{"text", "random"} {
		var rows []KV
		size := 0
		for i := 0; size < rowBlockTarget-300; i++ {
			v := fmt.Appendf(nil, `{"id":%d,"customer":"c%05d","amount":%d.%02d,"note":"`, i, i%99991, i%5000, i%100)
			for len(v) < 200 {
				if kind == "random" {
					v = append(v, byte(rng.Uint32()))
				} else {
					v = append(v, byte('a'+(i*7+len(v))%26))
				}
			}
			rows = append(rows, KV{Key: fmt.Appendf(nil, "%012d%08d", 0, i), Value: v})
			size += rowEntrySize(&rows[len(rows)-1])
		}
		b.Run(kind, func(b *testing.B) {
			var raw, packed []byte
			b.SetBytes(int64(size))
			for b.Loop() {
				_, raw, packed, _ = packRowBlock(rows, raw, packed)
			}
		})
	}
}

// TestTableCompressionAdaptive: Pebble stores the tables of packed row
// blocks without compressing them again (they would not shrink), and
// compresses tables of rows that do shrink (tableCompression).
func TestTableCompressionAdaptive(t *testing.T) {
	r := newRowStore(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var packedRows, plainRows []KV
	for i := range 4000 {
		// JSON whose names repeat and whose note is random hex: packing
		// saves more than an eighth (the names), and a second MinLZ pass
		// over the packed block would save next to nothing.
		v := fmt.Appendf(nil, `{"id":%d,"customer":"c%05d","amount":%d.%02d,"paid":true,"note":"`, i, rng.IntN(99991), rng.IntN(5000), rng.IntN(100))
		for len(v) < 160 {
			v = append(v, "0123456789abcdef"[rng.IntN(16)])
		}
		v = append(v, `"}`...)
		packedRows = append(packedRows, KV{Key: fmt.Appendf(nil, "%012d%08d", 0, i), Value: v})
		plainRows = append(plainRows, KV{Key: fmt.Appendf(nil, "%012d%08d", 1, i), Value: v})
	}
	stats := func(what string) string {
		t.Helper()
		if err := r.s.db.Flush(); err != nil {
			t.Fatal(err)
		}
		tables, err := r.s.db.SSTables(pebble.WithProperties())
		if err != nil {
			t.Fatal(err)
		}
		var newest *pebble.SSTableInfo
		for _, level := range tables {
			for i := range level {
				if newest == nil || level[i].FileNum > newest.FileNum {
					newest = &level[i]
				}
			}
		}
		if newest == nil || newest.Properties == nil {
			t.Fatalf("%s: no table after a flush", what)
		}
		return newest.Properties.CompressionStats
	}
	r.write(t, true, packedRows...) // row blocks, packed at commit
	packed := stats("packed row blocks")
	r.write(t, false, plainRows...) // one key per row (a store written before row blocks)
	plain := stats("plain rows")
	t.Logf("packed: %s; plain: %s", packed, plain)
	if !strings.Contains(packed, "NoCompression") || strings.Contains(packed, "MinLZ") {
		t.Errorf("table of packed row blocks: compression %q, want its data blocks stored as they are", packed)
	}
	if !strings.Contains(plain, "MinLZ") {
		t.Errorf("table of plain rows: compression %q, want MinLZ", plain)
	}
	r.check(t)
}
