package node

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestConsoleSessionInUseSurvivesVisits (issue 25, D17): on a token-less
// node every anonymous GET /ui/ opens a session, and the table of sessions
// is bounded. A full table drops the sessions never sent back first, then
// the least recently used, so a flood of visits does not log the operator
// out. A session's bearer (which opens /v1 for its page) ends with it, and
// its use counts as the session's.
func TestConsoleSessionInUseSurvivesVisits(t *testing.T) {
	c := newConsole(newAdmin(slog.New(slog.DiscardHandler), "", nil), nil)
	mux := http.NewServeMux()
	c.routes(mux)
	visit := func() *http.Cookie {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/", nil))
		for _, ck := range rec.Result().Cookies() {
			if ck.Name == consoleCookie {
				return ck
			}
		}
		t.Fatalf("GET /ui/ opened no session: %d", rec.Code)
		return nil
	}
	use := func(ck *http.Cookie) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/ui/api/session", nil)
		req.AddCookie(ck)
		mux.ServeHTTP(rec, req)
		return rec.Code
	}
	bearerOf := func(ck *http.Cookie) string {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/ui/api/session", nil)
		req.AddCookie(ck)
		mux.ServeHTTP(rec, req)
		var v struct{ Bearer string }
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || v.Bearer == "" {
			t.Fatalf("/ui/api/session: %d %s", rec.Code, rec.Body)
		}
		return "Bearer " + v.Bearer
	}
	size := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.bearers) != len(c.sessions) {
			t.Fatalf("%d bearers for %d sessions", len(c.bearers), len(c.sessions))
		}
		return len(c.sessions)
	}

	operator := visit()
	if code := use(operator); code != 200 {
		t.Fatalf("the operator's session: %d", code)
	}
	for range 16 * consoleMaxSession {
		visit()
	}
	if code := use(operator); code != 200 {
		t.Fatalf("after %d anonymous visits the operator's session is gone: %d", 16*consoleMaxSession, code)
	}
	if n := size(); n != consoleMaxSession {
		t.Fatalf("%d sessions kept, want the bound %d", n, consoleMaxSession)
	}

	// Sessions in use fill the table (each new one drops a never-used one);
	// the operator uses theirs half-way.
	used := make([]*http.Cookie, consoleMaxSession-1)
	operatorBearer, firstBearer := bearerOf(operator), ""
	for i := range used {
		used[i] = visit()
		if code := use(used[i]); code != 200 {
			t.Fatalf("session %d: %d", i, code)
		}
		if i == 0 {
			firstBearer = bearerOf(used[0])
		}
		if i == len(used)/2 {
			// The page's calls to /v1 with the bearer are uses too.
			if !c.sessionBearer(operatorBearer) {
				t.Fatal("the operator's bearer was refused")
			}
		}
	}
	// Full of sessions in use: a visit drops the least recently used.
	visit()
	if code := use(used[0]); code != http.StatusUnauthorized {
		t.Errorf("the least recently used session: %d, want 401 (dropped)", code)
	}
	if c.sessionBearer(firstBearer) {
		t.Error("the bearer of a dropped session is accepted")
	}
	if !c.sessionBearer(operatorBearer) {
		t.Error("the operator's bearer was refused")
	}
	for _, ck := range []*http.Cookie{operator, used[1], used[len(used)-1]} {
		if code := use(ck); code != 200 {
			t.Errorf("a session used more recently was dropped: %d", code)
		}
	}
	// The next visit drops the previous visit's session, never used.
	visit()
	if code := use(used[2]); code != 200 {
		t.Errorf("a session in use was dropped before a never-used one: %d", code)
	}
	if n := size(); n != consoleMaxSession {
		t.Fatalf("%d sessions kept, want the bound %d", n, consoleMaxSession)
	}
}
