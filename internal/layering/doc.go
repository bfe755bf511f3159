// Package layering holds the module to its layers (its tests only): which
// package may import which (the table in docs/design.md), and that no
// package users run imports test code. TestDocLinks holds the docs to the
// tree: every relative link in README.md, BENCHMARKS.md, config/SPEC.md and
// docs/*.md names a file that exists, and a #anchor a heading of it.
package layering
