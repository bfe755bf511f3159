package config

import (
	"errors"
	"strings"
	"testing"
)

// TestSpecNesting (probe 2026-12-02, D6): YAML nesting deeper than
// yaml.v3's 10,000 levels, flow or block style, is refused naming the
// limit. (The expressions and jsonpaths a spec holds are checked by the
// table package when a node prepares the spec: table.MaxExprDepth.)
func TestSpecNesting(t *testing.T) {
	const n = 100_000
	var block strings.Builder // 10,001 levels of block mappings (50 MB of indentation)
	block.WriteString(minimal + "where:\n")
	for i := range 10_001 {
		block.WriteString(strings.Repeat(" ", i+1) + "a:\n")
	}
	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"flow sequences", minimal + "columns_mapping: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", "exceeded max depth of 10000"},
		{"flow mappings", minimal + "where: " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n) + "\n", "exceeded max depth of 10000"},
		{"block sequences", minimal + "jsonpaths:\n  " + strings.Repeat("- ", n) + "x\n", "exceeded max depth of 10000"},
		{"block mappings", block.String(), "exceeded max depth of 10000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseJobSpec([]byte(tt.yaml))
			if s != nil || err == nil || !strings.HasPrefix(err.Error(), "config: ") || !strings.Contains(err.Error(), tt.want) || len(err.Error()) > 2000 {
				t.Fatalf("ParseJobSpec = %.300v, want an error naming %q", err, tt.want)
			}
			var fe *FieldError
			if errors.As(err, &fe) {
				t.Logf("%s: %.200s", fe.Field, fe.Msg)
			}
		})
	}
}
