package config

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

const avroBase = `name: a
table: {name: t, columns: [{name: id, type: int64}, {name: city, type: string}]}
format: AVRO
jsonpaths: ["$.id", "$.addr.city"]
kafka: {brokers: "127.0.0.1:9092", topic: t}
`

func TestSchemaRegistrySpec(t *testing.T) {
	y := avroBase + `schema_registry:
  url: https://sr.internal:8081/base
  username: loader
  password_env: SR_PASSWORD
  ca_file: /etc/ca.pem
  timeout: 2500ms
`
	s, err := ParseJobSpec([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	ApplyDefaults(s)
	if err := ValidateJobSpec(s); err != nil {
		t.Fatal(err)
	}
	r := s.GetSchemaRegistry()
	if s.Format != "avro" || r.GetUrl() != "https://sr.internal:8081/base" || r.GetPasswordEnv() != "SR_PASSWORD" || r.GetTimeoutMs() != 2500 {
		t.Fatalf("spec %v", s)
	}
	out, err := MarshalJobSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseJobSpec(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ApplyDefaults(back)
	if !proto.Equal(back, s) {
		t.Fatalf("round trip:\n%s\n%v\n%v", out, back, s)
	}

	for _, tc := range []struct{ yaml, field string }{
		{avroBase, "schema_registry"},
		{strings.Replace(avroBase, "AVRO", "json", 1) + "schema_registry: {url: http://h:1}\n", "schema_registry"},
		{avroBase + "schema_registry: {url: http://u:pw@h:1}\n", "schema_registry.url"},
		{avroBase + "schema_registry: {url: ftp://h}\n", "schema_registry.url"},
		{avroBase + "schema_registry: {url: http://h:1, password_file: /p}\n", "schema_registry.username"},
		{avroBase + "schema_registry: {url: http://h:1, username: u, password_file: /p, password_env: E}\n", "schema_registry.password_env"},
		{avroBase + "schema_registry: {url: http://h:1, username: u, password_file: /p, bearer_token_file: /t}\n", "schema_registry.bearer_token_file"},
		{avroBase + "schema_registry: {url: http://h:1, ca_file: /c}\n", "schema_registry.ca_file"},
		{avroBase + "schema_registry: {url: http://h:1, timeout: 1h}\n", "schema_registry.timeout"},
		{avroBase + "schema_registry: {url: http://h:1, colour: red}\n", "schema_registry.colour"},
	} {
		s, err := ParseJobSpec([]byte(tc.yaml))
		if err == nil {
			ApplyDefaults(s)
			err = ValidateJobSpec(s)
		}
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%q: %v, want an error naming %s", tc.yaml[len(avroBase)-1:], err, tc.field)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
}
