package table

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"google.golang.org/protobuf/proto"
)

// typedSchema builds a one-table schema from "name type" pairs.
func typedSchema(t *testing.T, cols ...string) *Schema {
	t.Helper()
	spec := &api.TableSpec{Name: "t"}
	for _, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		col, err := ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		col.Name = name
		spec.Columns = append(spec.Columns, col)
	}
	s, err := NewSchema(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// formatValue renders one cell for the tests' expectations: NULL as
// "NULL", DECIMAL and LARGEINT with the scale's fraction digits, DATE and
// DATETIME as Doris prints them, floats in their shortest form, TIMESTAMP
// as RFC 3339 in UTC, text as is.
func formatValue(col *api.Column, v Value) string {
	if v.Null {
		return "NULL"
	}
	switch col.GetType() {
	case api.ColumnType_INT64, api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32:
		return strconv.FormatInt(v.Int, 10)
	case api.ColumnType_INT128, api.ColumnType_DECIMAL:
		return FormatDecimal(v, int(col.GetScale()))
	case api.ColumnType_FLOAT64:
		return strconv.FormatFloat(v.Float, 'f', -1, 64)
	case api.ColumnType_FLOAT32:
		return strconv.FormatFloat(v.Float, 'f', -1, 32)
	case api.ColumnType_DATE:
		return string(appendDate(nil, v.Int))
	case api.ColumnType_DATETIME:
		return string(appendDatetime(nil, v.Int, int(col.GetPrecision())))
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
		return v.Str
	case api.ColumnType_BOOL:
		return strconv.FormatBool(v.Bool)
	case api.ColumnType_TIMESTAMP:
		return time.UnixMicro(v.Int).UTC().Format(time.RFC3339Nano)
	}
	return "?"
}

func TestConvertTypes(t *testing.T) {
	tests := []struct {
		typ, in, want string // want "" with err: does not convert
		err           string
	}{
		{"tinyint", "127", "127", ""},
		{"tinyint", "128", "", "out of range for TINYINT"},
		{"smallint", "-32768", "-32768", ""},
		{"smallint", "32768", "", "out of range"},
		{"int", "-2147483649", "", "out of range for INT"},
		{"bigint", "9223372036854775807", "9223372036854775807", ""},
		{"largeint", "-170141183460469231731687303715884105728", "-170141183460469231731687303715884105728", ""},
		{"largeint", "170141183460469231731687303715884105728", "", "out of range for LARGEINT"},
		{"largeint", "2732763251146840270", "2732763251146840270", ""},
		{"largeint", "1.5", "", "is not a LARGEINT"},
		{"decimal(9,1)", "-22009767.0", "-22009767.0", ""},
		{"decimal(9,1)", "1.25", "1.3", ""},
		{"decimal(9,1)", "-1.25", "-1.3", ""},
		{"decimal(9,1)", "759730669.0", "99999999.9", "out of range for DECIMAL(9,1)"},
		{"decimal(9,1)", "-628556336.0", "-99999999.9", "out of range"},
		{"decimal(38,10)", "1234567890123456789012345678.0123456789", "1234567890123456789012345678.0123456789", ""},
		{"decimal(38,0)", "99999999999999999999999999999999999999", "99999999999999999999999999999999999999", ""},
		{"decimal(5,2)", "1e2", "100.00", ""},
		{"decimal(5,2)", ".5", "0.50", ""},
		{"decimal", "888888888", "888888888", ""},
		{"decimal(5,2)", "abc", "", "is not a DECIMAL"},
		{"float", "-15205.859375", "-15205.859", ""},
		{"float", "1e39", "", "out of range for FLOAT"},
		{"double", "-306870797.484914", "-306870797.484914", ""},
		{"date", "2023-08-24", "2023-08-24", ""},
		{"date", "2023-08-24 12:00:00", "2023-08-24", ""},
		{"date", "1969-12-31", "1969-12-31", ""},
		{"date", "2023-02-29", "", "is not a DATE"},
		{"datetime", "2023-07-20 05:48:31", "2023-07-20 05:48:31", ""},
		{"datetime", "2023-07-20T05:48:31", "2023-07-20 05:48:31", ""},
		{"datetime", "2023-07-20:05:48:31", "2023-07-20 05:48:31", ""},
		{"datetime", "2023-7-2 5:48", "2023-07-02 05:48:00", ""},
		{"datetime", "20230720054831", "2023-07-20 05:48:31", ""},
		{"datetime", "2023-07-20 05:48:31.6", "2023-07-20 05:48:32", ""},
		{"datetime(3)", "2023-07-20 05:48:31.12345", "2023-07-20 05:48:31.123", ""},
		{"datetime(6)", "0001-01-01 00:00:00.000001", "0001-01-01 00:00:00.000001", ""},
		{"datetime", "2023-07-20 05:48:31+02:00", "2023-07-20 03:48:31", ""}, // a zone: its instant in UTC (no job)
		{"datetime", "2023-07-20 05:48:31 +02:00", "", "is not a DATETIME"},
		{"char(3)", "abc", "abc", ""},
		{"char(3)", "abcd", "", "4 bytes, longer than CHAR(3)"},
		{"varchar(6)", "我能", "我能", ""},
		{"varchar(5)", "我能", "", "6 bytes, longer than VARCHAR(5)"},
		{"string", "我能吞下玻璃而不伤身体", "我能吞下玻璃而不伤身体", ""},
		{"json", `{"name": "John", "age": 25, "a": [1, 2.50]}`, `{"name":"John","age":25,"a":[1,2.50]}`, ""},
		{"json", `{"name": `, "", "is not valid JSON"},
		{"boolean", "TRUE", "true", ""},
		{"boolean", "yes", "", "is not a BOOL"},
	}
	for _, tt := range tests {
		col, err := ParseType(tt.typ)
		if err != nil {
			t.Fatalf("ParseType(%q): %v", tt.typ, err)
		}
		col.Name = "c"
		s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{col}})
		if err != nil {
			t.Fatal(err)
		}
		v, reason := convertText(col.Type, s.meta[0], []byte(tt.in))
		if tt.err != "" {
			if !strings.Contains(reason, tt.err) {
				t.Errorf("%s %q: reason %q, want %q", tt.typ, tt.in, reason, tt.err)
			}
			if tt.want == "" {
				continue
			}
		} else if reason != "" {
			t.Errorf("%s %q: %s", tt.typ, tt.in, reason)
			continue
		}
		if got := formatValue(col, v); got != tt.want {
			t.Errorf("%s %q = %q, want %q", tt.typ, tt.in, got, tt.want)
		}
		// The stored form reads back the same.
		enc := AppendValue(nil, s, Pos{}, []Value{v})
		back, _, err := DecodeValue(s, enc, nil)
		if err != nil || formatValue(col, back[0]) != tt.want {
			t.Errorf("%s %q: round trip = %v, %v", tt.typ, tt.in, back, err)
		}
	}
}

func TestTypeStringRoundTrip(t *testing.T) {
	for _, in := range []string{"int64", "tinyint", "smallint", "int", "largeint", "float", "float64", "decimal(38,10)",
		"date", "datetime", "datetime(6)", "char(1)", "varchar(65533)", "string", "json", "bool", "timestamp"} {
		c, err := ParseType(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		back, err := ParseType(TypeString(c))
		if err != nil || !proto.Equal(c, back) {
			t.Errorf("%s -> %s -> %v, %v", in, TypeString(c), back, err)
		}
	}
}

func TestStrictMode(t *testing.T) {
	s := typedSchema(t, "a int", "b tinyint", "d decimal(3,1)")
	s.spec.Columns[0].NotNull = true
	s.meta[0].notNull = true
	for _, tt := range []struct {
		strict bool
		in     string
		want   string // rendered row, or the error
	}{
		{true, "1,300,1.0", `column b: "300" is out of range for TINYINT`},
		{false, "1,300,1.0", "1|NULL|1.0"},
		{false, "1,x,1000", "1|NULL|NULL"}, // a DECIMAL out of range: NULL, as Doris
		{true, "1,1,1000", "out of range for DECIMAL(3,1)"},
		{false, "x,1,1", `column a: "x" is not an INT (strict_mode is false, but the column is NOT NULL)`},
		{false, `\N,1,1`, "column a: NULL in a NOT NULL column"},
		{true, `\N,1,1`, "column a: NULL in a NOT NULL column"},
	} {
		p, err := NewParser(s, Format{NonStrict: !tt.strict})
		if err != nil {
			t.Fatal(err)
		}
		row, err := p.Parse([]byte(tt.in), nil)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for i, c := range s.Columns() {
				parts = append(parts, formatValue(c, row[i]))
			}
			got = strings.Join(parts, "|")
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("strict=%v %q: %q, want %q", tt.strict, tt.in, got, tt.want)
		}
	}
}

// TestTextTooLong: a CHAR or VARCHAR value longer than its column (in
// bytes) is an error row in strict mode; without it Doris cuts it at the
// last whole UTF-8 character within the length (test_utf8_varchar_truncation),
// in CSV, JSON and computed columns alike.
func TestTextTooLong(t *testing.T) {
	s := typedSchema(t, "id int", "v varchar(10)", "c char(4)")
	for _, tt := range []struct {
		in, want string // csv; id|v|c
	}{
		{"1,hello,ab", "1|hello|ab"},
		{"2,中1234567890,abcdef", "2|中1234567|abcd"},
		{"3,abcıdefghij,ııı", "3|abcıdefgh|ıı"},
		{"4,正常数据,中x", "4|正常数|中x"},
		{"5,ııııııııııı,中中", "5|ııııı|中"},
	} {
		for _, strict := range []bool{false, true} {
			p, err := NewParser(s, Format{NonStrict: !strict})
			if err != nil {
				t.Fatal(err)
			}
			row, err := p.Parse([]byte(tt.in), nil)
			if strict {
				if tt.in != "1,hello,ab" && (err == nil || !strings.Contains(err.Error(), "longer than")) {
					t.Errorf("strict %q: %v, want an error row naming the length", tt.in, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%q: %v", tt.in, err)
			}
			var got []string
			for i, c := range s.Columns() {
				got = append(got, formatValue(c, row[i]))
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("%q: %s, want %s", tt.in, g, tt.want)
			}
		}
	}
	jp, err := NewParser(s, Format{Kind: "json", NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	row, err := jp.Parse([]byte(`{"id": 1, "v": "\u4e2d1234567890", "c": "abcdef"}`), nil)
	if err != nil || row[1].Str != "中1234567" || row[2].Str != "abcd" {
		t.Errorf("json: %q %q, %v", row[1].Str, row[2].Str, err)
	}
}

func TestDefaults(t *testing.T) {
	def := func(typ, v string) *api.Column {
		c, err := ParseType(typ)
		if err != nil {
			t.Fatal(err)
		}
		c.Name, c.DefaultValue, c.NotNull = "c", proto.String(v), true
		return c
	}
	for _, tt := range []struct{ typ, def, want, err string }{
		{"boolean", "TRUE", "true", ""},
		{"decimal", "888888888", "888888888", ""},
		{"datetime", "2023-08-24 12:00:00", "2023-08-24 12:00:00", ""},
		{"char(255)", "我能吞下玻璃而不伤身体", "我能吞下玻璃而不伤身体", ""},
		{"tinyint", "300", "", `"300" is out of range for TINYINT`},
	} {
		c := def(tt.typ, tt.def)
		s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{c}})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "columns[0].default") {
				t.Errorf("%s default %q: err %v, want %q", tt.typ, tt.def, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := formatValue(c, s.meta[0].def); got != tt.want {
			t.Errorf("%s default %q = %q", tt.typ, tt.def, got)
		}
	}
}

func TestJSONTypes(t *testing.T) {
	s := typedSchema(t, "l largeint", "d decimal(20,2)", "f float", "j json", "dt datetime", "v varchar(3)")
	p, err := NewParser(s, Format{Kind: "json", NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Parse([]byte(`{"l": 170141183460469231731687303715884105727, "d": 123456789012345678.995, "f": 0.1, "j": {"a": [1, {"b": null}]}, "dt": 1764583200, "v": "abcd"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range s.Columns() {
		got = append(got, formatValue(c, row[i]))
	}
	want := `170141183460469231731687303715884105727|99999999999999999999.99|0.1|{"a":[1,{"b":null}]}|NULL|abc`
	// d: a JSON number with a fraction is a double first, as in Doris
	// (TestJSONDecimal): 123456789012345680, in range.
	want = strings.Replace(want, "99999999999999999999.99", "123456789012345680.00", 1)
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("row = %s\nwant  %s", g, want)
	}
}

// Doris, strict_mode false: a decimal text into an integer column loads its
// integer part (test_stream_load_cast: "3.12" is 3 in INT ... LARGEINT);
// strict, it is an error row.
func TestNonStrictIntFraction(t *testing.T) {
	s := typedSchema(t, "a int", "b tinyint", "c largeint", "d bigint", "e int")
	for _, f := range []Format{{NonStrict: true}, {Kind: "json", NonStrict: true}} {
		p, err := NewParser(s, f)
		if err != nil {
			t.Fatal(err)
		}
		rec := "3.12,-7.9,3.12,12.,1.2x"
		if f.Kind == "json" {
			rec = `{"a": "3.12", "b": -7.9, "c": "3.12", "d": 12.5, "e": "1.2x"}`
		}
		row, err := p.Parse([]byte(rec), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, c := range s.Columns() {
			got = append(got, formatValue(c, row[i]))
		}
		if g := strings.Join(got, "|"); g != "3|-7|3|12|NULL" {
			t.Errorf("%s: row = %s, want 3|-7|3|12|NULL", f.Kind, g)
		}
	}
	p, err := NewParser(s, Format{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]byte("3.12,1,1,1,1"), nil); err == nil || !strings.Contains(err.Error(), `"3.12"`) {
		t.Errorf("strict: %v, want an error naming 3.12", err)
	}
}

// TestJSONDecimal: a JSON number with a fraction reaches a DECIMAL column
// as Doris's JSON reader makes it a double (readerDouble): Doris's
// test_load_with_decimal (sql4) rows.
func TestJSONDecimal(t *testing.T) {
	s := typedSchema(t, "d1 decimal(8,4)", "d2 decimal(18,6)", "d3 decimal(38,12)", "d4 decimal(9,0)", "d5 decimal(27,9)")
	p, err := NewParser(s, Format{Kind: "json", NonStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{`{"d1": 1.1234, "d2": 12.123456, "d3": 123.123456789876, "d4": 12, "d5": 1234.123456789}`,
			"1.1234|12.123456|123.123456789876|12|1234.123456789"},
		{`{"d1": 1234.1234, "d2": 123456789123.123456, "d3": 12345678912345678912345678.123456789876, "d4": 123456789, "d5": 123456789123456789.123456780}`,
			"1234.1234|123456789123.123440|12345678912345679000000000.000000000000|123456789|123456789123456780.000000000"},
		{`{"d1": 1234.0000, "d2": 123456789123.000000, "d3": 12345678912345678912345678.000000000000, "d4": 123456789, "d5": 123456789123456789.000000000}`,
			"1234.0000|123456789123.000000|12345678912345679000000000.000000000000|123456789|123456789123456780.000000000"},
		{`{"d1": 10.25, "d2": 100.000001, "d3": 0.5, "d4": 1000000000, "d5": 20.0}`,
			"10.2500|100.000001|0.500000000000|NULL|20.000000000"},
		{`{"d1": -1.5e2, "d2": 1E-3, "d3": 0.1, "d4": 18446744073709551615, "d5": -0}`,
			"-150.0000|0.001000|0.100000000000|NULL|0.000000000"},
	} {
		row, err := p.Parse([]byte(tt.in), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if got := render(s, row); got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.in, got, tt.want)
		}
	}
	// An avro decimal (decoded to JSON text by its decoder) stays exact.
	ap, err := NewParser(s, Format{Kind: "avro", NonStrict: true, Decoder: jsonDecoder{}})
	if err != nil {
		t.Fatal(err)
	}
	row, err := ap.Parse([]byte(`{"d5": 123456789123456789.123456780}`), nil)
	if err != nil || render(s, row) != "NULL|NULL|NULL|NULL|123456789123456789.123456780" {
		t.Errorf("avro: %s, %v", render(s, row), err)
	}
	for in, want := range map[string]float64{"123456789123.123456": 123456789123.12344, "0.1": 0.1, "-2.5e-3": -0.0025, "1e400": math.Inf(1), "1e-400": 0, "7": 7} {
		if got := readerDouble([]byte(in)); got != want {
			t.Errorf("readerDouble(%s) = %v, want %v", in, got, want)
		}
	}
}
