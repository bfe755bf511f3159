package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/minio/minlz"
)

// Row blocks: the rows of a DUPLICATE table (keyed by source position,
// table.AppendKey) are stored as blocks of consecutive rows, one Pebble key
// per block, "t/<name>\x00b/<first row key>", instead of one key per row
// under "t/<name>\x00r/": most of Pebble's flush and compaction CPU is per
// key. Rows written before blocks existed stay readable under the row
// prefix; every reader merges the two key spaces in key order.
//
// A block's value:
//
//	format byte (rowBlockV1, or rowBlockV2: the rows compressed)
//	uvarint row count (>= 1)
//	uvarint len(last row key), last row key
//	rowBlockV2 only: uvarint length of the rows uncompressed, then the
//	  rows compressed with MinLZ (one block)
//	per row, in strictly increasing key order:
//	  uvarint len(key), key, uvarint len(value), value
//
// A writer compresses a block's rows when that saves at least an eighth
// of them. Pebble compressed every table block on each flush and again on
// each compaction (MinLZ was most of their CPU); rows compressed once, as
// they are committed, also make the WAL and the memtable a third of the
// size, and Pebble's compression of blocks that do not shrink is cheap.
// The header stays uncompressed: a writer's range check and CountRows
// read it without decompressing.
//
// The first row's key is the block's key suffix. The last row key in the
// header lets a writer see a block's range without decoding it.
//
// INVARIANT (rowblock): the key ranges [first, last] of a table's blocks are
// pairwise disjoint, and no per-row key of the table lies within a block's
// range. So a key-order scan is blocks in key order, rows in each block in
// order, merged with the per-row keys. A job's commits keep it without
// reading: a commit's rows of one stream (job key space + partition, the
// 12-byte prefix of table.AppendKey) are the offsets [from, to) that no other
// commit writes (progress only moves forward; a user's rewind starts a new
// key space, invariant 26). The writer (writeRowBlocks) checks it anyway
// for every group it writes, since the sink contract allows rewriting keys
// (a ResetStarts backwards within a key space, a row key written twice):
// a group whose range meets a stored block or per-row key is merged with
// them (the new rows win), the old keys deleted and the union written as
// new blocks. Guarded by TestRowBlockRewriteMerges and
// TestRowBlocksMixedScan.

const (
	rowBlockV1 = 1
	rowBlockV2 = 2
)

// maxRowBlockRaw bounds the uncompressed rows a block's header may claim
// (a row is at most the node's max_record_size).
const maxRowBlockRaw = 1 << 30

// rowBlockTarget bounds a block's value: rows are added while the block
// stays within it; a single larger row is a block of its own.
// rowBlockMaxRows bounds the rows of a block.
const (
	rowBlockTarget  = 64 << 10
	rowBlockMaxRows = 4096
)

const tableBlockSuffix = 'b'

// tableBlockPrefix returns "t/<name>\x00b/". It sorts before the row
// prefix and the schema key ("\x00s"), which Tables relies on.
func tableBlockPrefix(name string) []byte {
	return append(tableKeyPrefix(name), tableBlockSuffix, '/')
}

// rowBlockSize is the encoded size of a block of rows.
func rowBlockSize(rows []KV) int {
	n := rowBlockHeaderSize(len(rows), rows[len(rows)-1].Key)
	for i := range rows {
		n += rowEntrySize(&rows[i])
	}
	return n
}

func rowEntrySize(kv *KV) int {
	return uvarintLen(uint64(len(kv.Key))) + len(kv.Key) + uvarintLen(uint64(len(kv.Value))) + len(kv.Value)
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendRowBlock appends the block of rows (sorted, distinct keys, at
// least one) to dst.
func appendRowBlock(dst []byte, rows []KV) []byte {
	last := rows[len(rows)-1].Key
	dst = append(dst, rowBlockV1)
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	dst = binary.AppendUvarint(dst, uint64(len(last)))
	dst = append(dst, last...)
	return appendRowEntries(dst, rows)
}

// packRowBlock returns the rowBlockV2 block of rows when compressing
// saves at least an eighth of them (ok), using and returning the scratch
// buffers raw and packed.
func packRowBlock(rows []KV, raw, packed []byte) (block, rawOut, packedOut []byte, ok bool) {
	raw = appendRowEntries(raw[:0], rows)
	last := rows[len(rows)-1].Key
	packed = append(packed[:0], rowBlockV2)
	packed = binary.AppendUvarint(packed, uint64(len(rows)))
	packed = binary.AppendUvarint(packed, uint64(len(last)))
	packed = append(packed, last...)
	packed = binary.AppendUvarint(packed, uint64(len(raw)))
	head := len(packed)
	packed, err := minlz.AppendEncoded(packed, raw, minlz.LevelFastest)
	if err != nil || len(packed)-head > len(raw)-len(raw)/8 {
		return nil, raw, packed, false
	}
	return packed, raw, packed, true
}

// appendRowEntries appends the rows' entries (uvarint len(key), key,
// uvarint len(value), value) to dst.
func appendRowEntries(dst []byte, rows []KV) []byte {
	for i := range rows {
		kv := &rows[i]
		dst = binary.AppendUvarint(dst, uint64(len(kv.Key)))
		dst = append(dst, kv.Key...)
		dst = binary.AppendUvarint(dst, uint64(len(kv.Value)))
		dst = append(dst, kv.Value...)
	}
	return dst
}

// splitRowBlocks cuts sorted rows into runs that each make one block
// within rowBlockTarget and rowBlockMaxRows (a row larger than the target
// is a run of its own), calling fn with each run and its block's size
// (rowBlockSize).
func splitRowBlocks(rows []KV, fn func(run []KV, size int)) {
	for len(rows) > 0 {
		entries, n := rowEntrySize(&rows[0]), 1
		for n < len(rows) && n < rowBlockMaxRows {
			e := rowEntrySize(&rows[n])
			if rowBlockHeaderSize(n+1, rows[n].Key)+entries+e > rowBlockTarget {
				break
			}
			entries += e
			n++
		}
		fn(rows[:n], rowBlockHeaderSize(n, rows[n-1].Key)+entries)
		rows = rows[n:]
	}
}

func rowBlockHeaderSize(count int, last []byte) int {
	return 1 + uvarintLen(uint64(count)) + uvarintLen(uint64(len(last))) + len(last)
}

var errRowBlock = errors.New("corrupt row block")

// rowBlock reads one block value. Its slices alias the value (or, for a
// compressed block, the rows decompressed on the first next).
type rowBlock struct {
	count int
	last  []byte
	// packed is a rowBlockV2 block's compressed rows until next
	// decompresses them into rest; raw is their uncompressed length.
	packed []byte
	raw    int
	rest   []byte // the rows not yet read
	read   int    // rows read
	prev   []byte // the last row key read
}

// openRowBlock reads a block's header (the caller checks that the first
// row's key is the block's key suffix).
func openRowBlock(v []byte) (rowBlock, error) {
	if len(v) == 0 || (v[0] != rowBlockV1 && v[0] != rowBlockV2) {
		if len(v) == 0 {
			return rowBlock{}, fmt.Errorf("%w: empty value", errRowBlock)
		}
		return rowBlock{}, fmt.Errorf("%w: unknown format %d", errRowBlock, v[0])
	}
	packed := v[0] == rowBlockV2
	p := v[1:]
	count, n := binary.Uvarint(p)
	if n <= 0 || count == 0 || count > rowBlockMaxRows || count > uint64(len(p)) {
		return rowBlock{}, fmt.Errorf("%w: bad row count", errRowBlock)
	}
	p = p[n:]
	last, p, err := takeBytes(p)
	if err != nil {
		return rowBlock{}, fmt.Errorf("%w: last key: %v", errRowBlock, err)
	}
	if !packed {
		return rowBlock{count: int(count), last: last, rest: p}, nil
	}
	raw, n := binary.Uvarint(p)
	if n <= 0 || raw > maxRowBlockRaw {
		return rowBlock{}, fmt.Errorf("%w: bad uncompressed length", errRowBlock)
	}
	return rowBlock{count: int(count), last: last, packed: p[n:], raw: int(raw)}, nil
}

// unpack decompresses a rowBlockV2 block's rows into rest.
func (b *rowBlock) unpack() error {
	if n, err := minlz.DecodedLen(b.packed); err != nil || n != b.raw {
		return fmt.Errorf("%w: compressed rows of %d bytes (%v), header says %d", errRowBlock, n, err, b.raw)
	}
	rest, err := minlz.Decode(make([]byte, b.raw), b.packed)
	if err != nil || len(rest) != b.raw {
		return fmt.Errorf("%w: compressed rows: %v", errRowBlock, err)
	}
	b.rest, b.packed = rest, nil
	return nil
}

func takeBytes(p []byte) (b, rest []byte, err error) {
	l, n := binary.Uvarint(p)
	if n <= 0 {
		return nil, nil, errors.New("bad length")
	}
	p = p[n:]
	if l > uint64(len(p)) {
		return nil, nil, fmt.Errorf("length %d past the end (%d bytes left)", l, len(p))
	}
	return p[:l:l], p[l:], nil
}

// next returns the next row, ok false after the last. The rows' keys must
// increase strictly, the last must be the header's, and nothing may follow
// it.
func (b *rowBlock) next() (key, value []byte, ok bool, err error) {
	if b.packed != nil {
		if err := b.unpack(); err != nil {
			return nil, nil, false, err
		}
	}
	if b.read == b.count {
		if len(b.rest) != 0 {
			return nil, nil, false, fmt.Errorf("%w: %d bytes after the last row", errRowBlock, len(b.rest))
		}
		return nil, nil, false, nil
	}
	key, p, err := takeBytes(b.rest)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: row %d key: %v", errRowBlock, b.read, err)
	}
	value, p, err = takeBytes(p)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: row %d value: %v", errRowBlock, b.read, err)
	}
	if b.read > 0 && bytes.Compare(b.prev, key) >= 0 {
		return nil, nil, false, fmt.Errorf("%w: row %d key %x does not follow %x", errRowBlock, b.read, key, b.prev)
	}
	b.rest, b.prev = p, key
	b.read++
	if b.read == b.count && !bytes.Equal(key, b.last) {
		return nil, nil, false, fmt.Errorf("%w: last row key %x, header says %x", errRowBlock, key, b.last)
	}
	return key, value, true, nil
}

// decodeRowBlock returns every row of a block whose key suffix is first
// (for tests and the rare rewrite). The rows alias v.
func decodeRowBlock(first, v []byte) ([]KV, error) {
	b, err := openRowBlock(v)
	if err != nil {
		return nil, err
	}
	rows := make([]KV, 0, b.count)
	for {
		k, val, ok, err := b.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if len(rows) == 0 && !bytes.Equal(k, first) {
			return nil, fmt.Errorf("%w: first row key %x is not the block's key %x", errRowBlock, k, first)
		}
		rows = append(rows, KV{Key: k, Value: val})
	}
	return rows, nil
}

// writeRowBlocks adds to b the rows of a DUPLICATE table, given as
// sources in write order (a key given twice keeps its last value, as
// consecutive Sets would), as row blocks: grouped by stream (the first
// rowStreamBytes of the key), each group sorted and cut into blocks. A
// group whose key range meets stored blocks or per-row keys is merged
// with them (see the rowblock INVARIANT).
//
// REQUIRES: no other writer of the table's rows runs meanwhile (the
// commits of one job hold its lock; two jobs' keys differ in their key
// space; InsertRows holds the table's model lock).
func (s *Store) writeRowBlocks(b *pebble.Batch, name string, sources ...[]KV) (err error) {
	groups := groupRows(sources...)
	if len(groups) == 0 {
		return nil
	}
	bp, rp := tableBlockPrefix(name), tableRowPrefix(name)
	it, err := s.newIter(bp, prefixEnd(rp))
	if err != nil {
		return fmt.Errorf("table %s: %w", name, err)
	}
	defer closeIter(it, &err)
	key := make([]byte, 0, len(bp)+64)
	var raw, packed []byte // packRowBlock's scratch
	for _, rows := range groups {
		old, dels, err := storedInRange(it, bp, rp, rows[0].Key, rows[len(rows)-1].Key, key)
		if err != nil {
			return fmt.Errorf("table %s: %w", name, err)
		}
		if len(dels) > 0 {
			for _, k := range dels {
				_ = b.Delete(k, nil)
			}
			rows = mergeRowRuns(old, rows)
		}
		// Rows that did not compress are not tried again in this group
		// (one stream's rows of this commit): trying costs about 0.2 µs
		// per 200-byte row that does not compress, 0.08 for one that does
		// (BenchmarkPackRowBlock).
		try := true
		splitRowBlocks(rows, func(run []KV, size int) {
			var block []byte
			var ok bool
			if try {
				block, raw, packed, ok = packRowBlock(run, raw, packed)
				try = ok
			}
			if ok {
				op := b.SetDeferred(len(bp)+len(run[0].Key), len(block))
				copy(op.Key[copy(op.Key, bp):], run[0].Key)
				copy(op.Value, block)
				_ = op.Finish()
				return
			}
			op := b.SetDeferred(len(bp)+len(run[0].Key), size)
			copy(op.Key[copy(op.Key, bp):], run[0].Key)
			if got := appendRowBlock(op.Value[:0], run); len(got) != size {
				panic(fmt.Sprintf("persistence: row block of %d bytes, sized %d", len(got), size))
			}
			_ = op.Finish()
		})
	}
	return nil
}

// rowStreamBytes is the length of a DUPLICATE row key's stream prefix:
// the 8-byte key space and the 4-byte partition of table.AppendKey.
const rowStreamBytes = 12

// groupRows groups rows by stream, each group sorted by key with one row
// per key (the last given). A group given as one sorted run (one
// partition's rows of a batch) is that run, not copied; runs of one
// stream that follow each other (batches of a group commit) are
// concatenated; anything else is sorted.
func groupRows(sources ...[]KV) [][]KV {
	type group struct {
		prefix []byte
		runs   [][]KV
	}
	var groups []group
	var index map[string]int
	for _, src := range sources {
		for start := 0; start < len(src); {
			p := streamOf(src[start].Key)
			end := start + 1
			for end < len(src) && bytes.Compare(src[end-1].Key, src[end].Key) < 0 && bytes.Equal(streamOf(src[end].Key), p) {
				end++
			}
			g, ok := index[string(p)]
			if !ok {
				if index == nil {
					index = make(map[string]int)
				}
				g = len(groups)
				index[string(p)] = g
				groups = append(groups, group{prefix: p})
			}
			groups[g].runs = append(groups[g].runs, src[start:end:end])
			start = end
		}
	}
	out := make([][]KV, len(groups))
	for i, g := range groups {
		out[i] = joinRuns(g.runs)
	}
	return out
}

// streamOf is a row key's stream prefix.
func streamOf(key []byte) []byte { return key[:min(len(key), rowStreamBytes)] }

// joinRuns returns the rows of sorted runs, given in write order, sorted
// with one row per key (the last written).
func joinRuns(runs [][]KV) []KV {
	if len(runs) == 1 {
		return runs[0]
	}
	ordered := slices.Clone(runs)
	slices.SortStableFunc(ordered, func(a, b []KV) int { return bytes.Compare(a[0].Key, b[0].Key) })
	n, disjoint := 0, true
	for i, r := range ordered {
		n += len(r)
		if i > 0 && bytes.Compare(ordered[i-1][len(ordered[i-1])-1].Key, r[0].Key) >= 0 {
			disjoint = false
		}
	}
	out := make([]KV, 0, n)
	if disjoint {
		for _, r := range ordered {
			out = append(out, r...)
		}
		return out
	}
	// Runs that overlap (a key written twice): write order decides.
	for _, r := range runs {
		out = append(out, r...)
	}
	slices.SortStableFunc(out, func(a, b KV) int { return bytes.Compare(a.Key, b.Key) })
	uniq := out[:0]
	for i := range out {
		if i+1 < len(out) && bytes.Equal(out[i].Key, out[i+1].Key) {
			continue
		}
		uniq = append(uniq, out[i])
	}
	return uniq
}

// storedInRange finds what the table stores that a group with keys
// [lo, hi] must merge with: the blocks whose range meets it and the
// per-row keys within the blocks' and the group's span. It returns their
// rows (copied, in key order) and the Pebble keys to delete.
func storedInRange(it *pebble.Iterator, bp, rp, lo, hi, scratch []byte) (old []KV, dels [][]byte, err error) {
	seek := append(append(append(scratch[:0], bp...), lo...), 0)
	var blocks [][2][]byte // Pebble key, value
	valid := it.SeekLT(seek)
	if !valid {
		if err := it.Error(); err != nil {
			return nil, nil, err
		}
		valid = it.First()
	}
	for ; valid; valid = it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, bp) {
			break
		}
		first := k[len(bp):]
		if bytes.Compare(first, hi) > 0 {
			break
		}
		if bytes.Compare(first, lo) < 0 && !bytes.Equal(streamOf(first), streamOf(lo)) {
			// A block holds one stream's rows, and a stream's keys are
			// one interval: another stream's block before lo ends
			// before it (no need to read its value).
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, err
		}
		rb, err := openRowBlock(v)
		if err != nil {
			return nil, nil, fmt.Errorf("block %x: %w", first, err)
		}
		if bytes.Compare(rb.last, lo) < 0 {
			continue // the block before the group, ending before it
		}
		blocks = append(blocks, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	spanLo, spanHi := lo, hi
	for _, bl := range blocks {
		rows, err := decodeRowBlock(bl[0][len(bp):], bl[1])
		if err != nil {
			return nil, nil, fmt.Errorf("block %x: %w", bl[0][len(bp):], err)
		}
		spanLo = minBytes(spanLo, rows[0].Key)
		spanHi = maxBytes(spanHi, rows[len(rows)-1].Key)
		old = append(old, rows...)
		dels = append(dels, bl[0])
	}
	var perRow []KV
	for valid := it.SeekGE(append(append(scratch[:0], rp...), spanLo...)); valid; valid = it.Next() {
		k := it.Key()
		if !bytes.HasPrefix(k, rp) || bytes.Compare(k[len(rp):], spanHi) > 0 {
			break
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return nil, nil, err
		}
		kc := bytes.Clone(k)
		perRow = append(perRow, KV{Key: kc[len(rp):], Value: bytes.Clone(v)})
		dels = append(dels, kc)
	}
	if err := it.Error(); err != nil {
		return nil, nil, err
	}
	if len(perRow) > 0 {
		// Blocks and per-row keys never share a range: a plain merge.
		old = mergeKVs(old, perRow)
	}
	return old, dels, nil
}

// mergeKVs merges two key-sorted runs with distinct keys.
func mergeKVs(a, b []KV) []KV {
	out := make([]KV, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if bytes.Compare(a[0].Key, b[0].Key) < 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// mergeRowRuns merges stored rows with new ones (both sorted, keys
// distinct within each); a key in both keeps the new row.
func mergeRowRuns(old, rows []KV) []KV {
	out := make([]KV, 0, len(old)+len(rows))
	i := 0
	for _, kv := range rows {
		for i < len(old) && bytes.Compare(old[i].Key, kv.Key) < 0 {
			out = append(out, old[i])
			i++
		}
		if i < len(old) && bytes.Equal(old[i].Key, kv.Key) {
			i++
		}
		out = append(out, kv)
	}
	return append(out, old[i:]...)
}

func minBytes(a, b []byte) []byte {
	if bytes.Compare(a, b) <= 0 {
		return a
	}
	return b
}

func maxBytes(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}
