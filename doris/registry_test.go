package doris

import (
	"strings"
	"testing"
)

func TestCreateRoutineLoadAvro(t *testing.T) {
	st, err := Parse("CREATE ROUTINE LOAD db.avro_job ON orders " +
		"COLUMNS(id, note, k = __key, trace = `__header.trace-id`, ts = __timestamp) " +
		`PROPERTIES ("format" = "avro", "jsonpaths" = "[\"$.id\", \"$.addr.note\"]") ` +
		`FROM KAFKA ("kafka_broker_list" = "127.0.0.1:9092", "kafka_topic" = "orders", ` +
		`"property.schema.registry.url" = "https://sr.internal:8081", "property.schema.registry.username" = "loader", ` +
		`"property.schema.registry.password_file" = "/etc/loadnode/sr.pw", "property.schema.registry.ssl.ca.location" = "/etc/ca.pem", ` +
		`"property.schema.registry.timeout" = "5s")`)
	if err != nil {
		t.Fatal(err)
	}
	s := st.CreateRoutineLoad
	r := s.GetSchemaRegistry()
	if s.Format != "avro" || r.GetUrl() != "https://sr.internal:8081" || r.GetUsername() != "loader" || r.GetPasswordFile() != "/etc/loadnode/sr.pw" ||
		r.GetCaFile() != "/etc/ca.pem" || r.GetTimeoutMs() != 5000 {
		t.Fatalf("spec %v", s)
	}
	if got := strings.Join(s.ColumnsMapping, "|"); !strings.Contains(got, "`__header.trace-id`") || !strings.Contains(got, "__key") {
		t.Fatalf("columns %q", got)
	}
	if len(s.GetKafka().GetProperties()) != 0 {
		t.Fatalf("registry settings leaked into the Kafka client properties: %v", s.GetKafka().GetProperties())
	}
	for _, bad := range []string{`"property.basic.auth.user.info" = "u:secret"`, `"property.schema.registry.basic.auth.user.info" = "u:secret"`, `"property.schema.registry.colour" = "x"`, `"property.schema.registry.timeout" = "1h"`} {
		_, err := Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "protobuf") FROM KAFKA ("kafka_broker_list" = "h:9092", "kafka_topic" = "t", ` + bad + `)`)
		if err == nil || !strings.Contains(err.Error(), strings.Split(bad, `"`)[1]) || strings.Contains(err.Error(), "secret\"") {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}
