package doris

// The function lists of doc.go and docs/doris.md come from the expression
// engine's registry (internal/funcdoc).
//go:generate go run ../internal/funcdoc/gen
