package table

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// generalKeys turns off object's fast path for the keys of n and below:
// every key is then scanned and looked up (the general path).
func generalKeys(n *jnode) {
	if n == nil {
		return
	}
	for i := range n.plain {
		n.plain[i] = false
	}
	for _, k := range n.kids {
		generalKeys(k)
	}
	for _, k := range n.elems {
		generalKeys(k)
	}
}

// keyParserPairs returns, for several json formats, a parser with the
// fast path and the same parser without it.
func keyParserPairs(t testing.TB) [][2]*Parser {
	t.Helper()
	s := testSchema(t)
	var out [][2]*Parser
	for _, f := range []Format{
		{Kind: "json"},
		{Kind: "json", NonStrict: true},
		{Kind: "json", JSONRoot: "$.data"},
		{Kind: "json", JSONPaths: []string{"$.id", "$.a.b", `$['na"me']`, "$.ok", "$.a.ts", "$.note"}},
		{Kind: "json", StripOuterArray: true},
	} {
		var pair [2]*Parser
		for k := range pair {
			p, err := NewParser(s, f)
			if err != nil {
				t.Fatalf("NewParser(%+v): %v", f, err)
			}
			pair[k] = p
		}
		generalKeys(pair[1].root)
		out = append(out, pair)
	}
	return out
}

// checkKeys asserts that both parsers of each pair give the same rows and
// the same errors for raw (every element of it, with strip_outer_array).
func checkKeys(t *testing.T, pairs [][2]*Parser, raw []byte) {
	t.Helper()
	for k, pair := range pairs {
		fast, general := pair[0], pair[1]
		elems, err := fast.Split(raw, nil)
		elems2, err2 := general.Split(raw, nil)
		if errString(err) != errString(err2) || len(elems) != len(elems2) {
			t.Fatalf("pair %d, %q: Split %v (%d elements), general %v (%d)", k, raw, err, len(elems), err2, len(elems2))
		}
		for _, el := range elems {
			if el.Err != nil {
				continue
			}
			row, err := fast.Parse(el.Raw, nil)
			row2, err2 := general.Parse(el.Raw, nil)
			if errString(err) != errString(err2) {
				t.Fatalf("pair %d, %q: error %q, general %q", k, el.Raw, errString(err), errString(err2))
			}
			if err == nil && !equalRows(row, row2) {
				t.Fatalf("pair %d, %q: row %+v, general %+v", k, el.Raw, row, row2)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// randomRecord writes a JSON-ish record: mostly valid objects whose keys
// are the columns' (in order, out of order, escaped, repeated, nested),
// sometimes cut short or with a stray byte.
func randomRecord(rng *rand.Rand, depth int) string {
	keys := []string{"id", "amount", "name", "ok", "ts", "note", `i\u0064`, `na\"me`, "a", "b", "data", "x", "id2", "nam"}
	var b strings.Builder
	b.WriteByte('{')
	n := rng.IntN(8)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		key := keys[rng.IntN(len(keys))]
		if rng.IntN(2) == 0 && i < 6 {
			key = keys[i] // column order, the fast path's case
		}
		b.WriteString(`"` + key + `":`)
		switch v := rng.IntN(9); {
		case v == 0 && depth < 3:
			b.WriteString(randomRecord(rng, depth+1))
		case v == 1:
			b.WriteString(strconv.Itoa(rng.IntN(2000) - 1000))
		case v == 2:
			b.WriteString(strconv.FormatFloat(rng.Float64()*100, 'f', 2, 64))
		case v == 3:
			b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
		case v == 4:
			b.WriteString(`"2024-03-01T12:30:45Z"`)
		case v == 5:
			b.WriteString(`[1,"a",{"b":2}]`)
		default:
			b.WriteString(`"` + keys[rng.IntN(len(keys))] + `"`)
		}
	}
	b.WriteByte('}')
	s := b.String()
	switch rng.IntN(10) {
	case 0:
		s = s[:rng.IntN(len(s)+1)]
	case 1:
		i := rng.IntN(len(s) + 1)
		s = s[:i] + string(`"\:,{ `[rng.IntN(6)]) + s[i:]
	}
	return s
}

// TestJSONKeysDifferential compares object's fast path for keys in column
// order with the general scan and lookup on random records.
func TestJSONKeysDifferential(t *testing.T) {
	pairs := keyParserPairs(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range 20000 {
		rec := randomRecord(rng, 0)
		if rng.IntN(4) == 0 {
			rec = "[" + rec + "," + randomRecord(rng, 0) + "]"
		}
		checkKeys(t, pairs, []byte(rec))
	}
	for _, rec := range []string{
		`{"id":1,"amount":2.5,"name":"bob","ok":true,"ts":"2024-03-01T12:30:45Z","note":"hi"}`,
		`{"id":1,"id":2}`,
		`{"i\u0064":1,"id":2}`,
		`{"id"`,
		`{"id`,
		`{"na\"me":"x","a":{"b":1,"ts":"2024-03-01T12:30:45Z"}}`,
		`{"data":{"id":3,"name":"x"}}`,
	} {
		checkKeys(t, pairs, []byte(rec))
	}
}

func FuzzJSONKeys(f *testing.F) {
	f.Add([]byte(`{"id":1,"amount":2.5,"name":"bob","ok":true,"ts":"2024-03-01T12:30:45Z","note":"hi"}`))
	f.Add([]byte(`{"i\u0064":1,"id":2,"data":{"name":"x"}}`))
	pairs := keyParserPairs(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkKeys(t, pairs, raw)
	})
}
