package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/internal/testnode"
)

// TestSecondNodeOnLockedDir: a second `loadnode serve` on a data dir a
// running node holds exits at once, saying that another loadnode holds it.
func TestSecondNodeOnLockedDir(t *testing.T) {
	dir := t.TempDir()
	startNode(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, loadnodeBinary(t), "serve", "--data", dir, "--listen", "127.0.0.1:0").CombinedOutput()
	if err == nil {
		t.Fatalf("a second node on a held data dir started:\n%s", out)
	}
	if want := "another loadnode holds the lock on " + dir; !strings.Contains(string(out), want) {
		t.Fatalf("second node: %v; output lacks %q:\n%s", err, want, out)
	}
}

// TestLogFormatJSONAndVersion: `serve --log-format json` writes one JSON
// object a line; `loadnode version` names the Go version.
func TestLogFormatJSONAndVersion(t *testing.T) {
	p := startNodeArgs(t, t.TempDir(), []string{"--log-format", "json"})
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(p.Log()))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "=== testnode") || l == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", l, err)
		}
		if rec["level"] == nil || rec["msg"] == nil {
			t.Fatalf("log record without level or msg: %q", l)
		}
		lines++
	}
	if lines == 0 {
		t.Fatal("no log lines")
	}
	out, err := exec.Command(loadnodeBinary(t), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "loadnode ") || !strings.Contains(string(out), "\ngo: go1.") {
		t.Fatalf("version: %v\n%s", err, out)
	}
}

// TestJobListPaged: `job list` and /v1/jobs page: with more jobs than a
// page, the CLI lists every job once, and /v1/jobs?limit= answers pages
// that together hold every job once.
func TestJobListPaged(t *testing.T) {
	const n = 1200
	b := testnode.StartBroker(t, 1, "lp")
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for i := range n {
		if _, err := c.CreateJob(ctx, jsonSpec(fmt.Sprintf("lp_%04d", i), "lp", "lp", b.Addrs())); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.CommandContext(ctx, loadnodeBinary(t), "job", "list", "--addr", p.Addr()).CombinedOutput()
	if err != nil {
		t.Fatalf("job list: %v\n%s", err, out)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n")[1:] {
		seen[strings.Fields(l)[0]]++
	}
	for i := range n {
		if k := seen[fmt.Sprintf("lp_%04d", i)]; k != 1 {
			t.Fatalf("job list shows lp_%04d %d times (%d lines)", i, k, len(seen))
		}
	}
	getJSON := func(t *testing.T, url string, v any) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", url, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	ids := map[string]int{}
	after, pages := "", 0
	for {
		var page struct {
			Jobs []struct {
				Name   string `json:"name"`
				Health string `json:"health"`
			} `json:"jobs"`
			NextAfterID string `json:"nextAfterId"`
			Total       string `json:"total"`
		}
		getJSON(t, "http://"+p.AdminAddr()+"/v1/jobs?limit=500&after="+after, &page)
		pages++
		if len(page.Jobs) > 500 || page.Total != fmt.Sprint(n) {
			t.Fatalf("page of %d jobs, total %s", len(page.Jobs), page.Total)
		}
		for _, j := range page.Jobs {
			ids[j.Name]++
			if j.Health == "" {
				t.Fatalf("job %s listed without health", j.Name)
			}
		}
		if page.NextAfterID == "" {
			break
		}
		after = page.NextAfterID
	}
	if len(ids) != n || pages != 3 {
		t.Fatalf("/v1/jobs: %d jobs in %d pages, want %d in 3", len(ids), pages, n)
	}
	for name, k := range ids {
		if k != 1 {
			t.Fatalf("/v1/jobs lists %s %d times", name, k)
		}
	}
}
