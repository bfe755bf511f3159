package table

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Source metadata: a column mapping's expressions may read, besides the
// record's fields, what the source knows of the record. The names are
// reserved (they start with two underscores) and resolve only in
// expressions (columns_mapping "col = expr", where):
//
//	__key            the Kafka record key / the Kinesis partition key, as text (NULL if none)
//	__key_hex        the key's bytes in hexadecimal (binary keys)
//	__key_json       the key parsed with the job's format: an avro or protobuf key
//	                 (its own schema id) decoded to JSON text, for JSON functions:
//	                 get_json_string(__key_json, '$.id'); csv and json: the key as text
//	__topic          the Kafka topic / the Kinesis stream
//	__partition      the partition number (Kinesis: the job's number of the shard)
//	__offset         the Kafka offset (Kinesis: the record's ordinal in its shard)
//	__sequence       the Kinesis sequence number (NULL for Kafka)
//	__timestamp      the record's timestamp (Kafka) / arrival time (Kinesis), a UTC datetime with microseconds
//	__timestamp_ms   the same in milliseconds since the Unix epoch
//	`__header.NAME`  the value of the Kafka header NAME (the last one when repeated), as text; NULL when absent
//
// A job that maps none of them pays nothing: SetMeta is needed only when
// UsesMeta reports true.

// RecordMeta is what the source knows of one record.
type RecordMeta struct {
	Key       []byte
	Topic     string
	Partition int32
	Offset    int64
	Seq       string
	Timestamp time.Time
	Headers   []Header
}

// Header is one Kafka record header.
type Header struct {
	Key   string
	Value []byte
}

type metaKind uint8

const (
	metaKey metaKind = iota + 1
	metaKeyHex
	metaKeyJSON
	metaTopic
	metaPartition
	metaOffset
	metaSequence
	metaTimestamp
	metaTimestampMs
	metaHeader
)

// metaRef is one metadata name a mapping reads.
type metaRef struct {
	kind   metaKind
	header string
}

var metaNames = map[string]metaKind{
	"__key": metaKey, "__key_hex": metaKeyHex, "__key_json": metaKeyJSON, "__topic": metaTopic, "__partition": metaPartition,
	"__offset": metaOffset, "__sequence": metaSequence, "__timestamp": metaTimestamp, "__timestamp_ms": metaTimestampMs,
}

const headerPrefix = "__header."

// parseMetaName reports whether name (without backquotes) is a metadata
// name, and which. A name that starts with "__" but is none of them is an
// error, so that a typo does not silently read a field.
func parseMetaName(name string) (metaRef, bool, error) {
	if !strings.HasPrefix(name, "__") {
		return metaRef{}, false, nil
	}
	l := strings.ToLower(name)
	if k, ok := metaNames[l]; ok {
		return metaRef{kind: k}, true, nil
	}
	if strings.HasPrefix(l, headerPrefix) {
		h := name[len(headerPrefix):]
		if h == "" {
			return metaRef{}, false, fmt.Errorf("%q names no header (want `__header.NAME`)", name)
		}
		return metaRef{kind: metaHeader, header: h}, true, nil
	}
	return metaRef{}, false, fmt.Errorf("unknown source metadata %q (known: __key, __key_hex, __key_json, __topic, __partition, __offset, __sequence, __timestamp, __timestamp_ms, `__header.NAME`)", name)
}

// UsesMeta reports whether the parser's mapping reads source metadata, so
// that SetMeta must be called before each record.
func (p *Parser) UsesMeta() bool { return p.m != nil && len(p.m.metas) > 0 }

// decodeKey decodes the record key with the job's decoder when the
// mapping reads __key_json: a key that does not decode makes the record an
// error row, a registry that does not answer makes it wait, as for values.
func (p *Parser) decodeKey() error {
	p.keyJSON = p.keyJSON[:0]
	if !p.keyJSONUsed || p.dec == nil || p.meta0 == nil || p.meta0.Key == nil {
		return nil
	}
	out, err := p.dec.AppendJSON(p.keyJSON, p.meta0.Key, p.maxValue)
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			return &ParseError{Reason: "key: " + pe.Reason}
		}
		return err
	}
	p.keyJSON = out
	return nil
}

// SetMeta sets the metadata of the next record(s) parsed. m is read during
// Parse only and not retained beyond the next SetMeta.
func (p *Parser) SetMeta(m *RecordMeta) { p.meta0 = m }

// metaEv evaluates one metadata name for the current record.
func (p *Parser) metaEv(r metaRef) ev {
	m := p.meta0
	if m == nil {
		return evNull
	}
	switch r.kind {
	case metaKey:
		if m.Key == nil {
			return evNull
		}
		return evStr(string(m.Key))
	case metaKeyJSON:
		if m.Key == nil {
			return evNull
		}
		if p.dec != nil {
			return evStr(string(p.keyJSON))
		}
		return evStr(string(m.Key))
	case metaKeyHex:
		if m.Key == nil {
			return evNull
		}
		return evStr(hex.EncodeToString(m.Key))
	case metaTopic:
		if m.Topic == "" {
			return evNull
		}
		return evStr(m.Topic)
	case metaPartition:
		return evInt(int64(m.Partition))
	case metaOffset:
		return evInt(m.Offset)
	case metaSequence:
		if m.Seq == "" {
			return evNull
		}
		return evStr(m.Seq)
	case metaTimestamp:
		if m.Timestamp.IsZero() {
			return evNull
		}
		return ev{k: eDatetime, i: m.Timestamp.UnixMicro()}
	case metaTimestampMs:
		if m.Timestamp.IsZero() {
			return evNull
		}
		return evInt(m.Timestamp.UnixMilli())
	case metaHeader:
		for i := len(m.Headers) - 1; i >= 0; i-- {
			if m.Headers[i].Key == r.header {
				return evStr(string(m.Headers[i].Value))
			}
		}
		return evNull
	}
	return evNull
}
