package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testnode"
)

// Operating a node: health verdicts, the error window after a resume, job
// names in logs, alerts and the console (console_test.go).

// writeNodeConfig writes a node config file and returns its path.
func writeNodeConfig(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// refusedAddr is a 127.0.0.1 address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b)
}

func show(t *testing.T, c *client.Client, name string) *api.JobInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := c.ShowJob(ctx, name)
	if err != nil {
		t.Fatalf("show %s: %v", name, err)
	}
	return info
}

// TestFailingHealth: a job whose broker refuses connections retries its
// source (NEED_SCHEDULE, "source error (retry N in T)") and is judged
// failing in `job show`, the listing, /v1/jobs and /metrics, while a job
// on a live broker stays healthy and a paused one paused. Every log line
// about a job names it (job=ID name=NAME).
func TestFailingHealth(t *testing.T) {
	b := testnode.StartBroker(t, 1, "live")
	cfg := writeNodeConfig(t, "source_retry_base: 200ms\nsource_retry_limit: 1000\nwatermark_interval: 500ms\n")
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true, Args: []string{"--config", cfg}})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, s := range []*api.JobSpec{
		jsonSpec("orders_unreachable", "t_bad", "gone", []string{refusedAddr(t)}),
		jsonSpec("orders_live", "t_live", "live", b.Addrs()),
		jsonSpec("orders_paused", "t_paused", "live", b.Addrs()),
	} {
		if _, err := c.CreateJob(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PauseJob(ctx, "orders_paused"); err != nil {
		t.Fatal(err)
	}
	produceValues(t, b, "live", `{"id":1,"note":"a"}`, `{"id":2,"note":"b"}`)
	began := time.Now()
	waitFor(t, 60*time.Second, "orders_unreachable failing", func() (bool, string) {
		info := show(t, c, "orders_unreachable")
		s := info.GetSummary()
		return info.GetHealth() == "failing" && s.GetState() == api.JobState_NEED_SCHEDULE &&
			strings.Contains(s.GetReasonMessage(), "source error (retry"), fmt.Sprintf("%s %s %q retries=%d", info.GetHealth(), s.GetState(), s.GetReasonMessage(), info.GetRetries())
	})
	t.Logf("failing after %s", time.Since(began))
	waitFor(t, 60*time.Second, "orders_live healthy with its rows", func() (bool, string) {
		info := show(t, c, "orders_live")
		return info.GetHealth() == "healthy" && info.GetStats().GetLoadedRows() == 2, fmt.Sprintf("%s loaded %d", info.GetHealth(), info.GetStats().GetLoadedRows())
	})
	if h := show(t, c, "orders_paused").GetHealth(); h != "paused" {
		t.Errorf("orders_paused health %s, want paused", h)
	}
	t.Logf("healthy after %s", time.Since(began))
	// The listing carries the verdicts (the job actor re-judges and tells
	// the manager).
	waitFor(t, 30*time.Second, "listing verdicts", func() (bool, string) {
		list, err := c.ListJobs(ctx)
		if err != nil {
			return false, err.Error()
		}
		got := map[string]string{}
		for _, s := range list {
			got[s.GetName()] = s.GetHealth()
		}
		return got["orders_unreachable"] == "failing" && got["orders_live"] == "healthy" && got["orders_paused"] == "paused", fmt.Sprint(got)
	})
	body := httpGet(t, "http://"+p.AdminAddr()+"/v1/jobs")
	if !regexp.MustCompile(`"name":"orders_unreachable"[^}]*"health":"failing"`).MatchString(body) {
		t.Errorf("/v1/jobs does not say orders_unreachable is failing: %s", body)
	}
	waitFor(t, 30*time.Second, "metrics verdicts", func() (bool, string) {
		m := httpGet(t, "http://"+p.AdminAddr()+"/metrics")
		return strings.Contains(m, `loadnode_job_health{health="failing",job="orders_unreachable"} 1`) &&
			strings.Contains(m, `loadnode_job_health{health="healthy",job="orders_live"} 1`) &&
			strings.Contains(m, `loadnode_job_health{health="paused",job="orders_paused"} 1`), grepLines(m, "loadnode_job_health")
	})

	t.Logf("metrics after %s", time.Since(began))
	// Logs: every line about a job carries its id and its name.
	log := p.Log()
	names := map[string]string{}
	lineRe := regexp.MustCompile(`\bjob=(\d+)`)
	nameRe := regexp.MustCompile(`\bjob=(\d+) name=(\S+)`)
	lines := 0
	for _, line := range strings.Split(log, "\n") {
		if !lineRe.MatchString(line) || strings.Contains(line, "component=") {
			continue
		}
		lines++
		m := nameRe.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("a job's log line without its name: %s", line)
			continue
		}
		if prev, ok := names[m[1]]; ok && prev != m[2] {
			t.Errorf("job %s logged as %s and %s", m[1], prev, m[2])
		}
		names[m[1]] = m[2]
	}
	if !strings.Contains(log, `msg="source error"`) || !regexp.MustCompile(`msg="source error".* name=orders_unreachable|name=orders_unreachable.*msg="source error"`).MatchString(log) &&
		!regexp.MustCompile(`msg="source error" job=\d+ name=orders_unreachable`).MatchString(log) {
		t.Errorf("no source error line naming orders_unreachable in the log:\n%s", p.Tail(60))
	}
	if lines < 5 {
		t.Errorf("only %d job log lines", lines)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// produceValues writes raw values to partition 0 of topic.
func produceValues(t *testing.T, b *testnode.Broker, topic string, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, 0, len(values))
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	if err := b.Client().ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestResumeStartsFreshErrorWindow: bad records pause a job with
// ERROR_ROWS_EXCEEDED; the producer is fixed and the user resumes it; the
// resume starts a fresh error window (journaled: it holds across a kill -9
// before the next commit and after it), so the clean records load and the
// job stays RUNNING.
func TestResumeStartsFreshErrorWindow(t *testing.T) {
	b := testnode.StartBroker(t, 1, "orders")
	dir := t.TempDir()
	p := startNode(t, dir)
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spec := jsonSpec("orders_load", "orders", "orders", b.Addrs())
	spec.DesiredConcurrentNumber, spec.MaxBatchRows, spec.MaxErrorNumber = 1, 100, 2
	if _, err := c.CreateJob(ctx, spec); err != nil {
		t.Fatal(err)
	}
	produceValues(t, b, "orders", `{"id":1,"note":"ok"}`, "not json 1", "not json 2", "not json 3", "not json 4")
	waitFor(t, 60*time.Second, "ERROR_ROWS_EXCEEDED", func() (bool, string) {
		s := show(t, c, "orders_load").GetSummary()
		return s.GetState() == api.JobState_PAUSED && s.GetReason() == api.Reason_ERROR_ROWS_EXCEEDED, s.GetState().String() + " " + s.GetReason().String()
	})
	before := show(t, c, "orders_load")
	if st := before.GetStats(); st.GetWindowErrorRows() < 3 || before.GetErrorWindowSize() != 1000 {
		t.Fatalf("window before the resume: %d error rows in %d, size %d", st.GetWindowErrorRows(), st.GetWindowRows(), before.GetErrorWindowSize())
	}
	info, err := c.ResumeJob(ctx, "orders_load")
	if err != nil {
		t.Fatal(err)
	}
	_ = info
	after := show(t, c, "orders_load")
	if st := after.GetStats(); st.GetWindowErrorRows() != 0 || st.GetWindowRows() != 0 || st.GetWindowStartSeq() == 0 {
		t.Fatalf("window after the resume: %d error rows in %d rows, start seq %d", st.GetWindowErrorRows(), st.GetWindowRows(), st.GetWindowStartSeq())
	}
	var resumed *api.Transition
	for _, tr := range after.GetHistory() {
		if tr.GetReason() == api.Reason_USER_RESUME {
			resumed = tr
		}
	}
	if resumed == nil || !strings.Contains(resumed.GetMessage(), "new error window") || resumed.GetSeq() != after.GetStats().GetWindowStartSeq() {
		t.Fatalf("history does not show the new window: %+v (window start %d)", resumed, after.GetStats().GetWindowStartSeq())
	}
	// kill -9 before any commit: the window's reset is in the journal only.
	p.MustKill(t)
	p.MustRestart(t)
	c = p.Client(t)
	good := make([]string, 0, 20)
	for i := 2; i < 22; i++ {
		good = append(good, fmt.Sprintf(`{"id":%d,"note":"fixed"}`, i))
	}
	produceValues(t, b, "orders", good[:10]...)
	waitFor(t, 60*time.Second, "the clean records loaded", func() (bool, string) {
		info := show(t, c, "orders_load")
		s := info.GetSummary()
		return info.GetStats().GetLoadedRows() == 11 && s.GetState() == api.JobState_RUNNING,
			fmt.Sprintf("%s %s %q loaded %d window %d/%d", s.GetState(), s.GetReason(), s.GetReasonMessage(), info.GetStats().GetLoadedRows(), info.GetStats().GetWindowErrorRows(), info.GetStats().GetWindowRows())
	})
	// And after a commit wrote the new window, across another kill -9.
	p.MustKill(t)
	p.MustRestart(t)
	c = p.Client(t)
	produceValues(t, b, "orders", good[10:]...)
	waitFor(t, 60*time.Second, "the rest loaded", func() (bool, string) {
		info := show(t, c, "orders_load")
		s := info.GetSummary()
		return info.GetStats().GetLoadedRows() == 21 && s.GetState() == api.JobState_RUNNING,
			fmt.Sprintf("%s %s loaded %d", s.GetState(), s.GetReason(), info.GetStats().GetLoadedRows())
	})
	final := show(t, c, "orders_load")
	if st := final.GetStats(); st.GetWindowErrorRows() != 0 || st.GetWindowRows() != 20 || st.GetErrorRows() != 4 {
		t.Errorf("final window: %d error rows in %d rows (errors %d in all)", st.GetWindowErrorRows(), st.GetWindowRows(), st.GetErrorRows())
	}
	if n, err := c.Count(ctx, "orders"); err != nil || n != 21 {
		t.Errorf("table rows %d (%v), want 21", n, err)
	}
}
