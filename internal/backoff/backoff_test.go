package backoff

import (
	"math"
	"testing"
	"time"
)

// TestDoubling: the back-off doubles from its base and stops at its cap,
// whatever the count.
func TestDoubling(t *testing.T) {
	const base, limit = 10 * time.Second, 300 * time.Second
	for n, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second,
		80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second, 300 * time.Second} {
		if got := Doubling(base, n, limit); got != want {
			t.Errorf("Doubling(%s, %d, %s) = %s, want %s", base, n, limit, got, want)
		}
	}
	if got := Doubling(base, 62, limit); got != limit {
		t.Errorf("Doubling(%s, 62, %s) = %s, want the cap", base, limit, got)
	}
	if got := Doubling(time.Second, 1000, math.MaxInt64); got <= 0 {
		t.Errorf("Doubling to the largest cap overflowed: %s", got)
	}
	if got := Doubling(base, -1, limit); got != base {
		t.Errorf("Doubling(n=-1) = %s", got)
	}
}
