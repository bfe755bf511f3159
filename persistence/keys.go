package persistence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Key prefixes and suffixes; see the layout table in doc.go.
const (
	lastJobIDKey = "m/last_job_id"
	// formatVersionKey ("m/format_version") is in version.go.
	namePrefix  = "n/"
	jobPrefix   = "j/"
	tablePrefix = "t/"

	jobRecordSuffix     = 's'
	jobJournalSuffix    = 't'
	jobProgressSuffix   = 'p'
	jobStatsSuffix      = 'x'
	jobErrorSuffix      = 'e'
	jobErrWinSuffix     = 'w'
	jobCheckpointSuffix = 'k'
	jobFenceSuffix      = 'f'

	tableSpecSuffix = 's'
	tableRowSuffix  = 'r'
)

// partitionFlip maps int32 order onto unsigned byte order.
const partitionFlip = 0x80000000

func nameKey(name string) []byte {
	return append([]byte(namePrefix), name...)
}

// jobKeyPrefix returns "j/<id8>/".
func jobKeyPrefix(id uint64) []byte {
	k := make([]byte, 0, len(jobPrefix)+8+1+2+8)
	k = append(k, jobPrefix...)
	k = binary.BigEndian.AppendUint64(k, id)
	return append(k, '/')
}

// jobKey returns "j/<id8>/<suffix>".
func jobKey(id uint64, suffix byte) []byte {
	return append(jobKeyPrefix(id), suffix)
}

// jobSubPrefix returns "j/<id8>/<suffix>/", the prefix of a keyed family.
func jobSubPrefix(id uint64, suffix byte) []byte {
	return append(jobKeyPrefix(id), suffix, '/')
}

func journalKey(id, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(jobSubPrefix(id, jobJournalSuffix), seq)
}

func errorRowKey(id, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(jobSubPrefix(id, jobErrorSuffix), seq)
}

func progressKey(id uint64, partition int32) []byte {
	return binary.BigEndian.AppendUint32(jobSubPrefix(id, jobProgressSuffix), encodePartition(partition))
}

func checkpointKey(id uint64, partition int32) []byte {
	return binary.BigEndian.AppendUint32(jobSubPrefix(id, jobCheckpointSuffix), encodePartition(partition))
}

func encodePartition(p int32) uint32 { return uint32(p) ^ partitionFlip }

func decodePartition(u uint32) int32 { return int32(u ^ partitionFlip) }

// tableKeyPrefix returns "t/<name>\x00".
func tableKeyPrefix(name string) []byte {
	k := make([]byte, 0, len(tablePrefix)+len(name)+3)
	k = append(k, tablePrefix...)
	k = append(k, name...)
	return append(k, 0)
}

func tableSpecKey(name string) []byte {
	return append(tableKeyPrefix(name), tableSpecSuffix)
}

// tableRowPrefix returns "t/<name>\x00r/".
func tableRowPrefix(name string) []byte {
	return append(tableKeyPrefix(name), tableRowSuffix, '/')
}

// prefixEnd returns the smallest key greater than every key with prefix p.
// Every prefix used here ends in a byte below 0xff ('/' or 0), so incrementing
// the last byte is enough.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

func encodeUint64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func decodeUint64(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("persistence: corrupt uint64 value of %d bytes", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

func encodeInt64(v int64) []byte { return encodeUint64(uint64(v)) }

func decodeInt64(b []byte) (int64, error) {
	u, err := decodeUint64(b)
	return int64(u), err
}

// errWindow is the range of error-row sequence numbers stored for a job:
// rows first..next-1 exist. INVARIANT: 1 <= first <= next.
type errWindow struct{ first, next uint64 }

func (w errWindow) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, w.first)
	return binary.BigEndian.AppendUint64(b, w.next)
}

func decodeErrWindow(b []byte) (errWindow, error) {
	if len(b) != 16 {
		return errWindow{}, fmt.Errorf("persistence: corrupt error-row window of %d bytes", len(b))
	}
	w := errWindow{first: binary.BigEndian.Uint64(b), next: binary.BigEndian.Uint64(b[8:])}
	if w.first < 1 || w.first > w.next {
		return errWindow{}, fmt.Errorf("persistence: corrupt error-row window [%d, %d)", w.first, w.next)
	}
	return w, nil
}

func validateTableName(name string) error {
	if name == "" {
		return errors.New("persistence: empty table name")
	}
	if strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("persistence: table name %q contains a NUL byte", name)
	}
	return nil
}
