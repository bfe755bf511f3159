package api

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("7", 10<<20)
	for _, tc := range []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 10, "abc"},
		{"exact", "abcd", 4, "abcd"},
		{"invalid utf-8 kept short", "a\xffb", 10, "a\uFFFDb"},
		{"tiny bound", "abcdef", 3, "abc"},
		{"tiny bound rune", "aé", 2, "a"},
	} {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("%s: Clip(%q, %d) = %q, want %q", tc.name, tc.in, tc.n, got, tc.want)
		}
	}
	for _, n := range []int{MaxReasonBytes, MaxMessageBytes, MaxEchoBytes, 40} {
		for _, in := range []string{long, strings.Repeat("é", 5000), strings.Repeat("\xff", 5000), strings.Repeat("日本", 3000)} {
			got := Clip(in, n)
			if len(got) > n {
				t.Errorf("Clip(%d bytes, %d) is %d bytes", len(in), n, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clip(%d bytes, %d) is not valid UTF-8: %q", len(in), n, got)
			}
			if !strings.Contains(got, " bytes]") {
				t.Errorf("Clip(%d bytes, %d) = %q has no marker", len(in), n, got)
			}
		}
	}
	if got, want := Clip("0123456789abcdefghijklmnopqrstuvwxyz0123456789", 40), "01234567…[+38 bytes]"; got != want {
		t.Errorf("marker: %q, want %q", got, want)
	}
}

func FuzzClip(f *testing.F) {
	f.Add("hello", 8)
	f.Add(strings.Repeat("é", 100), 41)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Clip(s, n)
		if len(got) > n && len(s) > n {
			t.Fatalf("Clip(%q, %d) = %q: %d bytes", s, n, got, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q: invalid UTF-8", s, n, got)
		}
		if utf8.ValidString(s) && len(s) <= n && got != s {
			t.Fatalf("Clip(%q, %d) = %q changed a short string", s, n, got)
		}
	})
}
