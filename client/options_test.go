package client

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

func TestOptions(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name        string
		opts        []Option
		wantTimeout time.Duration
		wantErr     string
	}{
		{name: "defaults", wantTimeout: 10 * time.Second},
		{name: "timeout", opts: []Option{WithTimeout(250 * time.Millisecond)}, wantTimeout: 250 * time.Millisecond},
		{name: "last wins", opts: []Option{WithTimeout(time.Second), WithTimeout(2 * time.Second)}, wantTimeout: 2 * time.Second},
		{name: "nil option ignored", opts: []Option{nil, WithLogger(logger)}, wantTimeout: DefaultTimeout},
		{name: "zero timeout", opts: []Option{WithTimeout(0)}, wantErr: "client: timeout 0s must be > 0"},
		{name: "negative timeout", opts: []Option{WithTimeout(-time.Second)}, wantErr: "must be > 0"},
		{name: "nil logger", opts: []Option{WithLogger(nil)}, wantErr: "client: logger must not be nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := buildOptions(tc.opts)
			err := o.validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.timeout != tc.wantTimeout {
				t.Errorf("timeout %s, want %s", o.timeout, tc.wantTimeout)
			}
			if o.logger == nil {
				t.Error("nil logger")
			}
		})
	}
}

func TestListenHost(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5}, "127.0.0.1"},
		{&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5}, "10.1.2.3"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 5}, "[::1]"},
		{&net.TCPAddr{}, "127.0.0.1"},
		{&net.UnixAddr{Name: "x"}, "127.0.0.1"},
	} {
		if got := listenHost(tc.addr); got != tc.want {
			t.Errorf("listenHost(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func TestTokenOption(t *testing.T) {
	if err := buildOptions([]Option{WithToken("has space")}).validate(); err == nil || strings.Contains(err.Error(), "has space") {
		t.Fatalf("got %v", err)
	}
	if err := buildOptions([]Option{WithToken("fine-token"), WithTLS(nil)}).validate(); err != nil {
		t.Fatal(err)
	}
}
