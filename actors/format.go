package actors

import (
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// DecoderFactory gives the decoder of a job's binary format (avro,
// protobuf): its schema registry client. It is called inside Receive and
// must not block on the network (schemas are fetched when records need
// them, by the tasks).
type DecoderFactory func(spec *api.JobSpec) (table.Decoder, error)

// formatOf is the parsing options of spec, with the decoder of a binary
// format from the node's DecoderFactory.
func (j *job) formatOf(spec *api.JobSpec) (table.Format, error) {
	f := table.FormatOf(spec)
	if j.deps.Decoders != nil && spec.GetSchemaRegistry() != nil {
		d, err := j.deps.Decoders(spec)
		if err != nil {
			return f, err
		}
		f.Decoder = d
	}
	return f, nil
}

// openSource opens the job's source and the decoder of its format: j.src
// and j.format change only when both open, so that a job never runs
// without the decoder its records need (a resume tries both again).
func (j *job) openSource(spec *api.JobSpec) error {
	f, err := j.formatOf(spec)
	if err != nil {
		return err
	}
	src, err := j.newSource(spec)
	if err != nil {
		return err
	}
	j.format, j.src = f, src
	return nil
}

// recordMeta fills m with what the source knows of r, reusing m's header
// slice.
func recordMeta(r *sources.Record, topic string, m table.RecordMeta) table.RecordMeta {
	hs := m.Headers[:0]
	for _, h := range r.Headers {
		hs = append(hs, table.Header{Key: h.Key, Value: h.Value})
	}
	return table.RecordMeta{Key: r.Key, Topic: topic, Partition: r.Partition, Offset: r.Offset, Seq: r.Seq, Timestamp: r.Timestamp, Headers: hs}
}
