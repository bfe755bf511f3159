package table

import (
	"strings"
	"testing"
)

// A given enclose character reads a record as Doris's CSV reader does
// (enclose.go); the rows are test_csv_with_enclose_and_escape's (Doris
// regression suite load_p0/stream_load), with Doris's recorded values.
func TestDorisEnclose(t *testing.T) {
	s := typedSchema(t, "k1 int", "k2 string", "v1 date", "v2 string", "v3 datetime", "v4 string")
	trim := Format{Enclose: '"', Escape: '\\', TrimDoubleQuotes: true, NonStrict: true}
	keep := Format{Enclose: '"', Escape: '\\', NonStrict: true}
	tests := []struct {
		name string
		f    Format
		rec  string
		want []string // rows, or one error
	}{
		{"separators and line breaks inside an enclosed field", trim,
			"1,\"abc,d\nef,\",2023-07-15,\",,\nghi,j\",\"2023-07-20 05:48:31\",\"kl,mn,\n\"\n2,abc,2023-07-15,\"def\",2023-07-20 05:48:31,\"ghi\"",
			[]string{"1|abc,d\nef,|2023-07-15|,,\nghi,j|2023-07-20 05:48:31|kl,mn,\n", "2|abc|2023-07-15|def|2023-07-20 05:48:31|ghi"}},
		{"an escaped enclose stays open and loses its escape", trim,
			"3,\"abc\\\"de,fg\\\"h\",2023-07-15,\"i\nj,k\n\\\"\",2023-07-20 05:48:31,ghi\n\n",
			[]string{"3|abc\"de,fg\"h|2023-07-15|i\nj,k\n\"|2023-07-20 05:48:31|ghi"}},
		{"quotes inside a field; text after the closing enclose", trim,
			"6,ab\"c,2023-07-20,d\"ef\",2023-07-20 05:48:31,\"g\"hi\n",
			[]string{"6|ab\"c|2023-07-20|d\"ef\"|2023-07-20 05:48:31|\"g\"hi"}},
		{"after the closing enclose the field runs to the separator", trim,
			"8,\"aaa\"bbb\"ccc\",2023-07-20,\"\"aa\"bb\",2023-07-20 05:48:31,\"aa\"bb\"\"\n" +
				"9,\"aa,\"bbb\",cc\",2023-07-20,\"\"aa\"bb,\",2023-07-20 05:48:31,\"aa\"bb\"\"\n",
			[]string{"8|aaa\"bbb\"ccc|2023-07-20|\"aa\"bb|2023-07-20 05:48:31|aa\"bb\"",
				"9|aa,\"bbb|NULL|2023-07-20|NULL|,2023-07-20 05:48:31,\"aa\"bb\""}},
		{"an enclosed empty field is the empty string", trim,
			"7,x,2023-07-20,,2023-07-20 05:48:31,\"\"", []string{"7|x|2023-07-20||2023-07-20 05:48:31|"}},
		{"an unterminated enclose runs to the end of the record", trim,
			"4,\"abc,2023-07-20,def,2023-07-20 05:48:31,ghi\n5,bcd,2023-07-20,def,2023-07-20 05:48:31,ghi",
			[]string{"error: csv: 2 fields, table has 6 columns"}},
		{"enclose '\"' without trim_double_quotes keeps the quotes", keep,
			"10,abc,\"2023-07-15\",\"def\",\"2023-07-20 05:48:31\",\"ghi\"\n11,\"abc,def\",2023-07-15,ghi,2023-07-20 05:48:31,\"jkl\nmne\"",
			[]string{"10|abc|NULL|\"def\"|NULL|\"ghi\"", "11|\"abc,def\"|2023-07-15|ghi|2023-07-20 05:48:31|\"jkl\nmne\""}},
		{"a multi-character separator inside an enclosed field", Format{Enclose: '"', Escape: '\\', TrimDoubleQuotes: true, ColumnSeparator: "@@"},
			"10@@\"ab@@cd@@efg\"@@2023-07-20@@\"ab@@cd$$$efg\"@@2023-07-20 05:48:31@@\"@@ab$$$cd$$$\"",
			[]string{"10|ab@@cd@@efg|2023-07-20|ab@@cd$$$efg|2023-07-20 05:48:31|@@ab$$$cd$$$"}},
		{"a doubled enclose is one with an escape character", trim,
			"1,\"a\"\"b\",2023-07-20,x,2023-07-20 05:48:31,\"c\\\\d\"", []string{"1|a\"b|2023-07-20|x|2023-07-20 05:48:31|c\\d"}},
		{"and stays doubled without one", Format{Enclose: '\''},
			"1,'a''b',2023-07-20,x,2023-07-20 05:48:31,\\N", []string{"1|a''b|2023-07-20|x|2023-07-20 05:48:31|NULL"}},
		{"an enclosed \\N is NULL", trim,
			"1,\"\\N\",2023-07-20,\\N,2023-07-20 05:48:31,x", []string{"1|NULL|2023-07-20|NULL|2023-07-20 05:48:31|x"}},
		{"a field trim_double_quotes trims is never NULL", Format{Enclose: '\'', TrimDoubleQuotes: true},
			"1,'\"\\N\"',2023-07-20,\\N,2023-07-20 05:48:31,x", []string{"1|\\N|2023-07-20|NULL|2023-07-20 05:48:31|x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := splitRows(t, p, s, tt.rec)
			if err != nil {
				got = []string{"error: " + err.Error()}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rows\n %q\nwant\n %q", got, tt.want)
			}
		})
	}
}
