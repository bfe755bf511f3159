package table

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
				// A valid JSON object fails only on a column (or on depth).
				if valid && isObject && pe.Column == "" && !strings.Contains(pe.Reason, "nesting deeper") {
					t.Fatalf("Parse(%q) = %v, but encoding/json says it is valid", data, err)
				}
				continue
			}
			if !valid {
				t.Fatalf("Parse(%q) succeeded, but encoding/json says it is invalid", data)
			}
			checkRoundTrip(t, s, row)
			// The row rendered as JSON parses back to itself.
			out := AppendJSON(nil, s, row)
			if !json.Valid(out) {
				t.Fatalf("AppendJSON = %s: invalid JSON", out)
			}
			back, err := again.Parse(out, nil)
			if err != nil {
				t.Fatalf("Parse(AppendJSON) = %v for %s", err, out)
			}
			if !equalRows(back, row) {
				t.Fatalf("Parse(AppendJSON(row)) != row\n got %+v\nwant %+v\njson %s", back, row, out)
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
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range []*Parser{comma, multi} {
			row, err := p.Parse(data, nil)
			checkBorrowed(t, p, data, row, err)
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("Parse error %v is not a *ParseError", err)
				}
				continue
			}
			checkRoundTrip(t, s, row)
			if !json.Valid(AppendJSON(nil, s, row)) {
				t.Fatalf("AppendJSON of %+v is invalid JSON", row)
			}
		}
	})
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
