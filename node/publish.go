package node

import (
	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources/kafka"
)

// publisher is what a job's source publishes outside loadnode after its
// commits (actors.Publisher): its positions to kafka.commit_group and its
// error rows to error_topic. Both halves are optional; a nil publisher
// publishes nothing.
type publisher struct {
	group     *kafka.GroupCommitter
	groupName string
	dlq       *kafka.DeadLetters
	topic     string
}

// newPublisher opens what spec asks for. cluster is the job's Kafka
// cluster (nil for a Kinesis job); source names the job's source in the
// dead letters' headers.
func newPublisher(spec *api.JobSpec, cluster *kafka.Cluster, source string, sets *sourceSet) (*publisher, error) {
	if spec.GetKafka().GetCommitGroup() == "" && spec.GetErrorTopic() == "" {
		return nil, nil // publishes nothing: every method is a no-op on nil
	}
	p := &publisher{}
	ks := spec.GetKafka()
	if g := ks.GetCommitGroup(); g != "" && cluster != nil {
		p.group, p.groupName = cluster.NewGroupCommitter(ks.GetTopic(), g), g
	}
	if t := spec.GetErrorTopic(); t != "" {
		brokers, props := spec.GetErrorTopicBrokers(), spec.GetErrorTopicProperties()
		if len(brokers) == 0 {
			brokers, props = ks.GetBrokers(), ks.GetProperties()
		}
		d, err := kafka.NewDeadLetters(kafka.DeadLetterConfig{Topic: t, Brokers: brokers, Properties: props,
			Job: spec.GetName(), Source: source, Logger: sets.logger.With("job", spec.GetName())})
		if err != nil {
			p.shutdown()
			return nil, err
		}
		p.dlq, p.topic = d, t
	}
	return p, nil
}

// Resume implements actors.Publisher.
func (p *publisher) Resume(total, done int64, stored func(n int) ([]*api.ErrorRow, error)) {
	if p == nil || p.dlq == nil {
		return
	}
	p.dlq.Resume(total, done, func(n int) ([]kafka.Letter, error) {
		rows, err := stored(n)
		if err != nil {
			return nil, err
		}
		out := make([]kafka.Letter, len(rows))
		for i, r := range rows {
			out[i] = kafka.Letter{Partition: r.GetPartition(), Offset: r.GetOffset(), Reason: r.GetReason(), Value: r.GetRaw()}
		}
		return out, nil
	})
}

// Published implements actors.Publisher.
func (p *publisher) Published(positions map[int32]int64, first int64, letters []actors.DeadLetter) {
	if p == nil {
		return
	}
	if p.group != nil {
		p.group.Publish(positions)
	}
	if p.dlq != nil && len(letters) > 0 {
		out := make([]kafka.Letter, len(letters))
		for i, l := range letters {
			v := l.Value
			if v == nil {
				v = l.Row.GetRaw()
			}
			out[i] = kafka.Letter{Index: first + int64(i), Partition: l.Row.GetPartition(), Offset: l.Row.GetOffset(),
				Reason: l.Row.GetReason(), Key: l.Key, Value: v}
		}
		p.dlq.Add(out)
	}
}

// DeadLettersDone implements actors.Publisher.
func (p *publisher) DeadLettersDone() int64 {
	if p == nil || p.dlq == nil {
		return 0
	}
	return p.dlq.Done()
}

// PublishStatus implements actors.Publisher.
func (p *publisher) PublishStatus() *api.PublishStatus {
	if p == nil || p.group == nil && p.dlq == nil {
		return nil
	}
	st := &api.PublishStatus{}
	if p.group != nil {
		c := p.group.Counts()
		st.CommitGroup, st.GroupCommits, st.GroupFailures, st.GroupLastError, st.GroupLastCommitUnixMs =
			p.groupName, c.OK, c.Failed, c.LastError, c.LastOKMs
	}
	if p.dlq != nil {
		c := p.dlq.Counts()
		st.ErrorTopic, st.DeadLettersProduced, st.DeadLetterFailures, st.DeadLettersPending, st.DeadLetterLastError =
			p.topic, c.OK, c.Failed, c.Pending, c.LastError
	}
	return st
}

func (p *publisher) shutdown() {
	if p == nil {
		return
	}
	if p.group != nil {
		p.group.Close()
	}
	if p.dlq != nil {
		p.dlq.Close()
	}
}
