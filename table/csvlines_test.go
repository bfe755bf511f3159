package table

import (
	"strings"
	"testing"
)

// A csv record's lines are its rows, as a Doris routine load reads a
// message; skip_lines and the header formats skip lines at the start of
// each record (test_csv_with_skip_lines: the whole file is one record).
func TestCSVLines(t *testing.T) {
	s := typedSchema(t, "id int", "name varchar(32)")
	tests := []struct {
		name string
		f    Format
		rec  string
		want []string
	}{
		{"one line", Format{}, "1,a\n", []string{"1|a"}},
		{"lines are rows; empty lines none", Format{}, "1,a\r\n\n2,b", []string{"1|a", "2|b"}},
		{"skip_lines", Format{SkipLines: 2}, "h1\nh2\n1,a\n2,b\n", []string{"1|a", "2|b"}},
		{"skip_lines counts empty lines", Format{SkipLines: 2}, "\nh\n1,a", []string{"1|a"}},
		{"skip_lines past the end", Format{SkipLines: 5}, "1,a\n2,b", nil},
		{"csv_with_names skips 1, whatever skip_lines", Format{Kind: "csv_with_names", SkipLines: 3}, "id,name\n1,a\n2,b", []string{"1|a", "2|b"}},
		{"csv_with_names_and_types skips 2", Format{Kind: "CSV_WITH_NAMES_AND_TYPES", SkipLines: 3}, "id,name\nint,varchar\n1,a\n2,b", []string{"1|a", "2|b"}},
		{"an enclosed line break is no row's end", Format{Enclose: '"', TrimDoubleQuotes: true}, "1,\"a\nb\"\n2,c", []string{"1|a\nb", "2|c"}},
		{"an escaped enclose stays open", Format{Enclose: '"', Escape: '\\', TrimDoubleQuotes: true}, "1,\"a\\\"\nb\"\n2,c", []string{"1|a\"\nb", "2|c"}},
		// Doris: enclose '"' given, trim_double_quotes false: the quotes stay.
		{"an enclosed line break, quotes kept", Format{Enclose: '"'}, "1,\"a\nb\"\n2,c", []string{"1|\"a\nb\"", "2|c"}},
		{"the default '\"' encloses as RFC 4180", Format{}, "1,\"a\nb\"\n2,c", []string{"1|a\nb", "2|c"}},
		{"quotes are literal without enclose", Format{NoEnclose: true}, "1,\"a\n2,b\"", []string{"1|\"a", "2|b\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := splitRows(t, p, s, tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rows %q, want %q", got, tt.want)
			}
		})
	}
}

// Doris's trim_double_quotes: a field quoted at both ends loses the quotes
// (test_stream_load: "test" is test); one quote alone stays, and so do
// single quotes (test_csv_with_double_quotes).
func TestTrimDoubleQuotes(t *testing.T) {
	s := typedSchema(t, "id int", "name varchar(32)", "d date")
	tests := []struct {
		f    Format
		rec  string
		want string
	}{
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `"5","abc","2022-12-01"`, "5|abc|2022-12-01"},
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `1,"ab,"2022-12-01"`, `1|"ab|2022-12-01`},
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `1,'a',2022-12-01`, `1|'a'|2022-12-01`},
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `1,"",2022-12-01`, `1||2022-12-01`},
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `1,"\N",2022-12-01`, `1|NULL|2022-12-01`},
		{Format{NoEnclose: true, TrimDoubleQuotes: true}, `1,",2022-12-01`, `1|"|2022-12-01`},
		{Format{NoEnclose: true}, `1,"test",2022-12-01`, `1|"test"|2022-12-01`},
	}
	for _, tt := range tests {
		p, err := NewParser(s, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		row, err := p.Parse([]byte(tt.rec), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.rec, err)
			continue
		}
		if got := render(s, row); got != tt.want {
			t.Errorf("%s (trim %v): %s, want %s", tt.rec, tt.f.TrimDoubleQuotes, got, tt.want)
		}
	}
}

// num_as_string: a JSON number loads as its text, as a string would; into
// a DATE column that is a date's digits.
func TestNumAsString(t *testing.T) {
	s := typedSchema(t, "k1 int", "k2 float", "d date")
	for _, tt := range []struct {
		f    Format
		want string
	}{
		{Format{Kind: "json", NumAsString: true}, "10|1.23|2024-01-02"},
		{Format{Kind: "json", NonStrict: true}, "10|1.23|NULL"},
	} {
		p, err := NewParser(s, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		row, err := p.Parse([]byte(`{"k1": 10, "k2": 1.23, "d": 20240102}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := render(s, row); got != tt.want {
			t.Errorf("num_as_string %v: %s, want %s", tt.f.NumAsString, got, tt.want)
		}
	}
	if _, err := NewParser(s, Format{NumAsString: true}); err == nil || !strings.Contains(err.Error(), "num_as_string") {
		t.Errorf("num_as_string with csv: %v", err)
	}
	if _, err := NewParser(s, Format{Kind: "json", SkipLines: 1}); err == nil || !strings.Contains(err.Error(), "skip_lines") {
		t.Errorf("skip_lines with json: %v", err)
	}
}

// hive_text: csv with the byte 0x01 between fields unless a separator is
// given; quotes are literal.
func TestHiveText(t *testing.T) {
	s := typedSchema(t, "id int", "name char(10)")
	p, err := NewParser(s, Format{Kind: "hive_text"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := splitRows(t, p, s, "1\x01char1     \n2\x01\"x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1|char1     ", `2|"x"`}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows %q, want %q", got, want)
	}
}
