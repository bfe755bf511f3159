package bench

import (
	"fmt"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// benchColumns are the 6 columns of mixed types every benchmark record has.
func benchColumns() []*api.Column {
	return []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: "customer", Type: api.ColumnType_STRING},
		{Name: "amount", Type: api.ColumnType_FLOAT64},
		{Name: "paid", Type: api.ColumnType_BOOL},
		{Name: "at", Type: api.ColumnType_TIMESTAMP},
		{Name: "note", Type: api.ColumnType_STRING},
	}
}

var recordEpoch = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// appendRecord appends record i in format ("json", "csv" or "avro"),
// padded with its note column to about size bytes.
func appendRecord(dst []byte, format string, i, size int) []byte {
	if format == "avro" {
		return appendAvroRecord(dst, i, size)
	}
	start := len(dst)
	at := recordEpoch.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
	if format == "json" {
		dst = fmt.Appendf(dst, `{"id":%d,"customer":"c%05d","amount":%d.%02d,"paid":%t,"at":"%s","note":"`,
			i, i%99991, i%5000, i%100, i%3 != 0, at)
	} else {
		dst = fmt.Appendf(dst, `%d,c%05d,%d.%02d,%t,%s,`, i, i%99991, i%5000, i%100, i%3 != 0, at)
	}
	tail := 0
	if format == "json" {
		tail = 2 // `"}`
	}
	pad := size - (len(dst) - start) - tail
	for j := 0; j < pad; j++ {
		dst = append(dst, byte('a'+(i+j)%26))
	}
	if format == "json" {
		dst = append(dst, `"}`...)
	}
	return dst
}

// jobSpec is the spec of a benchmark job loading topic into tableName.
func (o Options) jobSpec(name, tableName, format, topic string, brokers []string) *api.JobSpec {
	s := &api.JobSpec{
		Name:                    name,
		Table:                   &api.TableSpec{Name: tableName, Columns: benchColumns()},
		Format:                  format,
		DesiredConcurrentNumber: int32(o.Tasks),
		MaxBatchIntervalMs:      o.BatchInterval.Milliseconds(),
		MaxBatchRows:            int64(o.BatchRows),
		MaxBatchSize:            256 << 20,
		Kafka:                   &api.KafkaSpec{Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING"},
	}
	if format == "avro" {
		s.SchemaRegistry = &api.SchemaRegistrySpec{Url: o.registryURL}
	}
	config.ApplyDefaults(s)
	return s
}

// topicName names the pre-filled topic of one format and partition count;
// the record count is in the name so that a real cluster's topic is reused
// only when it holds the same data.
func topicName(format string, partitions, records, size int) string {
	return fmt.Sprintf("loadnode_bench_%s_p%d_n%d_b%d", format, partitions, records, size)
}

// idleTopic is the topic of the create and scale scenarios: it gets no data.
const idleTopic = "loadnode_bench_idle"
