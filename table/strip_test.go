package table

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// splitRows parses a record as a task does: Split, then each element.
// Each row is rendered, an element error row as "error: reason"; a
// record error is returned as such.
func splitRows(t *testing.T, p *Parser, s *Schema, rec string) ([]string, error) {
	t.Helper()
	elems, err := p.Split([]byte(rec), nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, el := range elems {
		if el.Err != nil {
			out = append(out, "error: "+el.Err.Error())
			continue
		}
		row, err := p.Parse(el.Raw, nil)
		switch {
		case errors.Is(err, ErrFiltered):
			out = append(out, "filtered")
		case err != nil:
			out = append(out, "error: "+err.Error())
		default:
			out = append(out, render(s, row))
		}
	}
	return out, nil
}

func TestStripOuterArray(t *testing.T) {
	s := typedSchema(t, "id int", "city varchar(32)", "code bigint")
	tests := []struct {
		name string
		f    Format
		rec  string
		want []string // the rows (rendered or "error: ...")
		err  string   // or the record's error
	}{
		{"an array of objects", Format{}, `[{"id":1,"city":"a","code":10}, {"id":2,"city":"b"}]`,
			[]string{"1|a|10", "2|b|NULL"}, ""},
		{"an element with a bad value is its own error row", Format{}, `[{"id":1}, {"id":"x"}, {"id":3}]`,
			[]string{"1|NULL|NULL", `error: column id: "x" is not an INT`, "3|NULL|NULL"}, ""},
		{"no key matches a column: an error row (Doris)", Format{}, `[{"idx":1}, {"id":2}]`,
			[]string{"error: json: no key of the record matches a column or jsonpath (There is no column matching jsonpaths in the json file)", "2|NULL|NULL"}, ""},
		{"an element that is not an object fails the record", Format{}, `[{"id":1}, 2]`,
			nil, "json: element 1 of the array is a number, not an object"},
		{"invalid JSON fails the record", Format{}, `[{"id":1}, {"id":2]`, nil, "json: invalid JSON"},
		{"data after the array", Format{}, `[{"id":1}] x`, nil, "data after the JSON value"},
		{"an object is not an array", Format{}, `{"id":1}`, nil, "`strip_outer_array` must be FALSE"},
		{"a string is not an array", Format{}, `"x"`, nil, "json: record is a string, not an array"},
		{"an empty array without jsonpaths is an error (Empty json line)", Format{}, ` [ ] `, nil, "Empty json line"},
		{"an empty array with jsonpaths is no row", Format{JSONPaths: []string{"$.id", "$.city", "$.code"}}, `[]`, nil, ""},
		{"json_root names the array in an object", Format{JSONRoot: "$.data"}, `{"n":1,"data":[{"id":1},{"id":2,"code":5}]}`,
			[]string{"1|NULL|NULL", "2|NULL|5"}, ""},
		{"json_root not found", Format{JSONRoot: "$.data"}, `{"rows":[{"id":1}]}`, nil, "json: json_root $.data not found in the record"},
		{"json_root not an array", Format{JSONRoot: "$.data"}, `{"data":{"id":1}}`, nil, "`strip_outer_array` must be FALSE"},
		{"json_root is not applied to an array record without jsonpaths", Format{JSONRoot: "$.data"}, `[{"id":1}]`,
			[]string{"1|NULL|NULL"}, ""},
		{"with a mapping and a filter", Format{Columns: []string{"id", "code", "city = concat('c', id)"}, Where: "id > 1"}, `[{"id":1,"code":1},{"id":2,"code":2}]`,
			[]string{"filtered", "2|c2|2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.f
			f.Kind, f.StripOuterArray = "json", true
			p, err := NewParser(s, f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := splitRows(t, p, s, tt.rec)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Split err = %v, want one containing %q", err, tt.err)
				}
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Split err = %T, want a *ParseError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestStripOuterArrayJSONRootPerElement is the corpus case
// load/test_json_load__select16 (Doris's test_json_load.groovy, case
// select16): strip_outer_array with jsonpaths and json_root $.item, which
// Doris applies to each element. Elements whose item is missing, empty,
// an array or a string, or holds none of the paths, are error rows; the
// others load (expected.out, less the row the suite inserted before).
func TestStripOuterArrayJSONRootPerElement(t *testing.T) {
	s := typedSchema(t, "id int", "city varchar(32)", "code bigint")
	s.spec.Columns[0].DefaultValue = proto.String("10")
	s.meta[0].hasDef, s.meta[0].def = true, Value{Int: 10}
	p, err := NewParser(s, Format{Kind: "json", StripOuterArray: true, Columns: []string{"id", "code", "city"},
		JSONPaths: []string{"$.id", "$.code", "$.city[2]"}, JSONRoot: "$.item"})
	if err != nil {
		t.Fatal(err)
	}
	item := func(no, id int, city string, code int) string {
		return `{"no":` + strconv.Itoa(no) + `,"item":{"id":` + strconv.Itoa(id) + `,"city":["zhejiang","hangzhou","` + city + `"],"code":` + strconv.Itoa(code) + `}}`
	}
	rec := "[" + strings.Join([]string{
		item(1, 1, "xihu", 2345671), item(2, 2, "xiaoshan", 2345672), item(3, 3, "binjiang", 2345673),
		item(4, 4, "shangcheng", 2345674), item(5, 5, "tonglu", 2345675), item(6, 6, "fuyang", 2345676),
		`{"no":7,"item":{"idx":2,"cityx":["zhejiang","hangzhou","xiaoshan"],"codex":2345672}}`,
		`{"no":7,"item":{}}`, `{"no":7,"item":[]}`, `{"no":7,"itemxxx":{}}`, `{"no":7,"item":"123"}`, `{"no":7,"item":{}}`,
		item(8, 7, "fuyang", 2345676),
	}, ",\n") + "]"
	got, err := splitRows(t, p, s, rec)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	errorRows := 0
	for _, r := range got {
		if strings.HasPrefix(r, "error: ") {
			errorRows++
			continue
		}
		rows = append(rows, r)
	}
	want := []string{"1|xihu|2345671", "2|xiaoshan|2345672", "3|binjiang|2345673", "4|shangcheng|2345674",
		"5|tonglu|2345675", "6|fuyang|2345676", "7|fuyang|2345676"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") || errorRows != 6 {
		t.Fatalf("rows:\n%s\n(%d error rows)\nwant:\n%s\n(6 error rows)\nall: %q", strings.Join(rows, "\n"), errorRows, strings.Join(want, "\n"), got)
	}
}

func TestStripOuterArrayRefused(t *testing.T) {
	s := typedSchema(t, "id int")
	for _, f := range []Format{{Kind: "csv", StripOuterArray: true}, {Kind: "avro", StripOuterArray: true}} {
		_, err := NewParser(s, f)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "strip_outer_array" {
			t.Errorf("NewParser(%s, strip_outer_array) = %v, want a *FieldError on strip_outer_array", f.Kind, err)
		}
	}
	// Without strip_outer_array an array record says what to set.
	p, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse([]byte(`[{"id":1}]`), nil); err == nil || !strings.Contains(err.Error(), "`strip_outer_array` must be TRUE") {
		t.Errorf("array record without strip_outer_array: %v", err)
	}
	if elems, err := p.Split([]byte(`[{"id":1}]`), nil); err != nil || len(elems) != 1 || string(elems[0].Raw) != `[{"id":1}]` {
		t.Errorf("Split without strip_outer_array = %q, %v; want the record itself", elems, err)
	}
}

// TestAppendElement: element 0 keeps the record's key; element k > 0 sorts
// after it and before the next record's; keyed tables are unchanged.
func TestAppendElement(t *testing.T) {
	dup := typedSchema(t, "id int")
	k0 := AppendElement(AppendRowKey(nil, dup, Pos{JobID: 1, Offset: 7}, nil), dup, 0)
	k1 := AppendElement(AppendRowKey(nil, dup, Pos{JobID: 1, Offset: 7}, nil), dup, 1)
	k2 := AppendElement(AppendRowKey(nil, dup, Pos{JobID: 1, Offset: 7}, nil), dup, 2)
	next := AppendElement(AppendRowKey(nil, dup, Pos{JobID: 1, Offset: 8}, nil), dup, 0)
	if string(k0) != string(AppendRowKey(nil, dup, Pos{JobID: 1, Offset: 7}, nil)) {
		t.Errorf("element 0 changed the key")
	}
	if !(string(k0) < string(k1) && string(k1) < string(k2) && string(k2) < string(next)) {
		t.Errorf("keys do not sort record, element: %x %x %x %x", k0, k1, k2, next)
	}
}
