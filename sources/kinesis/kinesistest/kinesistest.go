// Package kinesistest runs kinesalite, a local Kinesis, for tests, and
// offers helpers to create streams, put records and split or merge shards.
//
// Start runs `node tests/kinesalite/server.js` (kinesalite 3.3.3, pinned by
// tests/kinesalite/package-lock.json and installed by `make deps`, or by
// hand with `npm ci --prefix tests/kinesalite`) on a free port of
// 127.0.0.1; without them the test fails unless $LOADNODE_SKIP_KINESIS=1.
// Each call starts its own server, with empty in-memory streams; it stops
// at the test's cleanup.
//
// Kinesalite differences from Kinesis worth knowing in tests: it checks no
// credentials (any static keys do), its MillisBehindLatest is 0 except on a
// closed shard, ListShards ignores ShardFilter and never paginates, and a
// GetShardIterator AT_TIMESTAMP later than every record of the shard never
// answers (the call hangs until its context ends). Iterators expire after
// 5 minutes, as on Kinesis.
package kinesistest

import (
	"bufio"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loadnode/loadnode/internal/testdeps"
)

// Dummy credentials and region for kinesalite (which checks none).
const (
	AccessKeyID     = "AKIDKINESALITE"
	SecretAccessKey = "kinesalite-secret"
	Region          = "us-east-1"
)

// startTimeout bounds how long Start waits for the server's port line.
const startTimeout = 30 * time.Second

var portLine = regexp.MustCompile(`^kinesalite listening 127\.0\.0\.1:(\d+)$`)

// RepoRoot returns the repository root: the nearest directory above the
// working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("kinesistest: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("kinesistest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start runs a kinesalite server on 127.0.0.1 and returns its endpoint,
// "http://127.0.0.1:PORT". The server is killed at the test's cleanup.
// When node or kinesalite's node_modules are missing the test fails,
// naming what to install, unless $LOADNODE_SKIP_KINESIS=1 skips it
// (testdeps.Kinesis).
func Start(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(RepoRoot(t), "tests", "kinesalite")
	node, err := findNode(dir)
	testdeps.Require(t, testdeps.Kinesis, err)
	cmd := exec.Command(node, filepath.Join(dir, "server.js"), "0")
	cmd.Dir = dir
	// The server exits when its stdin closes: it cannot outlive this
	// process even if the cleanup does not run.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("kinesistest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("kinesistest: %v", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	if err := cmd.Start(); err != nil {
		t.Fatalf("kinesistest: start kinesalite: %v", err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
			t.Errorf("kinesistest: kinesalite exited during the test: %v\n%s", waitErr, cmd.Stderr.(*lockedWriter).String())
		default:
		}
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		<-exited
	})
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if m := portLine.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil && !found {
				found = true
				port <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p
	case <-exited:
		t.Fatalf("kinesistest: kinesalite exited before listening: %v\n%s", waitErr, cmd.Stderr.(*lockedWriter).String())
	case <-timer.C:
		t.Fatalf("kinesistest: kinesalite did not print its port within %s\n%s", startTimeout, cmd.Stderr.(*lockedWriter).String())
	}
	return ""
}

// findNode returns node, or says what of node and kinesalite (in
// dir/node_modules) is missing and how to install it.
func findNode(dir string) (string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("kinesistest: node is not installed (%v): run `make deps`, which installs Debian's nodejs and npm, then kinesalite", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kinesalite")); err != nil {
		return "", fmt.Errorf("kinesistest: kinesalite is not installed (%s/node_modules/kinesalite is missing): run `make deps`, or `npm ci --prefix tests/kinesalite`", dir)
	}
	return node, nil
}

// NewClient returns a Kinesis client of endpoint with the dummy
// credentials.
func NewClient(endpoint string) *kinesis.Client {
	return kinesis.New(kinesis.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  aws.NewCredentialsCache(staticCreds{}),
	})
}

type staticCreds struct{}

func (staticCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: AccessKeyID, SecretAccessKey: SecretAccessKey, Source: "kinesistest"}, nil
}

// ctx is the context of one helper call.
func ctx(testing.TB) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// CreateStream creates stream name with shards shards and waits until it
// is ACTIVE.
func CreateStream(t testing.TB, c *kinesis.Client, name string, shards int32) {
	t.Helper()
	cx, cancel := ctx(t)
	defer cancel()
	if _, err := c.CreateStream(cx, &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(shards)}); err != nil {
		t.Fatalf("kinesistest: create stream %s: %v", name, err)
	}
	WaitActive(t, c, name)
}

// WaitActive waits until stream name is ACTIVE.
func WaitActive(t testing.TB, c *kinesis.Client, name string) {
	t.Helper()
	cx, cancel := ctx(t)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		out, err := c.DescribeStreamSummary(cx, &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err == nil && out.StreamDescriptionSummary.StreamStatus == types.StreamStatusActive {
			return
		}
		select {
		case <-cx.Done():
			t.Fatalf("kinesistest: stream %s not ACTIVE in time (last error %v)", name, err)
		case <-tick.C:
		}
	}
}

// Shards lists the stream's shards.
func Shards(t testing.TB, c *kinesis.Client, stream string) []types.Shard {
	t.Helper()
	cx, cancel := ctx(t)
	defer cancel()
	var all []types.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(stream)}
	for {
		out, err := c.ListShards(cx, in)
		if err != nil {
			t.Fatalf("kinesistest: list shards of %s: %v", stream, err)
		}
		all = append(all, out.Shards...)
		if aws.ToString(out.NextToken) == "" {
			return all
		}
		in = &kinesis.ListShardsInput{NextToken: out.NextToken}
	}
}

// Record is one record to put. HashKey, when set, is the explicit hash key
// (a decimal in [0, 2^128)) that chooses the shard; otherwise the MD5 of
// Key does.
type Record struct {
	Key     string
	HashKey string
	Data    []byte
}

// Put is where a record went.
type Put struct {
	ShardID string
	Seq     string
}

// PutRecords puts recs, in order, with PutRecords calls of up to 500
// records, and returns where each went. Records of one shard get
// increasing sequence numbers in the order given. Any failed record fails
// the test.
func PutRecords(t testing.TB, c *kinesis.Client, stream string, recs ...Record) []Put {
	t.Helper()
	cx, cancel := ctx(t)
	defer cancel()
	var puts []Put
	for chunk := range slices.Chunk(recs, 500) {
		in := &kinesis.PutRecordsInput{StreamName: aws.String(stream)}
		for _, r := range chunk {
			e := types.PutRecordsRequestEntry{Data: r.Data, PartitionKey: aws.String(r.Key)}
			if r.HashKey != "" {
				e.ExplicitHashKey = aws.String(r.HashKey)
			}
			in.Records = append(in.Records, e)
		}
		out, err := c.PutRecords(cx, in)
		if err != nil {
			t.Fatalf("kinesistest: put records to %s: %v", stream, err)
		}
		if n := aws.ToInt32(out.FailedRecordCount); n > 0 {
			t.Fatalf("kinesistest: put records to %s: %d failed (first: %s)", stream, n, firstFailure(out.Records))
		}
		for _, e := range out.Records {
			puts = append(puts, Put{ShardID: aws.ToString(e.ShardId), Seq: aws.ToString(e.SequenceNumber)})
		}
	}
	return puts
}

func firstFailure(rs []types.PutRecordsResultEntry) string {
	for _, r := range rs {
		if r.ErrorCode != nil {
			return aws.ToString(r.ErrorCode) + ": " + aws.ToString(r.ErrorMessage)
		}
	}
	return "?"
}

// PutOne puts one record with partition key key and returns where it went.
func PutOne(t testing.TB, c *kinesis.Client, stream, key string, data []byte) Put {
	t.Helper()
	return PutRecords(t, c, stream, Record{Key: key, Data: data})[0]
}

// HashRange returns the hash key range [start, end] of shard id.
func HashRange(t testing.TB, c *kinesis.Client, stream, shardID string) (start, end *big.Int) {
	t.Helper()
	for _, sh := range Shards(t, c, stream) {
		if aws.ToString(sh.ShardId) == shardID {
			start, ok1 := new(big.Int).SetString(aws.ToString(sh.HashKeyRange.StartingHashKey), 10)
			end, ok2 := new(big.Int).SetString(aws.ToString(sh.HashKeyRange.EndingHashKey), 10)
			if !ok1 || !ok2 {
				t.Fatalf("kinesistest: shard %s: bad hash key range %+v", shardID, sh.HashKeyRange)
			}
			return start, end
		}
	}
	t.Fatalf("kinesistest: shard %s not in stream %s", shardID, stream)
	return nil, nil
}

// MidHashKey returns the middle of shard id's hash key range, as a decimal:
// a split point, or (with its neighbours) an explicit hash key that lands
// on a chosen side of it.
func MidHashKey(t testing.TB, c *kinesis.Client, stream, shardID string) string {
	t.Helper()
	start, end := HashRange(t, c, stream, shardID)
	mid := new(big.Int).Add(start, end)
	return mid.Rsh(mid, 1).String()
}

// Split splits shard shardID at newStartingHashKey ("" = the middle of its
// range), waits until the stream is ACTIVE again and returns the two
// children (lower range first).
func Split(t testing.TB, c *kinesis.Client, stream, shardID, newStartingHashKey string) (lower, upper string) {
	t.Helper()
	if newStartingHashKey == "" {
		newStartingHashKey = MidHashKey(t, c, stream, shardID)
	}
	before := shardIDs(Shards(t, c, stream))
	cx, cancel := ctx(t)
	defer cancel()
	if _, err := c.SplitShard(cx, &kinesis.SplitShardInput{StreamName: aws.String(stream),
		ShardToSplit: aws.String(shardID), NewStartingHashKey: aws.String(newStartingHashKey)}); err != nil {
		t.Fatalf("kinesistest: split %s of %s: %v", shardID, stream, err)
	}
	WaitActive(t, c, stream)
	kids := newShards(t, c, stream, before)
	if len(kids) != 2 {
		t.Fatalf("kinesistest: split %s: %d new shards, want 2", shardID, len(kids))
	}
	a, b := kids[0], kids[1]
	as, _ := new(big.Int).SetString(aws.ToString(a.HashKeyRange.StartingHashKey), 10)
	bs, _ := new(big.Int).SetString(aws.ToString(b.HashKeyRange.StartingHashKey), 10)
	if as.Cmp(bs) > 0 {
		a, b = b, a
	}
	return aws.ToString(a.ShardId), aws.ToString(b.ShardId)
}

// Merge merges shard a with its adjacent shard b, waits until the stream is
// ACTIVE again and returns the child.
func Merge(t testing.TB, c *kinesis.Client, stream, a, b string) string {
	t.Helper()
	before := shardIDs(Shards(t, c, stream))
	cx, cancel := ctx(t)
	defer cancel()
	if _, err := c.MergeShards(cx, &kinesis.MergeShardsInput{StreamName: aws.String(stream),
		ShardToMerge: aws.String(a), AdjacentShardToMerge: aws.String(b)}); err != nil {
		t.Fatalf("kinesistest: merge %s and %s of %s: %v", a, b, stream, err)
	}
	WaitActive(t, c, stream)
	kids := newShards(t, c, stream, before)
	if len(kids) != 1 {
		t.Fatalf("kinesistest: merge %s and %s: %d new shards, want 1", a, b, len(kids))
	}
	return aws.ToString(kids[0].ShardId)
}

func shardIDs(shards []types.Shard) map[string]bool {
	m := map[string]bool{}
	for _, s := range shards {
		m[aws.ToString(s.ShardId)] = true
	}
	return m
}

func newShards(t testing.TB, c *kinesis.Client, stream string, before map[string]bool) []types.Shard {
	var out []types.Shard
	for _, s := range Shards(t, c, stream) {
		if !before[aws.ToString(s.ShardId)] {
			out = append(out, s)
		}
	}
	return out
}

// lockedWriter collects the server's stderr (written by os/exec's copier,
// read by Start on failure).
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// UserRecord is one record of a KPL aggregate.
type UserRecord struct {
	Key     string
	HashKey string // explicit hash key; "" for none
	Data    []byte
}

// kplMagic starts a KPL-aggregated record.
var kplMagic = []byte{0xF3, 0x89, 0x9A, 0xC2}

// Aggregate encodes recs as one KPL-aggregated record, as the Kinesis
// Producer Library does: the magic F3 89 9A C2, the protobuf
// AggregatedRecord (each distinct partition key and explicit hash key once
// in its table, then one Record per user record), and the MD5 of the
// protobuf. It is written independently of the source's decoder, with
// protowire, so that tests check one against the other.
func Aggregate(recs ...UserRecord) []byte {
	keyIdx, hashIdx := map[string]uint64{}, map[string]uint64{}
	var body []byte
	for _, r := range recs {
		if _, ok := keyIdx[r.Key]; !ok {
			keyIdx[r.Key] = uint64(len(keyIdx))
			body = protowire.AppendTag(body, 1, protowire.BytesType)
			body = protowire.AppendString(body, r.Key)
		}
	}
	for _, r := range recs {
		if _, ok := hashIdx[r.HashKey]; r.HashKey != "" && !ok {
			hashIdx[r.HashKey] = uint64(len(hashIdx))
			body = protowire.AppendTag(body, 2, protowire.BytesType)
			body = protowire.AppendString(body, r.HashKey)
		}
	}
	for _, r := range recs {
		var m []byte
		m = protowire.AppendTag(m, 1, protowire.VarintType)
		m = protowire.AppendVarint(m, keyIdx[r.Key])
		if r.HashKey != "" {
			m = protowire.AppendTag(m, 2, protowire.VarintType)
			m = protowire.AppendVarint(m, hashIdx[r.HashKey])
		}
		m = protowire.AppendTag(m, 3, protowire.BytesType)
		m = protowire.AppendBytes(m, r.Data)
		body = protowire.AppendTag(body, 3, protowire.BytesType)
		body = protowire.AppendBytes(body, m)
	}
	sum := md5.Sum(body)
	out := append(slices.Clone(kplMagic), body...)
	return append(out, sum[:]...)
}
