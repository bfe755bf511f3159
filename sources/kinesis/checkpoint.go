package kinesis

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// checkpointVersion is the version EncodeCheckpoint writes; DecodeCheckpoint
// refuses others.
const checkpointVersion = 1

// Checkpoint is a shard's position for a job, committed with the shard's
// ordinal (sources.Batch.Next) in the same write. It is encoded as JSON by
// EncodeCheckpoint.
type Checkpoint struct {
	// Shard is the shard id, "shardId-000000000012".
	Shard string `json:"shard"`
	// Parents are the shard's parent shard ids (ParentShardId, then
	// AdjacentParentShardId after a merge), and ParentParts their partition
	// indices, in the same order. A shard is read only after its parents
	// tracked by the job were read to their end.
	Parents     []string `json:"parents,omitempty"`
	ParentParts []int32  `json:"parent_parts,omitempty"`
	// Start is the position the job starts the shard from when nothing was
	// committed yet: TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a
	// sequence number (read after it).
	Start string `json:"start"`
	// Last is the sequence number of the last record of the shard the job
	// committed; empty when none yet.
	Last string `json:"last,omitempty"`
	// Sub, when > 0, says the record Last is a KPL aggregate of which only
	// the first Sub user records were committed (a batch ended inside it):
	// a Reader opens AT_SEQUENCE_NUMBER Last and skips those. 0: Last was
	// committed whole.
	Sub int `json:"sub,omitempty"`
	// Ended says the shard was closed and every one of its records was
	// returned (and, once committed, loaded): the shard is finished and its
	// children may be read.
	Ended bool `json:"ended,omitempty"`
}

type checkpointJSON struct {
	V int `json:"v"`
	Checkpoint
}

// EncodeCheckpoint encodes c (JSON with a version number).
func EncodeCheckpoint(c Checkpoint) []byte {
	b, err := json.Marshal(checkpointJSON{V: checkpointVersion, Checkpoint: c})
	if err != nil { // strings, ints and bools only
		panic(fmt.Sprintf("kinesis: encode checkpoint: %v", err))
	}
	return b
}

// DecodeCheckpoint decodes a checkpoint written by EncodeCheckpoint and
// checks it: a shard id of the form shardId-<digits>, parents matching
// their indices, a valid start position.
func DecodeCheckpoint(b []byte) (Checkpoint, error) {
	if len(b) == 0 {
		return Checkpoint{}, errors.New("kinesis: decode checkpoint: empty")
	}
	var cj checkpointJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cj); err != nil {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint %.80q: %w", b, err)
	}
	if cj.V != checkpointVersion {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint: version %d, want %d", cj.V, checkpointVersion)
	}
	c := cj.Checkpoint
	if _, err := ShardIndex(c.Shard); err != nil {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint: %w", err)
	}
	if len(c.Parents) != len(c.ParentParts) {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: %d parents but %d parent indices",
			c.Shard, len(c.Parents), len(c.ParentParts))
	}
	for i, id := range c.Parents {
		p, err := ShardIndex(id)
		if err != nil {
			return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: parent: %w", c.Shard, err)
		}
		if p != c.ParentParts[i] {
			return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: parent %s has index %d, not %d",
				c.Shard, id, p, c.ParentParts[i])
		}
	}
	if _, err := parsePosition(c.Start); err != nil {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: start: %w", c.Shard, err)
	}
	if c.Last != "" && !isSeq(c.Last) {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: bad last sequence number %q", c.Shard, c.Last)
	}
	if c.Sub < 0 || c.Sub > 0 && (c.Last == "" || c.Ended) {
		return Checkpoint{}, fmt.Errorf("kinesis: decode checkpoint of %s: sub-record %d of aggregate %q (ended %v)", c.Shard, c.Sub, c.Last, c.Ended)
	}
	return c, nil
}

var shardIDRe = regexp.MustCompile(`^shardId-([0-9]{1,12})$`)

// ShardIndex returns the partition index of a shard id: the numeric suffix
// of "shardId-000000000012" is 12. Other forms are an error.
func ShardIndex(id string) (int32, error) {
	m := shardIDRe.FindStringSubmatch(id)
	if m == nil {
		return 0, fmt.Errorf("shard id %q is not of the form shardId-<digits>", id)
	}
	n, err := strconv.ParseInt(m[1], 10, 32)
	if err != nil {
		return 0, fmt.Errorf("shard id %q: index out of range", id)
	}
	return int32(n), nil
}

// ShardID is the shard id of partition index p, as Kinesis names shards.
func ShardID(p int32) string { return fmt.Sprintf("shardId-%012d", p) }

// Position keywords.
const (
	TrimHorizon = "TRIM_HORIZON"
	Latest      = "LATEST"
	atTimestamp = "AT_TIMESTAMP:"
)

type posKind int

const (
	posTrimHorizon posKind = iota
	posLatest
	posTimestamp
	posSeq
)

type position struct {
	kind posKind
	at   time.Time // posTimestamp
	seq  string    // posSeq
}

// parsePosition parses a start position: TRIM_HORIZON, LATEST,
// AT_TIMESTAMP:<RFC3339> or a sequence number.
func parsePosition(s string) (position, error) {
	switch {
	case s == TrimHorizon:
		return position{kind: posTrimHorizon}, nil
	case s == Latest:
		return position{kind: posLatest}, nil
	case strings.HasPrefix(s, atTimestamp):
		t, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(s, atTimestamp))
		if err != nil {
			return position{}, fmt.Errorf("position %q: timestamp is not RFC3339: %w", s, err)
		}
		return position{kind: posTimestamp, at: t}, nil
	case isSeq(s):
		return position{kind: posSeq, seq: s}, nil
	default:
		return position{}, fmt.Errorf("position %q: want TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a sequence number", s)
	}
}

// isSeq reports whether s has the form of a Kinesis sequence number: a
// decimal number of at most 128 digits without leading zeros.
func isSeq(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// cmpSeq compares two sequence numbers (decimal strings without leading
// zeros) numerically.
func cmpSeq(a, b string) int {
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
