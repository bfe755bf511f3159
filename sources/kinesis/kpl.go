package kinesis

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// KPL aggregation.
//
// The Kinesis Producer Library packs many user records into one Kinesis
// record: the 4-byte magic F3 89 9A C2, a protobuf AggregatedRecord, and
// the 16-byte MD5 of that protobuf:
//
//	message AggregatedRecord {
//	  repeated string partition_key_table     = 1;
//	  repeated string explicit_hash_key_table = 2;
//	  repeated Record records                 = 3;
//	}
//	message Record {
//	  required uint64 partition_key_index     = 1;
//	  optional uint64 explicit_hash_key_index = 2;
//	  required bytes  data                    = 3;
//	  repeated Tag    tags                    = 4;
//	}
//
// A record that does not start with the magic is an ordinary record. One
// that does is an aggregate, and every failure to read it (a wrong MD5, a
// body that is not that protobuf, an index outside its table, no records
// at all) makes the whole Kinesis record ONE error row with its raw bytes:
// nothing of it is loaded, and nothing of it disappears without a trace.

// kplMagic starts every KPL-aggregated record.
var kplMagic = []byte{0xF3, 0x89, 0x9A, 0xC2}

// maxUserRecords bounds the user records of one aggregate: a Kinesis record
// is at most 1 MiB and a user record takes at least 4 bytes of it.
const maxUserRecords = 1 << 18

// UserRecord is one record of a KPL aggregate.
type UserRecord struct {
	// Key is the user record's partition key.
	Key string
	// HashKey is its explicit hash key, "" when it has none.
	HashKey string
	Data    []byte
}

// IsAggregated reports whether data starts with the KPL magic.
func IsAggregated(data []byte) bool { return bytes.HasPrefix(data, kplMagic) }

// Deaggregate returns the user records of a KPL aggregate (data starting
// with the magic; see IsAggregated). Their Data alias data. A corrupt
// aggregate is an error saying what is wrong with it.
func Deaggregate(data []byte) ([]UserRecord, error) {
	if !IsAggregated(data) {
		return nil, errors.New("kinesis: not a KPL aggregate (no magic F3 89 9A C2)")
	}
	if len(data) < len(kplMagic)+md5.Size {
		return nil, fmt.Errorf("kinesis: KPL aggregate truncated: %d bytes, less than the magic and the MD5 trailer", len(data))
	}
	body := data[len(kplMagic) : len(data)-md5.Size]
	sum := md5.Sum(body)
	if !bytes.Equal(sum[:], data[len(data)-md5.Size:]) {
		return nil, fmt.Errorf("kinesis: KPL aggregate of %d bytes: MD5 of the body %x does not match the trailer %x",
			len(data), sum, data[len(data)-md5.Size:])
	}
	var keys, hashKeys []string
	var recs []userRecordFields
	for b := body; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, aggErr("field tag", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case (num == 1 || num == 2 || num == 3) && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, aggErr(fmt.Sprintf("field %d", num), protowire.ParseError(n))
			}
			b = b[n:]
			switch num {
			case 1:
				keys = append(keys, string(v))
			case 2:
				hashKeys = append(hashKeys, string(v))
			case 3:
				if len(recs) >= maxUserRecords {
					return nil, fmt.Errorf("kinesis: KPL aggregate: more than %d records", maxUserRecords)
				}
				r, err := parseUserRecord(v, len(recs))
				if err != nil {
					return nil, err
				}
				recs = append(recs, r)
			}
		case num == 1 || num == 2 || num == 3:
			return nil, fmt.Errorf("kinesis: KPL aggregate: field %d has wire type %d, want bytes", num, typ)
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, aggErr(fmt.Sprintf("field %d", num), protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if len(recs) == 0 {
		return nil, errors.New("kinesis: KPL aggregate holds no records")
	}
	out := make([]UserRecord, len(recs))
	for i, r := range recs {
		if r.key >= uint64(len(keys)) {
			return nil, fmt.Errorf("kinesis: KPL aggregate: record %d: partition key index %d, but the table has %d keys", i, r.key, len(keys))
		}
		out[i] = UserRecord{Key: keys[r.key], Data: r.data}
		if r.hasHash {
			if r.hash >= uint64(len(hashKeys)) {
				return nil, fmt.Errorf("kinesis: KPL aggregate: record %d: explicit hash key index %d, but the table has %d keys", i, r.hash, len(hashKeys))
			}
			out[i].HashKey = hashKeys[r.hash]
		}
	}
	return out, nil
}

type userRecordFields struct {
	key, hash       uint64
	hasKey, hasHash bool
	data            []byte
	hasData         bool
}

// parseUserRecord parses the Record message of user record i.
func parseUserRecord(b []byte, i int) (userRecordFields, error) {
	var r userRecordFields
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return r, aggErr(fmt.Sprintf("record %d: field tag", i), protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case (num == 1 || num == 2) && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return r, aggErr(fmt.Sprintf("record %d: field %d", i, num), protowire.ParseError(n))
			}
			b = b[n:]
			if num == 1 {
				r.key, r.hasKey = v, true
			} else {
				r.hash, r.hasHash = v, true
			}
		case num == 3 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return r, aggErr(fmt.Sprintf("record %d: data", i), protowire.ParseError(n))
			}
			b = b[n:]
			r.data, r.hasData = v, true
		case num == 1 || num == 2 || num == 3:
			return r, fmt.Errorf("kinesis: KPL aggregate: record %d: field %d has wire type %d", i, num, typ)
		default: // tags (4) and unknown fields
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return r, aggErr(fmt.Sprintf("record %d: field %d", i, num), protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	if !r.hasKey {
		return r, fmt.Errorf("kinesis: KPL aggregate: record %d has no partition key index", i)
	}
	if !r.hasData {
		return r, fmt.Errorf("kinesis: KPL aggregate: record %d has no data", i)
	}
	return r, nil
}

func aggErr(what string, err error) error {
	return fmt.Errorf("kinesis: KPL aggregate: %s: %w", what, err)
}
