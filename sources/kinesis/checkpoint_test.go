package kinesis

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"

	"github.com/loadnode/loadnode/sources"
)

const seqA = "49590338271490256608559692538361571095921575989136588898"

func TestCheckpointRoundTrip(t *testing.T) {
	for _, cp := range []Checkpoint{
		{Shard: ShardID(0), Start: TrimHorizon},
		{Shard: ShardID(12), Parents: []string{ShardID(3)}, ParentParts: []int32{3}, Start: Latest, Ended: true},
		{Shard: ShardID(5), Parents: []string{ShardID(1), ShardID(2)}, ParentParts: []int32{1, 2},
			Start: "AT_TIMESTAMP:2024-05-01T10:00:00.123Z", Last: seqA},
		{Shard: "shardId-000000000007", Start: seqA, Last: seqA + "1"},
		{Shard: ShardID(8), Start: TrimHorizon, Last: seqA, Sub: 3},
	} {
		b := EncodeCheckpoint(cp)
		got, err := DecodeCheckpoint(b)
		if err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if !reflect.DeepEqual(got, cp) {
			t.Fatalf("round trip of %+v gave %+v (%s)", cp, got, b)
		}
	}
}

func TestDecodeCheckpointErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "empty"},
		{`{`, "unexpected EOF"},
		{`[]`, "cannot unmarshal"},
		{`{"v":2,"shard":"shardId-000000000000","start":"LATEST"}`, "version 2"},
		{`{"shard":"shardId-000000000000","start":"LATEST"}`, "version 0"},
		{`{"v":1,"shard":"shard-0","start":"LATEST"}`, "not of the form"},
		{`{"v":1,"shard":"shardId-000000000000","start":"EARLIEST"}`, "start"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","last":"12x"}`, "bad last"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","parents":["shardId-000000000001"]}`, "1 parents but 0"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","parents":["shardId-000000000001"],"parent_parts":[2]}`, "has index 1, not 2"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","extra":1}`, "unknown field"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","sub":2}`, "sub-record 2"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","last":"12","sub":-1}`, "sub-record -1"},
		{`{"v":1,"shard":"shardId-000000000000","start":"LATEST","last":"12","sub":1,"ended":true}`, "ended true"},
	} {
		_, err := DecodeCheckpoint([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeCheckpoint(%s) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestShardIndexAndSeq(t *testing.T) {
	for id, want := range map[string]int32{"shardId-000000000000": 0, "shardId-000000000012": 12, "shardId-2147483647": 2147483647} {
		if got, err := ShardIndex(id); err != nil || got != want {
			t.Errorf("ShardIndex(%s) = %d, %v", id, got, err)
		}
	}
	for _, id := range []string{"", "shardId-", "shardId-x1", "shard-000000000001", "shardId-2147483648", "shardId-0000000000001"} {
		if _, err := ShardIndex(id); err == nil {
			t.Errorf("ShardIndex(%q) accepted", id)
		}
	}
	if ShardID(12) != "shardId-000000000012" {
		t.Errorf("ShardID(12) = %s", ShardID(12))
	}
	for _, tc := range []struct {
		a, b string
		want int
	}{{"9", "10", -1}, {"10", "9", 1}, {seqA, seqA, 0}, {"123", "124", -1}} {
		if got := cmpSeq(tc.a, tc.b); got != tc.want {
			t.Errorf("cmpSeq(%s, %s) = %d", tc.a, tc.b, got)
		}
	}
	for s, want := range map[string]bool{"0": true, "12": true, "012": false, "": false, "1a": false, strings.Repeat("1", 129): false} {
		if isSeq(s) != want {
			t.Errorf("isSeq(%q) = %v", s, !want)
		}
	}
}

func cpBytes(shard int32, ended bool, parents ...int32) []byte {
	cp := Checkpoint{Shard: ShardID(shard), Start: TrimHorizon, Ended: ended}
	for _, p := range parents {
		cp.Parents = append(cp.Parents, ShardID(p))
		cp.ParentParts = append(cp.ParentParts, p)
	}
	return EncodeCheckpoint(cp)
}

func TestReadable(t *testing.T) {
	s := &Source{}
	for _, tc := range []struct {
		name  string
		parts []int32
		cps   map[int32][]byte
		want  []int32
	}{
		{"no lineage", []int32{0, 1}, map[int32][]byte{0: cpBytes(0, false), 1: cpBytes(1, false)}, []int32{0, 1}},
		{"ended not readable", []int32{0, 1}, map[int32][]byte{0: cpBytes(0, true), 1: cpBytes(1, false)}, []int32{1}},
		{"split: parent open", []int32{0, 1, 2}, map[int32][]byte{0: cpBytes(0, false), 1: cpBytes(1, false, 0), 2: cpBytes(2, false, 0)}, []int32{0}},
		{"split: parent ended", []int32{0, 1, 2}, map[int32][]byte{0: cpBytes(0, true), 1: cpBytes(1, false, 0), 2: cpBytes(2, false, 0)}, []int32{1, 2}},
		{"merge: one parent open", []int32{1, 2, 3}, map[int32][]byte{1: cpBytes(1, true), 2: cpBytes(2, false), 3: cpBytes(3, false, 1, 2)}, []int32{2}},
		{"merge: both ended", []int32{1, 2, 3}, map[int32][]byte{1: cpBytes(1, true), 2: cpBytes(2, true), 3: cpBytes(3, false, 1, 2)}, []int32{3}},
		{"untracked parent", []int32{5}, map[int32][]byte{5: cpBytes(5, false, 4)}, []int32{5}},
		{"grandchild waits for child", []int32{0, 1, 2}, map[int32][]byte{0: cpBytes(0, true), 1: cpBytes(1, false, 0), 2: cpBytes(2, false, 1)}, []int32{1}},
		{"no checkpoint", []int32{0, 7}, map[int32][]byte{0: cpBytes(0, false)}, []int32{0}},
		{"bad checkpoint", []int32{0}, map[int32][]byte{0: []byte("x")}, nil},
		{"bad parent checkpoint", []int32{1}, map[int32][]byte{0: []byte("x"), 1: cpBytes(1, false, 0)}, nil},
		{"subset of parts", []int32{2}, map[int32][]byte{0: cpBytes(0, true), 1: cpBytes(1, false, 0), 2: cpBytes(2, false, 0)}, []int32{2}},
	} {
		if got := s.Readable(tc.parts, tc.cps); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: Readable = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	s := &Source{shards: map[int32]shardMeta{
		0: {id: ShardID(0), closed: true},
		1: {id: ShardID(1), parents: []string{ShardID(0)}},
	}}
	withLast := Checkpoint{Shard: ShardID(1), Parents: []string{ShardID(0)}, ParentParts: []int32{0}, Start: TrimHorizon, Last: seqA}
	for _, tc := range []struct {
		name string
		p    int32
		cp   []byte
		want sources.PartitionState
	}{
		{"closed, not finished", 0, cpBytes(0, false), sources.PartitionState{ID: ShardID(0), State: "closed", Seq: TrimHorizon}},
		{"finished", 0, cpBytes(0, true), sources.PartitionState{ID: ShardID(0), State: "finished", Seq: TrimHorizon}},
		{"open with last", 1, EncodeCheckpoint(withLast), sources.PartitionState{ID: ShardID(1), State: "open", Parents: []int32{0}, Seq: seqA}},
		{"not listed", 9, cpBytes(9, false, 1), sources.PartitionState{ID: ShardID(9), State: "open", Parents: []int32{1}, Seq: TrimHorizon}},
		{"no checkpoint", 1, nil, sources.PartitionState{ID: ShardID(1), State: "open"}},
		{"bad checkpoint", 0, []byte("x"), sources.PartitionState{ID: ShardID(0), State: "closed", Seq: "?"}},
	} {
		if got := s.Describe(tc.p, tc.cp); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Describe = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults(" throttle=0.2, expire=0.01,fail=0,seed=7,trim=shardId-000000000001:" + seqA + ",trim=shardId-000000000002:5")
	if err != nil {
		t.Fatal(err)
	}
	if f.ThrottleRate != 0.2 || f.ExpireRate != 0.01 || f.FailRate != 0 || f.Seed != 7 || f.Trim == nil {
		t.Fatalf("parsed %+v", f)
	}
	if v, ok := f.Trim(ShardID(1)); !ok || v != seqA {
		t.Fatalf("trim of shard 1: %q %v", v, ok)
	}
	if v, ok := f.Trim(ShardID(2)); !ok || v != "5" {
		t.Fatalf("trim of shard 2: %q %v", v, ok)
	}
	if _, ok := f.Trim(ShardID(3)); ok {
		t.Fatalf("trim of shard 3")
	}
	if f, err := ParseFaults("  "); f != nil || err != nil {
		t.Fatalf("empty: %v %v", f, err)
	}
	for _, bad := range []string{"throttle", "throttle=2", "throttle=x", "expire=-0.1", "seed=-1", "trim=5", "trim=shard-1:5", "trim=shardId-000000000001:x", "jitter=1"} {
		if _, err := ParseFaults(bad); err == nil {
			t.Errorf("ParseFaults(%q) accepted", bad)
		}
	}
	// Seeded draws repeat.
	a, b := &Faults{Seed: 3}, &Faults{Seed: 3}
	for i := 0; i < 100; i++ {
		if a.draw(0.5) != b.draw(0.5) {
			t.Fatalf("seeded draws differ at %d", i)
		}
	}
}

func TestKindOf(t *testing.T) {
	wrap := func(err error) error {
		return &smithy.OperationError{ServiceID: "Kinesis", OperationName: "GetRecords", Err: err}
	}
	for _, tc := range []struct {
		err  error
		want errKind
	}{
		{wrap(&types.ProvisionedThroughputExceededException{Message: aws.String("x")}), kindThrottle},
		{wrap(&types.LimitExceededException{}), kindThrottle},
		{wrap(&types.KMSThrottlingException{}), kindThrottle},
		{wrap(&smithy.GenericAPIError{Code: "InternalFailure"}), kindThrottle},
		{wrap(&types.ExpiredIteratorException{}), kindExpired},
		{wrap(&types.ResourceNotFoundException{}), kindNotFound},
		{wrap(&types.AccessDeniedException{}), kindAuth},
		{wrap(&smithy.GenericAPIError{Code: "UnrecognizedClientException"}), kindAuth},
		{wrap(&smithy.GenericAPIError{Code: "InvalidSignatureException"}), kindAuth},
		{wrap(&types.InvalidArgumentException{}), kindInvalidArg},
		{wrap(&smithy.GenericAPIError{Code: "SomethingNew"}), kindOther},
		{wrap(fmt.Errorf("x: %w", errors.New("dial tcp: connection refused"))), kindTransport},
	} {
		if got := kindOf(tc.err); got != tc.want {
			t.Errorf("kindOf(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	var ce *sources.ConfigError
	if err := classify("op", wrap(&types.ResourceNotFoundException{})); !errors.As(err, &ce) || ce.Field != "kinesis.stream" {
		t.Errorf("classify(not found) = %v", err)
	}
	if err := classify("op", wrap(&types.AccessDeniedException{})); !errors.As(err, &ce) || ce.Field != "kinesis credentials" {
		t.Errorf("classify(access denied) = %v", err)
	}
	var ue *sources.UnreachableError
	if err := classify("op", wrap(&types.LimitExceededException{})); !errors.As(err, &ue) {
		t.Errorf("classify(limit) = %v", err)
	}
}
