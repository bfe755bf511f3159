package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/internal/testnode"
)

// curlClient runs the real curl against a node's /v1.
type curlClient struct {
	t     *testing.T
	bin   string
	base  string
	token string
}

func newCurl(t *testing.T, admin, token string) *curlClient {
	t.Helper()
	bin, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl is not installed (apt-get install -y curl): %v", err)
	}
	return &curlClient{t: t, bin: bin, base: "http://" + admin, token: token}
}

// do runs curl -X method; data (when not "") is sent as JSON. It returns
// the status and the decoded answer.
func (c *curlClient) do(method, path, data string) (int, map[string]any) {
	c.t.Helper()
	args := []string{"-sS", "-X", method, "-w", "\n%{http_code}", c.base + path}
	if c.token != "" {
		args = append(args, "-H", "Authorization: Bearer "+c.token)
	}
	if data != "" {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, c.bin, args...).Output()
	if err != nil {
		c.t.Fatalf("curl %s %s: %v: %s", method, path, err, out)
	}
	// -w puts the status on a line of its own after the body.
	body, code := "", string(out)
	if i := strings.LastIndex(string(out), "\n"); i >= 0 {
		body, code = strings.TrimSpace(string(out[:i])), strings.TrimSpace(string(out[i+1:]))
	}
	st, err := strconv.Atoi(code)
	if err != nil {
		c.t.Fatalf("curl %s %s: status %q: %s", method, path, code, out)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		c.t.Fatalf("curl %s %s: %d, not a JSON object: %s", method, path, st, body)
	}
	return st, m
}

// want is do with the status checked.
func (c *curlClient) want(method, path, data string, status int) map[string]any {
	c.t.Helper()
	st, m := c.do(method, path, data)
	if st != status {
		c.t.Fatalf("curl -X %s %s: %d %v, want %d", method, path, st, m, status)
	}
	return m
}

// TestHTTPAPICurl: curl drives a whole job lifecycle over /v1 against the
// binary (`loadnode serve` with a kfake broker), with auth on and off:
// create, watch rows arrive, alter, pause, reset offsets, resume, stop,
// delete; with a token, a request without it is refused and changes
// nothing.
func TestHTTPAPICurl(t *testing.T) {
	for _, auth := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-auth", true: "token"}[auth], func(t *testing.T) {
			b := testnode.StartBroker(t, 2, "events")
			recs := make([]*kgo.Record, 10)
			for i := range recs {
				recs[i] = &kgo.Record{Topic: "events", Value: fmt.Appendf(nil, `{"id":%d}`, i)}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.Client().ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var args []string
			token := ""
			if auth {
				token = e2eToken
				tf := filepath.Join(dir, "token")
				if err := os.WriteFile(tf, []byte(token+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = []string{"--auth-token-file", tf}
			}
			p := testnode.Start(t, testnode.Options{DataDir: filepath.Join(dir, "data"), HTTP: true, Args: args})
			c := newCurl(t, p.AdminAddr(), token)
			if auth {
				anon := newCurl(t, p.AdminAddr(), "")
				if m := anon.want("POST", "/v1/jobs", `{"name":"x"}`, 401); m["code"] != "UNAUTHENTICATED" {
					t.Fatalf("without the token: %v", m)
				}
			}

			brokers, _ := json.Marshal(b.Addrs())
			spec := `{"name": "events_load", "format": "json", "max_batch_interval": "100ms",
				"table": {"name": "events", "columns": [{"name": "id", "type": "int64"}]},
				"kafka": {"brokers": ` + string(brokers) + `, "topic": "events", "default_offset": "OFFSET_BEGINNING"}}`
			c.want("POST", "/v1/jobs", spec, 201)
			rows := func(want string) {
				waitFor(t, 30*time.Second, "rows "+want, func() (bool, string) {
					m := c.want("GET", "/v1/tables/events", "", 200)
					return m["rows"] == want, fmt.Sprint(m["rows"])
				})
			}
			rows("10")
			page := c.want("GET", "/v1/tables/events/rows?limit=4", "", 200)
			if n := len(page["rows"].([]any)); n != 4 || page["next"] == "" {
				t.Fatalf("a page of 4: %v", page)
			}
			if m := c.want("PATCH", "/v1/jobs/events_load", `{"max_batch_rows": 5000}`, 200); !strings.Contains(fmt.Sprint(m["spec"]), "5000") {
				t.Fatalf("alter: %v", m["spec"])
			}
			if m := c.want("POST", "/v1/jobs/events_load/pause", "", 200); m["summary"].(map[string]any)["state"] != "PAUSED" {
				t.Fatalf("pause: %v", m["summary"])
			}
			// Read both partitions again from their start: 10 records more,
			// loaded as new rows.
			c.want("POST", "/v1/jobs/events_load/offsets", `{"partitions": {"0": 0, "1": "OFFSET_BEGINNING"}}`, 200)
			c.want("POST", "/v1/jobs/events_load/resume", "", 200)
			rows("20")
			if m := c.want("POST", "/v1/sql", `{"statement": "SHOW ROUTINE LOAD FOR events_load"}`, 200); len(m["rows"].([]any)) != 1 {
				t.Fatalf("SHOW ROUTINE LOAD: %v", m)
			}
			c.want("POST", "/v1/jobs/events_load/stop", "", 200)
			c.want("DELETE", "/v1/jobs/events_load", "", 200)
			if m := c.want("GET", "/v1/jobs/events_load", "", 404); m["code"] != "NOT_FOUND" {
				t.Fatalf("after delete: %v", m)
			}
			if m := c.want("GET", "/v1/jobs", "", 200); len(m["jobs"].([]any)) != 0 {
				t.Fatalf("jobs after delete: %v", m)
			}
		})
	}
}
