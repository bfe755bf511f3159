package table

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestExprDepth: an expression nesting deeper than MaxExprDepth is refused
// with an error naming the limit, whatever makes it deep, and one at the
// limit is accepted. The deep shapes are 100,000 levels: each parsed
// recursively without a bound, and each evaluated recursively.
func TestExprDepth(t *testing.T) {
	const n = 100_000
	resolve := func(string) (int, error) { return 0, nil }
	deep := map[string]string{
		"parentheses":    strings.Repeat("(", n) + "a" + strings.Repeat(")", n),
		"NOT":            strings.Repeat("NOT ", n) + "a",
		"unary minus":    strings.Repeat("- ", n) + "a",
		"unary plus":     strings.Repeat("+ ", n) + "a",
		"function calls": strings.Repeat("abs(", n) + "a" + strings.Repeat(")", n),
		"CASE":           strings.Repeat("CASE WHEN a THEN ", n) + "a" + strings.Repeat(" END", n),
		"+ chain":        "a" + strings.Repeat(" + a", n),
		"AND chain":      "a" + strings.Repeat(" AND a", n),
		"OR chain":       "a" + strings.Repeat(" OR a", n),
		"mixed":          strings.Repeat("(a * ", n) + "a" + strings.Repeat(")", n),
	}
	for name, src := range deep {
		t.Run(name, func(t *testing.T) {
			_, err := parseExpr(src, resolve)
			if err == nil || err.Error() != "expression nests deeper than 3000 levels" {
				t.Fatalf("parseExpr(%d levels) = %v, want the depth limit", n, err)
			}
		})
	}
	// At the limit, and one level over it: MaxExprDepth-1 parentheses (the
	// whole expression is a level), a chain of MaxExprDepth-1 operators,
	// MaxExprDepth-1 NOTs.
	parens := strings.Repeat("(", MaxExprDepth-1) + "a" + strings.Repeat(")", MaxExprDepth-1)
	chain := "a" + strings.Repeat(" + a", MaxExprDepth-1)
	nots := strings.Repeat("NOT ", MaxExprDepth-1) + "a"
	for _, tt := range []struct{ at, over string }{
		{parens, "(" + parens + ")"},
		{chain, chain + " + a"},
		{nots, "NOT " + nots},
		{nots, nots + " + a"},
	} {
		if _, err := parseExpr(tt.at, resolve); err != nil {
			t.Errorf("parseExpr(%.20s... at the limit) = %v", tt.at, err)
		}
		if _, err := parseExpr(tt.over, resolve); err != errTooDeep {
			t.Errorf("parseExpr(%.20s... over the limit) = %v, want %v", tt.over, err, errTooDeep)
		}
	}
	// A job spec's mapping and filter name the field.
	s := typedSchema(t, "id int", "v string")
	for _, f := range []Format{
		{Columns: []string{"id", "v = " + deep["parentheses"]}},
		{Columns: []string{"id", "v"}, Where: deep["NOT"]},
	} {
		_, err := NewParser(s, f)
		var fe *FieldError
		if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "nests deeper than 3000 levels") {
			t.Errorf("NewParser = %v, want a FieldError naming the depth limit", err)
		}
	}
}

// evalLimited parses src over a and b and evaluates it with a limit on a
// value.
func evalLimited(t testing.TB, src string, limit int, a, b string) (ev, *LimitError) {
	t.Helper()
	n, err := parseExpr(src, func(name string) (int, error) {
		switch strings.ToLower(name) {
		case "a":
			return 0, nil
		case "b":
			return 1, nil
		}
		return 0, fmt.Errorf("unknown field %q", name)
	})
	if err != nil {
		t.Fatalf("parseExpr(%q): %v", src, err)
	}
	env := &evalEnv{vals: []ev{evStr(a), evStr(b)}, loc: time.UTC, limit: limit}
	v := n.eval(env)
	var le *LimitError
	if env.over != nil && !errors.As(env.over, &le) {
		t.Fatalf("%s: %v, not a limit error", src, env.over)
	}
	return v, le
}

// TestExprValueLimit: a function whose result would be larger than the
// limit on a value makes NULL and records which function and how large,
// without making the value: a 23-byte record asking LPAD for 3e9
// characters, or REPLACE of 200,000 characters each by 200,000 (40 GB),
// allocates next to nothing.
func TestExprValueLimit(t *testing.T) {
	aaa := strings.Repeat("a", 200_000)
	bbb := strings.Repeat("b", 200_000)
	nested := "a"
	for range 40 {
		nested = "replace(" + nested + ", 'a', 'aa')"
	}
	wide := "concat(a" + strings.Repeat(", a", 99) + ")"
	bad := strings.Repeat("\xff", 400) // each byte becomes the 3 bytes of U+FFFD
	tests := []struct {
		src     string
		limit   int // 0: DefaultMaxValueBytes
		a, b    string
		fn      string
		size    int64
		atLeast bool
	}{
		{"lpad('a', 3000000000, 'x')", 0, "", "", "LPAD", 3_000_000_000, true},
		{"rpad(a, 3e9, 'xy')", 0, "a", "", "RPAD", 3_000_000_000, true},
		{"lpad(a, 1e300, 'x')", 0, "a", "", "LPAD", 1 << 62, true},
		{"rpad(a, 50000000, b)", 0, "a", "x", "RPAD", 50_000_000, true},
		{"lpad('a', 1000, '€')", 2000, "", "", "LPAD", 1 + 999*3, false},
		{"replace(a, 'a', b)", 0, aaa, bbb, "REPLACE", 200_000 * 200_000, false},
		{"repeat('x', 1e9)", 0, "", "", "REPEAT", 1_000_000_000, false},
		{"repeat(a, 3000000000)", 0, "ab", "", "REPEAT", 6_000_000_000, false},
		{"repeat(a, 1e300)", 0, "ab", "", "REPEAT", 1 << 62, true},
		{"repeat(a, 9)", 1000, "é" + bad[:110], "", "REPEAT", 9 * 112, false},
		{"space(1e9)", 0, "", "", "SPACE", 1_000_000_000, false},
		{"space(b)", 0, "", "5e9", "SPACE", 5e9, false},
		{"space(1e300)", 0, "", "", "SPACE", 1 << 62, true},
		{"concat_ws(',', [a, a], [a])", 500_000, aaa, "", "CONCAT_WS", 600_002, false},
		{"reverse([a, a, a])", 500_000, aaa, "", "ARRAY", 3*200_002 + 4 + 2, false},
		{nested, 0, strings.Repeat("a", 1000), "", "REPLACE", 1000 << 15, false},
		{wide, 0, aaa, "", "CONCAT", 100 * 200_000, false},
		{"concat(" + wide + ", " + wide + ")", 10_000_000, aaa, "", "CONCAT", 100 * 200_000, false},
		{"concat_ws(b, a, a, a)", 500_000, aaa, ",", "CONCAT_WS", 600_002, false},
		{"upper(a)", 1000, bad, "", "UPPER", 1200, false},
		{"lower(a)", 1000, bad, "", "LOWER", 1200, false},
		{"reverse(a)", 1000, bad, "", "REVERSE", 1200, false},
		{"left(a, 400)", 1000, bad, "", "LEFT", 1200, false},
		{"substr(a, 1)", 1000, bad, "", "SUBSTR", 1200, false},
		{"json_extract(a, '$', '$', '$')", 1000, `"` + strings.Repeat("<", 400) + `"`, "", "JSON_EXTRACT", 3*402 + 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.src[:min(len(tt.src), 40)], func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			v, over := evalLimited(t, tt.src, tt.limit, tt.a, tt.b)
			runtime.ReadMemStats(&after)
			if v.k != eNull {
				t.Errorf("value of %d bytes, want NULL", len(v.s))
			}
			if over == nil {
				t.Fatalf("no limit error")
			}
			limit := tt.limit
			if limit == 0 {
				limit = DefaultMaxValueBytes
			}
			want := &LimitError{Func: tt.fn, Size: tt.size, AtLeast: tt.atLeast, Limit: limit}
			if *over != *want {
				t.Errorf("limit error %+v, want %+v", *over, *want)
			}
			// Nothing near the value's size was allocated: the inputs,
			// and at most a few values at the limit.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(6*limit+len(tt.a)*8+1<<20) {
				t.Errorf("allocated %d bytes", grew)
			}
		})
	}
	_, over := evalLimited(t, "lpad('a', 3000000000, 'x')", 0, "", "")
	if got, want := over.Error(), "LPAD would make a value of at least 3000000000 bytes, over the limit of 16777216 bytes per value (max_record_size)"; got != want {
		t.Errorf("message %q\nwant    %q", got, want)
	}
	// At the limit, a value is made.
	for _, tt := range []struct{ src, a, b string }{
		{"lpad('a', 1000, 'x')", "", ""},
		{"replace(a, 'a', 'bb')", strings.Repeat("a", 500), ""},
		{"concat(a, a)", strings.Repeat("a", 500), ""},
		{"upper(a)", strings.Repeat("\xff", 333), ""},
		{"rpad(a, 333, '€')", "a", ""},
	} {
		if v, over := evalLimited(t, tt.src, 1000, tt.a, tt.b); over != nil || v.k != eStr || len(v.s) > 1000 || len(v.s) < 990 {
			t.Errorf("%s: %d bytes, %v; want a value of up to 1000 bytes", tt.src, len(v.s), over)
		}
	}
}

// TestExprHostileNumbers: counts and positions that are NaN, infinite or
// beyond an int neither panic nor run long.
func TestExprHostileNumbers(t *testing.T) {
	nan := "(1e308 * 10 - 1e308 * 10)"
	for _, src := range []string{
		"left('abc', " + nan + ")", "right('abc', " + nan + ")", "substr('abc', 1, 1e300)", "substr('abc', " + nan + ", 1)",
		"substr('abc', -1e300)", "split_part('a,b', ',', 1e19)", "split_part('a,b', ',', " + nan + ")",
		"lpad('abc', " + nan + ", 'x')", "rpad('abc', -1e300, 'x')", "left('abc', -1e19)", "right('abc', 1e19)",
		"split_part('a,b', ',', -1e19)", "repeat('abc', -1e300)", "repeat('abc', " + nan + ")", "space(-1e19)", "space(" + nan + ")",
		"locate('a', 'abc', 1e19)", "locate('a', 'abc', -1e19)", "locate('a', 'abc', " + nan + ")",
	} {
		v, over := evalLimited(t, src, 0, "", "")
		if over != nil || len(v.s) > 3 {
			t.Errorf("%s = %q, %v", src, v.s, over)
		}
	}
}

// TestMappingValueLimit: a record whose expression would make a value over
// the limit is an error row naming the column, the function and the
// limit, and the parser goes on with the next record.
func TestMappingValueLimit(t *testing.T) {
	s := typedSchema(t, "id int", "v string")
	p, err := NewParser(s, Format{Kind: "json", NonStrict: true, Columns: []string{"id", "n", "v = lpad('a', n, 'x')"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse([]byte(`{"id":1,"n":3000000000}`), nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Column != "v" ||
		pe.Reason != "column v: v = ...: LPAD would make a value of at least 3000000000 bytes, over the limit of 16777216 bytes per value (max_record_size)" {
		t.Fatalf("Parse = %v, want an error row naming v, LPAD and the limit", err)
	}
	row, err := p.Parse([]byte(`{"id":2,"n":3}`), nil)
	if err != nil || render(s, row) != "2|xxa" {
		t.Fatalf("next record: %v, %v", row, err)
	}
	// The limit is the format's; a where or delete_on over it is an error
	// row too, not a filtered one.
	_, err = NewParser(s, Format{Kind: "json", MaxValueBytes: 100, Columns: []string{"id", "v"}, Where: "length(repeat_me) > 0"})
	if err == nil {
		t.Fatal("unknown field accepted")
	}
	p, err = NewParser(s, Format{Kind: "json", MaxValueBytes: 100, Columns: []string{"id", "v"}, Where: "length(concat(v, v)) > 0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]byte(`{"id":1,"v":"`+strings.Repeat("z", 60)+`"}`), nil); err == nil || err.Error() != "where: CONCAT would make a value of 120 bytes, over the limit of 100 bytes per value (max_record_size)" {
		t.Fatalf("where over the limit: %v", err)
	}
	if _, err := p.Parse([]byte(`{"id":1,"v":"`+strings.Repeat("z", 50)+`"}`), nil); err != nil {
		t.Fatalf("where at the limit: %v", err)
	}
	// __key_hex is twice the key.
	p, err = NewParser(s, Format{Kind: "json", MaxValueBytes: 100, Columns: []string{"id", "v = __key_hex"}})
	if err != nil {
		t.Fatal(err)
	}
	p.SetMeta(&RecordMeta{Key: make([]byte, 51)})
	if _, err := p.Parse([]byte(`{"id":1}`), nil); err == nil || err.Error() != "__key_hex would make a value of 102 bytes, over the limit of 100 bytes per value (max_record_size)" {
		t.Fatalf("__key_hex over the limit: %v", err)
	}
	p.SetMeta(&RecordMeta{Key: make([]byte, 50)})
	if _, err := p.Parse([]byte(`{"id":1}`), nil); err != nil {
		t.Fatalf("__key_hex at the limit: %v", err)
	}
	if _, err := NewParser(s, Format{MaxValueBytes: -1}); err == nil {
		t.Error("a negative MaxValueBytes is accepted")
	}
}

// TestJSONPathWalks: the JSON functions find a value without decoding the
// whole document, so that one large record costs no more than its bytes.
func TestJSONPathWalks(t *testing.T) {
	doc := `{"pad": [` + strings.Repeat(`{"k": 0},`, 1<<20) + `0], "id": 7}` // 9 MiB
	for _, tt := range []struct{ src, want string }{
		{"get_json_int(a, '$.id')", "7"},
		{"json_extract(a, '$.pad[1048576]')", "0"},
		{"get_json_string(a, '$.pad[3].k')", "0"},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, over := evalLimited(t, tt.src, 0, doc, "")
		runtime.ReadMemStats(&after)
		if v.text() != tt.want || over != nil {
			t.Errorf("%s = %q, %v; want %s", tt.src, v.text(), over, tt.want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s allocated %d bytes for a %d-byte document", tt.src, grew, len(doc))
		}
	}
}

// TestJSONPathDepth: a jsonpath or json_root of more steps than a record
// may nest is refused naming the limit (a path is compiled into a tree
// one level per step).
func TestJSONPathDepth(t *testing.T) {
	s := typedSchema(t, "id int", "v string")
	deep := "$" + strings.Repeat(".a", 100_000)
	at := "$" + strings.Repeat(".a", maxJSONDepth)
	for _, tt := range []struct {
		f     Format
		field string
	}{
		{Format{Kind: "json", JSONPaths: []string{"$.id", deep}}, "jsonpaths[1]"},
		{Format{Kind: "json", JSONPaths: []string{"$.id", "$.a" + strings.Repeat("[0]", 100_000)}}, "jsonpaths[1]"},
		{Format{Kind: "json", JSONRoot: deep}, "json_root"},
	} {
		_, err := NewParser(s, tt.f)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Msg, "nests deeper than 1000 levels") || len(fe.Msg) > 1000 {
			t.Errorf("NewParser = %.200v, want %s naming the depth limit", err, tt.field)
		}
	}
	if _, err := NewParser(s, Format{Kind: "json", JSONPaths: []string{"$.id", at}}); err != nil {
		t.Errorf("a path of %d steps: %v", maxJSONDepth, err)
	}
}

// TestExprTextMadeBounded: the text one record's expressions make
// together is at most madeFactor times the limit, so that 200 values at
// the limit are not held at once; results that are an argument, or a
// part of one, count nothing.
func TestExprTextMadeBounded(t *testing.T) {
	wide := "concat(lpad('a', 1000, 'x')" + strings.Repeat(", lpad('a', 1000, 'x')", 199) + ")"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	v, over := evalLimited(t, wide, 1000, "", "")
	runtime.ReadMemStats(&after)
	want := LimitError{Func: "LPAD", Size: 5000, Total: true, Limit: 1000}
	if v.k != eNull || over == nil || *over != want {
		t.Fatalf("got %v, %+v; want NULL, %+v", v.k, over, want)
	}
	if got := over.Error(); got != "LPAD would bring the text this record's expressions make to 5000 bytes, over 4 times the limit of 1000 bytes per value (max_record_size)" {
		t.Errorf("message %q", got)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("allocated %d bytes", grew)
	}
	a := strings.Repeat("é", 500) // 1000 bytes
	for _, src := range []string{
		"ifnull(ifnull(ifnull(ifnull(ifnull(ifnull(a, b), b), b), b), b), b)",
		"coalesce(if(a = b, b, a), a, a)",
		"concat(ifnull(ifnull(ifnull(ifnull(a, b), b), b), b), '')",
		// Four values of 1000 bytes made: at the bound, as the parts
		// (substrings of a) count nothing.
		"length(concat(substr(a, 1), '')) + length(concat(trim(a), '')) + length(concat(left(a, 500), '')) + length(concat(right(a, 500), ''))",
		"nullif(a, b)",
	} {
		if v, over := evalLimited(t, src, 1000, a, "x"); over != nil || v.k == eNull {
			t.Errorf("%s: %v, %v", src, v.k, over)
		}
	}
}
