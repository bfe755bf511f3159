package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrWALCorrupt: a write-ahead log is damaged somewhere other than its
// tail, and intact records follow the damage. Pebble's replay would stop at
// the damage and drop them silently; Open refuses unless
// Options.AcceptWALLoss.
var ErrWALCorrupt = errors.New("persistence: WAL corrupt before intact records")

// The WAL's wire format, as github.com/cockroachdb/pebble/v2/record
// documents it: 32 KiB blocks of chunks that never cross a block; a chunk
// is a header then its payload. Legacy header: CRC (4 bytes, masked CRC-32C
// of the type byte onwards), payload size (2), type (1). Recyclable: + the
// log's number (4). WAL sync: + a synced offset (8). A chunk of another
// log's number (a recycled file's old content, or the end trailer Pebble
// writes at a clean close: a recyclable header of number+1) ends the log.
const (
	walBlockSize        = 32 << 10
	walLegacyHeader     = 7
	walRecyclableHeader = walLegacyHeader + 4
	walSyncHeader       = walRecyclableHeader + 8
	// batchHeaderLen: a record is a Pebble batch: sequence number (8) and
	// count (4), little endian, then its operations.
	batchHeaderLen = 12
)

type chunkPos uint8

const (
	posFull chunkPos = iota + 1
	posFirst
	posMiddle
	posLast
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, crcTable)
	return (c>>15 | c<<17) + 0xa282ead8
}

// walScan is what scanWAL found in one log.
type walScan struct {
	// Size is the file's length in bytes.
	Size int64
	// Records and Keys are the complete records (batches) read in order
	// from the start, and their operations; End is the offset after the
	// last of them.
	Records int
	Keys    uint64
	End     int64
	// Bad is the offset of the first chunk that is neither a valid next
	// chunk nor a clean end (torn, bad checksum, out of sequence), -1 when
	// the log reads cleanly to its end; BadChunk is where in the record
	// starting at Bad the damage is, and Reason says what it is.
	Bad      int64
	BadChunk int64
	Reason   string
	// After and AfterKeys are the intact records (first or whole chunks
	// with a good checksum and this log's number) found in the blocks after
	// the damage; Trailer is set when the end trailer of a clean close is
	// among them. Either means the damage is not a torn tail.
	After     int
	AfterKeys uint64
	Trailer   bool
}

// corrupt reports whether the damage is followed by data: corruption, not
// a write torn by a crash.
func (s *walScan) corrupt() bool { return s.Bad >= 0 && (s.After > 0 || s.Trailer) }

// chunk is one parsed chunk header.
type chunk struct {
	pos     chunkPos
	header  int
	size    int
	logNum  uint32
	hasNum  bool
	payload []byte
}

// errWALEnd: the chunk ends the log cleanly (zeros, another log's number).
var errWALEnd = errors.New("end of log")

// parseChunk parses the chunk at the start of b (the rest of a block).
func parseChunk(b []byte, logNum uint32) (chunk, error) {
	if len(b) < walLegacyHeader {
		return chunk{}, errors.New("chunk header cut short")
	}
	typ := b[6]
	var c chunk
	switch {
	case typ == 0:
		for _, x := range b[:walLegacyHeader] {
			if x != 0 {
				return chunk{}, errors.New("invalid chunk type 0")
			}
		}
		return chunk{}, errWALEnd
	case typ >= 1 && typ <= 4:
		c.pos, c.header = chunkPos(typ), walLegacyHeader
	case typ >= 5 && typ <= 8:
		c.pos, c.header, c.hasNum = chunkPos(typ-4), walRecyclableHeader, true
	case typ >= 9 && typ <= 12:
		c.pos, c.header, c.hasNum = chunkPos(typ-8), walSyncHeader, true
	default:
		return chunk{}, fmt.Errorf("invalid chunk type %d", typ)
	}
	if len(b) < c.header {
		return chunk{}, errors.New("chunk header cut short")
	}
	c.size = int(binary.LittleEndian.Uint16(b[4:6]))
	if c.hasNum {
		c.logNum = binary.LittleEndian.Uint32(b[7:11])
		if c.logNum != logNum {
			return c, errWALEnd
		}
	}
	if len(b) < c.header+c.size {
		return chunk{}, fmt.Errorf("chunk of %d bytes cut short at %d", c.size, len(b)-c.header)
	}
	if got, want := maskedCRC(b[6:c.header+c.size]), binary.LittleEndian.Uint32(b[0:4]); got != want {
		return chunk{}, fmt.Errorf("chunk checksum mismatch (%08x, header says %08x)", got, want)
	}
	c.payload = b[c.header : c.header+c.size]
	return c, nil
}

// scanWAL reads the log r (of log number logNum) the way Pebble replays
// it, and past the first damage to find intact records after it.
func scanWAL(r io.Reader, logNum uint32) (*walScan, error) {
	s := &walScan{Bad: -1, BadChunk: -1}
	buf := make([]byte, walBlockSize)
	var (
		inRecord bool
		recStart int64
		head     []byte // the first bytes of the record being read
		ended    bool   // a clean end was seen (no damage before it)
	)
	for block := int64(0); ; block++ {
		n, err := io.ReadFull(r, buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, err
		}
		s.Size += int64(n)
		b := buf[:n]
		base := block * walBlockSize
		if ended {
			break
		}
		if s.Bad >= 0 {
			s.scanAfter(b, logNum)
			continue
		}
		off := 0
		for off < len(b) {
			rest := b[off:]
			if len(rest) < walLegacyHeader && n == walBlockSize && allZero(rest) {
				break // the block's zero padding
			}
			c, err := parseChunk(rest, logNum)
			if errors.Is(err, errWALEnd) {
				ended = true
				break
			}
			if err == nil {
				switch {
				case !inRecord && (c.pos == posMiddle || c.pos == posLast):
					err = errors.New("a record's middle or last chunk without its first")
				case inRecord && (c.pos == posFull || c.pos == posFirst):
					err = errors.New("a record's next chunk is the start of another")
				}
			}
			if err != nil {
				s.Bad, s.BadChunk, s.Reason = base+int64(off), base+int64(off), err.Error()
				if inRecord {
					s.Bad = recStart
				}
				break
			}
			if !inRecord {
				recStart, head, inRecord = base+int64(off), head[:0], true
			}
			if len(head) < batchHeaderLen {
				head = append(head, c.payload[:min(len(c.payload), batchHeaderLen-len(head))]...)
			}
			off += c.header + c.size
			if c.pos == posFull || c.pos == posLast {
				inRecord = false
				s.Records++
				s.Keys += batchCount(head)
				s.End = base + int64(off)
			}
		}
		if s.Bad >= 0 {
			s.scanAfter(b[s.BadChunk-base+1:], logNum)
		}
	}
	if s.Bad < 0 && inRecord {
		s.Bad, s.BadChunk, s.Reason = recStart, s.Size, "the log ends inside a record"
	}
	return s, nil
}

// scanAfter counts the intact records of b, a block (or the rest of one)
// after the damage: chunks read in sequence from its start while they
// parse. In the damaged block itself the first chunk boundary is unknown;
// it is searched byte by byte.
func (s *walScan) scanAfter(b []byte, logNum uint32) {
	for start := 0; start+walLegacyHeader <= len(b); start++ {
		if s.scanFrom(b[start:], logNum) {
			return
		}
	}
}

// scanFrom reads chunks in sequence from the start of b; it reports
// whether the first one parsed.
func (s *walScan) scanFrom(b []byte, logNum uint32) bool {
	off := 0
	for off+walLegacyHeader <= len(b) {
		c, err := parseChunk(b[off:], logNum)
		if errors.Is(err, errWALEnd) {
			if c.hasNum && c.logNum == logNum+1 && c.size == 0 && binary.LittleEndian.Uint32(b[off:]) == 0 {
				s.Trailer = true
				return true
			}
			return off > 0
		}
		if err != nil {
			return off > 0
		}
		if c.pos == posFull || c.pos == posFirst {
			s.After++
			s.AfterKeys += batchCount(c.payload)
		}
		off += c.header + c.size
	}
	return off > 0
}

// batchCount is the operation count of a batch header (0 if cut short).
func batchCount(head []byte) uint64 {
	if len(head) < batchHeaderLen {
		return 0
	}
	return uint64(binary.LittleEndian.Uint32(head[8:12]))
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// checkWALs scans every write-ahead log in dir before Pebble replays them.
// A torn tail (damage with nothing intact after it: a crash mid-write) is
// logged at WARN; damage followed by intact records is logged at ERROR
// with what Pebble would drop, and refused with ErrWALCorrupt unless
// accept.
func checkWALs(fs vfs.FS, dir string, logger *slog.Logger, accept bool) error {
	names, err := fs.List(dir)
	if err != nil {
		if errors.Is(err, io.EOF) || strings.Contains(err.Error(), "no such file") {
			return nil
		}
		return fmt.Errorf("persistence: list %s: %w", dir, err)
	}
	sort.Strings(names)
	var refused []string
	for _, name := range names {
		num, ok := walNumber(name)
		if !ok {
			continue
		}
		path := fs.PathJoin(dir, name)
		f, err := fs.Open(path)
		if err != nil {
			return fmt.Errorf("persistence: open WAL %s: %w", path, err)
		}
		s, err := scanWAL(f, num)
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("persistence: read WAL %s: %w", path, err)
		}
		if s.Bad < 0 {
			continue
		}
		attrs := []any{"wal", path, "offset", s.Bad, "damage_at", s.BadChunk, "reason", s.Reason,
			"dropped_bytes", s.Size - s.Bad, "replayed_records", s.Records, "replayed_keys", s.Keys}
		if !s.corrupt() {
			logger.Warn(fmt.Sprintf("persistence: WAL %s ends in a torn write at offset %d (%s): the %d bytes after the last complete record are dropped; normal after a crash or power loss (nothing acknowledged is in them)",
				path, s.Bad, s.Reason, s.Size-s.Bad), attrs...)
			continue
		}
		what := fmt.Sprintf("%d intact records (%d keys) after it", s.After, s.AfterKeys)
		if s.Trailer {
			what += " and the end mark of a clean close"
		}
		attrs = append(attrs, "intact_records_after", s.After, "intact_keys_after", s.AfterKeys, "clean_close_after", s.Trailer)
		if accept {
			logger.Error(fmt.Sprintf("persistence: WAL %s is corrupt at offset %d (%s, at %d) with %s; --accept-wal-loss: they are DROPPED, with everything from offset %d (%d bytes): the store goes back to the state before that record; the whole file is kept as %s",
				path, s.Bad, s.Reason, s.BadChunk, what, s.Bad, s.Size-s.Bad, path+walKeptSuffix), attrs...)
			// Pebble stops at a damaged tail but refuses damage followed by
			// valid chunks ("pebble/record: invalid chunk"): cut the log at
			// the damage, so what Pebble replays is what was said above.
			if err := cutWAL(fs, dir, path, s.Bad); err != nil {
				return err
			}
			continue
		}
		logger.Error(fmt.Sprintf("persistence: WAL %s is corrupt at offset %d (%s, at %d) with %s: refusing to start, which would drop them",
			path, s.Bad, s.Reason, s.BadChunk, what), attrs...)
		refused = append(refused, fmt.Sprintf("%s at offset %d (%s; %s)", path, s.Bad, s.Reason, what))
	}
	if len(refused) > 0 {
		return fmt.Errorf("%w: %s. Starting would drop them silently: restore the data directory from a backup, or start with --accept-wal-loss to drop everything from the damage on (the store goes back to the state before it)",
			ErrWALCorrupt, strings.Join(refused, "; "))
	}
	return nil
}

// walKeptSuffix names the copy of a WAL that --accept-wal-loss cut.
const walKeptSuffix = ".corrupt"

// cutWAL replaces the WAL at path by its first n bytes, keeping the whole
// file as path+walKeptSuffix (not a WAL name: Pebble ignores it).
func cutWAL(fs vfs.FS, dir, path string, n int64) error {
	fail := func(err error) error { return fmt.Errorf("persistence: cut WAL %s at %d: %w", path, n, err) }
	src, err := fs.Open(path)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	tmp := path + ".cut"
	dst, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fail(err)
	}
	if _, err := io.Copy(dst, io.NewSectionReader(src, 0, n)); err != nil {
		_ = dst.Close()
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		_ = dst.Close()
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	if err := fs.Rename(path, path+walKeptSuffix); err != nil {
		return fail(err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fail(err)
	}
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fail(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fail(err)
	}
	return nil
}

// walNumber is the log number of a WAL file name (NNNNNN.log, or a
// failover segment NNNNNN-NNN.log).
func walNumber(name string) (uint32, bool) {
	stem, ok := strings.CutSuffix(name, ".log")
	if !ok {
		return 0, false
	}
	stem, _, _ = strings.Cut(stem, "-")
	n, err := strconv.ParseUint(stem, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}
