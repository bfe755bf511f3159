package kinesis

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

// withMD5 wraps a protobuf body as an aggregate with a correct trailer.
func withMD5(body []byte) []byte {
	sum := md5.Sum(body)
	out := append(append([]byte{}, kplMagic...), body...)
	return append(out, sum[:]...)
}

func TestDeaggregate(t *testing.T) {
	recs := []kinesistest.UserRecord{
		{Key: "a", Data: []byte("one")},
		{Key: "b", HashKey: "12345", Data: []byte("two")},
		{Key: "a", Data: []byte{}},
		{Key: "c", Data: bytes.Repeat([]byte{0xF3}, 300)},
	}
	agg := kinesistest.Aggregate(recs...)
	if !IsAggregated(agg) {
		t.Fatal("an aggregate is not recognized")
	}
	got, err := Deaggregate(agg)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	for i, r := range recs {
		if got[i].Key != r.Key || got[i].HashKey != r.HashKey || !bytes.Equal(got[i].Data, r.Data) {
			t.Errorf("record %d: %+v, want %+v", i, got[i], r)
		}
	}
	// Unknown fields (and the tags of field 4) are skipped.
	body := agg[len(kplMagic) : len(agg)-md5.Size]
	extra := protowire.AppendTag(append([]byte{}, body...), 9, protowire.VarintType)
	extra = protowire.AppendVarint(extra, 7)
	if got, err := Deaggregate(withMD5(extra)); err != nil || len(got) != len(recs) {
		t.Fatalf("with an unknown field: %d records, %v", len(got), err)
	}
}

func TestDeaggregateErrors(t *testing.T) {
	good := kinesistest.Aggregate(kinesistest.UserRecord{Key: "k", Data: []byte("x")}, kinesistest.UserRecord{Key: "k2", Data: []byte("y")})
	body := good[len(kplMagic) : len(good)-md5.Size]
	badMD5 := bytes.Clone(good)
	badMD5[len(badMD5)-1] ^= 1
	flipped := bytes.Clone(good)
	flipped[len(kplMagic)+3] ^= 0x40 // body changed, trailer kept

	rec := func(fields ...[]byte) []byte {
		var m []byte
		for _, f := range fields {
			m = append(m, f...)
		}
		b := protowire.AppendTag([]byte{}, 1, protowire.BytesType)
		b = protowire.AppendString(b, "k")
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return protowire.AppendBytes(b, m)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	data := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte("d"))

	cases := []struct {
		name, data, want string
	}{
		{"empty", string(kplMagic), "truncated"},
		{"magic only and part of a trailer", string(kplMagic) + "0123456789", "truncated"},
		{"bad MD5", string(badMD5), "MD5"},
		{"body changed", string(flipped), "MD5"},
		{"truncated body", string(withMD5(body[:len(body)-2])), "KPL aggregate"},
		{"no records", string(withMD5(protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "k"))), "no records"},
		{"empty body", string(withMD5(nil)), "no records"},
		{"key index out of range", string(withMD5(rec(varint(1, 5), data))), "partition key index 5"},
		{"hash index out of range", string(withMD5(rec(varint(1, 0), varint(2, 0), data))), "explicit hash key index 0"},
		{"no key index", string(withMD5(rec(data))), "no partition key index"},
		{"no data", string(withMD5(rec(varint(1, 0)))), "no data"},
		{"records as a varint", string(withMD5(varint(3, 1))), "wire type"},
		{"garbage", string(withMD5([]byte{0xff, 0xff, 0xff})), "KPL aggregate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Deaggregate([]byte(c.data))
			if err == nil {
				t.Fatalf("no error; records %+v", got)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not say %q", err, c.want)
			}
		})
	}
	if IsAggregated([]byte{0xF3, 0x89, 0x9A}) || IsAggregated([]byte(`{"a":1}`)) || IsAggregated(nil) {
		t.Fatal("a record without the whole magic counts as an aggregate")
	}
}

// FuzzDeaggregate: any input either decodes into records whose data lies
// inside it, or fails with an error; it never panics. Re-encoding what was
// decoded decodes to the same records.
func FuzzDeaggregate(f *testing.F) {
	f.Add(kinesistest.Aggregate(kinesistest.UserRecord{Key: "k", Data: []byte("x")}))
	f.Add(kinesistest.Aggregate(kinesistest.UserRecord{Key: "a", HashKey: "1", Data: nil}, kinesistest.UserRecord{Key: "b", Data: []byte("yy")}))
	f.Add(withMD5([]byte{0x1a, 0x02, 0x08, 0x00}))
	f.Add(append(bytes.Clone(kplMagic), 1, 2, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withMD5(data)} {
			recs, err := Deaggregate(in)
			if err != nil {
				continue
			}
			if len(recs) == 0 {
				t.Fatal("no error and no records")
			}
			var again []kinesistest.UserRecord
			for _, r := range recs {
				again = append(again, kinesistest.UserRecord{Key: r.Key, HashKey: r.HashKey, Data: r.Data})
			}
			back, err := Deaggregate(kinesistest.Aggregate(again...))
			if err != nil || len(back) != len(recs) {
				t.Fatalf("re-encoded: %d records, %v; want %d", len(back), err, len(recs))
			}
			for i := range back {
				if back[i].Key != recs[i].Key || back[i].HashKey != recs[i].HashKey || !bytes.Equal(back[i].Data, recs[i].Data) {
					t.Fatalf("record %d re-encoded as %+v, was %+v", i, back[i], recs[i])
				}
			}
		}
	})
}

// TestReaderDeaggregates: KPL aggregates of 13 user records each, mixed
// with plain records (one of which starts like the magic) and one corrupt
// aggregate, read 5 records at a time with a new reader from the committed
// checkpoint after every read, so that almost every reader starts inside
// an aggregate: every user record once, with its own partition key and
// subsequence number, and the corrupt aggregate as one record with its
// error and raw bytes.
func TestReaderDeaggregates(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "agg", 2)
	var want []string
	keyOf := map[string]string{}
	var recs []kinesistest.Record
	for a := 0; a < 12; a++ {
		var users []kinesistest.UserRecord
		for i := 0; i < 13; i++ {
			v := fmt.Sprintf("a%02d-u%02d", a, i)
			k := fmt.Sprintf("user-key-%d", (a*13+i)%7)
			users = append(users, kinesistest.UserRecord{Key: k, Data: []byte(v)})
			want = append(want, v)
			keyOf[v] = k
		}
		recs = append(recs, kinesistest.Record{Key: fmt.Sprintf("agg-%d", a), Data: kinesistest.Aggregate(users...)})
		if a%4 == 1 {
			v := fmt.Sprintf("plain-%d", a)
			recs = append(recs, kinesistest.Record{Key: "plain", Data: []byte(v)})
			want = append(want, v)
			keyOf[v] = "plain"
		}
	}
	lookalike := string([]byte{0xF3, 0x89, 0x9A}) + "not an aggregate"
	recs = append(recs, kinesistest.Record{Key: "plain", Data: []byte(lookalike)})
	want = append(want, lookalike)
	keyOf[lookalike] = "plain"
	corrupt := kinesistest.Aggregate(kinesistest.UserRecord{Key: "x", Data: []byte("lost?")})
	corrupt[len(corrupt)-1] ^= 0xff
	recs = append(recs, kinesistest.Record{Key: "corrupt", Data: corrupt})
	kinesistest.PutRecords(t, c, "agg", recs...)

	src := newTestSource(t, testSpec(ep, "agg"), nil)
	j := newJob(t, src)
	j.topology(true)
	lim := sources.Limits{MaxRows: 5, MaxWait: 300 * time.Millisecond}
	midAggregate := 0
	j.readUntil(lim, 60*time.Second, func() bool {
		for p := range j.cps {
			if j.checkpoint(p).Sub > 0 {
				midAggregate++
			}
		}
		j.closeReader()
		return len(j.got) >= len(want)+1
	})
	if midAggregate == 0 {
		t.Fatal("no reader started inside an aggregate")
	}
	var got []string
	bad := 0
	for _, r := range j.got {
		if r.Err != nil {
			bad++
			if !bytes.Equal(r.Value, corrupt) || string(r.Key) != "corrupt" || !strings.Contains(r.Err.Error(), "MD5") {
				t.Fatalf("corrupt aggregate returned as %q key %q err %v", r.Value, r.Key, r.Err)
			}
			continue
		}
		v := string(r.Value)
		got = append(got, v)
		if string(r.Key) != keyOf[v] {
			t.Errorf("%s: key %q, want %q", v, r.Key, keyOf[v])
		}
		var a, u int
		if n, _ := fmt.Sscanf(v, "a%02d-u%02d", &a, &u); n == 2 && r.SubSeq != int64(u) {
			t.Errorf("%s: subsequence %d, want %d", v, r.SubSeq, u)
		}
	}
	if bad != 1 {
		t.Fatalf("%d error records, want 1", bad)
	}
	checkExactlyOnce(t, got, want)
	total := int64(0)
	for _, n := range j.next {
		total += n
	}
	if total != int64(len(want)+1) {
		t.Fatalf("ordinals sum to %d, want %d (one per user record and one for the corrupt aggregate)", total, len(want)+1)
	}
	t.Logf("%d records, %d reads started inside an aggregate", len(j.got), midAggregate)
}
