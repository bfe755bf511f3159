package kafka

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/sources"
)

// TestReadMetadata: a record's key, headers and timestamp, and the
// batch's topic, come through the reader.
func TestReadMetadata(t *testing.T) {
	e := newEnv(t, 1)
	at := time.UnixMilli(1_700_000_000_123)
	recs := []*kgo.Record{
		{Partition: 0, Key: []byte("k1"), Value: []byte("a"), Timestamp: at, Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "h", Value: []byte("2")}}},
		{Partition: 0, Value: []byte("b"), Timestamp: at},
	}
	if err := e.prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	r, err := e.cluster.NewReader(e.topic, map[int32]int64{0: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := r.Read(testCtx(t), sources.Limits{MaxRows: 2, MaxWait: 5 * time.Second})
	if err != nil || len(b.Records) != 2 {
		t.Fatalf("read %d records: %v", len(b.Records), err)
	}
	r0, r1 := b.Records[0], b.Records[1]
	if b.Topic != e.topic || string(r0.Key) != "k1" || !r0.Timestamp.Equal(at) || len(r0.Headers) != 2 ||
		r0.Headers[1].Key != "h" || string(r0.Headers[1].Value) != "2" || r1.Headers != nil || r1.Key != nil {
		t.Fatalf("batch topic %q, records %+v", b.Topic, b.Records)
	}
}
