package table

import (
	"math/rand/v2"
	"testing"
)

// lineEndParsers are csv parsers of every way a line may end: no enclose,
// the default '"' (RFC 4180), a Doris enclose with and without an escape,
// one- and several-byte separators.
func lineEndParsers(t testing.TB) []*Parser {
	t.Helper()
	s := testSchema(t)
	var out []*Parser
	for _, f := range []Format{
		{Kind: "csv"},
		{Kind: "csv", NoEnclose: true},
		{Kind: "csv", Escape: '\\'},
		{Kind: "csv", ColumnSeparator: "||"},
		{Kind: "csv", Enclose: '\'', Escape: '\\'},
		{Kind: "csv", Enclose: '"', ColumnSeparator: "||"},
		{Kind: "csv", Enclose: '"', TrimDoubleQuotes: true},
	} {
		p, err := NewParser(s, f)
		if err != nil {
			t.Fatalf("NewParser(%+v): %v", f, err)
		}
		out = append(out, p)
	}
	return out
}

// checkLineEnd asserts that the fast lineEnd finds the line ends the byte
// walk (scanLineEnd) finds, from every start.
func checkLineEnd(t *testing.T, ps []*Parser, raw []byte) {
	t.Helper()
	for k, p := range ps {
		for i := 0; i <= len(raw); i++ {
			if got, want := p.lineEnd(raw, i), p.scanLineEnd(raw, i); got != want {
				t.Fatalf("parser %d, %q from %d: lineEnd %d, scanLineEnd %d", k, raw, i, got, want)
			}
		}
	}
}

// TestLineEndDifferential compares lineEnd with scanLineEnd on random
// records built from the bytes that matter (separators, quotes, escapes,
// line breaks) and on the bench's shape of record.
func TestLineEndDifferential(t *testing.T) {
	ps := lineEndParsers(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	alphabet := []byte("ab,|'\"\\\n\r x")
	for range 5000 {
		raw := make([]byte, rng.IntN(40))
		for i := range raw {
			raw[i] = alphabet[rng.IntN(len(alphabet))]
		}
		checkLineEnd(t, ps, raw)
	}
	for _, raw := range []string{
		"",
		"\n",
		"1,bob,2.5,true,2024-03-01 12:30:45,padding padding\n",
		"1,\"a\nb\",2\n3,4\n",
		"1,x\"y\n2\n",
		"'a\\'\nb',c\nd",
		"1||\"a||\nb\"||2\n",
	} {
		checkLineEnd(t, ps, []byte(raw))
	}
}

func FuzzLineEnd(f *testing.F) {
	f.Add([]byte("1,\"a\nb\",2\r\n3,4\n"))
	f.Add([]byte("'a\\'\nb',c\nd"))
	ps := lineEndParsers(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkLineEnd(t, ps, raw)
	})
}
