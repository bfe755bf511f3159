package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"
)

// codecs are the Kafka compression codecs, with their record-batch
// attribute value.
var codecs = []struct {
	name  string
	attr  int16
	codec kgo.CompressionCodec
}{
	{"gzip", 1, kgo.GzipCompression()},
	{"snappy", 2, kgo.SnappyCompression()},
	{"lz4", 3, kgo.Lz4Compression()},
	{"zstd", 4, kgo.ZstdCompression()},
}

// TestCompressedRecordsLoad: records produced with gzip, snappy, lz4 and
// zstd, by franz-go and by librdkafka (kcat), each to its own topic, load
// exactly (every id once, loaded_rows = records) through one node. The
// test first reads each topic back and checks that every record came in a
// batch compressed with the codec named, so that a producer that quietly
// did not compress cannot pass.
//
// Every record carries a long run of one letter: producers send a batch
// uncompressed when compressing does not make it smaller (librdkafka does,
// for a batch of one short record under load), and such a batch would
// fail the check for the wrong reason.
func TestCompressedRecordsLoad(t *testing.T) {
	const n = 400
	pad := strings.Repeat("z", 400)
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		err = fmt.Errorf("kcat is not installed (%v): run `make deps` (apt-get install -y kcat); the librdkafka half of this test cannot run", err)
	}
	// CI runs `make deps`, which installs kcat: a missing kcat is a
	// failure, not a skip, unless $LOADNODE_SKIP_KCAT=1.
	kcatOK := !testdeps.LeaveOut(t, testdeps.Kcat, err)
	var topics []string
	for _, c := range codecs {
		topics = append(topics, "franz-"+c.name, "kcat-"+c.name)
	}
	b := testnode.StartBroker(t, 1, topics...)

	for _, c := range codecs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ProducerBatchCompression(c.codec),
			kgo.ProducerLinger(20*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var recs []*kgo.Record
		for i := 0; i < n; i++ {
			recs = append(recs, &kgo.Record{Topic: "franz-" + c.name, Value: fmt.Appendf(nil, `{"id":%d,"note":"franz-go %s record %d %s"}`, i, c.name, i, pad)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("franz-go %s: %v", c.name, err)
		}
		cancel()
		cl.Close()
	}
	advertiseOldProduce(t, b)
	if kcatOK {
		for _, c := range codecs {
			var in strings.Builder
			for i := 0; i < n; i++ {
				fmt.Fprintf(&in, `{"id":%d,"note":"kcat %s record %d %s"}`+"\n", i, c.name, i, pad)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			cmd := exec.CommandContext(ctx, kcat, "-P", "-b", b.Addrs()[0], "-t", "kcat-"+c.name, "-z", c.name, "-X", "compression.codec="+c.name,
				"-X", "linger.ms=20", "-X", "api.version.request=true")
			cmd.Stdin = strings.NewReader(in.String())
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("kcat -z %s: %v\n%s", c.name, err, out)
			}
		}
	}
	for _, c := range codecs {
		for _, prod := range []string{"franz", "kcat"} {
			if prod == "kcat" && !kcatOK {
				continue
			}
			topic := prod + "-" + c.name
			attrs := batchCodecs(t, b, topic, n)
			if len(attrs) != n || slices.ContainsFunc(attrs, func(a int16) bool { return a != c.attr }) {
				t.Fatalf("%s: record batches have codecs %v, want all %d (%s)", topic, attrs, c.attr, c.name)
			}
		}
	}

	p := startNode(t, t.TempDir())
	cl := p.Client(t)
	var jobs []string
	for _, tp := range topics {
		if strings.HasPrefix(tp, "kcat-") && !kcatOK {
			continue
		}
		name := "load_" + strings.ReplaceAll(tp, "-", "_")
		createJob(t, cl, jsonSpec(name, name, tp, b.Addrs()))
		jobs = append(jobs, name)
	}
	for _, name := range jobs {
		info := waitKinesisLoaded(t, cl, name, n, 2*time.Minute)
		rows := scanAll(t, cl, name)
		seen := map[int64]int{}
		for _, r := range rows {
			seen[r.Values[0].GetInt64()]++
		}
		bad := 0
		for i := int64(0); i < n; i++ {
			if seen[i] != 1 {
				bad++
			}
		}
		t.Logf("%s: rows=%d loaded_rows=%d error_rows=%d", name, len(rows), info.Stats.LoadedRows, info.Stats.ErrorRows)
		if bad != 0 || len(rows) != n || info.Stats.LoadedRows != n || info.Stats.ErrorRows != 0 {
			t.Errorf("%s: %d ids not loaded exactly once; rows %d, loaded_rows %d, error_rows %d (want %d, %d, 0)",
				name, bad, len(rows), info.Stats.LoadedRows, info.Stats.ErrorRows, n, n)
		}
	}
}

// advertiseOldProduce makes the broker advertise Produce from version 0,
// as Kafka before 4.0 does. kfake, like Kafka 4.0 (KIP-896), advertises
// Produce from version 3; librdkafka before 2.10 (Debian's kcat links
// 2.0.2) then sends gzip, snappy and lz4 batches uncompressed ("Broker does
// not support compression type gzip: not compressing batch",
// confluentinc/librdkafka#4956). kcat still produces at version 7, which
// kfake handles as always; only the advertised minimum changes.
func advertiseOldProduce(t *testing.T, b *testnode.Broker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	real, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, b.Client())
	if err != nil {
		t.Fatalf("api versions: %v", err)
	}
	b.Cluster().ControlKey(int16(kmsg.ApiVersions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
		resp.ApiKeys = slices.Clone(real.ApiKeys)
		for i := range resp.ApiKeys {
			if resp.ApiKeys[i].ApiKey == int16(kmsg.Produce) {
				resp.ApiKeys[i].MinVersion = 0
			}
		}
		resp.FinalizedFeaturesEpoch = -1
		return resp, nil, true
	})
}

// batchCodecs consumes topic from its start and returns the compression
// codec of the batch of every record (kgo.RecordAttrs.CompressionType).
func batchCodecs(t *testing.T, b *testnode.Broker, topic string, n int) []int16 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []int16
	for len(out) < n && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { out = append(out, int16(r.Attrs.CompressionType())) })
	}
	return out
}
