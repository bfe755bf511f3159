package bench

import (
	"fmt"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/internal/registrytest"
)

// The avro records of the benchmark: the six columns of benchColumns, in
// the schema registry's wire format under the first id of a fresh
// registry (the bench starts one: internal/registrytest, franz-go's
// srfake), which the job fetches once.
const benchAvroSchema = `{"type":"record","name":"BenchOrder","fields":[
 {"name":"id","type":"long"},{"name":"customer","type":"string"},{"name":"amount","type":"double"},
 {"name":"paid","type":"boolean"},{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"note","type":"string"}]}`

var benchAvro = avro.MustParse(benchAvroSchema)

// benchAvroID is the id a fresh registry gives benchAvroSchema.
const benchAvroID = 1

type benchAvroRecord struct {
	ID       int64   `avro:"id"`
	Customer string  `avro:"customer"`
	Amount   float64 `avro:"amount"`
	Paid     bool    `avro:"paid"`
	At       int64   `avro:"at"`
	Note     string  `avro:"note"`
}

// appendAvroRecord appends record i, its note padded so that the record is
// about size bytes.
func appendAvroRecord(dst []byte, i, size int) []byte {
	r := benchAvroRecord{ID: int64(i), Customer: fmt.Sprintf("c%05d", i%99991), Amount: float64(i%5000) + float64(i%100)/100,
		Paid: i%3 != 0, At: recordEpoch.Add(time.Duration(i) * time.Second).UnixMilli()}
	var h sr.ConfluentHeader
	dst, _ = h.AppendEncode(dst, benchAvroID, nil)
	body, err := avro.Marshal(benchAvro, r)
	if err != nil {
		panic(err) // the record matches its schema
	}
	pad := size - len(dst) - len(body) - 1 // the note's length prefix grows by a byte past 63
	if pad > 63 {
		pad--
	}
	note := make([]byte, max(pad, 0))
	for j := range note {
		note[j] = byte('a' + (i+j)%26)
	}
	r.Note = string(note)
	body, err = avro.Marshal(benchAvro, r)
	if err != nil {
		panic(err)
	}
	return append(dst, body...)
}

// startRegistry starts the benchmark's schema registry with the avro
// schema registered.
func startRegistry() (*registrytest.Server, error) {
	s, err := registrytest.Start()
	if err != nil {
		return nil, err
	}
	id, _, err := s.Reg.RegisterSchema("bench-value", sr.Schema{Schema: benchAvroSchema, Type: sr.TypeAvro})
	if err != nil || id != benchAvroID {
		s.Close()
		return nil, fmt.Errorf("bench: register the avro schema: id %d, %v", id, err)
	}
	return s, nil
}
