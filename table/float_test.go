package table

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// checkFloat fails t unless parseFloat(s) is strconv.ParseFloat's answer,
// bit for bit (the sign of zero included), and says whether the fast path
// took s.
func checkFloat(t *testing.T, s string) bool {
	t.Helper()
	f, e := parseFloat([]byte(s))
	want, err := strconv.ParseFloat(s, 64)
	ok := err == nil && !math.IsInf(want, 0) && !math.IsNaN(want)
	if ok != (e == numOK) {
		t.Fatalf("parseFloat(%q): ok %v, strconv ok %v (%v)", s, e == numOK, ok, err)
	}
	if ok && math.Float64bits(f) != math.Float64bits(want) {
		t.Fatalf("parseFloat(%q) = %v (%#x), strconv %v (%#x)", s, f, math.Float64bits(f), want, math.Float64bits(want))
	}
	_, fast := parseSimpleFloat([]byte(s))
	return fast
}

// TestParseFloatFastPath: the fast path answers as strconv does for the
// decimals it takes and leaves every other input to strconv.
func TestParseFloatFastPath(t *testing.T) {
	takes := []string{"0", "-0", "0.0", "-0.0", "1", "-1", "1.5", "007.50", "123.45", "0.1", "0.3",
		"999999999999999", "99999999999999.9", "0.000000000000001", "0.0000000000000000000001", "000000000000000000000012.5", "-4999.99", "2.675", "1.0000000000001"}
	for _, s := range takes {
		if !checkFloat(t, s) {
			t.Errorf("%q: the fast path did not take it", s)
		}
	}
	leaves := []string{"", "-", ".", "1.", ".5", "-.5", "+1.5", "1e3", "1E-2", "1.5e10", "0x1p-2", "inf", "NaN",
		"1_000", "1..2", "1.2.3", "--1", "1-", " 1", "1 ", "9999999999999999", "0.00000000000000000000001", "1000000000000000",
		"1234567890.1234567", "1e400", "-1e400", "Infinity"}
	for _, s := range leaves {
		if checkFloat(t, s) {
			t.Errorf("%q: the fast path took it", s)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteByte('-')
		}
		n := 1 + rng.IntN(15)
		dot := rng.IntN(n + 1)
		for i := range n {
			if i == dot && i > 0 {
				b.WriteByte('.')
			}
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		if !checkFloat(t, b.String()) {
			t.Fatalf("%q: the fast path did not take it", b.String())
		}
	}
}

// FuzzParseFloat: parseFloat is strconv.ParseFloat (finite values) for
// any input.
func FuzzParseFloat(f *testing.F) {
	for _, s := range []string{"0", "-0.0", "123.45", "1e5", "1.", ".5", "999999999999999", "9999999999999999.9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkFloat(t, s)
	})
}

// BenchmarkParseFloat: a json or csv amount column's value.
func BenchmarkParseFloat(b *testing.B) {
	in := []byte("4321.07")
	for b.Loop() {
		if _, e := parseFloat(in); e != numOK {
			b.Fatal(e)
		}
	}
}
