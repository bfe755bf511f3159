package table

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
	"google.golang.org/protobuf/proto"
)

func TestValueRoundTrip(t *testing.T) {
	s := testSchema(t)
	pos := Pos{JobID: 42, Partition: -3, Offset: -17}
	rows := [][]Value{
		{vI(1), vF(2.5), vS("bob"), vB(true), vI(1709296245123456), vS("hi")},
		{vN, vN, vN, vN, vN, vN},
		{vI(math.MinInt64), vF(math.Inf(-1)), vS(""), vB(false), vI(minTimestampMicros), vS(strings.Repeat("x", 300))},
		{vI(math.MaxInt64), vF(math.Copysign(0, -1)), vS("é世😀\x00\xff"), vN, vI(maxTimestampMicros), vN},
		{vI(-1), vF(math.SmallestNonzeroFloat64), vN, vB(true), vI(-1), vS("\"")},
		{vI(0), vF(math.NaN()), vS("a"), vB(false), vI(0), vS("")},
	}
	for _, p := range []Pos{pos, {}, {JobID: math.MaxUint64, Partition: math.MinInt32, Offset: math.MaxInt64}, {Partition: math.MaxInt32, Offset: math.MinInt64}} {
		for i, row := range rows {
			b := AppendValue([]byte("prefix"), s, p, row)
			if !bytes.HasPrefix(b, []byte("prefix")) {
				t.Fatalf("AppendValue dropped dst")
			}
			got, gotPos, err := DecodeValue(s, b[len("prefix"):], []Value{{Str: "junk"}})
			if err != nil {
				t.Fatalf("row %d: DecodeValue: %v", i, err)
			}
			if gotPos != p || !equalRows(got, row) {
				t.Errorf("row %d: round trip\n got %+v %+v\nwant %+v %+v", i, gotPos, got, p, row)
			}
			for c := range row {
				if math.Signbit(got[c].Float) != math.Signbit(row[c].Float) {
					t.Errorf("row %d column %d: float %v came back as %v: sign lost", i, c, row[c].Float, got[c].Float)
				}
			}
		}
	}
}

func TestDecodeValueCorrupt(t *testing.T) {
	s := testSchema(t)
	good := AppendValue(nil, s, Pos{JobID: 1, Partition: 2, Offset: 3}, []Value{vI(1), vF(2.5), vS("bob"), vB(true), vI(5), vS("hi")})
	other, _ := NewSchema(spec("t", col("a", api.ColumnType_INT64)))
	if _, _, err := DecodeValue(other, good, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("column count mismatch: err = %v", err)
	}
	if _, _, err := DecodeValue(s, nil, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("empty: err = %v", err)
	}
	bad := slices.Clone(good)
	bad[0] = 9
	if _, _, err := DecodeValue(s, bad, nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("format byte: err = %v", err)
	}
	if _, _, err := DecodeValue(s, append(slices.Clone(good), 0), nil); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: err = %v", err)
	}
	// Every truncation and every single-byte change must be an error or a
	// value, never a panic.
	for n := range len(good) {
		if _, _, err := DecodeValue(s, good[:n], nil); !errors.Is(err, ErrCorrupt) {
			t.Errorf("truncated to %d: err = %v", n, err)
		}
	}
	for i := range good {
		for _, c := range []byte{0, 1, 2, 0x7f, 0x80, 0xff} {
			b := slices.Clone(good)
			b[i] = c
			DecodeValue(s, b, nil)
		}
	}
}

func TestKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t.Logf("seed 1,2")
	edgesJ := []uint64{0, 1, 2, math.MaxUint32, 1 << 63, math.MaxUint64}
	edgesP := []int32{math.MinInt32, -2, -1, 0, 1, math.MaxInt32}
	edgesO := []int64{math.MinInt64, -1 << 40, -2, -1, 0, 1, 255, 256, 1 << 40, math.MaxInt64}
	var pos []Pos
	for _, j := range edgesJ {
		for _, p := range edgesP {
			for _, o := range edgesO {
				pos = append(pos, Pos{j, p, o})
			}
		}
	}
	for range 1000 {
		pos = append(pos, Pos{rng.Uint64() >> rng.IntN(64), int32(rng.Uint32()) >> rng.IntN(32), int64(rng.Uint64()) >> rng.IntN(64)})
	}
	cmpPos := func(a, b Pos) int {
		switch {
		case a.JobID != b.JobID:
			return cmpOrd(a.JobID, b.JobID)
		case a.Partition != b.Partition:
			return cmpOrd(a.Partition, b.Partition)
		}
		return cmpOrd(a.Offset, b.Offset)
	}
	keys := make([][]byte, len(pos))
	for i, p := range pos {
		keys[i] = AppendKey(nil, api.TableModel_DUPLICATE, p, nil)
		if len(keys[i]) != KeyLen {
			t.Fatalf("key of %d bytes", len(keys[i]))
		}
	}
	for i := range pos {
		for j := range pos {
			if g, w := bytes.Compare(keys[i], keys[j]), cmpPos(pos[i], pos[j]); g != w {
				t.Fatalf("key order of %+v vs %+v = %d, want %d", pos[i], pos[j], g, w)
			}
		}
	}
}

func cmpOrd[T int32 | int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestToProto(t *testing.T) {
	s := testSchema(t)
	row := ToProto(s, []Value{vI(-1), vF(2.5), vS("bad\xff"), vB(true), vI(1000), vN}, Pos{JobID: 7, Partition: 1, Offset: 99})
	want := &api.Row{JobId: 7, Partition: 1, Offset: 99, Values: []*api.Value{
		{Kind: &api.Value_Int64{Int64: -1}},
		{Kind: &api.Value_Float64{Float64: 2.5}},
		{Kind: &api.Value_String_{String_: "bad\uFFFD"}},
		{Kind: &api.Value_Bool{Bool: true}},
		{Kind: &api.Value_TimestampMicros{TimestampMicros: 1000}},
		{Kind: &api.Value_Null{Null: true}},
	}}
	if !proto.Equal(row, want) {
		t.Errorf("ToProto = %v\nwant %v", row, want)
	}
	if _, err := proto.Marshal(row); err != nil {
		t.Errorf("Marshal: %v", err)
	}
}
