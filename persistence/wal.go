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
// the damage and drop them silently, or fail with its own error when a
// later chunk proves the damage; Open refuses unless Options.AcceptWALLoss.
var ErrWALCorrupt = errors.New("persistence: WAL corrupt before intact records")

// The WAL's wire format, as github.com/cockroachdb/pebble/v2/record
// (record.go, log_writer.go) writes and reads it: 32 KiB blocks of chunks
// that never cross a block; a chunk is a header then its payload. Legacy
// header: CRC (4 bytes, masked CRC-32C of the type byte onwards), payload
// size (2), type (1: 1-4, full, first, middle, last). Recyclable (types
// 5-8): + the log's number (4). WAL sync (types 9-12, the chunks of the
// format loadnode runs): + the offset the log was synced up to when the
// chunk was written (8).
//
// A writer pads the rest of a block with zeros when a header of the kind
// it writes no longer fits: up to 6 bytes (legacy), 10 (recyclable), 18
// (WAL sync). A chunk of another log's number is the end of this one: the
// end mark Pebble writes at a clean close (a recyclable header of number
// +1), or the older content of a reused (recycled) file; so are zeros (a
// zeroed chunk: what the file held before the writes). Pebble's reader
// tells such an end from corruption by reading ahead: a later chunk whose
// synced offset lies past it proves corruption, and the replay fails with
// the raw "pebble/record: invalid chunk" (or "zeroed chunk").
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
	// Size is the file's length in bytes: the scan reads all of it.
	Size int64
	// Records and Keys are the complete records (batches) read in order
	// from the start, and their operations; End is the offset after the
	// last of them.
	Records int
	Keys    uint64
	End     int64
	// EndedBy says how the log ends when it reads cleanly: "the end of the
	// file", "the end mark of a clean close", "zeros", "a chunk of log N
	// (a reused file's older content)".
	EndedBy string
	// Bad is the offset of the record with the first chunk that is neither
	// a valid next chunk nor a clean end (torn, bad checksum, out of
	// sequence; or a clean end after all: see After), -1 when the log reads
	// cleanly to its end; BadChunk is where in that record the damage is,
	// and Reason says what it is.
	Bad      int64
	BadChunk int64
	Reason   string
	// After and AfterKeys are the intact records (first or whole chunks
	// with a good checksum and this log's number) found after the damage;
	// Trailer is set when the end mark of a clean close is among what
	// follows; Synced when a later chunk says the log was synced past the
	// damage (Pebble's own proof, which fails its replay); Refused when
	// the damage is a record Pebble refuses whatever follows (whole, but
	// shorter than a batch header). Each means the damage is not a torn
	// tail; a zeroed chunk or another log's chunk with none of them after
	// it is the end of the log.
	After     int
	AfterKeys uint64
	Trailer   bool
	Synced    bool
	Refused   bool
}

// corrupt reports whether the damage is followed by data: corruption, not
// a write torn by a crash.
func (s *walScan) corrupt() bool {
	return s.Bad >= 0 && (s.After > 0 || s.Trailer || s.Synced || s.Refused)
}

// evidence says what makes the damage corruption.
func (s *walScan) evidence() string {
	var what []string
	if s.Refused {
		what = append(what, "a whole record shorter than a batch header, which Pebble refuses")
	}
	if s.After > 0 || len(what) == 0 {
		what = append(what, fmt.Sprintf("%d intact records (%d keys) after it", s.After, s.AfterKeys))
	}
	if s.Trailer {
		what = append(what, "the end mark of a clean close")
	}
	if s.Synced {
		what = append(what, "a later record saying the log was synced past it")
	}
	return strings.Join(what, " and ")
}

// chunk is one parsed chunk header.
type chunk struct {
	pos    chunkPos
	header int
	size   int
	logNum uint32
	hasNum bool
	// synced is the synced offset of a WAL-sync chunk.
	synced    uint64
	hasSynced bool
	payload   []byte
}

// errWALEnd: the chunk may end the log (zeros, another log's number).
var errWALEnd = errors.New("end of log")

// zeroHeader reports whether b starts with a zeroed chunk header (CRC,
// size and type 0), which Pebble reads as padding or as the end.
func zeroHeader(b []byte) bool {
	return len(b) >= walLegacyHeader && allZero(b[:walLegacyHeader])
}

// padding reports whether rest, the rest of a full block from a chunk
// boundary on, is the block's padding, as Pebble's reader skips it: fewer
// bytes than any header, or a zeroed header in fewer bytes than hdr (the
// header of the chunk kind in use) that the writer left: all zeros, or
// fewer than a recyclable header.
func padding(rest []byte, hdr int) bool {
	if len(rest) < walLegacyHeader {
		return true
	}
	if len(rest) >= hdr || !zeroHeader(rest) {
		return false
	}
	return len(rest) < walRecyclableHeader || allZero(rest)
}

// parseChunk parses the chunk at the start of b (the rest of a block).
func parseChunk(b []byte, logNum uint32) (chunk, error) {
	if len(b) < walLegacyHeader {
		return chunk{}, errors.New("chunk header cut short")
	}
	typ := b[6]
	var c chunk
	switch {
	case typ == 0:
		if zeroHeader(b) {
			return chunk{}, errWALEnd
		}
		return chunk{}, errors.New("invalid chunk type 0")
	case typ >= 1 && typ <= 4:
		c.pos, c.header = chunkPos(typ), walLegacyHeader
	case typ >= 5 && typ <= 8:
		c.pos, c.header, c.hasNum = chunkPos(typ-4), walRecyclableHeader, true
	case typ >= 9 && typ <= 12:
		c.pos, c.header, c.hasNum, c.hasSynced = chunkPos(typ-8), walSyncHeader, true, true
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
	if c.hasSynced {
		c.synced = binary.LittleEndian.Uint64(b[11:19])
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

// isTrailer reports whether c, which parseChunk called another log's, is
// the end mark of a clean close of log logNum (at the start of b).
func isTrailer(c chunk, b []byte, logNum uint32) bool {
	return c.hasNum && c.logNum == logNum+1 && c.size == 0 && binary.LittleEndian.Uint32(b) == 0
}

// scanWAL reads the log r (of log number logNum) the way Pebble replays
// it, block by block and chunk by chunk, skipping block padding by the
// header of the chunk kind in use; then it reads the rest of the file, to
// tell damage from the end of the log (zeros, another log's chunks) by
// what follows.
func scanWAL(r io.Reader, logNum uint32) (*walScan, error) {
	s := &walScan{Bad: -1, BadChunk: -1}
	buf := make([]byte, walBlockSize)
	var (
		inRecord bool
		recStart int64
		recLen   int
		head     []byte // the first bytes of the record being read
		// hdr is the header size of the chunk kind in use; before the
		// first chunk, the largest (Pebble's reader pads by that).
		hdr = walSyncHeader
		// endBy is set when the read stopped at what may be the end.
		endBy   string
		stopped bool
	)
	// stop ends the in-order read at the chunk at pos: damage (reason),
	// or, outside a record, maybe the end of the log (end).
	stop := func(pos int64, reason, end string) {
		stopped = true
		s.Bad, s.BadChunk, s.Reason = pos, pos, reason
		if inRecord {
			s.Bad = recStart
			return
		}
		endBy = end
	}
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
		if stopped {
			s.scanAfter(b, logNum, true)
			continue
		}
		off := 0
		for off < len(b) && !stopped {
			rest := b[off:]
			pos := base + int64(off)
			if n < walBlockSize && len(rest) < walLegacyHeader {
				// The last block ends in fewer bytes than a header.
				switch {
				case inRecord:
					stop(pos, "the log ends inside a record", "")
				case allZero(rest):
					stop(pos, "zeros", "zeros")
				default:
					stop(pos, "chunk header cut short", "")
				}
				break
			}
			if padding(rest, hdr) {
				break
			}
			c, err := parseChunk(rest, logNum)
			switch {
			case errors.Is(err, errWALEnd) && c.hasNum && isTrailer(c, rest, logNum):
				stop(pos, "the end mark of a clean close", "the end mark of a clean close")
				continue
			case errors.Is(err, errWALEnd) && c.hasNum:
				what := fmt.Sprintf("a chunk of log %d", c.logNum)
				stop(pos, what, what+" (a reused file's older content)")
				continue
			case errors.Is(err, errWALEnd):
				stop(pos, "zeroed chunk", "zeros")
				continue
			case err == nil && !inRecord && (c.pos == posMiddle || c.pos == posLast):
				err = errors.New("a record's middle or last chunk without its first")
			case err == nil && inRecord && (c.pos == posFull || c.pos == posFirst):
				err = errors.New("a record's next chunk is the start of another")
			}
			if err != nil {
				stop(pos, err.Error(), "")
				continue
			}
			hdr = c.header
			if !inRecord {
				recStart, recLen, head, inRecord = pos, 0, head[:0], true
			}
			recLen += len(c.payload)
			if len(head) < batchHeaderLen {
				head = append(head, c.payload[:min(len(c.payload), batchHeaderLen-len(head))]...)
			}
			off += c.header + c.size
			if c.pos == posFull || c.pos == posLast {
				if recLen < batchHeaderLen {
					stop(pos, fmt.Sprintf("a record of %d bytes, shorter than a batch header", recLen), "")
					s.Refused = true
					continue
				}
				inRecord = false
				s.Records++
				s.Keys += batchCount(head)
				s.End = base + int64(off)
			}
		}
		if stopped {
			s.scanDamaged(b[s.BadChunk-base:], logNum)
		}
	}
	switch {
	case !stopped && inRecord:
		s.Bad, s.BadChunk, s.Reason = recStart, s.Size, "the log ends inside a record"
	case !stopped:
		s.EndedBy = "the end of the file"
	case endBy != "" && !s.corrupt():
		// Nothing of this log after it: the end of the log.
		s.Bad, s.BadChunk, s.Reason, s.EndedBy = -1, -1, "", endBy
	}
	return s, nil
}

// scanDamaged looks for what follows the damage in b, the rest of the
// damaged block from the damaged chunk on: from where the chunk's header
// says it ends, if a chunk starts there, else searched byte by byte.
func (s *walScan) scanDamaged(b []byte, logNum uint32) {
	if n := claimedLen(b); n > 0 && n <= len(b) && s.scanFrom(b[n:], logNum, true) {
		return
	}
	s.scanAfter(b[1:], logNum, false)
}

// claimedLen is the length of the chunk at the start of b as its header
// says, 0 when the header is no chunk's.
func claimedLen(b []byte) int {
	if len(b) < walLegacyHeader || b[6] == 0 || b[6] > 12 {
		return 0
	}
	hdr := walSyncHeader
	switch {
	case b[6] <= 4:
		hdr = walLegacyHeader
	case b[6] <= 8:
		hdr = walRecyclableHeader
	}
	return hdr + int(binary.LittleEndian.Uint16(b[4:6]))
}

// scanAfter looks for what follows the damage in b, a block (or the rest
// of one) after it: chunks read in sequence while they parse. Where the
// first chunk of b does not parse (the damaged block, a block whose start
// is damaged), the next one is searched byte by byte. boundary says that
// b starts at a chunk boundary (a block's start).
func (s *walScan) scanAfter(b []byte, logNum uint32, boundary bool) {
	for start := 0; start+walLegacyHeader <= len(b); start++ {
		if s.scanFrom(b[start:], logNum, boundary && start == 0) {
			return
		}
	}
}

// scanFrom reads chunks in sequence from the start of b, counting what
// shows the damage is no torn tail; it reports whether the first one
// parsed. The end mark of a clean close, having no checksum, counts only
// at a known chunk boundary: after a chunk, or at the start of b if
// boundary (elsewhere, the zero high bytes of a synced offset and a
// sequence number can look like one).
func (s *walScan) scanFrom(b []byte, logNum uint32, boundary bool) bool {
	off := 0
	for off+walLegacyHeader <= len(b) {
		c, err := parseChunk(b[off:], logNum)
		if errors.Is(err, errWALEnd) {
			if (off > 0 || boundary) && isTrailer(c, b[off:], logNum) {
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
		// Pebble's read-ahead: a chunk written after the log was synced
		// past the damage.
		if c.hasSynced && c.synced > uint64(s.BadChunk) {
			s.Synced = true
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
		what := s.evidence()
		attrs = append(attrs, "intact_records_after", s.After, "intact_keys_after", s.AfterKeys, "clean_close_after", s.Trailer,
			"synced_past_it", s.Synced)
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
