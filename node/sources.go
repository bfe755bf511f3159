package node

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kafka"
	"github.com/loadnode/loadnode/sources/kinesis"
)

// sourceSet opens the node's job sources (actors.SourceFactory): a Kafka
// job's handle on the cluster its brokers and properties name (shared,
// see kafka.Clusters), a Kinesis job's own kinesis.Source; each with what
// the job publishes (publisher).
type sourceSet struct {
	logger *slog.Logger
	kafka  *kafka.Clusters
	// kinesisFaults injects errors into every Kinesis job's SDK calls
	// (tests and chaos only; see KinesisFaultsEnv).
	kinesisFaults *kinesis.Faults
	stopFaultLog  chan struct{}
}

// kafkaJob is a Kafka job's source and what it publishes.
type kafkaJob struct {
	*kafka.JobSource
	*publisher
	closed sync.Once
}

// kinesisJob is a Kinesis job's source and what it publishes.
type kinesisJob struct {
	*kinesis.Source
	*publisher
}

var (
	_ actors.Source    = (*kafkaJob)(nil)
	_ actors.Watcher   = (*kafkaJob)(nil)
	_ actors.Publisher = (*kafkaJob)(nil)
	_ actors.Source    = (*kinesisJob)(nil)
	_ actors.Lineage   = (*kinesisJob)(nil)
	_ actors.Publisher = (*kinesisJob)(nil)
)

// Close closes the job's publishing, then its handle on the cluster.
func (j *kafkaJob) Close() {
	j.closed.Do(func() {
		j.publisher.shutdown()
		j.JobSource.Close()
	})
}

// Close closes the job's publishing, then the stream's source.
func (j *kinesisJob) Close() {
	j.publisher.shutdown()
	j.Source.Close()
}

// KinesisFaultsEnv arms Kinesis fault injection in a node, for tests and
// chaos runs: "throttle=0.2,expire=0.01,fail=0.01,seed=7,trim=SHARD:SEQ"
// (see kinesis.ParseFaults). Never set it in production.
const KinesisFaultsEnv = "LOADNODE_KINESIS_FAULTS"

// newSourceSet returns the node's sources; watermarks fresher than
// marksFresh are shared between the jobs of one topic.
func newSourceSet(logger *slog.Logger, marksFresh time.Duration) *sourceSet {
	k := &sourceSet{logger: logger, kafka: kafka.NewClusters(logger, marksFresh)}
	if v := os.Getenv(KinesisFaultsEnv); v != "" {
		f, err := kinesis.ParseFaults(v)
		if err != nil {
			logger.Error("node: ignoring "+KinesisFaultsEnv, "err", err)
		} else {
			logger.Warn("node: Kinesis fault injection armed", "faults", v)
			k.kinesisFaults = f
			k.stopFaultLog = make(chan struct{})
			go k.logFaults(f, k.stopFaultLog)
		}
	}
	return k
}

// open implements actors.SourceFactory.
func (k *sourceSet) open(spec *api.JobSpec) (actors.Source, error) {
	if kin := spec.GetKinesis(); kin != nil {
		// A Kinesis source is the job's own: its client is cheap and its
		// shard listing is per stream and job.
		src, err := kinesis.NewSource(kin, kinesis.Options{Logger: k.logger, Faults: k.kinesisFaults,
			CanonicalPosition: config.CanonicalPosition})
		if err != nil {
			return nil, err
		}
		pub, err := newPublisher(spec, nil, "kinesis://"+kin.GetStream(), k)
		if err != nil {
			src.Close()
			return nil, err
		}
		return &kinesisJob{Source: src, publisher: pub}, nil
	}
	ks := spec.GetKafka()
	if ks == nil {
		return nil, &sources.ConfigError{Err: fmt.Errorf("node: job %s has no source", spec.GetName())}
	}
	src, err := k.kafka.Open(ks)
	if err != nil {
		return nil, err
	}
	pub, err := newPublisher(spec, src.Cluster(), "kafka://"+ks.GetTopic(), k)
	if err != nil {
		src.Close()
		return nil, err
	}
	return &kafkaJob{JobSource: src, publisher: pub}, nil
}

// logFaults reports the injected faults every second while they change, so
// that a test driving a real process can see that they fired.
func (k *sourceSet) logFaults(f *kinesis.Faults, stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last kinesis.FaultStats
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if st := f.Stats(); st != last {
			last = st
			k.logger.Warn("node: Kinesis faults injected", "calls", st.Calls, "throttled", st.Throttled,
				"expired", st.Expired, "failed", st.Failed, "trimmed", st.Trimmed)
		}
	}
}

func (k *sourceSet) closeAll() {
	if k.stopFaultLog != nil {
		close(k.stopFaultLog)
		k.stopFaultLog = nil
	}
	k.kafka.Close()
}
