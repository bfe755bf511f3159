package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/sources/kafka"
)

// TestCommitGroupLag: a job with kafka.commit_group commits its positions
// to that consumer group after its commits, so that kadm's Lag (what
// kafka-consumer-groups shows) sees the job's positions: after loading N
// records the group's committed offsets equal the job's progress and the
// log ends (lag 0), and records produced while the job is paused show as
// lag. The group is observational: the job never reads it back.
func TestCommitGroupLag(t *testing.T) {
	const topic, name, tbl, group = "lagged", "lagged_load", "lagged_rows", "loadnode-lagged"
	b := testnode.StartBroker(t, 3, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, 3000)

	p := startNode(t, t.TempDir())
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.Kafka.CommitGroup = group
	began := time.Now()
	createJob(t, c, spec)
	waitDrained(t, c, b, name, topic, 60*time.Second)
	t.Logf("drained in %s", time.Since(began))
	checkExactlyOnce(t, c, l, name, tbl)

	adm := b.Admin()
	lagOf := func() (kadm.GroupLag, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lags, err := adm.Lag(ctx, group)
		if err != nil {
			return nil, err
		}
		gl := lags[group]
		if gl.Error() != nil {
			return nil, gl.Error()
		}
		return gl.Lag, nil
	}
	var info *api.JobInfo
	waitFor(t, 30*time.Second, "the group's offsets at the job's progress", func() (bool, string) {
		info = showJob(t, c, name)
		lag, err := lagOf()
		if err != nil {
			return false, err.Error()
		}
		for _, pi := range info.Partitions {
			ml, ok := lag.Lookup(topic, pi.Partition)
			if !ok || ml.Commit.At != pi.CommittedOffset || ml.Lag != 0 {
				return false, fmt.Sprintf("partition %d: group %+v, job at %d", pi.Partition, ml, pi.CommittedOffset)
			}
		}
		// The committer counts a commit when its answer arrives, which may
		// be just after the group shows it.
		return len(info.Partitions) == 3 && info.GetPublish().GetGroupCommits() > 0, fmt.Sprintf("publish %v", info.GetPublish())
	})
	pub := info.GetPublish()
	if pub.GetCommitGroup() != group || pub.GetGroupCommits() == 0 || pub.GetGroupFailures() != 0 {
		t.Fatalf("job show publish status %v; want commits to %s and no failures", pub, group)
	}
	t.Logf("group %s at the job's progress %s after the create: %d commits, job show %v", group, time.Since(began), pub.GetGroupCommits(), pub)

	// Paused, the job commits nothing: new records are the group's lag.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := c.PauseJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	cancel()
	produce(t, l, b, topic, 3000, 600)
	waitFor(t, 30*time.Second, "lag 600 in the group while paused", func() (bool, string) {
		lag, err := lagOf()
		if err != nil {
			return false, err.Error()
		}
		return lag.Total() == 600, fmt.Sprintf("total lag %d", lag.Total())
	})
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	if _, err := c.ResumeJob(ctx, name); err != nil {
		t.Fatal(err)
	}
	cancel()
	t.Logf("paused lag seen %s after the create", time.Since(began))
	waitDrained(t, c, b, name, topic, 60*time.Second)
	t.Logf("drained again %s after the create", time.Since(began))
	waitFor(t, 30*time.Second, "lag 0 again", func() (bool, string) {
		lag, err := lagOf()
		if err != nil {
			return false, err.Error()
		}
		return lag.Total() == 0, fmt.Sprintf("total lag %d", lag.Total())
	})
	checkExactlyOnce(t, c, l, name, tbl)
}

// deadLetter is one record read from a dead-letter topic.
type deadLetter struct {
	key, value []byte
	headers    map[string]string
}

// readDeadLetters reads topic of the broker at addrs from its start until
// it holds at least want records or the deadline passes.
func readDeadLetters(t *testing.T, addrs []string, topic string, want int, d time.Duration) []deadLetter {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []deadLetter
	for len(out) < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			dl := deadLetter{key: r.Key, value: r.Value, headers: map[string]string{}}
			for _, h := range r.Headers {
				dl.headers[h.Key] = string(h.Value)
			}
			out = append(out, dl)
		})
	}
	return out
}

// TestDeadLetterTopic: bad records are error rows and also dead letters
// on error_topic (another cluster here), with the record's value and key
// and headers naming the job, the source, partition, offset and reason.
// With the dead-letter broker down the load goes on and the failures are
// counted (job show, /metrics); the node is then killed with SIGKILL and
// restarted: the error rows committed while the broker was down reach
// the topic once it is back (at least once).
func TestDeadLetterTopic(t *testing.T) {
	const topic, name, tbl, dlqTopic = "mixed", "mixed_load", "mixed_rows", "mixed-dlq"
	b := testnode.StartBroker(t, 2, topic)
	dlq := testnode.StartBrokerOpts(t, testnode.BrokerOptions{DataDir: t.TempDir(), Seed: []kfake.Opt{kfake.SeedTopics(1, dlqTopic)}})

	bad := map[string]bool{} // "partition/offset" of bad records
	rawOf := map[string]string{}
	keyOf := map[string]string{}
	produceMixed := func(from, n int) int {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			v := fmt.Sprintf(`{"id":%d,"note":"ok"}`, i)
			if i%10 == 3 {
				v = fmt.Sprintf(`{"id":"not a number %d"}`, i)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte("key-" + strconv.Itoa(i)), Value: []byte(v)})
		}
		res := b.Client().ProduceSync(ctx, recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatal(err)
		}
		nbad := 0
		for _, r := range res {
			if strings.Contains(string(r.Record.Value), "not a number") {
				at := fmt.Sprintf("%d/%d", r.Record.Partition, r.Record.Offset)
				bad[at], rawOf[at], keyOf[at] = true, string(r.Record.Value), string(r.Record.Key)
				nbad++
			}
		}
		return nbad
	}
	nbad := produceMixed(0, 500)

	dir := t.TempDir()
	p := testnode.Start(t, testnode.Options{DataDir: dir, HTTP: true})
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.MaxErrorNumber = 1 << 40
	spec.ErrorTopic = dlqTopic
	spec.ErrorTopicBrokers = dlq.Addrs()
	createJob(t, c, spec)
	waitFor(t, 60*time.Second, "the first records loaded", func() (bool, string) {
		info := showJob(t, c, name)
		return info.Stats.LoadedRows+info.Stats.ErrorRows == 500, fmt.Sprintf("loaded %d errors %d", info.Stats.LoadedRows, info.Stats.ErrorRows)
	})
	check := func(letters []deadLetter, want int, replayedOK bool) {
		t.Helper()
		seen := map[string]int{}
		for _, dl := range letters {
			h := dl.headers
			at := h[kafka.HeaderPartition] + "/" + h[kafka.HeaderOffset]
			seen[at]++
			switch {
			case !bad[at]:
				t.Fatalf("dead letter at %s is not a bad record: %+v", at, h)
			case h[kafka.HeaderJob] != name || h[kafka.HeaderSource] != "kafka://"+topic || !strings.Contains(h[kafka.HeaderReason], "id"):
				t.Fatalf("dead letter at %s: headers %v", at, h)
			case string(dl.value) != rawOf[at]:
				t.Fatalf("dead letter at %s: value %q, want %q", at, dl.value, rawOf[at])
			case h[kafka.HeaderReplayed] == "" && string(dl.key) != keyOf[at]:
				t.Fatalf("dead letter at %s: key %q, want %q", at, dl.key, keyOf[at])
			case h[kafka.HeaderReplayed] != "" && !replayedOK:
				t.Fatalf("dead letter at %s replayed without a restart: %v", at, h)
			}
		}
		missing := 0
		for at := range bad {
			if seen[at] == 0 {
				missing++
			}
		}
		if missing != 0 || len(seen) != want {
			t.Fatalf("%d dead letters for %d distinct bad records (%d missing), want %d", len(letters), len(seen), missing, want)
		}
	}
	letters := readDeadLetters(t, dlq.Addrs(), dlqTopic, nbad, 30*time.Second)
	check(letters, nbad, false)
	if len(letters) != nbad {
		t.Fatalf("%d dead letters for %d error rows without any failure", len(letters), nbad)
	}
	var info *api.JobInfo
	// The producer counts a letter when its acknowledgement arrives, which
	// may be just after a consumer already sees it.
	waitFor(t, 10*time.Second, "job show counting the dead letters", func() (bool, string) {
		info = showJob(t, c, name)
		pub := info.GetPublish()
		return pub.GetErrorTopic() == dlqTopic && pub.GetDeadLettersProduced() == int64(nbad) && pub.GetDeadLettersPending() == 0,
			fmt.Sprintf("publish status %v; want %d produced to %s", pub, nbad, dlqTopic)
	})
	if f := info.GetPublish().GetDeadLetterFailures(); f != 0 {
		t.Fatalf("%d dead-letter failures with the broker up", f)
	}
	t.Logf("%d error rows, %d dead letters", info.Stats.ErrorRows, len(letters))

	// The dead-letter broker goes down: the load goes on, failures count.
	dlq.Stop()
	nbad += produceMixed(500, 500)
	waitFor(t, 90*time.Second, "the load going on and dead-letter failures counted", func() (bool, string) {
		info = showJob(t, c, name)
		pub := info.GetPublish()
		return info.Stats.LoadedRows+info.Stats.ErrorRows == 1000 && pub.GetDeadLetterFailures() > 0 && pub.GetDeadLettersPending() > 0,
			fmt.Sprintf("loaded %d errors %d publish %v", info.Stats.LoadedRows, info.Stats.ErrorRows, pub)
	})
	if info.Summary.State != api.JobState_RUNNING {
		t.Fatalf("job %s (%s) with the dead-letter broker down", info.Summary.State, info.Summary.ReasonMessage)
	}
	metrics := scrape(t, p)
	if !strings.Contains(metrics, `loadnode_job_dead_letter_failures_total{job="`+name+`",topic="`+dlqTopic+`"}`) {
		t.Fatalf("/metrics has no dead-letter failures of the job:\n%s", metrics)
	}
	t.Logf("broker down: %v", info.GetPublish())

	// Killed while the letters are pending, restarted: once the broker is
	// back every error row is on the topic (some twice: at least once).
	p.MustKill(t)
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dlq.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	p.MustRestart(t)
	c = p.Client(t)
	waitFor(t, 90*time.Second, "every error row on the dead-letter topic", func() (bool, string) {
		letters = readDeadLetters(t, dlq.Addrs(), dlqTopic, nbad, 5*time.Second)
		distinct := map[string]bool{}
		for _, dl := range letters {
			distinct[dl.headers[kafka.HeaderPartition]+"/"+dl.headers[kafka.HeaderOffset]] = true
		}
		return len(distinct) == nbad, fmt.Sprintf("%d letters, %d distinct of %d", len(letters), len(distinct), nbad)
	})
	check(letters, nbad, true)
	info = showJob(t, c, name)
	if info.Stats.ErrorRows != int64(nbad) || info.Stats.LoadedRows != int64(1000-nbad) {
		t.Fatalf("loaded %d errors %d, want %d and %d", info.Stats.LoadedRows, info.Stats.ErrorRows, 1000-nbad, nbad)
	}
	t.Logf("after the restart: %d dead letters for %d error rows (%d again), publish %v", len(letters), nbad, len(letters)-nbad, info.GetPublish())
}

// scrape returns the node's /metrics.
func scrape(t *testing.T, p *testnode.Proc) string {
	t.Helper()
	resp, err := http.Get("http://" + p.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
