package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// writeWAL makes a Pebble database in a memory FS with n synced batches of
// about 3 KB each, closes it, and returns the FS, the WAL's name and its
// bytes.
func writeWAL(t testing.TB, n int) (vfs.FS, string, []byte) {
	t.Helper()
	fs := vfs.NewMem()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatNewest, Logger: quietPebble{}})
	if err != nil {
		t.Fatal(err)
	}
	val := bytes.Repeat([]byte("v"), 1000)
	for i := range n {
		b := db.NewBatch()
		for j := range 3 {
			_ = b.Set(fmt.Appendf(nil, "k%06d-%d", i, j), val, nil)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := fs.List("db")
	var wal string
	for _, name := range names {
		if _, ok := walNumber(name); ok && name > wal {
			wal = name
		}
	}
	f, err := fs.Open(fs.PathJoin("db", wal))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return fs, wal, data
}

type quietPebble struct{}

func (quietPebble) Infof(string, ...any)  {}
func (quietPebble) Errorf(string, ...any) {}
func (quietPebble) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}

func scanBytes(t testing.TB, wal string, data []byte) *walScan {
	t.Helper()
	num, _ := walNumber(wal)
	s, err := scanWAL(bytes.NewReader(data), num)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScanWAL(t *testing.T) {
	_, wal, data := writeWAL(t, 60)
	clean := scanBytes(t, wal, data)
	if clean.Bad >= 0 || clean.Records != 60 || clean.Keys != 180 {
		t.Fatalf("clean WAL: %+v; want 60 records of 180 keys, no damage", clean)
	}

	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	mid := make([]byte, len(data))
	copy(mid, data)
	at := len(data) / 2
	for i := range 200 {
		mid[at+i] = byte(r.Uint32())
	}
	s := scanBytes(t, wal, mid)
	if !s.corrupt() || s.Bad > int64(at) || s.BadChunk > int64(at+200) || s.After < 20 || s.Records > 31 {
		t.Fatalf("200 random bytes at %d of %d: %+v; want damage found there with intact records after", at, len(data), s)
	}

	for _, cut := range []int{1, 12, 13, 100, 2000} {
		s := scanBytes(t, wal, data[:len(data)-cut])
		if s.Bad < 0 || s.corrupt() || s.Records < 58 {
			t.Fatalf("tail cut by %d bytes: %+v; want a torn tail", cut, s)
		}
	}
	// The end trailer of a clean close after damage says it is corruption
	// even when no whole record follows.
	last := make([]byte, len(data))
	copy(last, data)
	last[clean.End-100] ^= 0xff
	if s := scanBytes(t, wal, last); !s.corrupt() || !s.Trailer {
		t.Fatalf("last record damaged before the clean-close trailer: %+v; want corruption", s)
	}
}

// TestOpenCorruptWAL: a store whose WAL is damaged before intact records
// refuses to open with ErrWALCorrupt naming the file and offset, and opens
// with AcceptWALLoss, logging what is dropped at ERROR; a torn tail opens
// with a WARN.
func TestOpenCorruptWAL(t *testing.T) {
	fs, wal, data := writeWAL(t, 60)
	write := func(b []byte) {
		f, err := fs.Create(fs.PathJoin("db", wal), vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	bad := bytes.Clone(data)
	for i := range 200 {
		bad[len(bad)/2+i] = byte(i * 7)
	}
	write(bad)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	_, err := Open(Options{Dir: "db", FS: fs, Logger: logger})
	if !errors.Is(err, ErrWALCorrupt) || !strings.Contains(err.Error(), wal) || !strings.Contains(err.Error(), "--accept-wal-loss") {
		t.Fatalf("open with a corrupt WAL: %v; want ErrWALCorrupt naming %s", err, wal)
	}
	if !strings.Contains(log.String(), "level=ERROR") {
		t.Fatalf("no ERROR logged:\n%s", log.String())
	}
	log.Reset()
	s, err := Open(Options{Dir: "db", FS: fs, Logger: logger, AcceptWALLoss: true})
	if err != nil {
		t.Fatalf("open with AcceptWALLoss: %v", err)
	}
	if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "DROPPED") {
		t.Fatalf("no ERROR saying what was dropped:\n%s", log.String())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	fs, wal, data = writeWAL(t, 60)
	write(data[:len(data)-50])
	log.Reset()
	s, err = Open(Options{Dir: "db", FS: fs, Logger: logger})
	if err != nil {
		t.Fatalf("open with a torn tail: %v", err)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "torn write") || strings.Contains(log.String(), "level=ERROR") {
		t.Fatalf("torn tail: want one WARN, no ERROR:\n%s", log.String())
	}
	_ = s.Close()
}

// FuzzScanWAL: any bytes scan without a panic, to the end of the file,
// and what is reported fits in the file; and the scan agrees with Pebble's
// own reader, as Open relies on: a log Pebble's replay refuses is one the
// scan calls corrupt, one it calls clean Pebble reads to the end, and the
// log cut at the damage (what --accept-wal-loss leaves) Pebble reads
// without complaint, record for record. The seeds are logs Pebble wrote:
// blocks ending in padding of 14 bytes (WAL sync) and 9 (recyclable),
// damage in it and after it, a zeroed record, damage that only Pebble's
// synced offsets prove, a reused file's older tail, the end mark of a
// clean close.
func FuzzScanWAL(f *testing.F) {
	_, _, data := writeWAL(f, 12)
	f.Add(data, uint32(0))
	f.Add(data[:len(data)/2], uint32(100))
	f.Add([]byte{}, uint32(7))
	f.Add(make([]byte, 40000), uint32(3))
	syncVals := append(fillBlock(walSyncHeader, 14), variedVals(100)...)
	_, _, data = pebbleWAL(f, walSpec{format: pebble.FormatNewest, vals: syncVals, crash: true})
	f.Add(data, uint32(walBlockSize+walSyncHeader+5)) // the record after the padding
	f.Add(data, uint32(walBlockSize-14+12))           // the padding, past a header's first 7 bytes
	f.Add(data, uint32(len(data)-1))
	zeroed := bytes.Clone(data)
	clear(zeroed[walBlockSize : walBlockSize+walSyncHeader+recordLen(syncVals[len(syncVals)-100])])
	f.Add(zeroed, uint32(len(data)-1))
	_, data = syncedPastDamage(f)
	f.Add(data, uint32(walBlockSize-100))
	_, _, data = pebbleWAL(f, walSpec{format: pebble.FormatNewest, vals: syncVals})
	f.Add(data, uint32(len(data)-20))
	f.Add(data, uint32(len(data)-walRecyclableHeader)) // the end mark's checksum, which no one reads
	_, _, data = pebbleWAL(f, walSpec{format: pebble.FormatNewest, vals: syncVals, older: append(slices.Clone(syncVals), variedVals(200)...), crash: true})
	f.Add(data, uint32(len(data)-1))
	_, _, data = pebbleWAL(f, walSpec{format: pebble.FormatColumnarBlocks, vals: append(fillBlock(walRecyclableHeader, 9), variedVals(100)...), crash: true})
	f.Add(data, uint32(walBlockSize+walRecyclableHeader+5))
	f.Add(data, uint32(walBlockSize-9+8)) // the padding, past a header's first 7 bytes
	f.Fuzz(func(t *testing.T, b []byte, at uint32) {
		if len(b) > 0 {
			b = bytes.Clone(b)
			b[int(at)%len(b)] ^= 0x5a
		}
		// The log's own number, as its first chunk says, and another.
		nums := []uint32{5}
		if len(b) >= walRecyclableHeader && b[6] >= 5 && b[6] <= 12 {
			nums = append(nums, binary.LittleEndian.Uint32(b[7:11]))
		}
		for _, num := range nums {
			s, err := scanWAL(bytes.NewReader(b), num)
			if err != nil {
				t.Fatal(err)
			}
			if s.Size != int64(len(b)) || s.End > s.Size || s.Bad > s.Size || (s.Bad >= 0 && s.End > s.Bad) ||
				(s.Bad < 0 && (s.After > 0 || s.Trailer || s.Synced || s.Refused)) || (s.Bad < 0) != (s.EndedBy != "") {
				t.Fatalf("inconsistent scan of %d bytes: %+v", len(b), s)
			}
			name := fmt.Sprintf("%06d.log", num)
			recs, err := pebbleRead(t, name, b)
			switch {
			case !errors.Is(err, io.EOF) && !errors.Is(err, record.ErrUnexpectedEOF) && !s.corrupt():
				t.Fatalf("Pebble refuses the log (%v) the scan finds no corruption in: %+v", err, s)
			case s.Bad < 0 && len(recs) > s.Records:
				t.Fatalf("Pebble reads %d records of a log the scan reads %d of: %+v", len(recs), s.Records, s)
			case errors.Is(err, io.EOF) && len(recs) > s.Records && s.Bad == s.BadChunk && !strings.Contains(s.Reason, "without its first"):
				// Where Pebble sees nothing amiss, the scan stops no
				// sooner, but at what Pebble does not check: chunks out
				// of sequence, damage inside a record.
				t.Fatalf("Pebble reads %d records to the end of the log; the scan stops after %d: %+v", len(recs), s.Records, s)
			}
			if s.Bad >= 0 {
				if recs, err := pebbleReads(t, name, b[:s.Bad]); err != nil || len(recs) > s.Records {
					t.Fatalf("Pebble reads %d records (%v) of the log cut at %d; the scan read %d: %+v", len(recs), err, s.Bad, s.Records, s)
				}
			}
		}
	})
}

// walSpec says how pebbleWAL builds a write-ahead log with Pebble itself.
type walSpec struct {
	// format is the store's Pebble format: FormatNewest writes WAL-sync
	// chunks (19-byte headers), FormatColumnarBlocks recyclable ones (11).
	format pebble.FormatMajorVersion
	// vals are the records: one synced commit of one Set each (key w%06d,
	// from w000000, a value of that many 'v's), so that no record ends in
	// a zero byte. (The keys of other records start with other letters.)
	vals []int
	// older, if set, are the records of a log written first, whose file the
	// WAL then reuses (Pebble recycles WAL files): the file's tail is that
	// log's content.
	older []int
	// crash leaves the WAL as a kill -9 would (a crash clone: no end mark
	// of a clean close); otherwise the database is closed.
	crash bool
}

// pebbleWAL builds a WAL as spec says in a memory FS and returns the FS
// (directory "db"), the WAL's name and its bytes.
func pebbleWAL(t testing.TB, spec walSpec) (vfs.FS, string, []byte) {
	t.Helper()
	mem := vfs.NewCrashableMem()
	var created pebble.WALCreateInfo // the last WAL made
	opts := &pebble.Options{FS: mem, FormatMajorVersion: spec.format, Logger: quietPebble{}, MemTableSize: 64 << 20,
		EventListener: &pebble.EventListener{WALCreated: func(i pebble.WALCreateInfo) {
			created = i
		}}}
	// A new database's first WAL is made before its format is set, with
	// recyclable chunks: reopen it, so that the WAL is of its format.
	db, err := pebble.Open("db", opts)
	if err == nil {
		err = db.Close()
	}
	if err == nil {
		db, err = pebble.Open("db", opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	keys := map[byte]int{}
	commit := func(prefix byte, vals []int) {
		for _, n := range vals {
			if err := db.Set(fmt.Appendf(nil, "%c%06d", prefix, keys[prefix]), bytes.Repeat([]byte("v"), n), pebble.Sync); err != nil {
				t.Fatal(err)
			}
			keys[prefix]++
		}
	}
	// rotate starts a new WAL (and memtable) with nothing in it.
	rotate := func() {
		commit('a', []int{1})
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// Pebble's first memtable holds 256 KB, and a full one starts a new
	// WAL; a larger batch makes it start a larger one, which the next
	// ones keep: a WAL of some megabytes.
	size := 0
	for _, n := range append(slices.Clone(spec.vals), spec.older...) {
		size += walSyncHeader + recordLen(n)
	}
	if size > 128<<10 {
		commit('a', []int{6 << 20})
		rotate()
	}
	if spec.older != nil {
		// Write older to a WAL, then start new ones until one reuses its
		// file, obsolete once its memtable is flushed.
		commit('o', spec.older)
		olderNum := created.FileNum
		for i := 0; created.RecycledFileNum != olderNum; i++ {
			if i == 10 {
				t.Fatalf("Pebble does not reuse the file of WAL %s", olderNum)
			}
			rotate()
		}
	}
	commit('w', spec.vals)
	var fs vfs.FS = mem
	if spec.crash {
		fs = mem.CrashClone(vfs.CrashCloneCfg{})
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var newest uint32
	for _, n := range names {
		if num, ok := walNumber(n); ok && num >= newest {
			name, newest = n, num
		}
	}
	data := readFile(t, fs, fs.PathJoin("db", name))
	return fs, name, data
}

func readFile(t testing.TB, fs vfs.FS, path string) []byte {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeFile(t testing.TB, fs vfs.FS, path string, data []byte) {
	t.Helper()
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// recordLen is the size of the record (a Pebble batch) pebbleWAL writes
// for a value of n < 128 bytes: batch header, kind, key and value with
// their one-byte lengths.
func recordLen(n int) int { return batchHeaderLen + 1 + 1 + len("w000000") + 1 + n }

// fillBlock returns value lengths (1..127) whose records, in chunks with
// hdr-byte headers, fill the first 32 KiB block but for its last pad bytes.
func fillBlock(hdr, pad int) []int {
	chunk := func(n int) int { return hdr + recordLen(n) }
	maxChunk := chunk(127)
	var vals []int
	for rem := walBlockSize - pad; rem > 0; {
		if rem > 2*maxChunk {
			vals = append(vals, 127)
			rem -= maxChunk
			continue
		}
		// rem is in (maxChunk, 2*maxChunk]: two records of about half.
		a := rem / 2
		vals = append(vals, a-chunk(0), rem-a-chunk(0))
		rem = 0
	}
	return vals
}

// variedVals returns n value lengths from 1 to 120 in a fixed order, so
// that blocks end in every kind of padding.
func variedVals(n int) []int {
	vals := make([]int, n)
	for i := range vals {
		vals[i] = 1 + (i*7919)%120
	}
	return vals
}

// legacyWAL writes records with Pebble's record.Writer, which uses the
// legacy 7-byte chunk header: each is a batch header and n bytes.
func legacyWAL(t testing.TB, vals []int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i, n := range vals {
		rec := make([]byte, batchHeaderLen, recordLen(n))
		rec[0], rec[8] = byte(i+1), 1
		rec = append(rec, bytes.Repeat([]byte("v"), recordLen(n)-batchHeaderLen)...)
		if _, err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pebbleReads reads the WAL data, named name, with Pebble's own reader as
// its replay at open does: the offset of each record it returns (where
// the previous one ended: before any padding), and the error it stops
// with: nil at the end of the log, and also at an unclean end that it
// cannot tell from corruption (record.ErrUnexpectedEOF), which the replay
// of the newest WAL passes over; ErrInvalidChunk or ErrZeroedChunk when it
// knows the log is corrupt, which fails the open.
func pebbleReads(t testing.TB, name string, data []byte) ([]int64, error) {
	t.Helper()
	offsets, err := pebbleRead(t, name, data)
	if errors.Is(err, io.EOF) || errors.Is(err, record.ErrUnexpectedEOF) {
		err = nil
	}
	return offsets, err
}

// pebbleRead is pebbleReads with the error Pebble's reader stops with: io.EOF
// at what it takes for the end of the log.
func pebbleRead(t testing.TB, name string, data []byte) ([]int64, error) {
	t.Helper()
	fs := vfs.NewMem()
	if err := fs.MkdirAll("w", 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, fs, fs.PathJoin("w", name), data)
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: "w"})
	if err != nil || len(logs) != 1 {
		t.Fatalf("pebble: scan for %s: %v (%d logs)", name, err, len(logs))
	}
	r := logs[0].OpenForRead()
	defer r.Close()
	var offsets []int64
	for {
		_, off, err := r.NextRecord()
		if err != nil {
			return offsets, err
		}
		offsets = append(offsets, off.Physical)
	}
}

// TestScanWALBlockPadding (issue 25, D8): a block ends in zero padding
// when the rest is shorter than the header of the chunk kind in use (19
// bytes for WAL-sync chunks, 11 for recyclable, 7 for legacy), which is
// not the end of the log: for every padding length, the scan reads every
// record of a clean WAL Pebble wrote, as Pebble does, and finds damage in
// the first record after the padding.
func TestScanWALBlockPadding(t *testing.T) {
	for _, kind := range []struct {
		name   string
		format pebble.FormatMajorVersion
		hdr    int
	}{
		{"wal-sync", pebble.FormatNewest, walSyncHeader},
		{"recyclable", pebble.FormatColumnarBlocks, walRecyclableHeader},
		{"legacy", 0, walLegacyHeader},
	} {
		for pad := range kind.hdr {
			t.Run(fmt.Sprintf("%s/pad=%d", kind.name, pad), func(t *testing.T) {
				fill := fillBlock(kind.hdr, pad)
				vals := append(slices.Clone(fill), variedVals(500)...)
				var name string
				var data []byte
				if kind.format == 0 {
					name, data = "000005.log", legacyWAL(t, vals)
				} else {
					_, name, data = pebbleWAL(t, walSpec{format: kind.format, vals: vals, crash: true})
				}
				if !allZero(data[walBlockSize-pad:walBlockSize]) || data[walBlockSize-pad-1] == 0 {
					t.Fatalf("block 0 does not end in %d bytes of padding: % x", pad, data[walBlockSize-pad-1:walBlockSize])
				}
				s := scanBytes(t, name, data)
				if s.Bad >= 0 || s.Records != len(vals) || s.Size != int64(len(data)) || s.End != int64(len(data)) {
					t.Fatalf("clean WAL of %d records (%d bytes): %+v; want all read to the end", len(vals), len(data), s)
				}
				if kind.format != 0 {
					if recs, err := pebbleReads(t, name, data); len(recs) != len(vals) || err != nil {
						t.Fatalf("Pebble reads %d records (%v); want %d", len(recs), err, len(vals))
					}
				}
				bad := bytes.Clone(data)
				bad[walBlockSize+kind.hdr+3] ^= 0x40 // the first record of block 1
				s = scanBytes(t, name, bad)
				if !s.corrupt() || s.Bad != walBlockSize || s.Records != len(fill) || s.After < 50 {
					t.Fatalf("damage in the record after the padding: %+v; want it found at %d, %d records before it, intact ones after", s, walBlockSize, len(fill))
				}
				if kind.format == pebble.FormatNewest {
					// What made the node fail with Pebble's raw error.
					if _, err := pebbleReads(t, name, bad); !errors.Is(err, record.ErrInvalidChunk) {
						t.Fatalf("Pebble on the damaged WAL: %v; want %v", err, record.ErrInvalidChunk)
					}
				}
			})
		}
	}
}

// TestScanWALEndMark (issue 25, D8): the ways a log really ends are not
// damage: the end mark of a clean close, the end of the file after a kill
// -9, zeros after the last record, the older content of a reused
// (recycled) file. The scan reads past the block padding to that end, to
// the end of the file, and agrees with Pebble's reader; a zeroed record
// with records after it is no end but corruption.
func TestScanWALEndMark(t *testing.T) {
	vals := append(fillBlock(walSyncHeader, 14), variedVals(600)...)
	older := append(slices.Clone(vals), variedVals(2000)...)
	for _, c := range []struct {
		name string
		spec walSpec
		// tail is appended to the file (zeros the filesystem left).
		tail  int
		ended string
	}{
		{"clean close", walSpec{vals: vals}, 0, "the end mark of a clean close"},
		{"kill -9", walSpec{vals: vals, crash: true}, 0, "the end of the file"},
		{"zeros after", walSpec{vals: vals, crash: true}, 70000, "zeros"},
		{"recycled", walSpec{vals: vals, older: older, crash: true}, 0, "a chunk of log "},
		{"recycled, clean close", walSpec{vals: vals, older: older}, 0, "the end mark of a clean close"},
		// The older log's records are of other sizes: the new log ends
		// inside one of them, like a torn write.
		{"recycled, torn", walSpec{vals: vals, older: variedVals(3000)[1:], crash: true}, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.spec.format = pebble.FormatNewest
			_, name, data := pebbleWAL(t, c.spec)
			data = append(data, make([]byte, c.tail)...)
			s := scanBytes(t, name, data)
			if s.corrupt() || s.Records != len(vals) || s.Size != int64(len(data)) || (c.ended != "") != (s.Bad < 0) || !strings.HasPrefix(s.EndedBy, c.ended) {
				t.Fatalf("%+v; want %d records, a clean end (%q) read to the end of the file (%d bytes)", s, len(vals), c.ended, len(data))
			}
			if recs, err := pebbleReads(t, name, data); len(recs) != len(vals) || err != nil {
				t.Fatalf("Pebble reads %d records (%v); want %d", len(recs), err, len(vals))
			}
		})
	}

	t.Run("zeroed record", func(t *testing.T) {
		_, name, data := pebbleWAL(t, walSpec{format: pebble.FormatNewest, vals: vals, crash: true})
		// Block 1 starts with the record after the fill of block 0.
		next := len(fillBlock(walSyncHeader, 14))
		clear(data[walBlockSize : walBlockSize+walSyncHeader+recordLen(vals[next])])
		s := scanBytes(t, name, data)
		if !s.corrupt() || s.Bad != walBlockSize || s.Records != next || !strings.Contains(s.Reason, "zeroed chunk") {
			t.Fatalf("%+v; want the zeroed record at %d found, intact records after it", s, walBlockSize)
		}
		if _, err := pebbleReads(t, name, data); !errors.Is(err, record.ErrZeroedChunk) {
			t.Fatalf("Pebble on the zeroed record: %v; want %v", err, record.ErrZeroedChunk)
		}
	})

	// A reused file whose new log has nothing yet: its older records are
	// read after another log's chunk, where a chunk boundary is unknown.
	// The zero high bytes of a synced offset followed by a sequence number
	// look like the end mark of a clean close of the log whose number is
	// the sequence number's bytes 1-4 less one: that is no end mark.
	t.Run("recycled, a look-alike end mark", func(t *testing.T) {
		small := make([]int, 1000)
		for i := range small {
			small[i] = 5
		}
		_, name, data := pebbleWAL(t, walSpec{format: pebble.FormatNewest, vals: small, crash: true})
		old, _ := walNumber(name)
		recs, err := pebbleReads(t, name, data)
		if err != nil {
			t.Fatal(err)
		}
		var num uint32
		for _, off := range recs {
			if data[off+6] < 9 || data[off+6] > 12 || binary.LittleEndian.Uint64(data[off+11:]) >= 1<<16 {
				continue // a synced offset of 64 KiB or more has a non-zero byte 2
			}
			if seq := binary.LittleEndian.Uint64(data[off+walSyncHeader:]); seq&0xff >= 5 && seq&0xff <= 12 && seq>>8 >= 2 && uint32(seq>>8)-1 != old {
				num = uint32(seq>>8) - 1
				break
			}
		}
		if num == 0 {
			t.Fatal("no record has a sequence number that looks like an end mark")
		}
		s, err := scanWAL(bytes.NewReader(data), num)
		if err != nil {
			t.Fatal(err)
		}
		if s.Bad >= 0 || s.Records != 0 || s.EndedBy != fmt.Sprintf("a chunk of log %d (a reused file's older content)", old) {
			t.Fatalf("log %d in the file of log %d: %+v; want a clean end at 0", num, old, s)
		}
	})

	// Damage up to the start of the last record, which spans three blocks:
	// no whole record follows, but the later chunks of that one say the log
	// was synced past the damage, which makes Pebble refuse it.
	t.Run("synced past the damage", func(t *testing.T) {
		name, data := syncedPastDamage(t)
		s := scanBytes(t, name, data)
		if !s.corrupt() || !s.Synced || s.After != 0 || s.Bad > walBlockSize-300 {
			t.Fatalf("%+v; want the damage found, proved by the synced offset after it", s)
		}
		if _, err := pebbleReads(t, name, data); !errors.Is(err, record.ErrInvalidChunk) {
			t.Fatalf("Pebble: %v; want %v", err, record.ErrInvalidChunk)
		}
	})
}

// syncedPastDamage returns the name and bytes of a WAL that Pebble wrote
// and that is damaged from 300 bytes before the end of its first block to
// 40 bytes into the next, where a record of 80,000 bytes starts.
func syncedPastDamage(t testing.TB) (string, []byte) {
	t.Helper()
	_, name, data := pebbleWAL(t, walSpec{format: pebble.FormatNewest, vals: append(fillBlock(walSyncHeader, 14), 80000), crash: true})
	for i := walBlockSize - 300; i < walBlockSize+40; i++ {
		data[i] ^= 0x55
	}
	return name, data
}

// TestOpenWALDamagedLate (issue 25, D8): the probe's log, of 10,000
// records (about 1.3 MB, its blocks ending in padding of every length) as
// a kill -9 leaves it, damaged in its middle by 4 bytes or by a zeroed
// record, on which Pebble fails with its raw error. Open refuses it with
// ErrWALCorrupt naming the file, the offset and --accept-wal-loss; with
// AcceptWALLoss it opens, having lost exactly the records from the damaged
// one on, and keeps the whole log as .corrupt; the next open is clean.
func TestOpenWALDamagedLate(t *testing.T) {
	vals := append(fillBlock(walSyncHeader, 14), variedVals(10000)...)
	for _, damage := range []string{"4 bytes", "zeroed record"} {
		t.Run(damage, func(t *testing.T) {
			fs, name, data := pebbleWAL(t, walSpec{format: pebble.FormatNewest, vals: vals, crash: true})
			recs, err := pebbleReads(t, name, data)
			if err != nil || len(recs) != len(vals) {
				t.Fatalf("Pebble reads %d records (%v) of the undamaged log; want all %d", len(recs), err, len(vals))
			}
			recs = append(recs, int64(len(data)))
			// lost is the first record damaged; start, where it starts.
			var lost int
			var start int64
			if damage == "4 bytes" {
				at := len(data) / 2
				copy(data[at:], "\x00\xff\x13\x37")
				for recs[lost+1] <= int64(at) {
					lost++
				}
				start = recs[lost]
			} else {
				// A record in the middle wholly in one block.
				for lost = len(vals) / 2; recs[lost]/walBlockSize != (recs[lost+1]-1)/walBlockSize; lost++ {
				}
				start = recs[lost]
				clear(data[start:recs[lost+1]])
			}
			path := fs.PathJoin("db", name)
			writeFile(t, fs, path, data)
			raw, err := pebble.Open("db", &pebble.Options{FS: copyDir(t, fs, "db"), Logger: quietPebble{}})
			if err == nil {
				_ = raw.Close()
				t.Fatal("Pebble opens the damaged log")
			}
			t.Logf("Pebble alone: %v", err)

			var log bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&log, nil))
			_, err = Open(Options{Dir: "db", FS: fs, Logger: logger})
			t.Logf("open: %v", err)
			if !errors.Is(err, ErrWALCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("%s at offset %d ", path, start)) || !strings.Contains(err.Error(), "--accept-wal-loss") {
				t.Fatalf("open: %v; want ErrWALCorrupt naming %s at offset %d and --accept-wal-loss", err, path, start)
			}
			s, err := Open(Options{Dir: "db", FS: fs, Logger: logger, AcceptWALLoss: true})
			if err != nil {
				t.Fatalf("open with AcceptWALLoss: %v", err)
			}
			n, first := countKeys(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if n != lost || (n > 0 && first != "w000000") {
				t.Fatalf("after AcceptWALLoss: %d keys from %q; want the %d records before the damaged one", n, first, lost)
			}
			if kept := readFile(t, fs, path+walKeptSuffix); !bytes.Equal(kept, data) {
				t.Fatalf("%s%s is not the whole damaged log", path, walKeptSuffix)
			}
			log.Reset()
			s, err = Open(Options{Dir: "db", FS: fs, Logger: logger})
			if err != nil {
				t.Fatalf("the next open: %v", err)
			}
			_ = s.Close()
			if strings.Contains(log.String(), "level=WARN") || strings.Contains(log.String(), "level=ERROR") {
				t.Fatalf("the next open logs:\n%s", log.String())
			}
		})
	}
}

// countKeys counts the keys pebbleWAL wrote that the store holds, and
// returns the first.
func countKeys(t testing.TB, s *Store) (int, string) {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte("w"), UpperBound: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n, first := 0, ""
	for it.First(); it.Valid(); it.Next() {
		if n == 0 {
			first = string(it.Key())
		}
		n++
	}
	return n, first
}

// copyDir copies the files of dir in fs to a new memory FS.
func copyDir(t testing.TB, fs vfs.FS, dir string) vfs.FS {
	t.Helper()
	dst := vfs.NewMem()
	if err := dst.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		path := fs.PathJoin(dir, n)
		if st, err := fs.Stat(path); err != nil || st.IsDir() {
			continue
		}
		writeFile(t, dst, path, readFile(t, fs, path))
	}
	return dst
}
