package node

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startBareAdmin starts an admin endpoint without actors (/healthz,
// /metrics and /debug/pprof answer) with the given timeouts.
func startBareAdmin(t *testing.T, token string, to httpTimeouts) *admin {
	t.Helper()
	a := newAdmin(slog.New(slog.DiscardHandler), token, nil)
	a.timeouts = to
	if err := a.start("127.0.0.1:0", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.stop)
	return a
}

// TestAdminClosesIdleConnections (issue 25, D13): the admin endpoint closes
// a connection that sends nothing, one that stops in the middle of its
// headers, and a keep-alive connection left idle after a refused (or an
// answered) request, once its timeout passes. The timeout under test is
// short and the others long, so that only the idling is timed; the
// deadline within which the close must be seen is generous, so the test
// does not depend on timing.
func TestAdminClosesIdleConnections(t *testing.T) {
	const short, long = 100 * time.Millisecond, time.Minute
	const token = "admin-idle-0123456789abcdef"
	headers := startBareAdmin(t, token, httpTimeouts{readHeader: short, read: long, write: long, idle: long})
	idle := startBareAdmin(t, token, httpTimeouts{readHeader: long, read: long, write: long, idle: short})
	for _, tc := range []struct {
		name, send string
		a          *admin
		answered   int // the status read before idling; 0: none
	}{
		{"silent", "", headers, 0},
		{"half a header", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n", headers, 0},
		{"idle after a 401", "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", idle, http.StatusUnauthorized},
		{"idle after a 200", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", idle, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tc.a.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tc.send); err != nil {
				t.Fatal(err)
			}
			// A generous deadline: the server must close the connection
			// (EOF or a reset) well before it.
			if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			if tc.answered != 0 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.answered || resp.Close {
					t.Fatalf("answer %d (close %v), want %d on a kept-alive connection", resp.StatusCode, resp.Close, tc.answered)
				}
			}
			_, err = io.Copy(io.Discard, br)
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("the connection is still open after 30s; its timeout is %s", short)
			}
		})
	}
}

// TestAdminProfileOutlivesTimeouts (issue 25, D13): a CPU profile and a
// trace longer than every timeout of the endpoint complete, whole: the
// write deadline is extended by the profile's duration; seconds is
// bounded.
func TestAdminProfileOutlivesTimeouts(t *testing.T) {
	// The request's headers have a minute (only the answer is timed here);
	// the rest of the request and idling have 200ms, the answer 2s: a
	// profile of 3s outlives them all, and then has the 2s of the write
	// timeout to be written.
	a := startBareAdmin(t, "", httpTimeouts{
		readHeader: time.Minute, read: 200 * time.Millisecond,
		write: 2 * time.Second, idle: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	get := func(path string) (*http.Response, []byte, time.Duration) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+a.addr+path, nil)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("GET %s: the answer was cut after %s: %v", path, time.Since(start), err)
		}
		return resp, b, time.Since(start)
	}
	resp, b, took := get("/debug/pprof/profile?seconds=3")
	if resp.StatusCode != 200 || took < 3*time.Second {
		t.Fatalf("profile: %d after %s: %.200q", resp.StatusCode, took, b)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("profile is not gzip: %v", err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatalf("profile is cut: %v", err)
	}
	resp, b, took = get("/debug/pprof/trace?seconds=3")
	if resp.StatusCode != 200 || took < 3*time.Second || !strings.HasPrefix(string(b), "go 1.") {
		t.Fatalf("trace: %d after %s: %.40q", resp.StatusCode, took, b)
	}
	for _, path := range []string{"/debug/pprof/profile?seconds=3601", "/debug/pprof/trace?seconds=1e9", "/debug/pprof/heap?seconds=99999"} {
		if resp, b, _ := get(path); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "at most 3600") {
			t.Errorf("%s: %d %q, want 400 naming the limit", path, resp.StatusCode, b)
		}
	}
}

// TestAdminHostNames: the Host forms the admin endpoint answers, without
// a network (TestAdminRefusesForeignHost drives a node).
func TestAdminHostNames(t *testing.T) {
	h := newHostNames("node-1.example:9090", []string{"LB.example."})
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:80": true, "[::1]": true, "[::1]:9090": true, "::1": true, "10.0.0.7:9090": true,
		"[fe80::1%25eth0]:9090": true, "localhost": true, "LOCALHOST:1": true, "localhost.:1": true,
		"lb.example": true, "lb.example.:443": true, "Node-1.Example:9090": true, "node-1.example:1": true,
		"": false, ":9090": false, "evil.example": false, "localhost.evil.example": false, "127.0.0.1.nip.io": false,
		"example": false, "lb.example.evil": false, "x.lb.example": false, "[evil.example]": false,
	} {
		if got := h.allows(host); got != want {
			t.Errorf("allows(%q) = %v, want %v", host, got, want)
		}
	}
	if newHostNames("127.0.0.1:9090", nil).allows("127.0.0.1:9090") != true || len(newHostNames("[::1]:0", nil)) != 0 {
		t.Error("an IP address of http is not a name")
	}
}
