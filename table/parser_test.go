package table

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

func vI(n int64) Value   { return Value{Int: n} }
func vF(f float64) Value { return Value{Float: f} }
func vS(s string) Value  { return Value{Str: s} }
func vB(b bool) Value    { return Value{Bool: b} }
func vT(s string) Value {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return Value{Int: t.UnixMicro()}
}

var vN = Value{Null: true}

func equalRows(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Null != y.Null || x.Int != y.Int || x.Hi != y.Hi || math.Float64bits(x.Float) != math.Float64bits(y.Float) || x.Str != y.Str || x.Bool != y.Bool {
			return false
		}
	}
	return true
}

func TestNewParserErrors(t *testing.T) {
	s := testSchema(t)
	tests := []struct {
		name  string
		f     Format
		field string
	}{
		{"unknown format", Format{Kind: "xml"}, "format"},
		{"jsonpaths with csv", Format{Kind: "csv", JSONPaths: []string{"$.a"}}, "jsonpaths"},
		{"quote separator", Format{Kind: "csv", ColumnSeparator: `"`}, "column_separator"},
		{"newline separator", Format{Kind: "csv", ColumnSeparator: "a\nb"}, "column_separator"},
		{"bad hex separator", Format{Kind: "csv", ColumnSeparator: `\xZZ`}, "column_separator"},
		{"short hex separator", Format{Kind: "csv", ColumnSeparator: `\x1`}, "column_separator"},
		{"bad path past the last field", Format{Kind: "json", JSONPaths: []string{"$.a", "$.b", "$.c", "$.d", "$.e", "$.f", "g"}}, "jsonpaths[6]"},
		{"bad path", Format{Kind: "json", JSONPaths: []string{"$.a", "a", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"empty key", Format{Kind: "json", JSONPaths: []string{"$.a", "$..b", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"bad index", Format{Kind: "json", JSONPaths: []string{"$.a", "$.b[x]", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"root index", Format{Kind: "json", JSONPaths: []string{"$.a", "$[0]", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"unclosed", Format{Kind: "json", JSONPaths: []string{"$.a", "$.b[0", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"wildcard", Format{Kind: "json", JSONPaths: []string{"$.a", "$.*", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[1]"},
		{"root for non-string", Format{Kind: "json", JSONPaths: []string{"$", "$.b", "$.c", "$.d", "$.e", "$.f"}}, "jsonpaths[0]"},
		{"bad doris array", Format{Kind: "json", JSONPaths: []string{`["$.a",`}}, "jsonpaths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewParser(s, tt.f)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Fatalf("NewParser err = %v, want a *FieldError on %q", err, tt.field)
			}
		})
	}
	for _, f := range []Format{{}, {Kind: "CSV"}, {Kind: "json", ColumnSeparator: "|"}, {Kind: "Json"},
		{Kind: "json", JSONPaths: []string{`["$.a","$.b[0]","$['c.d']","$[\"e\"]","$.e","$"]`}}} {
		if _, err := NewParser(s, f); err != nil {
			t.Errorf("NewParser(%+v) = %v", f, err)
		}
	}
}

func TestParseSeparator(t *testing.T) {
	tests := map[string]string{"": ",", "|": "|", "\t": "\t", `\t`: "\t", `\x01`: "\x01", `||`: "||", `\\`: `\`, `a\`: `a\`, `\x2c\x2C`: ",,"}
	for in, want := range tests {
		got, err := parseSeparator(in)
		if err != nil || string(got) != want {
			t.Errorf("parseSeparator(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

type parseCase struct {
	name string
	in   string
	want []Value
	err  string // substring of the error; "" means success
}

func runParseCases(t *testing.T, p *Parser, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// dst holds garbage from an earlier row: Parse must overwrite it.
			dst := []Value{{Str: "junk", Int: 9}, {Null: true}, {Bool: true}, {Float: 1}, {Int: 3}, {Str: "x"}}
			got, err := p.Parse([]byte(tc.in), dst)
			if tc.err != "" {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Parse(%q) err = %v, want *ParseError containing %q", tc.in, err, tc.err)
				}
				if !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) err = %q, want it to contain %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.in, err)
			}
			if !equalRows(got, tc.want) {
				t.Fatalf("Parse(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
			}
			// Parse keeps no reference to its input; ParseBorrowed gives
			// the same row while its input is left alone.
			raw := []byte(tc.in)
			got, err = p.Parse(raw, nil)
			if err != nil {
				t.Fatal(err)
			}
			clear(raw)
			if !equalRows(got, tc.want) {
				t.Fatalf("Parse(%q): the row changed with its input\n got %+v\nwant %+v", tc.in, got, tc.want)
			}
			borrowed, err := p.ParseBorrowed([]byte(tc.in), dst)
			if err != nil {
				t.Fatalf("ParseBorrowed(%q) = %v", tc.in, err)
			}
			if !equalRows(borrowed, tc.want) {
				t.Fatalf("ParseBorrowed(%q)\n got %+v\nwant %+v", tc.in, borrowed, tc.want)
			}
		})
	}
}

func TestParseCSV(t *testing.T) {
	s := testSchema(t)
	p, err := NewParser(s, Format{Kind: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	ts := vT("2024-03-01T12:30:45.123456Z")
	runParseCases(t, p, []parseCase{
		{"plain", "1,2.5,bob,true,2024-03-01 12:30:45.123456,hi", []Value{vI(1), vF(2.5), vS("bob"), vB(true), ts, vS("hi")}, ""},
		{"newline", "1,2.5,bob,true,2024-03-01 12:30:45.123456,hi\n", []Value{vI(1), vF(2.5), vS("bob"), vB(true), ts, vS("hi")}, ""},
		{"crlf", "1,2.5,bob,true,2024-03-01 12:30:45.123456,hi\r\n", []Value{vI(1), vF(2.5), vS("bob"), vB(true), ts, vS("hi")}, ""},
		{"only cr kept", "1,2.5,bob,true,2024-03-01 12:30:45.123456,hi\r", []Value{vI(1), vF(2.5), vS("bob"), vB(true), ts, vS("hi\r")}, ""},
		{"negative and signs", "-9223372036854775808,-1e3,,0,0,", []Value{vI(math.MinInt64), vF(-1000), vS(""), vB(false), vT("1970-01-01T00:00:00Z"), vS("")}, ""},
		{"empty is null", ",,,,,", []Value{vN, vN, vS(""), vN, vN, vS("")}, ""},
		{`\N is null`, `\N,\N,\N,\N,\N,\N`, []Value{vN, vN, vN, vN, vN, vN}, ""},
		{"quoted", `"1","2","a,b","TRUE","2024-03-01","say ""hi"""`, []Value{vI(1), vF(2), vS("a,b"), vB(true), vT("2024-03-01T00:00:00Z"), vS(`say "hi"`)}, ""},
		{`quoted \N is text`, `1,2,"\N",1,1000,""`, []Value{vI(1), vF(2), vS(`\N`), vB(true), vT("1970-01-01T00:00:01Z"), vS("")}, ""},
		{"quoted empty non-string is null", `"",2,x,"",1,y`, []Value{vN, vF(2), vS("x"), vN, vT("1970-01-01T00:00:00.001Z"), vS("y")}, ""},
		{"inner quote literal", `1,2,a"b,false,2024-03-01T12:30:45.123456Z,c"`, []Value{vI(1), vF(2), vS(`a"b`), vB(false), ts, vS(`c"`)}, ""},
		{"quoted newline", "1,2,\"a\nb\",false,2024-03-01T12:30:45.123456Z,c", []Value{vI(1), vF(2), vS("a\nb"), vB(false), ts, vS("c")}, ""},
		{"spaces kept", "1,2, a ,false,2024-03-01T12:30:45.123456Z, ", []Value{vI(1), vF(2), vS(" a "), vB(false), ts, vS(" ")}, ""},
		{"utf8", "1,2,héllo 世界,false,2024-03-01T12:30:45.123456Z,😀", []Value{vI(1), vF(2), vS("héllo 世界"), vB(false), ts, vS("😀")}, ""},
		{"too few", "1,2,3", nil, "csv: 3 fields, table has 6 columns"},
		{"too many", "1,2,3,4,5,6,7", nil, "csv: 7 fields, table has 6 columns"},
		{"empty record", "", nil, "csv: 1 field, table has 6 columns"},
		{"bad int", "abc,2,x,true,1,y", nil, `column id: "abc" is not an INT64`},
		{"int with fraction", "1.5,2,x,true,1,y", nil, `column id: "1.5" is not an INT64`},
		{"int overflow", "9223372036854775808,2,x,true,1,y", nil, `column id: "9223372036854775808" is out of range for INT64`},
		{"bad float", "1,2.5x,x,true,1,y", nil, `column amount: "2.5x" is not a FLOAT64`},
		{"nan rejected", "1,NaN,x,true,1,y", nil, `column amount: "NaN" is not a FLOAT64`},
		{"float overflow", "1,1e400,x,true,1,y", nil, `column amount: "1e400" is out of range for FLOAT64`},
		{"bad bool", "1,2,x,yes,1,y", nil, `column ok: "yes" is not a BOOL`},
		{"bad timestamp", "1,2,x,true,2024-13-01,y", nil, `column ts: "2024-13-01" is not a TIMESTAMP`},
		{"bad utf8", "1,2,x\xff,true,1,y", nil, `column name: "x\xff" is not valid UTF-8`},
		{"unterminated quote", `1,2,"abc,true,1,y`, nil, "unterminated quoted field"},
		{"text after quote", `1,2,"abc"d,true,1,y`, nil, "unexpected text after closing quote"},
		{"first error wins", "x,y,z,w,v,u", nil, "column id:"},
	})

	// Separators.
	for _, sep := range []string{"|", "\t", `\t`, "||", `\x01`, ";;;"} {
		p, err := NewParser(s, Format{Kind: "csv", ColumnSeparator: sep})
		if err != nil {
			t.Fatal(err)
		}
		real, _ := parseSeparator(sep)
		in := strings.Join([]string{"7", "0.25", `"q` + string(real) + `x"`, "FALSE", "", "a,b"}, string(real))
		t.Run("sep "+sep, func(t *testing.T) {
			runParseCases(t, p, []parseCase{{"row", in, []Value{vI(7), vF(0.25), vS("q" + string(real) + "x"), vB(false), vN, vS("a,b")}, ""}})
		})
	}
}

func TestParseJSON(t *testing.T) {
	s := testSchema(t)
	p, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		t.Fatal(err)
	}
	ts := vT("2024-03-01T12:30:45.123456Z")
	runParseCases(t, p, []parseCase{
		{"plain", `{"id":1,"amount":2.5,"name":"bob","ok":true,"ts":"2024-03-01T12:30:45.123456Z","note":"hi"}`, []Value{vI(1), vF(2.5), vS("bob"), vB(true), ts, vS("hi")}, ""},
		{"whitespace and order", " \n{ \"note\" : \"hi\" ,\t\"ts\":\"2024-03-01 12:30:45.123456\",\r\n\"ok\":false, \"name\":\"bob\",\"amount\":-0.5,\"id\":-7 } \n", []Value{vI(-7), vF(-0.5), vS("bob"), vB(false), ts, vS("hi")}, ""},
		{"missing keys null", `{"id":1}`, []Value{vI(1), vN, vN, vN, vN, vN}, ""},
		// Doris: a record none of whose keys names a column is an error
		// row ("There is no column matching jsonpaths in the json file").
		{"empty object", `{}`, nil, "json: no key of the record matches a column"},
		{"json nulls", `{"id":null,"amount":null,"name":null,"ok":null,"ts":null,"note":null}`, []Value{vN, vN, vN, vN, vN, vN}, ""},
		{"strings for numbers", `{"id":"42","amount":"1.25","ok":"TRUE","ts":"1000","name":"","note":""}`, []Value{vI(42), vF(1.25), vS(""), vB(true), vT("1970-01-01T00:00:01Z"), vS("")}, ""},
		{"empty string non-string is null", `{"id":"","amount":"","ok":"","ts":""}`, []Value{vN, vN, vN, vN, vN, vN}, ""},
		{"numbers and bools rendered to string", `{"name":12.50,"note":false}`, []Value{vN, vN, vS("12.50"), vN, vN, vS("false")}, ""},
		{"objects rendered to string", `{"name":{"a": [1, {"b":2}]},"note":[]}`, []Value{vN, vN, vS(`{"a": [1, {"b":2}]}`), vN, vN, vS("[]")}, ""},
		{"bool from 0/1", `{"ok":1}`, []Value{vN, vN, vN, vB(true), vN, vN}, ""},
		{"bool from 0", `{"ok":0}`, []Value{vN, vN, vN, vB(false), vN, vN}, ""},
		{"timestamp epoch ms", `{"ts":1709296245123}`, []Value{vN, vN, vN, vN, vT("2024-03-01T12:30:45.123Z"), vN}, ""},
		{"timestamp negative epoch ms", `{"ts":-1}`, []Value{vN, vN, vN, vN, vT("1969-12-31T23:59:59.999Z"), vN}, ""},
		{"timestamp offset", `{"ts":"2024-03-01T14:30:45.123456789+02:00"}`, []Value{vN, vN, vN, vN, ts, vN}, ""},
		{"float exp", `{"amount":1E-2}`, []Value{vN, vF(0.01), vN, vN, vN, vN}, ""},
		{"int max", `{"id":9223372036854775807}`, []Value{vI(math.MaxInt64), vN, vN, vN, vN, vN}, ""},
		{"escapes", `{"name":"a\"b\\c\/d\b\f\n\r\t","note":"\u00e9\u4e16\ud83d\ude00\u0000"}`, []Value{vN, vN, vS("a\"b\\c/d\b\f\n\r\t"), vN, vN, vS("é世😀\x00")}, ""},
		{"lone surrogate", `{"name":"x\ud83dy","note":"\ude00"}`, []Value{vN, vN, vS("x\uFFFDy"), vN, vN, vS("\uFFFD")}, ""},
		{"escaped key", `{"n\u0061me":"bob"}`, []Value{vN, vN, vS("bob"), vN, vN, vN}, ""},
		{"unknown keys skipped", `{"x":{"y":[1,2,{"z":"\"}"}]},"id":3,"w":[[]],"v":null,"u":true,"t":-1.5e+3}`, []Value{vI(3), vN, vN, vN, vN, vN}, ""},
		{"duplicate key: the first wins, as Doris", `{"id":1,"id":2}`, []Value{vI(1), vN, vN, vN, vN, vN}, ""},
		{"key case matters", `{"ID":1}`, nil, "json: no key of the record matches a column"},
		{"one key is enough", `{"ID":1,"id":2}`, []Value{vI(2), vN, vN, vN, vN, vN}, ""},
		{"int rejects fraction", `{"id":1.5}`, nil, `column id: "1.5" is not an INT64`},
		{"int rejects exp", `{"id":1e3}`, nil, `column id: "1e3" is not an INT64`},
		{"int rejects bool", `{"id":true}`, nil, "column id: JSON true is not an INT64"},
		{"int rejects object", `{"id":{}}`, nil, "column id: JSON object is not an INT64"},
		{"int rejects array", `{"id":[1]}`, nil, "column id: JSON array is not an INT64"},
		{"int string bad", `{"id":"4x2"}`, nil, `column id: "4x2" is not an INT64`},
		{"int overflow", `{"id":9223372036854775808}`, nil, `column id: "9223372036854775808" is out of range for INT64`},
		{"float overflow", `{"amount":1e999}`, nil, `column amount: "1e999" is out of range for FLOAT64`},
		{"bool rejects 2", `{"ok":2}`, nil, `column ok: "2" is not a BOOL`},
		{"bool rejects string", `{"ok":"yes"}`, nil, `column ok: "yes" is not a BOOL`},
		{"timestamp rejects float", `{"ts":1.5}`, nil, `column ts: "1.5" is not a TIMESTAMP`},
		{"timestamp out of range", `{"ts":253402300800000}`, nil, `column ts: "253402300800000" is out of range for TIMESTAMP`},
		{"timestamp bad", `{"ts":"2024-02-30"}`, nil, `column ts: "2024-02-30" is not a TIMESTAMP`},
		{"string bad utf8", "{\"name\":\"a\xffb\"}", nil, "column name: \"a\\xffb\" is not valid UTF-8"},
		{"syntax beats column error", `{"id":"x","amount":}`, nil, "json: invalid JSON at byte 19"},
		{"array record", `[1,2]`, nil, "json: record is an array, not an object"},
		{"number record", `17`, nil, "json: record is a number, not an object"},
		{"empty record", ` `, nil, "json: empty record"},
		{"garbage", `hello`, nil, "json: record is not JSON, not an object"},
		{"trailing data", `{"id":1} x`, nil, "json: invalid JSON at byte 9: data after the object"},
		{"two objects", `{"id":1}{"id":2}`, nil, "invalid JSON at byte 8"},
		{"unterminated object", `{"id":1`, nil, "invalid JSON at byte 7"},
		{"unterminated string", `{"name":"abc`, nil, "unterminated string"},
		{"missing colon", `{"id" 1}`, nil, "want ':'"},
		{"trailing comma", `{"id":1,}`, nil, "want a string key"},
		{"unquoted key", `{id:1}`, nil, "want a string key"},
		{"single quotes", `{'id':1}`, nil, "want a string key"},
		{"bad escape", `{"name":"\x"}`, nil, "bad escape"},
		{"bad unicode escape", `{"name":"\u12g4"}`, nil, `bad \u escape`},
		{"short unicode escape", `{"name":"\u12"}`, nil, `bad \u escape`},
		{"control char", "{\"name\":\"a\nb\"}", nil, "control character"},
		{"bad literal", `{"ok":tru}`, nil, "invalid literal"},
		{"bad number", `{"id":-}`, nil, "unexpected"},
		{"leading zero", `{"id":01}`, nil, "want ',' or '}'"},
		{"bare fraction", `{"amount":1.}`, nil, "unexpected"},
		{"plus sign", `{"id":+1}`, nil, "unexpected"},
		{"skipped malformed", `{"x":{"y" 1},"id":1}`, nil, "want ':'"},
		{"skipped malformed array", `{"x":[1 2],"id":1}`, nil, "want ',' or ']'"},
		{"deep nesting", `{"x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, nil, "nesting deeper than 1000"},
		{"nul byte", "{\"id\":1\x00}", nil, "want ',' or '}'"},
	})
}

func TestParseJSONPaths(t *testing.T) {
	s := testSchema(t)
	p, err := NewParser(s, Format{Kind: "json", JSONPaths: []string{"$.a.id", "$.a.b[1]", "$['we.ird']", `$["q"]`, "$.t[0].v", "$"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := `{"a":{"id":5,"b":[1.5,2.5,3.5]},"we.ird":"x","q":true,"t":[{"v":"2024-01-02"}]}`
	runParseCases(t, p, []parseCase{
		{"nested", rec, []Value{vI(5), vF(2.5), vS("x"), vB(true), vT("2024-01-02T00:00:00Z"), vS(rec)}, ""},
		{"missing nested", `{"a":{"b":[1]},"t":[]}`, []Value{vN, vN, vN, vN, vN, vS(`{"a":{"b":[1]},"t":[]}`)}, ""},
		{"wrong shape is null", `{"a":[1,2],"t":{"0":{"v":1}}}`, []Value{vN, vN, vN, vN, vN, vS(`{"a":[1,2],"t":{"0":{"v":1}}}`)}, ""},
		{"null parent", `{"a":null}`, []Value{vN, vN, vN, vN, vN, vS(`{"a":null}`)}, ""},
		{"nested type error", `{"a":{"id":"z"}}`, nil, `column id: "z" is not an INT64`},
		{"nested syntax error", `{"a":{"id":1,}}`, nil, "invalid JSON at byte 13"},
	})

	// The same value may feed two columns, and a parent and its child both.
	s2, err := NewSchema(spec("t", col("a", api.ColumnType_STRING), col("b", api.ColumnType_INT64), col("c", api.ColumnType_INT64)))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := NewParser(s2, Format{Kind: "json", JSONPaths: []string{"$.x", "$.x.y", "$.x.y"}})
	if err != nil {
		t.Fatal(err)
	}
	runParseCases(t, p2, []parseCase{{"shared", `{"x":{"y":7}}`, []Value{vS(`{"y":7}`), vI(7), vI(7)}, ""}})

	// Doris's quoted key: a key holding a dot (test_json_load: $.tags."a.b").
	s3, err := NewSchema(spec("t", col("a", api.ColumnType_STRING), col("b", api.ColumnType_STRING)))
	if err != nil {
		t.Fatal(err)
	}
	p3, err := NewParser(s3, Format{Kind: "json", JSONPaths: []string{`$.tags."a.b"`, `$."k.2"`}})
	if err != nil {
		t.Fatal(err)
	}
	runParseCases(t, p3, []parseCase{{"quoted keys", `{"tags":{"a.b":"test","a":{"b":"no"}},"k.2":"v"}`, []Value{vS("test"), vS("v")}, ""}})
	for _, bad := range []string{`$.tags."a.b`, `$.""`, `$."a"b`} {
		if _, err := NewParser(s3, Format{Kind: "json", JSONPaths: []string{bad, "$.x"}}); err == nil {
			t.Errorf("path %s accepted", bad)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339; "" means error
	}{
		{"2006-01-02", "2006-01-02T00:00:00Z"},
		{"2006-01-02 15:04:05", "2006-01-02T15:04:05Z"},
		{"2006-01-02T15:04:05", "2006-01-02T15:04:05Z"},
		{"2006-01-02t15:04:05z", "2006-01-02T15:04:05Z"},
		{"2006-01-02 15:04:05.1", "2006-01-02T15:04:05.1Z"},
		{"2006-01-02 15:04:05.123456", "2006-01-02T15:04:05.123456Z"},
		{"2006-01-02T15:04:05.123456789Z", "2006-01-02T15:04:05.123456Z"},
		{"2006-01-02T15:04:05-07:00", "2006-01-02T22:04:05Z"},
		{"2006-01-02T00:30:00+01:00", "2006-01-01T23:30:00Z"},
		{"2024-02-29", "2024-02-29T00:00:00Z"},
		{"2000-02-29", "2000-02-29T00:00:00Z"},
		{"1969-12-31T23:59:59.999999Z", "1969-12-31T23:59:59.999999Z"},
		{"0000-01-01", "0000-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"},
		{"1136214245000", "2006-01-02T15:04:05Z"},
		{"-1000", "1969-12-31T23:59:59Z"},
		{"0", "1970-01-01T00:00:00Z"},
		{"1900-02-29", ""},
		{"2023-02-29", ""},
		{"2024-04-31", ""},
		{"2024-00-10", ""},
		{"2024-01-00", ""},
		{"2024-01-01 24:00:00", ""},
		{"2024-01-01 23:60:00", ""},
		{"2024-01-01 23:00:60", ""},
		{"2024-01-01 23:00", ""},
		{"2024-01-01 23:00:00.", ""},
		{"2024-01-01 23:00:00.1234567890", ""},
		{"2024-01-01 23:00:00+0100", ""},
		{"2024-01-01 23:00:00+24:00", ""},
		{"2024-01-01X23:00:00", ""},
		{"2024-1-01", ""},
		{"24-01-01", ""},
		{"abc", ""},
		{"0000-01-01T00:00:00+00:01", ""},
		{"9999-12-31T23:59:59-00:01", ""},
		{"253402300800000", ""},
	}
	for _, tt := range tests {
		got, e := parseTimestamp([]byte(tt.in))
		if tt.want == "" {
			if e == numOK {
				t.Errorf("parseTimestamp(%q) = %d, want error", tt.in, got)
			}
			continue
		}
		want, err := time.Parse(time.RFC3339Nano, tt.want)
		if err != nil {
			t.Fatal(err)
		}
		if e != numOK || got != want.UnixMicro() {
			t.Errorf("parseTimestamp(%q) = %d (%v), want %d (%s)", tt.in, got, e, want.UnixMicro(), tt.want)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		e    numError
	}{
		{"0", 0, numOK}, {"-0", 0, numOK}, {"+5", 5, numOK}, {"007", 7, numOK},
		{"9223372036854775807", math.MaxInt64, numOK}, {"-9223372036854775808", math.MinInt64, numOK},
		{"9223372036854775808", 0, numRange}, {"-9223372036854775809", 0, numRange},
		{"99999999999999999999999", 0, numRange}, {"99999999999999999999999x", 0, numSyntax},
		{"", 0, numSyntax}, {"-", 0, numSyntax}, {"1 ", 0, numSyntax}, {"0x10", 0, numSyntax},
	}
	for _, tt := range tests {
		got, e := parseInt([]byte(tt.in))
		if got != tt.want || e != tt.e {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, got, e, tt.want, tt.e)
		}
	}
}

// TestJSONStringScanBoundaries moves quotes, escapes and control characters
// across the 8-byte blocks of the string scanner.
func TestJSONStringScanBoundaries(t *testing.T) {
	s := testSchema(t)
	p, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 40; n++ {
		for k := 0; k <= n; k++ {
			body := strings.Repeat("a", k) + `\"` + strings.Repeat("é", n-k)
			want := strings.Repeat("a", k) + `"` + strings.Repeat("é", n-k)
			row, err := p.Parse([]byte(`{"name":"`+body+`"}`), nil)
			if err != nil || row[2].Str != want {
				t.Fatalf("n=%d k=%d: got %q, %v; want %q", n, k, row[2].Str, err, want)
			}
			bad := `{"name":"` + strings.Repeat("a", k) + "\x01" + strings.Repeat("b", n-k) + `"}`
			if _, err := p.Parse([]byte(bad), nil); err == nil || !strings.Contains(err.Error(), "control character") {
				t.Fatalf("n=%d k=%d: control character accepted: %v", n, k, err)
			}
		}
	}
}
