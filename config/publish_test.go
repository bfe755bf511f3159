package config

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestParsePublish: kafka.commit_group and error_topic with its cluster
// parse, validate, and survive a marshal and parse again.
func TestParsePublish(t *testing.T) {
	head := strings.TrimSuffix(minimal, "kafka:\n  brokers: [h1:9092]\n  topic: tp\n")
	doc := head + "error_topic: tp-dlq\nerror_topic_brokers: [dlq1:9092, dlq2:9092]\nerror_topic_properties:\n  client.id: dlq\n" +
		"kafka:\n  brokers: [h1:9092]\n  topic: tp\n  commit_group: lag.tp\n"
	s, err := ParseJobSpec([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if s.GetKafka().GetCommitGroup() != "lag.tp" || s.ErrorTopic != "tp-dlq" || len(s.ErrorTopicBrokers) != 2 || s.ErrorTopicProperties["client.id"] != "dlq" {
		t.Fatalf("parsed %v", s)
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !proto.Equal(s, again) {
		t.Fatalf("round trip changed the spec:\n%v\n%v\n%s", s, again, out)
	}
	if _, err := ParseJobSpec([]byte(head + "error_topic_brokers: [dlq:9092]\nkafka:\n  brokers: [h1:9092]\n  topic: tp\n")); err == nil ||
		!strings.Contains(err.Error(), "error_topic_brokers") {
		t.Fatalf("brokers without a topic: %v", err)
	}
}
