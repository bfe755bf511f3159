package config

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

func alterBase() *api.JobSpec {
	s := &api.JobSpec{
		Name:  "orders_load",
		Table: &api.TableSpec{Name: "orders", Columns: []*api.Column{{Name: "id", Type: api.ColumnType_INT64}}},
		Kafka: &api.KafkaSpec{Brokers: []string{"127.0.0.1:9092"}, Topic: "orders", Properties: map[string]string{"client.id": "a"}},
	}
	ApplyDefaults(s)
	return s
}

func TestAlterMask(t *testing.T) {
	cur := alterBase()
	req := &api.AlterJobRequest{Spec: &api.JobSpec{MaxBatchRows: 77, Kafka: &api.KafkaSpec{Properties: map[string]string{"fetch.max.bytes": "1048576"}}},
		UpdateMask: []string{"max_batch_rows", "kafka.properties.fetch.max.bytes", "kafka.properties.client.id"}}
	next, changes, reopen, err := Alter(cur, req)
	if err != nil {
		t.Fatal(err)
	}
	if next.GetMaxBatchRows() != 77 || next.GetKafka().GetProperties()["fetch.max.bytes"] != "1048576" {
		t.Fatalf("next = %v", next)
	}
	if _, ok := next.GetKafka().GetProperties()["client.id"]; ok {
		t.Fatal("a masked property absent from the patch must be removed")
	}
	if !reopen || !slices.Equal(changes, []string{"max_batch_rows 200000->77", "kafka.properties"}) {
		t.Fatalf("changes %q reopen %v", changes, reopen)
	}
	if cur.GetMaxBatchRows() == 77 {
		t.Fatal("Alter modified cur")
	}
}

func TestAlterRefusesByName(t *testing.T) {
	tests := []struct {
		name  string
		req   func() *api.AlterJobRequest
		field string
	}{
		{"mask topic", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{Kafka: &api.KafkaSpec{Topic: "x"}}, UpdateMask: []string{"kafka.topic"}}
		}, "kafka.topic"},
		{"mask jsonpaths", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{}, UpdateMask: []string{"jsonpaths"}}
		}, "jsonpaths"},
		{"mask out of range", func() *api.AlterJobRequest {
			return &api.AlterJobRequest{Spec: &api.JobSpec{MaxBatchRows: -5}, UpdateMask: []string{"max_batch_rows"}}
		}, "max_batch_rows"},
		{"whole spec topic", func() *api.AlterJobRequest {
			s := alterBase()
			s.Kafka.Topic = "other"
			return &api.AlterJobRequest{Spec: s}
		}, "kafka.topic"},
		{"whole spec table", func() *api.AlterJobRequest {
			s := alterBase()
			s.Table.Columns[0].Name = "x"
			s.Jsonpaths = alterBase().Jsonpaths
			return &api.AlterJobRequest{Spec: s}
		}, "table"},
		{"whole spec format", func() *api.AlterJobRequest {
			s := proto.Clone(alterBase()).(*api.JobSpec)
			s.Format, s.ColumnSeparator, s.Jsonpaths = "json", "", nil
			return &api.AlterJobRequest{Spec: s}
		}, "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, _, err := Alter(alterBase(), tt.req())
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("Alter = %v, want a FieldError naming %s", err, tt.field)
			}
		})
	}
}

// TestAlterKeepsRedactedSecrets: a spec copied from `job show` carries
// api.Redacted in place of its secrets; altering with it keeps the stored
// secrets (they stay usable) and changes what was changed.
func TestAlterKeepsRedactedSecrets(t *testing.T) {
	cur := alterBase()
	cur.Kafka.Properties = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "s3cret"}
	shown := api.RedactSpec(cur)
	if shown.GetKafka().GetProperties()["sasl.password"] != api.Redacted || cur.GetKafka().GetProperties()["sasl.password"] != "s3cret" {
		t.Fatalf("RedactSpec: shown %v, cur %v", shown.GetKafka().GetProperties(), cur.GetKafka().GetProperties())
	}
	shown = proto.Clone(shown).(*api.JobSpec)
	shown.MaxBatchRows = 77
	for _, req := range []*api.AlterJobRequest{
		{Spec: shown},
		{Spec: shown, UpdateMask: []string{"kafka.properties", "max_batch_rows"}},
	} {
		next, _, reopen, err := Alter(cur, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := next.GetKafka().GetProperties()["sasl.password"]; got != "s3cret" || reopen || next.GetMaxBatchRows() != 77 {
			t.Errorf("mask %v: password %q, reopen %v, rows %d", req.UpdateMask, got, reopen, next.GetMaxBatchRows())
		}
	}
}
