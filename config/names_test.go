package config

import (
	"os"
	"strings"
	"testing"
)

// TestNamePatternsDocumented: SPEC.md and docs/limits.md give the
// patterns the code checks: a job name may hold '-', a table name may not
// (the table package, which every sink shares, refuses it).
func TestNamePatternsDocumented(t *testing.T) {
	row := func(file, prefix string) string {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
		t.Fatalf("%s has no line starting %q", file, prefix)
		return ""
	}
	for _, c := range []struct{ file, prefix, want string }{
		{"SPEC.md", "| `name` |", "`" + namePattern.String() + "`"},
		{"SPEC.md", "| `table.name` |", "`" + tableNamePattern.String() + "`"},
		{"../docs/limits.md", "| job names |", "`" + strings.TrimSuffix(strings.TrimPrefix(namePattern.String(), "^"), "{0,127}$") + "`"},
		{"../docs/limits.md", "| table and column names |", "`" + strings.TrimSuffix(strings.TrimPrefix(tableNamePattern.String(), "^"), "{0,127}$") + "`"},
	} {
		if line := row(c.file, c.prefix); !strings.Contains(line, c.want) {
			t.Errorf("%s says\n\t%s\nwant it to give %s", c.file, line, c.want)
		}
	}
	if !tableNamePattern.MatchString("x_y") || tableNamePattern.MatchString("x-y") || !namePattern.MatchString("x-y") {
		t.Errorf("table names %s, job names %s: want '-' in job names only", tableNamePattern, namePattern)
	}
}
