package e2e

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
)

// newestWAL is the path of the data dir's newest write-ahead log.
func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no WAL in %s: %v", dir, err)
	}
	sort.Strings(logs)
	return logs[len(logs)-1]
}

// walRun loads 6,000 records into a fresh node and stops it (SIGTERM, or
// SIGKILL when crash); it returns the ledger and the data dir.
func walRun(t *testing.T, b *testnode.Broker, topic, name, tbl string, crash bool) (*ledger.Ledger, string) {
	t.Helper()
	l := ledger.New()
	produce(t, l, b, topic, 0, 6000)
	dir := t.TempDir()
	p := startNode(t, dir)
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.MaxBatchRows = 1000 // several records in the WAL
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 90*time.Second)
	c.Close()
	if crash {
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	} else if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	return l, dir
}

// TestCorruptWALRefused (issue 12, defect 8): 200 random bytes in the
// middle of a killed node's WAL (a clean stop flushes the memtables and
// leaves an empty one), with intact records after them, make
// `serve` refuse to start with an ERROR naming the file and the offset;
// with --accept-wal-loss it starts, logs at ERROR what it drops, and the
// job loads again from the progress that is left, exactly once. A torn
// tail (the last bytes cut after a crash) starts with a WARN.
func TestCorruptWALRefused(t *testing.T) {
	const topic, name, tbl = "wal", "wal_load", "wal_rows"
	b := testnode.StartBroker(t, 2, topic)
	l, dir := walRun(t, b, topic, name, tbl, true)
	wal := newestWAL(t, dir)
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	t.Logf("seed %d; %s is %d bytes", seed, wal, len(data))
	r := rand.New(rand.NewPCG(seed, 8))
	at := len(data) / 2
	for i := range 200 {
		data[at+i] = byte(r.Uint32())
	}
	if err := os.WriteFile(wal, data, 0o600); err != nil {
		t.Fatal(err)
	}

	p := testnode.Start(t, testnode.Options{DataDir: dir, NoWait: true})
	exited, werr := p.Wait(60 * time.Second)
	log := p.Log()
	if !exited || werr == nil {
		t.Fatalf("serve on a corrupt WAL: exited %v (%v); want a refusal:\n%s", exited, werr, log)
	}
	base := filepath.Base(wal)
	if !strings.Contains(log, "level=ERROR") || !strings.Contains(log, base+" is corrupt at offset ") || !strings.Contains(log, "--accept-wal-loss") {
		t.Fatalf("the refusal does not name %s, an offset and the flag at ERROR:\n%s", base, log)
	}
	off := log[strings.Index(log, base+" is corrupt at offset ")+len(base+" is corrupt at offset "):]
	if n, err := strconv.Atoi(off[:strings.IndexAny(off, " ")]); err != nil || n > at {
		t.Fatalf("offset %q: want the start of the damaged record, at most %d", off[:20], at)
	}

	p = startNodeArgs(t, dir, []string{"--accept-wal-loss"})
	if log := p.Log(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "DROPPED") {
		t.Fatalf("--accept-wal-loss: no ERROR saying what was dropped:\n%s", log)
	}
	c := p.Client(t)
	waitDrained(t, c, b, name, topic, 90*time.Second)
	checkExactlyOnce(t, c, l, name, tbl)
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	const topic2, name2, tbl2 = "torn", "torn_load", "torn_rows"
	b2 := testnode.StartBroker(t, 2, topic2)
	l2, dir2 := walRun(t, b2, topic2, name2, tbl2, true)
	wal = newestWAL(t, dir2)
	st, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(wal, st.Size()-100); err != nil {
		t.Fatal(err)
	}
	p = startNode(t, dir2)
	if log := p.Log(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, "torn write") || strings.Contains(log, "is corrupt at") {
		t.Fatalf("torn tail: want a WARN, no refusal:\n%s", log)
	}
	c = p.Client(t)
	waitDrained(t, c, b2, name2, topic2, 90*time.Second)
	checkExactlyOnce(t, c, l2, name2, tbl2)
}

// TestCorruptSSTAdvice (issue 12, defect 9): a node whose store has a
// corrupt table file (bytes flipped in the middle of a real .sst) stops
// with advice that is true: a restart will not repair it, restore from a
// backup; not "a restart recovers".
func TestCorruptSSTAdvice(t *testing.T) {
	const topic, name, tbl = "sst", "sst_load", "sst_rows"
	b := testnode.StartBroker(t, 2, topic)
	_, dir := walRun(t, b, topic, name, tbl, false)
	// The reopen flushes what the WAL held into a table file.
	p := startNode(t, dir)
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatalf("no table file in %s after a reopen", dir)
	}
	biggest, size := "", int64(0)
	for _, f := range ssts {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			biggest, size = f, st.Size()
		}
	}
	data, err := os.ReadFile(biggest)
	if err != nil {
		t.Fatal(err)
	}
	// Every block of it (the footer aside), so that recovery's first read
	// of a job's snapshot meets the damage.
	for i := 0; i < len(data)-100; i += 1024 {
		data[i+10] ^= 0xa5
	}
	if err := os.WriteFile(biggest, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p = testnode.Start(t, testnode.Options{DataDir: dir, NoWait: true})
	exited, werr := p.Wait(60 * time.Second)
	log := p.Log()
	if !exited || werr == nil {
		t.Fatalf("serve on a corrupt %s: exited %v (%v); want it to stop:\n%s", filepath.Base(biggest), exited, werr, log)
	}
	if strings.Contains(log, "recovers the last durable state") || !strings.Contains(log, "will not repair it") || !strings.Contains(log, "from a backup") {
		t.Fatalf("corrupt .sst: the advice is not that a restart will not repair it and to restore a backup:\n%s", log)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "stopping the process:") {
			t.Logf("%.300s", line)
		}
	}
}
