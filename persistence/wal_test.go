package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
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

// FuzzScanWAL: any bytes scan without a panic, and what is reported fits
// in the file.
func FuzzScanWAL(f *testing.F) {
	_, _, data := writeWAL(f, 12)
	f.Add(data, uint32(0))
	f.Add(data[:len(data)/2], uint32(100))
	f.Add([]byte{}, uint32(7))
	f.Add(make([]byte, 40000), uint32(3))
	f.Fuzz(func(t *testing.T, b []byte, at uint32) {
		if len(b) > 0 {
			b = bytes.Clone(b)
			b[int(at)%len(b)] ^= 0x5a
		}
		for _, num := range []uint32{1, 4, 5} {
			s, err := scanWAL(bytes.NewReader(b), num)
			if err != nil {
				t.Fatal(err)
			}
			if s.Size > int64(len(b)) || s.End > s.Size || s.Bad > s.Size || (s.Bad >= 0 && s.End > s.Bad) || (s.Bad < 0 && (s.After > 0 || s.Trailer)) {
				t.Fatalf("inconsistent scan of %d bytes: %+v", len(b), s)
			}
		}
	})
}
