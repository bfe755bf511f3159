package node

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The web console at /ui, on the admin endpoint.
//
// Authentication. With a token configured, /ui asks for it once in a
// login form (POST /ui/login, same-origin only); the node answers with a
// session cookie: a random 256-bit id (not the token, nor derived from it)
// the node keeps in memory for consoleSessionTTL, HttpOnly (scripts cannot
// read it), SameSite=Strict (no other site's page sends it), Secure when
// the endpoint serves TLS, Path=/ui. Without a token the console opens a
// session on the first visit. Sessions end at logout, expiry or a restart
// of the node. At most consoleMaxSession are kept: a full table drops a
// session never sent back (the oldest), else the least recently used. The
// cookie opens /ui only.
//
// The API. The page lists, shows, pauses, resumes and stops jobs through
// /v1 (httpapi.go), like any client, with a bearer token of its session:
// random per session (neither the node token nor derived from it), handed
// to the page by GET /ui/api/session and accepted by the admin endpoint's
// authentication on /v1 only, while the session lives (sessionBearer); it
// ends with the session (logout, expiry, eviction, restart). /metrics and
// /debug still want the node token.
//
// CSRF. A change on /v1 carries the session's bearer in an Authorization
// header, which a browser never adds to another site's request (no CORS);
// /v1 also refuses a change whose Origin or Sec-Fetch-Site names another
// site. Logout, the one change under /ui, is a POST that must carry the
// session's CSRF token in X-CSRF-Token (random per session, from
// GET /ui/api/session, which another site's page cannot read) and an
// Origin header naming this endpoint. Pages are served with a
// Content-Security-Policy that allows only the node's own scripts and
// styles, and may not be framed.
//
// Assets are embedded (go:embed): plain HTML, CSS and JS, nothing fetched
// from anywhere else. Under /ui/api are only the session and the charts'
// samples (timelines), which /v1 has no equivalent for.

//go:embed ui
var consoleFiles embed.FS

const (
	consoleCookie     = "loadnode_session"
	consoleSessionTTL = 12 * time.Hour
	consoleMaxSession = 1024
	csrfHeader        = "X-CSRF-Token"
	consoleCSP        = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// consolePath reports whether path belongs to the console (which checks
// its own sessions instead of the bearer token).
func consolePath(path string) bool { return path == "/ui" || strings.HasPrefix(path, "/ui/") }

type console struct {
	a  *admin
	tl *timelines

	mu       sync.Mutex
	sessions map[string]*session // by sha256(id), hex; at most consoleMaxSession
	bearers  map[string]string   // sha256(session.bearer), hex -> the session's key in sessions
	uses     uint64              // counts openings and uses: the order of session.last
}

type session struct {
	csrf string
	// bearer opens /v1 for the session's page (sessionBearer).
	bearer  string
	expires time.Time
	// used: the session was sent back since it was opened. A token-less
	// node opens one on every visit without a cookie, so the table holds
	// mostly sessions no one uses; a full table drops those first.
	used bool
	// last is c.uses at the session's opening or its latest use.
	last uint64
}

func newConsole(a *admin, tl *timelines) *console {
	return &console{a: a, tl: tl, sessions: map[string]*session{}, bearers: map[string]string{}}
}

func (c *console) routes(mux *http.ServeMux) {
	static, _ := fs.Sub(consoleFiles, "ui")
	files := http.FileServerFS(static)
	mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
	mux.HandleFunc("GET /ui/{$}", c.index)
	mux.Handle("GET /ui/static/", c.headers(http.StripPrefix("/ui/", files)))
	mux.HandleFunc("POST /ui/login", c.login)
	mux.HandleFunc("POST /ui/logout", c.post(c.logout))
	mux.HandleFunc("GET /ui/api/session", c.get(c.sessionInfo))
	mux.HandleFunc("GET /ui/api/timelines/{id}", c.get(c.timeline))
}

func (c *console) headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		h.ServeHTTP(w, r)
	})
}

func setSecurityHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Security-Policy", consoleCSP)
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Cache-Control", "no-store")
}

// index serves the page, or the login form when a token is needed and the
// request has no session. Without a token a session is opened here.
func (c *console) index(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if _, ok := c.current(r); !ok {
		if c.a.token != "" {
			c.serveFile(w, "ui/login.html", http.StatusOK)
			return
		}
		c.open(w)
	}
	c.serveFile(w, "ui/index.html", http.StatusOK)
}

func (c *console) serveFile(w http.ResponseWriter, name string, code int) {
	b, err := consoleFiles.ReadFile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func hashID(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// open starts a session and sets its cookie.
func (c *console) open(w http.ResponseWriter) *session {
	id, s := randomHex(32), &session{csrf: randomHex(32), bearer: randomHex(32), expires: time.Now().Add(consoleSessionTTL)}
	c.mu.Lock()
	now := time.Now()
	for k, v := range c.sessions {
		if now.After(v.expires) {
			c.dropLocked(k)
		}
	}
	for len(c.sessions) >= consoleMaxSession {
		c.dropLocked(c.victimLocked())
	}
	c.uses++
	s.last = c.uses
	c.sessions[hashID(id)] = s
	c.bearers[hashID(s.bearer)] = hashID(id)
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: id, Path: "/ui", HttpOnly: true, Secure: c.a.tls != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: int(consoleSessionTTL / time.Second)})
	return s
}

// dropLocked ends the session of key, and its bearer with it.
//
// REQUIRES: c.mu is held.
func (c *console) dropLocked(key string) {
	if s := c.sessions[key]; s != nil {
		delete(c.bearers, hashID(s.bearer))
	}
	delete(c.sessions, key)
}

// victimLocked returns the key of the session a full table drops: the
// oldest of those never used, else the least recently used, so that
// anonymous visits cannot log out a console in use
// (TestConsoleSessionInUseSurvivesVisits).
//
// REQUIRES: c.mu is held; the table is not empty.
func (c *console) victimLocked() string {
	var key string
	var victim *session
	for k, s := range c.sessions {
		if victim == nil || !s.used && victim.used || s.used == victim.used && s.last < victim.last {
			key, victim = k, s
		}
	}
	return key
}

// current returns the request's live session, and marks it used.
func (c *console) current(r *http.Request) (*session, bool) {
	ck, err := r.Cookie(consoleCookie)
	if err != nil || ck.Value == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.useLocked(hashID(ck.Value))
}

// useLocked returns the live session of key, and marks it used.
//
// REQUIRES: c.mu is held.
func (c *console) useLocked(key string) (*session, bool) {
	s := c.sessions[key]
	if s == nil {
		return nil, false
	}
	if time.Now().After(s.expires) {
		c.dropLocked(key)
		return nil, false
	}
	c.uses++
	s.used, s.last = true, c.uses
	return s, true
}

// sessionBearer reports whether an Authorization header carries the
// bearer of a live session (and marks the session used): the admin
// endpoint's authentication accepts it on /v1.
func (c *console) sessionBearer(header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key, ok := c.bearers[hashID(strings.TrimSpace(tok))]
	if !ok {
		return false
	}
	_, ok = c.useLocked(key)
	return ok
}

// sameOrigin checks that a POST comes from a page of this endpoint: its
// Origin header names this host (browsers send it with every POST).
func (c *console) sameOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return fmt.Errorf("no Origin header")
	}
	u, err := url.Parse(o)
	if err != nil || u.Host != r.Host {
		return fmt.Errorf("origin %q is not this endpoint (%s)", o, r.Host)
	}
	if want := map[bool]string{true: "https", false: "http"}[c.a.tls != nil]; u.Scheme != want {
		return fmt.Errorf("origin %q is not %s", o, want)
	}
	if sf := r.Header.Get("Sec-Fetch-Site"); sf != "" && sf != "same-origin" {
		return fmt.Errorf("Sec-Fetch-Site %q", sf)
	}
	return nil
}

func (c *console) refuse(w http.ResponseWriter, r *http.Request, code int, why string) {
	c.a.logger.Warn("console: refused a request", "peer", r.RemoteAddr, "path", r.URL.Path, "reason", why)
	writeConsoleJSON(w, code, map[string]string{"error": why})
}

// login checks the token from the form and opens a session.
func (c *console) login(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if err := c.sameOrigin(r); err != nil {
		c.refuse(w, r, http.StatusForbidden, "login refused: "+err.Error())
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	tok := r.PostFormValue("token")
	if c.a.token != "" {
		want, got := sha256.Sum256([]byte(c.a.token)), sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
			c.a.logger.Warn("console: refused a login", "peer", r.RemoteAddr, "reason", "wrong token")
			c.serveFile(w, "ui/login.html", http.StatusUnauthorized)
			return
		}
	}
	c.open(w)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (c *console) logout(w http.ResponseWriter, r *http.Request, _ *session) {
	if ck, err := r.Cookie(consoleCookie); err == nil {
		c.mu.Lock()
		c.dropLocked(hashID(ck.Value))
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: consoleCookie, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	writeConsoleJSON(w, http.StatusOK, map[string]string{"ok": "logged out"})
}

// get wraps a read: it needs a session.
func (c *console) get(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		s, ok := c.current(r)
		if !ok {
			c.refuse(w, r, http.StatusUnauthorized, "no session: log in at /ui/")
			return
		}
		h(w, r, s)
	}
}

// post wraps a change: it needs a session, this endpoint's Origin and the
// session's CSRF token.
func (c *console) post(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w)
		s, ok := c.current(r)
		if !ok {
			c.refuse(w, r, http.StatusUnauthorized, "no session: log in at /ui/")
			return
		}
		if err := c.sameOrigin(r); err != nil {
			c.refuse(w, r, http.StatusForbidden, "refused: "+err.Error())
			return
		}
		if got := r.Header.Get(csrfHeader); got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) != 1 {
			c.refuse(w, r, http.StatusForbidden, "refused: missing or wrong "+csrfHeader)
			return
		}
		h(w, r, s)
	}
}

func writeConsoleJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func (c *console) sessionInfo(w http.ResponseWriter, _ *http.Request, s *session) {
	writeConsoleJSON(w, http.StatusOK, map[string]any{"csrf": s.csrf, "bearer": s.bearer, "token": c.a.token != ""})
}

// timeline answers a job's samples for its charts, by the job's id (the
// page reads it from GET /v1/jobs/{name}: summary.id): the one thing of
// the console /v1 has no equivalent for.
func (c *console) timeline(w http.ResponseWriter, r *http.Request, _ *session) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil {
		c.refuse(w, r, http.StatusBadRequest, "a job id is a number")
		return
	}
	writeConsoleJSON(w, http.StatusOK, map[string]any{
		"timeline": c.tl.series(id), "span_ms": c.tl.span.Milliseconds(), "now_ms": time.Now().UnixMilli(),
	})
}
