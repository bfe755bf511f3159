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
)

// TestBackupMidLoadRestore: `loadnode backup --to DIR` copies a node's
// store while a job loads; the node goes on loading; then a node started
// on the copy (the original stopped) resumes the job from the copy's
// progress, and the table ends with every record exactly once and the
// loaded-rows statistic equal to the record count.
func TestBackupMidLoadRestore(t *testing.T) {
	const name, tbl, topic = "bk_job", "bk_t", "bk"
	total := min(records(t), 60_000)
	b := testnode.StartBroker(t, 4, topic)
	l := ledger.New()
	produce(t, l, b, topic, 0, total/3)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	spec := jsonSpec(name, tbl, topic, b.Addrs())
	spec.MaxBatchRows = 1000 // many commits, so the checkpoint lands between them
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "loading before the backup", func() (bool, string) {
		info := showJob(t, c, name)
		return info.Stats.LoadedRows >= int64(total/6), fmt.Sprintf("loaded %d", info.Stats.LoadedRows)
	})
	// The rest is produced while the backup is taken and after it.
	producing := make(chan struct{})
	go func() {
		defer close(producing)
		for at := total / 3; at < total; at += 500 {
			if err := tryProduce(l, b, topic, at, min(500, total-at)); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
		}
	}()

	// Refusals first: a directory that is not empty, a relative path sent
	// as it is.
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := cli(t, p, "backup", "--to", full); code != 1 || !strings.Contains(out, "exists and is not empty") {
		t.Fatalf("backup to a non-empty dir: exit %d\n%s", code, out)
	}
	if _, err := c.Backup(ctx, "relative/dir"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("backup to a relative dir: %v", err)
	}
	backup := filepath.Join(t.TempDir(), "backup")
	if err := os.Mkdir(backup, 0o755); err != nil { // empty: accepted
		t.Fatal(err)
	}
	code, out := cli(t, p, "backup", "--to", backup)
	if code != 0 || !strings.Contains(out, "backup written to "+backup) {
		t.Fatalf("backup: exit %d\n%s", code, out)
	}
	atBackup := showJob(t, c, name).Stats.LoadedRows
	t.Logf("backup at about %d loaded rows: %s", atBackup, strings.TrimSpace(out))
	_ = filepath.WalkDir(backup, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		info, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, info.Mode().Perm(), want)
		}
		return nil
	})
	// The original goes on loading past the backup, then stops for good.
	<-producing
	waitDrained(t, c, b, name, topic, 2*time.Minute)
	c.Close()
	if err := p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Restore: a node on the copy is the node as of the backup.
	p2 := startNode(t, backup)
	c2 := p2.Client(t)
	info := showJob(t, c2, name)
	if info.Summary.State == api.JobState_PAUSED || info.Summary.State == api.JobState_STOPPED {
		t.Fatalf("restored job is %s (%s)", info.Summary.State, info.Summary.ReasonMessage)
	}
	if got := info.Stats.LoadedRows; got >= int64(total) {
		t.Fatalf("restored job already loaded %d of %d rows: the copy is not of mid-load", got, total)
	}
	t.Logf("restored at %d loaded rows", info.Stats.LoadedRows)
	waitDrained(t, c2, b, name, topic, 2*time.Minute)
	checkExactlyOnce(t, c2, l, name, tbl)
	// A second node cannot open the copy while the first holds it.
	out2, err := exec.Command(loadnodeBinary(t), "serve", "--data", backup, "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "another loadnode holds the lock") {
		t.Fatalf("second node on the restored copy: %v\n%s", err, out2)
	}
}
