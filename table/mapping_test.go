package table

import (
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

func render(s *Schema, row []Value) string {
	var parts []string
	for i, c := range s.Columns() {
		parts = append(parts, formatValue(c, row[i]))
	}
	return strings.Join(parts, "|")
}

func TestMapping(t *testing.T) {
	s := typedSchema(t, "id int", "name varchar(20)", "score int", "x2 bigint", "d datetime")
	s.spec.Columns[1].DefaultValue = proto.String("anon")
	s.meta[1].hasDef, s.meta[1].def = true, Value{Str: "anon"}
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	tests := []struct {
		name string
		f    Format
		in   string
		want string // the row, or the error
	}{
		{"subset, other order", Format{Columns: []string{"score", "id"}}, "90,1", "1|anon|90|NULL|NULL"},
		{"temporary and expression", Format{Columns: []string{"id", "tmp", "x2 = tmp * 100", "score = length(tmp)"}}, "1,abc", "1|anon|3|NULL|NULL"},
		{"arithmetic", Format{Columns: []string{"id", "s", "score = s + 1", "x2 = s * 2"}}, "1,41", "1|anon|42|82|NULL"},
		{"only expressions: every column by name", Format{Kind: "json", Columns: []string{"score = score + 1"}}, `{"id": 1, "name": "alice", "score": 10}`, "1|alice|11|NULL|NULL"},
		{"a name no column has: computes nothing, as Doris", Format{Kind: "json", Columns: []string{"nope = nope * 10"}}, `{"id": 1, "score": 10}`, "1|anon|10|NULL|NULL"},
		{"a name no column has: a temporary later expressions read", Format{Columns: []string{"id", "t", "tmp = t * 2", "score = tmp + 1"}}, "1,5", "1|anon|11|NULL|NULL"},
		{"a computed column read by a later expression takes its computed value", Format{Columns: []string{"id", "score", "score = score * 10", "x2 = score + 1"}}, "1,5", "1|anon|50|51|NULL"},
		{"an expression reads the field of the column it computes", Format{Kind: "json", Columns: []string{"score = score * 10", "x2 = score"}}, `{"id": 1, "score": 3}`, "1|anon|30|30|NULL"},
		{"expression over a column loaded as is", Format{Kind: "json", Columns: []string{"x2 = score * 2"}}, `{"id": 1, "score": 10}`, "1|anon|10|20|NULL"},
		{"case and ifnull", Format{Columns: []string{"id", "t", "name = CASE WHEN t > 5 THEN 'big' ELSE ifnull(NULL, 'small') END"}}, "1,7", "1|big|NULL|NULL|NULL"},
		{"if, concat_ws, upper", Format{Columns: []string{"id", "a", "b", "name = if(a = 'x', concat_ws('-', upper(a), b, NULL), 'no')"}}, "1,x,y", "1|X-y|NULL|NULL|NULL"},
		{"from_unixtime in the job's zone", Format{Columns: []string{"id", "ts", "d = from_unixtime(ts)"}, Location: shanghai}, "1,1764583200", "1|anon|NULL|NULL|2025-12-01 18:00:00"},
		{"unix_timestamp", Format{Columns: []string{"id", "t", "x2 = unix_timestamp(t)"}}, "1,2025-12-01 10:00:00", "1|anon|NULL|1764583200|NULL"},
		{"str_to_date, date_add", Format{Columns: []string{"id", "t", "d = date_add(str_to_date(t, '%d/%m/%Y %H:%i'), INTERVAL 1 DAY)"}}, "1,31/12/2023 23:59", "1|anon|NULL|NULL|2024-01-01 23:59:00"},
		{"date_format, split_part, substr", Format{Columns: []string{"id", "t", "name = concat(date_format(t, '%Y%m'), split_part('a.b.c', '.', 2), substr('hello', 2, 3))"}}, "1,2024-02-03", "1|202402bell|NULL|NULL|NULL"},
		{"json functions", Format{Columns: []string{"id", "j", "name = get_json_string(j, '$.a.b')", "score = json_extract(j, '$.n[1]')"}, ColumnSeparator: "|"}, `1|{"a": {"b": "deep"}, "n": [1, 2]}`, "1|deep|2|NULL|NULL"},
		{"cast", Format{Columns: []string{"id", "f", "score = cast(f as int)"}}, "1,3.9", "1|anon|3|NULL|NULL"},
		{"non-strict: a bad result is NULL", Format{NonStrict: true, Columns: []string{"id", "t", "score = t"}}, "1,abc", "1|anon|NULL|NULL|NULL"},
		{"non-strict: a text too long is cut at a character", Format{NonStrict: true, Columns: []string{"id", "t", "name = concat(t, t)"}}, "1,中1234567890", "1|中1234567890中1234|NULL|NULL|NULL"},
		{"strict: a text too long is an error", Format{Columns: []string{"id", "t", "name = concat(t, t)"}}, "1,中1234567890", `column name: name = ...: "中1234567890中1234567890" is 26 bytes, longer than VARCHAR(20)`},
		{"strict: a bad result is an error", Format{Columns: []string{"id", "t", "score = t"}}, "1,abc", `column score: score = ...: "abc" is not an INT`},
		{"where keeps", Format{Columns: []string{"id", "score"}, Where: "score > 50 AND name = 'anon'"}, "1,90", "1|anon|90|NULL|NULL"},
		{"where filters", Format{Columns: []string{"id", "score"}, Where: "score > 50"}, "1,10", ErrFiltered.Error()},
		{"where on NULL filters", Format{Columns: []string{"id", "score"}, Where: "score in (1, 2)"}, `1,\N`, ErrFiltered.Error()},
		{"where on a temporary", Format{Columns: []string{"id", "tmp"}, Where: "tmp LIKE 'a%' and tmp not between 'b' and 'c'"}, "1,abc", "1|anon|NULL|NULL|NULL"},
		{"too few fields", Format{Columns: []string{"id", "score"}}, "1", "csv: 1 field, the column mapping has 2 fields"},
		{"jsonpaths with $.", Format{Kind: "json", Columns: []string{"id", "name"}, JSONPaths: []string{`["$.id", "$."]`}}, `{"id": 3, "x": 1}`, `3|{"id": 3, "x": 1}|NULL|NULL|NULL`},
		{"fewer jsonpaths than fields: the rest are missing, as Doris", Format{Kind: "json", Columns: []string{"id", "name", "score", "x2 = id * 10 + 200"}, JSONPaths: []string{`["$.id", "$.n"]`}}, `{"id": 3, "n": "bo", "score": 4}`, "3|bo|NULL|230|NULL"},
		{"fewer jsonpaths than fields: a missing field takes its column's DEFAULT", Format{Kind: "json", Columns: []string{"id= id * 10"}, JSONPaths: []string{`["$.id"]`}}, `{"id": 3, "name": "bo"}`, "30|anon|NULL|NULL|NULL"},
		{"more jsonpaths than fields: the rest are unused, as Doris", Format{Kind: "json", Columns: []string{"id"}, JSONPaths: []string{`["$.id", "$.n"]`}}, `{"id": 3, "n": "bo"}`, "3|anon|NULL|NULL|NULL"},
		{"json_root", Format{Kind: "json", JSONRoot: "$.data", Columns: []string{"id", "score"}}, `{"data": {"id": 4, "score": 5}, "id": 9}`, "4|anon|5|NULL|NULL"},
		{"json_root with jsonpaths", Format{Kind: "json", JSONRoot: "$.data", JSONPaths: []string{"$.a[1]"}, Columns: []string{"id"}}, `{"data": {"a": [7, 8]}}`, "8|anon|NULL|NULL|NULL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			row, err := p.Parse([]byte(tt.in), nil)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = render(s, row)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	p, _ := NewParser(s, Format{Columns: []string{"id"}, Where: "id = 1"})
	if _, err := p.Parse([]byte("2"), nil); !errors.Is(err, ErrFiltered) {
		t.Errorf("err = %v, want ErrFiltered", err)
	}
}

func TestMappingErrors(t *testing.T) {
	s := typedSchema(t, "id int", "name string")
	for _, tt := range []struct {
		f     Format
		field string
		msg   string
	}{
		{Format{Columns: []string{"id", "id"}}, "columns_mapping[1]", "named twice"},
		{Format{Columns: []string{"id", "tmp = idx + 1", "name = tmp"}}, "columns_mapping[1]", `unknown field "idx"`},
		{Format{Columns: []string{"id", "name = tmp", "tmp = id + 1"}}, "columns_mapping[1]", `unknown field "tmp"`},
		{Format{Columns: []string{"id", "tmp = frobnicate(id)"}}, "columns_mapping[1]", "unknown function FROBNICATE"},
		{Format{Columns: []string{"id", "name = idx + 1"}}, "columns_mapping[1]", `unknown field "idx"`},
		{Format{Columns: []string{"id", "name = frobnicate(id)"}}, "columns_mapping[1]", "unknown function FROBNICATE"},
		{Format{Columns: []string{"id", "name = concat(id"}}, "columns_mapping[1]", "expected"},
		{Format{Columns: []string{"id"}, Where: "nope > 1"}, "where", "unknown field"},
		{Format{JSONRoot: "$.a"}, "json_root", "json format only"},
	} {
		_, err := NewParser(s, tt.f)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Msg, tt.msg) {
			t.Errorf("%+v: err = %v, want %s: %s", tt.f, err, tt.field, tt.msg)
		}
	}
}

// TestMappingUnreadTemporary: a temporary nothing reads is dropped as
// Doris drops it: not evaluated, and the metadata it names is not fetched.
func TestMappingUnreadTemporary(t *testing.T) {
	s := typedSchema(t, "id int", "name string")
	m, err := compileMapping(s, []string{"id", "tmp = concat(__key, nope)", "name = 'x'"}, "", "", "", time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.metas) != 0 || m.derived[0].expr != nil {
		t.Errorf("metas %v, derived %+v: want the temporary dropped", m.metas, m.derived[0])
	}
}

// TestMappingCase04 is the mapping of conformance case 04: 19 of 37
// columns named, the rest from their DEFAULTs.
func TestMappingCase04(t *testing.T) {
	s := typedSchema(t, "k00 int", "k01 date", "k02 boolean", "kd01 boolean", "kd15 char(255)", "kd18 json")
	s.spec.Columns[0].NotNull = true
	s.meta[0].notNull = true
	for i, d := range map[int]string{3: "TRUE", 4: "我能吞下玻璃而不伤身体"} {
		v, reason := convertText(s.types[i], s.meta[i], []byte(d))
		if reason != "" {
			t.Fatal(reason)
		}
		s.meta[i].hasDef, s.meta[i].def = true, v
	}
	p, err := NewParser(s, Format{ColumnSeparator: "|", NonStrict: true, Columns: []string{"k00", "k01", "k02"}})
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Parse([]byte("8|2023-08-14|TRUE"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(s, row), "8|2023-08-14|true|true|我能吞下玻璃而不伤身体|NULL"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestEncloseEscape(t *testing.T) {
	s := typedSchema(t, "k1 int", "k2 string", "v1 date", "v2 string", "v3 datetime", "v4 string")
	for _, tt := range []struct {
		f    Format
		in   string
		want string
	}{
		// Case 05: enclose "e", escape "f"; quotes are literal.
		{Format{Enclose: 'e', Escape: 'f'}, `1,eab,cfede,2023-07-15,def,2023-07-20 05:48:31,"ghi"`, `1|ab,ced|2023-07-15|de|2023-07-20 05:48:31|"ghi"`},
		// Doris's default: no enclose, quotes literal.
		{Format{NoEnclose: true}, `1,eab,2023-07-15,def,2023-07-20 05:48:31,"ghi"`, `1|eab|2023-07-15|def|2023-07-20 05:48:31|"ghi"`},
		// loadnode's default: '"' encloses.
		{Format{}, `1,"a,b",2023-07-15,def,2023-07-20 05:48:31,"gh""i"`, `1|a,b|2023-07-15|def|2023-07-20 05:48:31|gh"i`},
		{Format{Escape: '\\'}, `1,a\,b,2023-07-15,d\\f,2023-07-20 05:48:31,"x\"y"`, "csv: 7 fields, table has 6 columns"},
		{Format{Escape: '\\'}, `1,ab\,2023-07-15,d\\f,2023-07-20 05:48:31,"x\"y"`, `1|ab|2023-07-15|d\f|2023-07-20 05:48:31|x"y`},
	} {
		p, err := NewParser(s, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		row, err := p.Parse([]byte(tt.in), nil)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = render(s, row)
		}
		if got != tt.want {
			t.Errorf("%+v %s:\n got  %s\n want %s", tt.f, tt.in, got, tt.want)
		}
	}
}
