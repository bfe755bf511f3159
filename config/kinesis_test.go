package config

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

const kinesisHead = `name: j
table:
  name: t
  columns:
    - {name: a, type: int64}
    - {name: b, type: string}
kinesis:
`

func TestParseKinesis(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want *api.KinesisSpec
	}{
		{"minimal", "  stream: s\n  region: us-east-1\n",
			&api.KinesisSpec{Stream: "s", Region: "us-east-1", DefaultPosition: "TRIM_HORIZON"}},
		{"endpoint and static keys", "  stream: s\n  endpoint: http://127.0.0.1:4567\n  credentials: {access_key_id: AK, secret_access_key: SK}\n  default_position: latest\n",
			&api.KinesisSpec{Stream: "s", Endpoint: "http://127.0.0.1:4567", AccessKeyId: "AK", SecretAccessKey: "SK", DefaultPosition: "LATEST"}},
		{"shards and positions", "  stream: s\n  region: eu-west-1\n  credentials: {profile: loader}\n  shards: [shardId-000000000000, shardId-000000000001]\n  positions:\n    shardId-000000000000: AT_TIMESTAMP:2026-11-30T10:00:00Z\n    shardId-000000000001: \"49590338271490256608559692538361571095921575989136588898\"\n",
			&api.KinesisSpec{Stream: "s", Region: "eu-west-1", Profile: "loader", Shards: []string{"shardId-000000000000", "shardId-000000000001"},
				Positions:       map[string]string{"shardId-000000000000": "AT_TIMESTAMP:2026-11-30T10:00:00Z", "shardId-000000000001": "49590338271490256608559692538361571095921575989136588898"},
				DefaultPosition: "TRIM_HORIZON"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(kinesisHead + tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(s.Kinesis, tc.want) {
				t.Fatalf("got  %v\nwant %v", s.Kinesis, tc.want)
			}
			assertRoundTrip(t, s)
		})
	}
}

func TestParseKinesisErrors(t *testing.T) {
	cases := []struct{ name, yaml, field, msg string }{
		{"no stream", "  region: us-east-1\n", "kinesis.stream", "required"},
		{"bad stream", "  stream: a/b\n  region: us-east-1\n", "kinesis.stream", "not a valid stream name"},
		{"no region", "  stream: s\n", "kinesis.region", "required"},
		{"bad endpoint", "  stream: s\n  endpoint: 127.0.0.1:4567\n", "kinesis.endpoint", "http://"},
		{"half keys", "  stream: s\n  region: us-east-1\n  credentials: {access_key_id: AK}\n", "kinesis.credentials", "go together"},
		{"keys and profile", "  stream: s\n  region: us-east-1\n  credentials: {access_key_id: AK, secret_access_key: SK, profile: p}\n", "kinesis.credentials", "not both"},
		{"unknown credential", "  stream: s\n  region: us-east-1\n  credentials: {password: x}\n", "kinesis.credentials.password", "unknown key"},
		{"bad position", "  stream: s\n  region: us-east-1\n  positions: {shardId-000000000000: OFFSET_BEGINNING}\n", "kinesis.positions.shardId-000000000000", "TRIM_HORIZON"},
		{"sequence number with leading zeros", "  stream: s\n  region: us-east-1\n  positions: {shardId-000000000000: \"0042\"}\n", "kinesis.positions.shardId-000000000000", "TRIM_HORIZON"},
		{"bad timestamp", "  stream: s\n  region: us-east-1\n  default_position: AT_TIMESTAMP:yesterday\n", "kinesis.default_position", "RFC3339"},
		{"position not in shards", "  stream: s\n  region: us-east-1\n  shards: [shardId-000000000001]\n  positions: {shardId-000000000000: LATEST}\n", "kinesis.positions.shardId-000000000000", "not in kinesis.shards"},
		{"duplicate shard", "  stream: s\n  region: us-east-1\n  shards: [shardId-000000000001, shardId-000000000001]\n", "kinesis.shards[1]", "duplicate"},
		{"unknown key", "  stream: s\n  region: us-east-1\n  topic: x\n", "kinesis.topic", "unknown key"},
		{"no source", "", "kafka", "a source is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(kinesisHead + tc.yaml))
			if err == nil {
				t.Fatalf("no error; spec %v", s)
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("want *FieldError, got %T %v", err, err)
			}
			if fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q (field %q), want field %q containing %q", err, fe.Field, tc.field, tc.msg)
			}
		})
	}
}
