package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testdeps"
	"github.com/loadnode/loadnode/internal/testnode"
)

// chromium returns the Chromium binary, or fails the test: a missing
// browser is an error (make deps installs Debian's chromium), not a skip,
// unless $LOADNODE_SKIP_BROWSER=1 (testdeps.Browser).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testdeps.Require(t, testdeps.Browser, errors.New("chromium is not installed: run `make deps` (apt-get install -y chromium)"))
	return ""
}

// artifactDir is where test artefacts go: $LOADNODE_ARTIFACTS, or the
// test's temporary directory.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("LOADNODE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestConsoleInChromium drives the web console of a real `loadnode serve`
// in headless Chromium: log in with the token, the list shows the real
// jobs (a paused one with its reason), sorting by a column and the filter
// are over every job, not over the page shown (with a page of 2: by name
// descending, page 1 starts with a job of page 2 in id order; the filter
// finds a job that is not on page 1), a job's charts have points, the
// pause button pauses the job (seen through the client), and a POST
// to /v1 without the session's bearer, or with a wrong one, is refused (the
// page reads and changes jobs through /v1 with its session's bearer). A
// screenshot is written as an artefact.
func TestConsoleInChromium(t *testing.T) {
	bin := chromium(t)
	const token = "console-0123456789abcdef-token"
	b := testnode.StartBroker(t, 2, "orders")
	cfg := writeNodeConfig(t, "watermark_interval: 300ms\n")
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true, Args: []string{"--config", cfg},
		Env: []string{"LOADNODE_AUTH_TOKEN=" + token}})
	c := p.Client(t, client.WithToken(token))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, s := range []*api.JobSpec{
		jsonSpec("orders_live", "orders", "orders", b.Addrs()),
		jsonSpec("orders_held", "orders_held", "orders", b.Addrs()),
		jsonSpec("orders_more", "orders_more", "orders", b.Addrs()),
	} {
		if _, err := c.CreateJob(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PauseJob(ctx, "orders_held"); err != nil {
		t.Fatal(err)
	}
	vals := make([]string, 200)
	for i := range vals {
		vals[i] = fmt.Sprintf(`{"id":%d,"note":"n"}`, i)
	}
	produceValues(t, b, "orders", vals...)
	base := "http://" + p.AdminAddr()

	// Without a session the console's JSON is refused, and /v1 still
	// wants a bearer token.
	for _, path := range []string{"/ui/api/session", "/ui/api/timelines/1", "/v1/jobs"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without credentials: %s, want 401", path, resp.Status)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 1100))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil { // starts the browser, on a context without a timeout
		t.Fatalf("start chromium: %v", err)
	}
	// step runs one browser action with a deadline.
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, scancel := context.WithTimeout(bctx, 60*time.Second)
		defer scancel()
		if err := chromedp.Do(sctx, actions...); err != nil {
			t.Fatalf("browser: %s: %v\nnode log:\n%s", what, err, p.Tail(40))
		}
	}
	text := func(sel string) string {
		t.Helper()
		sctx, scancel := context.WithTimeout(bctx, 30*time.Second)
		defer scancel()
		v, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("browser: text of %s: %v", sel, err)
		}
		return v
	}
	eval := func(expr string) string {
		t.Helper()
		sctx, scancel := context.WithTimeout(bctx, 30*time.Second)
		defer scancel()
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("browser: %s: %v", expr, err)
		}
		return v
	}

	// Log in.
	step("log in", chromedp.Navigate(base+"/ui/"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.ID("login-button")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-list-ready="1"]`)))

	// The list renders the real jobs; the paused one shows its reason.
	step("job list", chromedp.WaitVisible(chromedp.CSS(`tr[data-job="orders_held"]`)), chromedp.WaitVisible(chromedp.CSS(`tr[data-job="orders_live"]`)))
	if r := text(`tr[data-job="orders_held"] td.reason`); !strings.Contains(r, "USER_PAUSE") {
		t.Errorf("the paused job's reason cell says %q", r)
	}
	if s := text(`tr[data-job="orders_live"] td.state`); s == "" {
		t.Error("the live job's state cell is empty")
	}
	rows := func() string {
		return eval(`Array.from(document.querySelectorAll("#jobs tbody tr")).map(r => r.dataset.job).join(",")`)
	}
	// waitRows waits for the list to show want (and its page and count
	// texts to hold the given parts): sorting and filtering ask the node.
	waitRows := func(what, want string, texts ...string) {
		t.Helper()
		waitFor(t, 15*time.Second, what, func() (bool, string) {
			got := rows() + " | " + text("#page") + " | " + text("#count")
			if !strings.HasPrefix(got, want+" | ") || eval(`document.body.dataset.listReady || ""`) != "1" {
				return false, got
			}
			for _, s := range texts {
				if !strings.Contains(got, s) {
					return false, got
				}
			}
			return true, got
		})
	}
	// The filter narrows the list, on the node.
	step("filter", chromedp.SendKeys(chromedp.ID("filter"), "held"))
	waitRows("filter 'held'", "orders_held", "1 of 3 jobs match")

	// The list is paged: with a page of 2, the three jobs are two pages
	// (in id order); Next and Previous move between them.
	step("paged list", chromedp.Navigate(base+"/ui/?page_size=2#/"), chromedp.WaitVisible(chromedp.CSS(`body[data-list-ready="1"]`)))
	waitRows("first page", "orders_live,orders_held", "page 1 of 2 (3 jobs)", "3 jobs")
	step("next page", chromedp.Click(chromedp.ID("next")))
	waitRows("second page", "orders_more", "page 2 of 2")
	if d := eval(`String(document.getElementById("next").disabled)`); d != "true" {
		t.Errorf("Next on the last page: disabled=%s", d)
	}
	step("previous page", chromedp.Click(chromedp.ID("prev")))
	waitRows("back on the first page", "orders_live,orders_held", "page 1 of 2")

	// Sorting is over every job, not the page shown: by name descending,
	// page 1 starts with orders_more, which is on page 2 in id order.
	step("sort by name", chromedp.Click(chromedp.CSS(`#jobs th[data-key="name"]`)))
	waitRows("sorted by name", "orders_held,orders_live", "page 1 of 2")
	step("sort by name, descending", chromedp.Click(chromedp.CSS(`#jobs th[data-key="name"]`)))
	waitRows("sorted by name, descending", "orders_more,orders_live", "page 1 of 2 (3 jobs)")
	step("next sorted page", chromedp.Click(chromedp.ID("next")))
	waitRows("second sorted page", "orders_held", "page 2 of 2")
	step("previous sorted page", chromedp.Click(chromedp.ID("prev")))
	waitRows("first sorted page again", "orders_more,orders_live", "page 1 of 2")
	step("back to the id order", chromedp.Click(chromedp.CSS(`#jobs th[data-key="name"]`)))
	waitRows("id order", "orders_live,orders_held", "page 1 of 2")
	// The filter finds a job that is not on page 1.
	step("filter 'more'", chromedp.SendKeys(chromedp.ID("filter"), "MORE"))
	waitRows("filter 'more'", "orders_more", "1 of 3 jobs match", "page 1 of 1 (1 jobs)")

	// The job page: its charts fill with samples.
	step("job page", chromedp.Navigate(base+"/ui/#/job/orders_live"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-job-ready="orders_live"]`)))
	waitFor(t, 60*time.Second, "chart points", func() (bool, string) {
		lag := eval(`Array.from(document.querySelectorAll("#lag-chart polyline")).map(p => p.dataset.points).join(",")`)
		rate := eval(`Array.from(document.querySelectorAll("#rate-chart polyline")).map(p => p.dataset.points).join(",")`)
		n, _ := strconv.Atoi(strings.Split(rate, ",")[0])
		lagParts := strings.Split(lag, ",")
		m, _ := strconv.Atoi(lagParts[0])
		return n >= 2 && m >= 2 && len(lagParts) == 2, "lag points " + lag + ", rate points " + rate
	})
	sctx, scancel := context.WithTimeout(bctx, 30*time.Second)
	shot, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)) // quality 100: PNG
	scancel()
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	png := filepath.Join(artifactDir(t), "console-job.png")
	if err := os.WriteFile(png, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", png, len(shot))

	// The pause button pauses the job.
	step("pause", chromedp.WaitEnabled(chromedp.ID("pause")), chromedp.Click(chromedp.ID("pause")))
	waitFor(t, 30*time.Second, "orders_live paused by the button", func() (bool, string) {
		s := show(t, c, "orders_live").GetSummary()
		return s.GetState() == api.JobState_PAUSED && s.GetReason() == api.Reason_USER_PAUSE, s.GetState().String() + " " + s.GetReason().String()
	})

	// A POST from the page to /v1 with its cookie but without the
	// session's bearer, or with a wrong one, is refused and changes nothing.
	if st := eval(`fetch("/v1/jobs/orders_live/resume", {method: "POST", credentials: "include"}).then(r => String(r.status))`); st != "401" {
		t.Errorf("POST without the bearer: %s, want 401", st)
	}
	if st := eval(`fetch("/v1/jobs/orders_live/resume", {method: "POST", headers: {"Authorization": "Bearer 0000"}}).then(r => String(r.status))`); st != "401" {
		t.Errorf("POST with a wrong bearer: %s, want 401", st)
	}
	if s := show(t, c, "orders_live").GetSummary(); s.GetState() != api.JobState_PAUSED {
		t.Errorf("a refused POST changed the job: %s", s.GetState())
	}
	// The resume button, with the token, works.
	step("resume", chromedp.WaitEnabled(chromedp.ID("resume")), chromedp.Click(chromedp.ID("resume")))
	waitFor(t, 30*time.Second, "orders_live resumed by the button", func() (bool, string) {
		s := show(t, c, "orders_live").GetSummary()
		return s.GetState() != api.JobState_PAUSED, s.GetState().String()
	})
}
