package table

import (
	"errors"
	"strings"
	"testing"
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
