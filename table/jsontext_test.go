package table

import (
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

// TestJSONStringText: a JSON string loads into a text column the same
// whether its scan found it all ASCII (the fast path, which skips the
// UTF-8 check) or not: non-ASCII text is checked (invalid UTF-8 is an
// error row in strict mode, NULL otherwise), a VARCHAR's length is checked
// either way, escapes are decoded and checked.
func TestJSONStringText(t *testing.T) {
	s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "s", Type: api.ColumnType_STRING},
		{Name: "v", Type: api.ColumnType_VARCHAR, Length: 8},
	}})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 40) // past the 8-byte scan's words
	for _, strict := range []bool{false, true} {
		p, err := NewParser(s, Format{Kind: "json", NonStrict: !strict})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			in     string
			s, v   string
			null   string // the column that does not convert: an error row in strict mode, else NULL
			strict bool   // a value too long: an error row in strict mode, else cut
		}{
			{in: `{"s":"` + long + `","v":"abc"}`, s: long, v: "abc"},
			{in: `{"s":"` + long + `é","v":"日本"}`, s: long + "é", v: "日本"},
			{in: `{"s":"é` + long + `","v":"a"}`, s: "é" + long, v: "a"},
			{in: `{"s":"` + long + "\xff" + `","v":"a"}`, null: "s", v: "a"},
			{in: `{"s":"` + long + "\xc3" + `","v":"a"}`, null: "s", v: "a"},
			{in: `{"s":"a\u00e9` + long + `","v":"a"}`, s: "aé" + long, v: "a"},
			{in: `{"s":"a","v":"` + "\xffabc" + `"}`, s: "a", null: "v"},
			{in: `{"s":"a","v":"123456789"}`, s: "a", v: "12345678", strict: true},
			{in: `{"s":"a","v":"12345678"}`, s: "a", v: "12345678"},
		} {
			row, err := p.Parse([]byte(tc.in), nil)
			if (tc.null != "" || tc.strict) && strict {
				if err == nil {
					t.Errorf("strict %v, %q: loaded %q %q, want an error row", strict, tc.in, row[0].Str, row[1].Str)
				}
				continue
			}
			if err != nil {
				t.Errorf("strict %v, %q: %v", strict, tc.in, err)
				continue
			}
			if row[0].Null != (tc.null == "s") || row[1].Null != (tc.null == "v") {
				t.Errorf("strict %v, %q: NULL %v %v, want NULL in %q", strict, tc.in, row[0].Null, row[1].Null, tc.null)
			}
			if row[0].Str != tc.s || row[1].Str != tc.v {
				t.Errorf("strict %v, %q: got %q %q, want %q %q", strict, tc.in, row[0].Str, row[1].Str, tc.s, tc.v)
			}
		}
	}
}
