package api

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestRedactSpec(t *testing.T) {
	for key, secret := range map[string]bool{
		"sasl.password": true, "sasl.oauthbearer.token": true, "ssl.key.password": true, "some.SECRET": true,
		"sasl.password_file": false, "ssl.key.location": false, "sasl.username": false, "client.id": false,
	} {
		if got := SecretProperty(key); got != secret {
			t.Errorf("SecretProperty(%q) = %v, want %v", key, got, secret)
		}
	}
	s := &JobSpec{Name: "j",
		Kafka:   &KafkaSpec{Properties: map[string]string{"sasl.password": "pw1", "sasl.username": "u"}},
		Kinesis: &KinesisSpec{AccessKeyId: "AKIA", SecretAccessKey: "sk1", SessionToken: "tok1", Endpoint: "http://u:pw2@127.0.0.1:4567"}}
	orig := proto.Clone(s)
	r := RedactSpec(s)
	if !proto.Equal(s, orig) {
		t.Fatal("RedactSpec modified its argument")
	}
	for _, secret := range []string{"pw1", "sk1", "tok1", "pw2"} {
		if strings.Contains(r.String(), secret) {
			t.Errorf("%q is shown: %v", secret, r)
		}
	}
	if r.GetKafka().GetProperties()["sasl.username"] != "u" || r.GetKinesis().GetAccessKeyId() != "AKIA" {
		t.Errorf("non-secrets redacted: %v", r)
	}
	if plain := (&JobSpec{Name: "p"}); RedactSpec(plain) != plain {
		t.Error("a spec without secrets is copied")
	}
}

func TestRedactErrorTopicProperties(t *testing.T) {
	s := &JobSpec{Name: "j", ErrorTopic: "d", ErrorTopicBrokers: []string{"h:1"},
		ErrorTopicProperties: map[string]string{"sasl.password": "hunter2", "client.id": "c"}}
	r := RedactSpec(s)
	if r.ErrorTopicProperties["sasl.password"] != Redacted || r.ErrorTopicProperties["client.id"] != "c" {
		t.Fatalf("redacted %v", r.ErrorTopicProperties)
	}
	if s.ErrorTopicProperties["sasl.password"] != "hunter2" {
		t.Fatal("RedactSpec modified its argument")
	}
}
