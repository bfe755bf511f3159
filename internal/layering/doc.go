// Package layering holds the module to its layers (its tests only): which
// package may import which (the table in docs/design.md), and that no
// package users run imports test code.
package layering
