package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

// The seed corpora live in testdata/fuzz/FuzzParseJSON and
// testdata/fuzz/FuzzParseCSV; `go test` runs them as ordinary tests, and
// `go test -fuzz FuzzParseJSON` explores from them.

// checkRoundTrip asserts that a parsed row survives AppendValue/DecodeValue.
func checkRoundTrip(t *testing.T, s *Schema, row []Value) {
	t.Helper()
	pos := Pos{JobID: 3, Partition: -1, Offset: 12345}
	b := AppendValue(nil, s, pos, row)
	got, gotPos, err := DecodeValue(s, b, nil)
	if err != nil {
		t.Fatalf("DecodeValue: %v", err)
	}
	if gotPos != pos || !equalRows(got, row) {
		t.Fatalf("round trip\n got %+v\nwant %+v", got, row)
	}
}

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(`{"id":1,"amount":2.5,"name":"bob","ok":true,"ts":"2024-03-01T12:30:45.123456Z","note":"hi"}`))
	s := testSchema(f)
	plain, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		f.Fatal(err)
	}
	paths, err := NewParser(s, Format{Kind: "json", JSONPaths: []string{"$.a.id", "$.a.b[1]", "$['name']", "$.ok", "$.t[0].v", "$"}})
	if err != nil {
		f.Fatal(err)
	}
	again, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		isObject := strings.HasPrefix(strings.TrimLeft(string(data), " \t\r\n"), "{")
		for _, p := range []*Parser{plain, paths} {
			row, err := p.Parse(data, nil)
			checkBorrowed(t, p, data, row, err)
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Parse error %v is not a *ParseError", err)
				}
				// A valid JSON object fails only on a column, on depth, or
				// because none of its keys names a column (an error row in
				// Doris too: "There is no column matching jsonpaths").
				if valid && isObject && pe.Column == "" && !strings.Contains(pe.Reason, "nesting deeper") && !strings.Contains(pe.Reason, "no key of the record matches") {
					t.Fatalf("Parse(%q) = %v, but encoding/json says it is valid", data, err)
				}
				continue
			}
			if !valid {
				t.Fatalf("Parse(%q) succeeded, but encoding/json says it is invalid", data)
			}
			checkRoundTrip(t, s, row)
			// The row rendered as JSON parses back to itself.
			out := rowJSON(t, s, row)
			back, err := again.Parse(out, nil)
			if err != nil {
				t.Fatalf("Parse(rowJSON) = %v for %s", err, out)
			}
			if !equalRows(back, row) {
				t.Fatalf("Parse(rowJSON(row)) != row\n got %+v\nwant %+v\njson %s", back, row, out)
			}
		}
	})
}

func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("1,2.5,bob,true,2024-03-01 12:30:45.123456,hi\n"))
	s := testSchema(f)
	comma, err := NewParser(s, Format{Kind: "csv"})
	if err != nil {
		f.Fatal(err)
	}
	multi, err := NewParser(s, Format{Kind: "csv", ColumnSeparator: "||"})
	if err != nil {
		f.Fatal(err)
	}
	// A record's lines: enclosed line breaks, escapes, trimmed quotes and a
	// header line.
	lines, err := NewParser(s, Format{Kind: "csv", Enclose: '"', Escape: '\\', TrimDoubleQuotes: true, SkipLines: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("h\n1,\"a\nb\",bob,true,2024-03-01,\"\\\"x\"\r\n\n2,3,\"c\",false,2024-03-02,y"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []*Parser{comma, multi, lines} {
			elems, err := p.Split(data, nil)
			if err != nil {
				t.Fatalf("Split: %v (a csv record splits into lines without error)", err)
			}
			if p != lines && bytes.Count(data, []byte("\n"))+1 < len(elems) {
				t.Fatalf("%d rows from %d lines", len(elems), bytes.Count(data, []byte("\n"))+1)
			}
			for _, el := range elems {
				if len(el.Raw) == 0 || !bytes.Contains(data, el.Raw) {
					t.Fatalf("element %q is empty or not in the record", el.Raw)
				}
				row, err := p.Parse(el.Raw, nil)
				checkBorrowed(t, p, el.Raw, row, err)
				if err != nil {
					var pe *ParseError
					if !errors.As(err, &pe) {
						t.Fatalf("Parse error %v is not a *ParseError", err)
					}
					continue
				}
				checkRoundTrip(t, s, row)
			}
		}
	})
}

// rowJSON renders a row of testSchema as one JSON object (encoding/json:
// NULL as null, TIMESTAMP as an RFC 3339 string in UTC).
func rowJSON(t *testing.T, s *Schema, row []Value) []byte {
	t.Helper()
	obj := make(map[string]any, len(row))
	for i, c := range s.Columns() {
		v := row[i]
		switch {
		case v.Null:
			obj[c.GetName()] = nil
		case c.GetType() == api.ColumnType_INT64:
			obj[c.GetName()] = v.Int
		case c.GetType() == api.ColumnType_FLOAT64:
			obj[c.GetName()] = v.Float
		case c.GetType() == api.ColumnType_STRING:
			obj[c.GetName()] = v.Str
		case c.GetType() == api.ColumnType_BOOL:
			obj[c.GetName()] = v.Bool
		case c.GetType() == api.ColumnType_TIMESTAMP:
			obj[c.GetName()] = time.UnixMicro(v.Int).UTC().Format(time.RFC3339Nano)
		default:
			t.Fatalf("rowJSON: column %s is %s", c.GetName(), c.GetType())
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("rowJSON(%+v): %v", row, err)
	}
	return out
}

// checkBorrowed checks that ParseBorrowed gives what Parse gave (row, err).
func checkBorrowed(t *testing.T, p *Parser, data []byte, row []Value, err error) {
	t.Helper()
	got, berr := p.ParseBorrowed(data, nil)
	if (err == nil) != (berr == nil) || err != nil && err.Error() != berr.Error() {
		t.Fatalf("ParseBorrowed(%q) err = %v, Parse err = %v", data, berr, err)
	}
	if err == nil && !equalRows(got, row) {
		t.Fatalf("ParseBorrowed(%q)\n got %+v\nwant %+v", data, got, row)
	}
}

// FuzzConvert: every type's conversion of any text either succeeds with a
// value that round-trips through the stored form, or says why.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"12", "-1.25", "1e3", "2023-07-20:05:48:31", "20230720", "{\"a\": [1]}", "TRUE", "我能", "99999999999999999999999999999999999999.5", "", "2022-04-01T01:02:55.123+06:00", "20220801America/Argentina/Buenos_Aires"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(9))
		f.Add(s, uint8(10))
	}
	types := []string{"tinyint", "smallint", "int", "bigint", "largeint", "float", "double", "decimal(38,10)", "decimal(9,1)",
		"date", "datetime(3)", "char(4)", "varchar(10)", "string", "json", "boolean", "timestamp"}
	f.Fuzz(func(t *testing.T, in string, ti uint8) {
		col, err := ParseType(types[int(ti)%len(types)])
		if err != nil {
			t.Fatal(err)
		}
		col.Name = "c"
		s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{col}})
		if err != nil {
			t.Fatal(err)
		}
		v, reason := convertText(col.Type, s.meta[0], []byte(in))
		if reason != "" && col.Type != api.ColumnType_DECIMAL {
			return
		}
		back, _, err := DecodeValue(s, AppendValue(nil, s, Pos{}, []Value{v}), nil)
		if err != nil || !equalRows(back, []Value{v}) {
			t.Fatalf("%s %q: %+v reads back as %+v, %v", col.Type, in, v, back, err)
		}
	})
}

// FuzzExpr: any text either fails to parse as an expression or evaluates
// without a panic, to a value no larger than the limit on a value, and
// allocates no more than a few values at the limit in all. The hostile
// seeds ask for huge widths and counts, nest replacements, and nest far
// deeper than MaxExprDepth.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{"a + 1", "CASE WHEN a > 1 THEN 'x' ELSE b END", "date_add(str_to_date(a, '%Y-%m-%d'), INTERVAL 1 MONTH)",
		"concat_ws('-', a, NULL, b)", "get_json_string(a, '$.x[0]')", "cast(a as decimal(10, 2)) * 3 DIV 2", "a LIKE '%_\\\\%' AND b NOT IN (1, NULL)"} {
		f.Add(s, "2024-01-31", `{"x": [1]}`)
	}
	const deep = 100_000
	for _, s := range []string{
		"lpad('a', 3000000000, 'x')", "rpad(a, b, a)", "lpad(a, 1e300, b)", "rpad(a, 1e308 * 10 - 1e308 * 10, 'x')",
		"replace(a, 'a', b)", "replace(replace(replace(replace(a, '', b), '', b), '', b), '', b)",
		"concat(a, a, a, a, a, a, a, a, concat(b, b, b, b, b, b, b, b))", "concat_ws(a, b, b, b, b, b, b, b, b)",
		"upper(lower(upper(a)))", "reverse(a)", "date_format('2024-01-01', a)", "from_unixtime(0, b)",
		"json_extract(a, '$')", "get_json_string(b, a)", "a LIKE b", "b LIKE concat('%', a, '%', a, '%')",
		"split_part(a, b, 1e19)", "left(a, 1e308 * 10 - 1e308 * 10)", "substr(a, b, 1e300)", "right(a, -1e19)",
		"repeat(a, 1e9)", "repeat(a, b)", "repeat(concat(a, b), 3000000000)", "space(1e19)", "space(b)", "concat(space(1e6), repeat(b, 1e6))",
		"locate(a, b, -1e19)", "instr(b, a)", "split_part(a, b, -1e19)", "split_part(b, 'a', -3)", "trim(a, b)", "ltrim(rtrim(a, 'ab'), b)",
		"concat_ws(a, [a, b, NULL], [b], NULL)", "reverse([a, b, a, b])", "reverse(reverse([a]))", "substring(a FROM 2 FOR 1e19)", "a || b",
		"starts_with(a, b) || ends_with(b, a) || ascii(a) > 0",
		strings.Repeat("(", deep) + "a" + strings.Repeat(")", deep), strings.Repeat("NOT ", deep) + "a",
		strings.Repeat("- ", deep) + "a", "a" + strings.Repeat(" + a", deep), strings.Repeat("upper(", deep) + "a" + strings.Repeat(")", deep),
	} {
		f.Add(s, strings.Repeat("ab%\xff", 4000), strings.Repeat("ba\u00e9", 4000))
	}
	for _, s := range []string{
		"date_add(a, INTERVAL b day_microsecond)", "date_sub(a, INTERVAL b year_month)", "year_ceil(a, b, a)",
		"week_floor(a, 2147483647)", "timestampdiff(MONTH, a, b)", "months_between(a, b, false)", "date_trunc(a, b)",
		"minutes_add(a, 1e300)", "date_ceil(a, INTERVAL b WEEK)", "years_add(a, 9223372036854775807)",
	} {
		f.Add(s, "2023-04-30 12:00:00.5-05:30", "-1 99999999999:1:1.1234567")
	}
	deepJSON := strings.Repeat(`[{"k": `, 400) + "1" + strings.Repeat("}]", 400)
	for _, s := range []string{
		"json_extract(a, '$[*].*', '$[*][*]', '$[last-1]', '$[-2]', '$.\"k.k\"')", "json_extract(a, b, b, b, b)",
		"json_array(a, b, a, b)", "to_base64(aes_encrypt(a, b))", "aes_decrypt(from_base64(a), b)",
		"round(a, b)", "truncate(b, a)", "ceil(a, -400) + floor(b, 400)", "greatest(a, b, 1)", "pow(a, b)",
	} {
		f.Add(s, deepJSON, `$[*]`+strings.Repeat(".*[*]", 200))
	}
	for _, s := range []string{"sec_to_time(a) + timediff(a, b)", "cast(a as time)", "extract(week from a)", "convert_tz(a, b, 'UTC')",
		"from_iso8601_date(a)", "unix_timestamp(a)", "week(a, b) + yearweek(a, b)", "makedate(a, b)", "next_day(a, b)", "time_to_sec(a)"} {
		f.Add(s, "2024-01-31 10:00:00.5 +08:00", "-838:59:59")
	}
	f.Add("lpad(a, b, 'x')", "", "3000000000")
	f.Add("rpad(a, b, '€')", "x", "20000")
	f.Add("replace(a, 'a', b)", strings.Repeat("a", 20000), strings.Repeat("b", 20000))
	f.Fuzz(func(t *testing.T, src, a, b string) {
		n, err := parseExpr(src, func(name string) (int, error) {
			switch strings.ToLower(name) {
			case "a":
				return 0, nil
			case "b":
				return 1, nil
			}
			return 0, errors.New("unknown")
		})
		if err != nil {
			return
		}
		if h := height(n); h > MaxExprDepth {
			t.Fatalf("parsed a tree %d levels deep", h)
		}
		const limit = 1 << 16
		env := &evalEnv{vals: []ev{evStr(a), evStr(b)}, loc: time.UTC, limit: limit}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v := n.eval(env)
		runtime.ReadMemStats(&after)
		if v.k == eStr && len(v.s) > limit {
			t.Fatalf("%s made a value of %d bytes, over the limit of %d", src, len(v.s), limit)
		}
		// The text made is at most madeFactor values of the limit, and
		// each call's scratch a few times its arguments' size.
		nodes := 0
		for stack := []node{n}; len(stack) > 0; {
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if k != nil {
				nodes++
				stack = append(stack, children(k)...)
			}
		}
		if grew, most := after.TotalAlloc-before.TotalAlloc, 32*uint64(limit+len(a)+len(b)+len(src))+uint64(nodes)*8192; grew > most {
			t.Fatalf("%s allocated %d bytes, over %d", src, grew, most)
		}
		_ = v.text()
	})
}
