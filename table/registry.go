package table

import "slices"

// FunctionInfo describes one function of the expression engine's registry:
// its name and the number of arguments it takes.
type FunctionInfo struct {
	Name  string // upper case, as expressions may call it (any case)
	Arity string // "1", "2 to 3", "1 or more"; "INTERVAL" for the INTERVAL forms
}

// intervalForms are the functions whose last argument may be INTERVAL n
// unit (the parser reads it: exprParser.primary).
var intervalForms = map[string]bool{
	"DATE_ADD": true, "DATE_SUB": true, "DAYS_ADD": true, "DAYS_SUB": true, "ADDDATE": true, "SUBDATE": true,
	"DATE_FLOOR": true, "DATE_CEIL": true,
}

// Functions lists every function expressions may call, sorted by name: the
// functions table and the forms the parser reads itself. It is the one
// source of the lists in the docs (doris/doc.go, docs/doris.md; go generate
// ./doris), so they cannot drift from what the engine accepts.
func Functions() []FunctionInfo {
	var out []FunctionInfo
	for name, f := range functions {
		arity := f.arity()
		if intervalForms[name] {
			arity = "INTERVAL"
		}
		out = append(out, FunctionInfo{Name: name, Arity: arity})
	}
	slices.SortFunc(out, func(a, b FunctionInfo) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
