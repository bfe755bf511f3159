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
// session nothing is answered; a wrong token gets no session; the cookie
// opens /ui only; the session's bearer (not the token) opens /v1, and
// nothing else, until the session ends; logout needs the CSRF token and
// this endpoint's Origin.
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
	do := func(method, path, origin, csrf string, form url.Values, auth ...string) (int, string) {
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
		if len(auth) > 0 && auth[0] != "" {
			req.Header.Set("Authorization", auth[0])
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
	for _, path := range []string{"/ui/api/session", "/ui/api/timelines/1"} {
		if code, _ := do("GET", path, "", "", nil); code != 401 {
			t.Errorf("%s without a session: %d", path, code)
		}
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
	if code != 200 {
		t.Fatalf("/ui/api/session: %d %s", code, body)
	}
	field := func(name string) string {
		_, v, ok := strings.Cut(body, `"`+name+`":"`)
		v, _, _ = strings.Cut(v, `"`)
		if !ok || len(v) != 64 {
			t.Fatalf("/ui/api/session: no %s in %s", name, body)
		}
		return v
	}
	csrf, bearer := field("csrf"), field("bearer")
	if strings.Contains(bearer, token) || bearer == csrf || bearer == ck.Value {
		t.Fatalf("the session's bearer %q is the token, the CSRF token or the cookie", bearer)
	}
	if code, _ := do("GET", "/ui/api/timelines/1", "", "", nil); code != 200 {
		t.Errorf("/ui/api/timelines/1 with the session: %d", code)
	}
	auth := "Bearer " + bearer
	for _, c := range []struct {
		method, path, origin, auth string
		want                       int
	}{
		{"GET", "/v1/jobs", "", "", 401}, // the cookie does not open /v1
		{"GET", "/v1/jobs", "", auth, 200},
		{"GET", "/v1/jobs", "", "Bearer " + csrf, 401},
		{"GET", "/v1/jobs", "", "Bearer " + ck.Value, 401},
		{"GET", "/v1/jobs", "", bearer, 401},
		{"GET", "/metrics", "", auth, 401}, // the session's bearer opens /v1 only
		{"GET", "/debug/pprof/", "", auth, 401},
		{"POST", "/v1/jobs/nope/pause", base, "", 401},
		{"POST", "/v1/jobs/nope/pause", "http://evil.example", auth, 403},
		{"POST", "/v1/jobs/nope/pause", base, auth, 404}, // allowed through: the job does not exist
	} {
		if code, body := do(c.method, c.path, c.origin, "", nil, c.auth); code != c.want {
			t.Errorf("%s %s origin %q auth %q: %d %s, want %d", c.method, c.path, c.origin, c.auth, code, body, c.want)
		}
	}
	for _, c := range []struct {
		origin, csrf string
		want         int
	}{
		{base, "", 403}, {base, "wrong", 403}, {"", csrf, 403}, {"http://evil.example", csrf, 403},
		{base, csrf, 200}, // logged out
	} {
		if code, body := do("POST", "/ui/logout", c.origin, c.csrf, nil); code != c.want {
			t.Errorf("POST /ui/logout origin %q csrf %q: %d %s, want %d", c.origin, c.csrf, code, body, c.want)
		}
	}
	// The session ended, and its bearer with it.
	if code, _ := do("GET", "/v1/jobs", "", "", nil, auth); code != 401 {
		t.Errorf("/v1/jobs with the bearer of a session logged out: %d, want 401", code)
	}
}

// TestConsoleWithoutToken: without a token (loopback only) the first visit
// opens a session; logout still needs its CSRF token and the Origin, and
// /v1 still refuses a change from another origin.
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
	post := func(path, origin, csrf string) int {
		req, _ := http.NewRequest("POST", base+path, nil)
		req.Header.Set("Origin", origin)
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
	if code := post("/ui/logout", base, ""); code != 403 {
		t.Errorf("logout without the CSRF token: %d", code)
	}
	if code := post("/v1/jobs/nope/stop", "http://evil.example", ""); code != 403 {
		t.Errorf("POST /v1 from another origin: %d, want 403", code)
	}
	if code := post("/v1/jobs/nope/stop", base, ""); code != 404 {
		t.Errorf("POST /v1 from the console's origin: %d, want 404 (no such job)", code)
	}
	resp, err = hc.Get(base + "/ui/api/session")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := strings.SplitN(strings.SplitN(string(b), `"csrf":"`, 2)[1], `"`, 2)[0]
	if code := post("/ui/logout", base, csrf); code != 200 {
		t.Errorf("logout with the CSRF token: %d", code)
	}
}
