package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awskinesis "github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/sources/kinesis"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

// kinesisSpec is a JSON job on a kinesalite stream.
func kinesisSpec(name, tableName, stream, endpoint string) *api.JobSpec {
	return &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: tableName, Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "key", Type: api.ColumnType_STRING},
			{Name: "n", Type: api.ColumnType_INT64},
		}},
		Format:                  "json",
		DesiredConcurrentNumber: 2,
		MaxBatchIntervalMs:      200,
		MaxBatchRows:            5000,
		MaxBatchSize:            4 << 20,
		Kinesis: &api.KinesisSpec{
			Stream: stream, Endpoint: endpoint, Region: kinesistest.Region,
			AccessKeyId: kinesistest.AccessKeyID, SecretAccessKey: kinesistest.SecretAccessKey,
			DefaultPosition: "TRIM_HORIZON",
		},
	}
}

// kinesisLedger remembers every record put: where it went and in which
// order each partition key's records were written.
type kinesisLedger struct {
	next   int
	keyN   map[string]int
	byID   map[int64]kinesistest.Put
	key    map[int64]string
	n      map[int64]int64
	ranks  map[string][]string // shard -> sequence numbers in put order
	keys   int
	stream string
}

func newKinesisLedger(stream string, keys int) *kinesisLedger {
	return &kinesisLedger{keyN: map[string]int{}, byID: map[int64]kinesistest.Put{}, key: map[int64]string{},
		n: map[int64]int64{}, ranks: map[string][]string{}, keys: keys, stream: stream}
}

// put writes count records, spreading them over the ledger's keys.
func (l *kinesisLedger) put(t *testing.T, c *awskinesis.Client, count int) {
	t.Helper()
	for count > 0 {
		chunk := min(count, 500)
		recs := make([]kinesistest.Record, chunk)
		ids := make([]int64, chunk)
		for i := range recs {
			id := int64(l.next)
			l.next++
			key := "k" + strconv.Itoa(int(id)%l.keys)
			n := l.keyN[key]
			l.keyN[key]++
			data, _ := json.Marshal(map[string]any{"id": id, "key": key, "n": n})
			recs[i] = kinesistest.Record{Key: key, Data: data}
			ids[i] = id
			l.key[id], l.n[id] = key, int64(n)
		}
		for i, p := range kinesistest.PutRecords(t, c, l.stream, recs...) {
			l.byID[ids[i]] = p
			l.ranks[p.ShardID] = append(l.ranks[p.ShardID], p.Seq)
		}
		count -= chunk
	}
}

func (l *kinesisLedger) total() int { return l.next }

// check reads the table and checks that every record is there exactly once,
// in its shard at its ordinal (the rank of its sequence number in the
// shard), and that every partition key's records were loaded in order: by
// ordinal within a shard, and from a parent shard to a child shard.
func (l *kinesisLedger) check(t *testing.T, c *client.Client, jobName, tableName string, parents map[int32][]int32) {
	t.Helper()
	rank := map[string]int64{} // shard/seq -> ordinal
	for shard, seqs := range l.ranks {
		for i, s := range seqs {
			rank[shard+"/"+s] = int64(i)
		}
	}
	rows := scanAll(t, c, tableName)
	seen := map[int64]bool{}
	dups, wrong, lost := 0, 0, 0
	type at struct {
		n         int64
		partition int32
		offset    int64
	}
	byKey := map[string][]at{}
	for _, r := range rows {
		id := r.Values[0].GetInt64()
		if seen[id] {
			dups++
		}
		seen[id] = true
		put, ok := l.byID[id]
		if !ok {
			wrong++
			continue
		}
		p, _ := kinesis.ShardIndex(put.ShardID)
		if r.Partition != p || r.Offset != rank[put.ShardID+"/"+put.Seq] || r.Values[1].GetString_() != l.key[id] || r.Values[2].GetInt64() != l.n[id] {
			wrong++
		}
		byKey[l.key[id]] = append(byKey[l.key[id]], at{l.n[id], r.Partition, r.Offset})
	}
	for id := range l.byID {
		if !seen[id] {
			lost++
		}
	}
	descends := func(child, parent int32) bool {
		todo := []int32{child}
		for len(todo) > 0 {
			p := todo[0]
			todo = todo[1:]
			for _, q := range parents[p] {
				if q == parent {
					return true
				}
				todo = append(todo, q)
			}
		}
		return false
	}
	disorder := 0
	for key, list := range byKey {
		slices.SortFunc(list, func(a, b at) int { return int(a.n - b.n) })
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			if (a.partition == b.partition && a.offset >= b.offset) || (a.partition != b.partition && !descends(b.partition, a.partition)) {
				if disorder < 5 {
					t.Errorf("key %s: record n=%d at %d/%d follows n=%d at %d/%d", key, b.n, b.partition, b.offset, a.n, a.partition, a.offset)
				}
				disorder++
			}
		}
	}
	info := showJob(t, c, jobName)
	t.Logf("records=%d rows=%d loaded_rows=%d lost=%d duplicated=%d inconsistent=%d out_of_order=%d batches=%d",
		l.total(), len(rows), info.Stats.LoadedRows, lost, dups, wrong, disorder, info.Stats.CommittedBatches)
	if lost != 0 || dups != 0 || wrong != 0 || disorder != 0 || len(rows) != l.total() {
		t.Fatalf("not exactly once in order: records=%d rows=%d lost=%d duplicated=%d inconsistent=%d out_of_order=%d", l.total(), len(rows), lost, dups, wrong, disorder)
	}
	if info.Stats.LoadedRows != int64(l.total()) {
		t.Fatalf("loaded_rows statistic = %d, want %d: some batch was committed twice", info.Stats.LoadedRows, l.total())
	}
}

// waitKinesisLoaded waits until the job has loaded want rows.
func waitKinesisLoaded(t *testing.T, c *client.Client, name string, want int, d time.Duration) *api.JobInfo {
	t.Helper()
	var info *api.JobInfo
	waitFor(t, d, fmt.Sprintf("%d rows loaded", want), func() (bool, string) {
		info = showJob(t, c, name)
		return info.Stats.GetLoadedRows() >= int64(want), fmt.Sprintf("state %s (%s: %s), loaded %d, partitions %v",
			info.Summary.State, info.Summary.Reason, info.Summary.ReasonMessage, info.Stats.GetLoadedRows(), info.Partitions)
	})
	return info
}

func createJob(t *testing.T, c *client.Client, spec *api.JobSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatalf("create %s: %v", spec.Name, err)
	}
}

// TestKinesisExactlyOnce: 100,000 records over 4 shards, put while the job
// runs, load exactly once, each at its shard and sequence number's rank.
func TestKinesisExactlyOnce(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream, name, tbl = "orders", "orders_kinesis", "orders_k"
	kinesistest.CreateStream(t, kc, stream, 4)
	l := newKinesisLedger(stream, 64)
	l.put(t, kc, 20000)

	p := startNode(t, t.TempDir())
	c := p.Client(t)
	createJob(t, c, kinesisSpec(name, tbl, stream, endpoint))
	l.put(t, kc, 80000)
	waitKinesisLoaded(t, c, name, l.total(), 3*time.Minute)
	l.check(t, c, name, tbl, nil)

	info := showJob(t, c, name)
	if len(info.Partitions) != 4 {
		t.Fatalf("%d partitions shown, want 4", len(info.Partitions))
	}
	for _, pi := range info.Partitions {
		if pi.ShardId != kinesis.ShardID(pi.Partition) || pi.ShardState != "open" || pi.Sequence == "" || pi.MillisBehind < 0 {
			t.Fatalf("shard shown as %v", pi)
		}
	}
	if info.Summary.Source != "kinesis://"+stream {
		t.Fatalf("source %q", info.Summary.Source)
	}
}

// lineageWatch polls `job show` while a test runs (across node restarts)
// and records any moment at which a child shard has committed records while
// one of its parents is not finished.
type lineageWatch struct {
	addr       atomic.Value // string: the current node's address
	stop, done chan struct{}
	mu         sync.Mutex
	seen       int
	violations []string
	parents    map[int32][]int32
}

func watchLineage(name string) *lineageWatch {
	w := &lineageWatch{stop: make(chan struct{}), done: make(chan struct{}), parents: map[int32][]int32{}}
	w.addr.Store("")
	go func() {
		defer close(w.done)
		var c *client.Client
		var at string
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				if c != nil {
					c.Close()
				}
				return
			case <-tick.C:
			}
			addr := w.addr.Load().(string)
			if addr == "" {
				continue
			}
			if c == nil || at != addr {
				if c != nil {
					c.Close()
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				var err error
				c, err = client.Dial(ctx, addr, client.WithTimeout(time.Second))
				cancel()
				if err != nil {
					c = nil
					continue
				}
				at = addr
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			info, err := c.ShowJob(ctx, name)
			cancel()
			if err != nil {
				continue
			}
			w.observe(info)
		}
	}()
	return w
}

func (w *lineageWatch) observe(info *api.JobInfo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen++
	state := map[int32]string{}
	for _, p := range info.Partitions {
		state[p.Partition] = p.ShardState
		if len(p.Parents) > 0 {
			w.parents[p.Partition] = p.Parents
		}
	}
	for _, p := range info.Partitions {
		if p.CommittedOffset == 0 {
			continue
		}
		for _, q := range p.Parents {
			if s, ok := state[q]; ok && s != "finished" {
				w.violations = append(w.violations, fmt.Sprintf("shard %s has %d records committed while its parent %d is %s", p.ShardId, p.CommittedOffset, q, s))
			}
		}
	}
}

func (w *lineageWatch) finish() (seen int, violations []string, parents map[int32][]int32) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.violations, w.parents
}

// TestKinesisReshardAndKill: while the job loads, one shard is split and two
// are merged, and the node is SIGKILLed and restarted twice. Every record is
// loaded exactly once, each partition key's records in order across the
// lineage, and no child shard commits a record before its parents are read
// to their end.
func TestKinesisReshardAndKill(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream, name, tbl = "clicks", "clicks_kinesis", "clicks_k"
	kinesistest.CreateStream(t, kc, stream, 4)
	l := newKinesisLedger(stream, 40)
	dir := t.TempDir()
	l.put(t, kc, 8000)

	w := watchLineage(name)
	p := startNodeArgs(t, dir, fastTopology(t))
	w.addr.Store(p.Addr())
	c := p.Client(t)
	createJob(t, c, kinesisSpec(name, tbl, stream, endpoint))
	waitKinesisLoaded(t, c, name, 2000, time.Minute)

	lower, upper := kinesistest.Split(t, kc, stream, "shardId-000000000000", kinesistest.MidHashKey(t, kc, stream, "shardId-000000000000"))
	t.Logf("split shardId-000000000000 into %s and %s", lower, upper)
	l.put(t, kc, 6000)
	p.MustKill(t)
	l.put(t, kc, 3000)
	p.MustRestart(t)
	w.addr.Store(p.Addr())
	c = p.Client(t)
	merged := kinesistest.Merge(t, kc, stream, "shardId-000000000002", "shardId-000000000003")
	t.Logf("merged shardId-000000000002 and shardId-000000000003 into %s", merged)
	l.put(t, kc, 6000)
	waitKinesisLoaded(t, c, name, 12000, time.Minute)
	p.MustKill(t)
	l.put(t, kc, 3000)
	p.MustRestart(t)
	w.addr.Store(p.Addr())
	c = p.Client(t)
	l.put(t, kc, 4000)
	info := waitKinesisLoaded(t, c, name, l.total(), 2*time.Minute)
	// Let the watcher see the final state too.
	seen0, _, _ := w.finish()
	w.observe(info)
	seen, violations, parents := seen0+1, w.violations, w.parents

	t.Logf("lineage watch: %d observations, parents %v", seen, parents)
	if len(violations) > 0 {
		t.Fatalf("lineage order broken: %v", violations[:min(len(violations), 5)])
	}
	if seen < 20 {
		t.Fatalf("the lineage watcher saw the job only %d times", seen)
	}
	if len(info.Partitions) != 7 {
		t.Fatalf("%d shards shown, want 7 (4 + 2 from the split + 1 from the merge): %v", len(info.Partitions), info.Partitions)
	}
	states := map[string]string{}
	for _, pi := range info.Partitions {
		states[pi.ShardId] = pi.ShardState
	}
	for _, parent := range []string{"shardId-000000000000", "shardId-000000000002", "shardId-000000000003"} {
		if states[parent] != "finished" {
			t.Fatalf("parent %s is %q, want finished: %v", parent, states[parent], states)
		}
	}
	l.check(t, c, name, tbl, parents)
}

var faultLine = regexp.MustCompile(`Kinesis faults injected.* calls=(\d+) throttled=(\d+) expired=(\d+)`)

// TestKinesisThrottlingAndExpiry: throttling on 20% of GetRecords calls and
// expired iterators on 1% neither fail nor pause the job, and lose or
// duplicate nothing. Records keep arriving until the node has reported
// several injected expiries, so the test does not depend on luck.
func TestKinesisThrottlingAndExpiry(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream, name, tbl = "events", "events_kinesis", "events_k"
	kinesistest.CreateStream(t, kc, stream, 4)
	l := newKinesisLedger(stream, 32)
	l.put(t, kc, 10000)
	p := startNode(t, t.TempDir(), "LOADNODE_KINESIS_FAULTS=throttle=0.2,expire=0.01")
	c := p.Client(t)
	spec := kinesisSpec(name, tbl, stream, endpoint)
	spec.MaxBatchRows = 500 // many reads, so that the faults fire often
	createJob(t, c, spec)

	var calls, throttled, expired int
	report := func() string {
		m := faultLine.FindAllStringSubmatch(p.Log(), -1)
		if len(m) == 0 {
			return "no fault report yet"
		}
		last := m[len(m)-1]
		calls, _ = strconv.Atoi(last[1])
		throttled, _ = strconv.Atoi(last[2])
		expired, _ = strconv.Atoi(last[3])
		return last[0]
	}
	waitFor(t, 2*time.Minute, "several injected expiries while records arrive", func() (bool, string) {
		l.put(t, kc, 100)
		state := report()
		return expired >= 3 && calls >= 300, state
	})
	l.put(t, kc, 2000)
	info := waitKinesisLoaded(t, c, name, l.total(), 3*time.Minute)
	for _, tr := range info.History {
		if tr.To == api.JobState_PAUSED || tr.To == api.JobState_CANCELLED {
			t.Fatalf("the job left RUNNING under injected faults: %v", tr)
		}
	}
	l.check(t, c, name, tbl, nil)
	report()
	t.Logf("faults: calls=%d throttled=%d expired=%d", calls, throttled, expired)
	if float64(throttled) < 0.1*float64(calls) {
		t.Fatalf("only %d of %d calls throttled", throttled, calls)
	}
}

// TestKinesisTrimmedPauses: when the records after a job's committed
// position have been trimmed, the job pauses with the data-loss reason and
// nothing moves.
func TestKinesisTrimmedPauses(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream, name, tbl = "audit", "audit_kinesis", "audit_k"
	kinesistest.CreateStream(t, kc, stream, 1)
	l := newKinesisLedger(stream, 4)
	l.put(t, kc, 100)
	dir := t.TempDir()
	p := startNode(t, dir)
	c := p.Client(t)
	createJob(t, c, kinesisSpec(name, tbl, stream, endpoint))
	waitKinesisLoaded(t, c, name, 100, time.Minute)
	p.MustKill(t)

	// Retention trims the committed record and the next five.
	l.put(t, kc, 10)
	seqs := l.ranks["shardId-000000000000"]
	trim := fmt.Sprintf("trim=shardId-000000000000:%s", seqs[104])
	p.MustRestart(t, "LOADNODE_KINESIS_FAULTS="+trim)
	c = p.Client(t)
	var info *api.JobInfo
	waitFor(t, time.Minute, "PAUSED for data loss", func() (bool, string) {
		info = showJob(t, c, name)
		return info.Summary.State == api.JobState_PAUSED, fmt.Sprintf("%s %s %s", info.Summary.State, info.Summary.Reason, info.Summary.ReasonMessage)
	})
	if info.Summary.Reason != api.Reason_OFFSET_OUT_OF_RANGE || !strings.Contains(info.Summary.ReasonMessage, "data loss") ||
		!strings.Contains(info.Summary.ReasonMessage, seqs[99]) || info.Health != "failed" {
		t.Fatalf("paused with %s %q (health %s), want OFFSET_OUT_OF_RANGE naming the data loss at %s", info.Summary.Reason, info.Summary.ReasonMessage, info.Health, seqs[99])
	}
	if info.Stats.LoadedRows != 100 || info.Partitions[0].CommittedOffset != 100 || info.Partitions[0].Sequence != seqs[99] {
		t.Fatalf("progress moved: loaded %d, partition %v", info.Stats.LoadedRows, info.Partitions[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if n, err := c.Count(ctx, tbl); err != nil || n != 100 {
		t.Fatalf("table has %d rows (%v), want 100", n, err)
	}
}

// TestKinesisLatestSurvivesRestart: a job started at LATEST whose shards
// have no committed record yet loses nothing when the node restarts: LATEST
// is pinned to the time the job first saw each shard.
func TestKinesisLatestSurvivesRestart(t *testing.T) {
	endpoint := kinesistest.Start(t)
	kc := kinesistest.NewClient(endpoint)
	const stream, name, tbl = "latest", "latest_kinesis", "latest_k"
	kinesistest.CreateStream(t, kc, stream, 2)
	l := newKinesisLedger(stream, 8)
	dir := t.TempDir()
	p := startNode(t, dir)
	c := p.Client(t)
	spec := kinesisSpec(name, tbl, stream, endpoint)
	spec.Kinesis.DefaultPosition = "LATEST"
	createJob(t, c, spec)
	waitFor(t, 30*time.Second, "both shards read", func() (bool, string) {
		info := showJob(t, c, name)
		return len(info.Partitions) == 2 && info.RunningTasks == 2 && info.Summary.State == api.JobState_RUNNING,
			fmt.Sprintf("%s tasks %d %v", info.Summary.State, info.RunningTasks, info.Partitions)
	})
	p.MustKill(t)
	l.put(t, kc, 200)
	p.MustRestart(t)
	c = p.Client(t)
	waitKinesisLoaded(t, c, name, l.total(), time.Minute)
	l.check(t, c, name, tbl, nil)
}
