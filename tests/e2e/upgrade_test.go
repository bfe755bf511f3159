package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/testnode"
	"github.com/loadnode/loadnode/persistence"
)

// fixtureV1 is a store written by the release before the store recorded
// its format version (main at 588a869): one table "up_t" of 100 rows
// loaded by the job "up_job" (paused by its user, so that it does not look
// for the broker it was made with) and the table "up_empty" created by
// CREATE TABLE. TestMakeUpgradeFixture made it.
const fixtureV1 = "testdata/store-v1"

// TestMakeUpgradeFixture writes fixtureV1 with the binary
// $LOADNODE_FIXTURE_BINARY (built from the previous release). It runs only
// when that is set: the fixture is committed.
func TestMakeUpgradeFixture(t *testing.T) {
	bin := os.Getenv("LOADNODE_FIXTURE_BINARY")
	if bin == "" {
		t.Skip("LOADNODE_FIXTURE_BINARY not set: the committed fixture is used")
	}
	dir := t.TempDir()
	b := testnode.StartBroker(t, 2, "up")
	l := ledger.New()
	produce(t, l, b, "up", 0, 100)
	p := testnode.Start(t, testnode.Options{Binary: bin, DataDir: dir})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.CreateJob(ctx, jsonSpec("up_job", "up_t", "up", b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "up_job", "up", time.Minute)
	if _, err := c.PauseJob(ctx, "up_job"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTable(ctx, &api.TableSpec{Name: "up_empty", Columns: []*api.Column{{Name: "k", Type: api.ColumnType_INT64}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(fixtureV1); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(fixtureV1, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(fixtureV1, "LOCK"))
}

// copyStore copies a store directory to a new temporary one (0700).
func copyStore(t *testing.T, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			_ = os.Chmod(p, 0o600)
		}
		return nil
	})
	return dir
}

// TestUpgradeFromV1Store: this binary opens a store of the previous
// release (no format version key: version 1) with its jobs, progress,
// statistics and rows, records the version, and loads new jobs into it.
func TestUpgradeFromV1Store(t *testing.T) {
	dir := copyStore(t, fixtureV1)
	p := startNode(t, dir)
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	info := showJob(t, c, "up_job")
	if s := info.GetSummary(); s.GetState() != api.JobState_PAUSED || s.GetReason() != api.Reason_USER_PAUSE {
		t.Fatalf("up_job after the upgrade: %v", s)
	}
	if got := info.GetStats().GetLoadedRows(); got != 100 {
		t.Fatalf("up_job loaded_rows %d after the upgrade, want 100", got)
	}
	if n, err := c.Count(ctx, "up_t"); err != nil || n != 100 {
		t.Fatalf("up_t: %d rows, %v; want 100", n, err)
	}
	if rows := scanAll(t, c, "up_t"); len(rows) != 100 {
		t.Fatalf("scan up_t: %d rows", len(rows))
	}
	// A new job loads into the upgraded store.
	b := testnode.StartBroker(t, 1, "up2")
	l := ledger.New()
	produce(t, l, b, "up2", 0, 50)
	if _, err := c.CreateJob(ctx, jsonSpec("up_new", "up_new", "up2", b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, "up_new", "up2", time.Minute)
	if n, err := c.Count(ctx, "up_new"); err != nil || n != 50 {
		t.Fatalf("up_new: %d rows, %v", n, err)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if v, err := persistence.StoreFormatVersion(dir); err != nil || v != persistence.FormatVersion {
		t.Fatalf("format version after the upgrade: %d, %v", v, err)
	}
	// The version is recorded now: the node opens the store again.
	p2 := startNode(t, dir)
	if n, err := p2.Client(t).Count(ctx, "up_t"); err != nil || n != 100 {
		t.Fatalf("up_t after a second start: %d rows, %v", n, err)
	}
}

// TestNewerStoreRefused: a store whose format version is newer than the
// binary's is refused at start, naming both versions, and left as it was.
func TestNewerStoreRefused(t *testing.T) {
	dir := copyStore(t, fixtureV1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin := loadnodeBinary(t)
	if err := persistence.SetStoreFormatVersion(dir, 99); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "serve", "--data", dir, "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil {
		t.Fatalf("a node opened a store of format version 99:\n%s", out)
	}
	if !strings.Contains(string(out), fmt.Sprintf("format version 99, newer than this binary's version %d", persistence.FormatVersion)) {
		t.Fatalf("refusal does not name both versions:\n%s", out)
	}
	// Left as it was: still version 99.
	if v, err := persistence.StoreFormatVersion(dir); err != nil || v != 99 {
		t.Fatalf("store version after the refusal: %d, %v", v, err)
	}
}
