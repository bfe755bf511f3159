package node_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

// TestConsoleSessions: the console's rules without a browser. Without a
// session nothing is answered; a wrong token gets no session; a session
// opens /ui only; a change needs the CSRF token and this endpoint's
// Origin.
func TestConsoleSessions(t *testing.T) {
	const token = "console-unit-0123456789abcdef"
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP, cfg.AuthToken = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0", token
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, origin, csrf string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, base+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if csp := resp.Header.Get("Content-Security-Policy"); strings.HasPrefix(path, "/ui") && !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s %s: CSP %q", method, path, csp)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := do("GET", "/ui/", "", "", nil); code != 200 || !strings.Contains(body, `name="token"`) {
		t.Fatalf("/ui/ without a session: %d, want the login form", code)
	}
	if code, _ := do("GET", "/ui/api/jobs", "", "", nil); code != 401 {
		t.Errorf("/ui/api/jobs without a session: %d", code)
	}
	if code, _ := do("POST", "/ui/login", base, "", url.Values{"token": {"wrong-token-wrong-token"}}); code != 401 {
		t.Errorf("login with a wrong token: %d", code)
	}
	if code, _ := do("POST", "/ui/login", "http://evil.example", "", url.Values{"token": {token}}); code != 403 {
		t.Errorf("login from another origin: %d", code)
	}
	if code, _ := do("POST", "/ui/login", base, "", url.Values{"token": {token}}); code != 303 {
		t.Fatalf("login: %d", code)
	}
	u, _ := url.Parse(base + "/ui/")
	var ck *http.Cookie
	for _, c := range jar.Cookies(u) {
		if c.Name == "loadnode_session" {
			ck = c
		}
	}
	if ck == nil || strings.Contains(ck.Value, token) {
		t.Fatalf("session cookie %+v", ck)
	}
	code, body := do("GET", "/ui/api/session", "", "", nil)
	if code != 200 || !strings.Contains(body, `"csrf":"`) {
		t.Fatalf("/ui/api/session: %d %s", code, body)
	}
	csrf := strings.SplitN(strings.SplitN(body, `"csrf":"`, 2)[1], `"`, 2)[0]
	if code, _ := do("GET", "/v1/jobs", "", "", nil); code != 401 {
		t.Errorf("the console's session opened /v1/jobs: %d", code)
	}
	for _, c := range []struct {
		origin, csrf string
		want         int
	}{
		{base, "", 403}, {base, "wrong", 403}, {"", csrf, 403}, {"http://evil.example", csrf, 403},
		{base, csrf, 404}, // allowed through: the job does not exist
	} {
		if code, body := do("POST", "/ui/api/jobs/nope/pause", c.origin, c.csrf, nil); code != c.want {
			t.Errorf("POST origin %q csrf %q: %d %s, want %d", c.origin, c.csrf, code, body, c.want)
		}
	}
}

// TestConsoleWithoutToken: without a token (loopback only) the first visit
// opens a session, and changes still need its CSRF token and the Origin.
func TestConsoleWithoutToken(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(base + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "app.js") {
		t.Fatalf("/ui/ without a token: %d, want the console", resp.StatusCode)
	}
	post := func(csrf string) int {
		req, _ := http.NewRequest("POST", base+"/ui/api/jobs/nope/stop", nil)
		req.Header.Set("Origin", base)
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != 403 {
		t.Errorf("POST without the CSRF token: %d", code)
	}
	resp, err = hc.Get(base + "/ui/api/session")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := strings.SplitN(strings.SplitN(string(b), `"csrf":"`, 2)[1], `"`, 2)[0]
	if code := post(csrf); code != 404 {
		t.Errorf("POST with the CSRF token: %d, want 404 (no such job)", code)
	}
}
