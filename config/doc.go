// Package config owns loadnode's two file formats: the job spec file (YAML,
// with the property names of Apache Doris Routine Load) that becomes an
// api.JobSpec, and the node config file read by `loadnode serve`. SPEC.md in
// this directory is the reference of every field and key; this comment says
// how the package reads them.
//
// Everything here is a pure function of its arguments: no I/O beyond the bytes
// the caller passes, no globals, safe for concurrent use.
//
// # Job spec
//
// ParseJobSpec reads a spec strictly (unknown or duplicate keys are errors
// that name the key and its line), fills defaults with ApplyDefaults,
// validates with ValidateJobSpec and returns the wire spec. A spec built by a
// Go program goes through ApplyDefaults then ValidateJobSpec. MarshalJobSpec
// writes a spec back in the same format. Every problem with a field is a
// *FieldError naming the field by its YAML path. Every field, its type,
// default, unit and range is in SPEC.md, the one reference (absent or null
// means "use the default"; an explicit value must be valid); column types
// are the Doris types of package table (int and float are 32-bit, bigint and
// double 64-bit).
//
// Integers may also be written as strings of decimal digits, as Doris
// properties are; digits with leading zeros are decimal, never octal.
//
// ApplyDefaults also canonicalizes: format in lower case, offsets as
// OFFSET_BEGINNING / OFFSET_END / a decimal number without leading zeros. A
// spec returned by ParseJobSpec is canonical, so
// ParseJobSpec(MarshalJobSpec(s)) equals s.
//
// # Node config
//
// Node holds the settings of `loadnode serve`; DefaultNode has every default,
// LoadNode reads a YAML file strictly over it, Node.Validate checks it, and
// Node.Values writes it back (what `serve --check-config` prints). Every key
// is declared once, with its default, decoding, validation and doc line, in
// nodeKeys (nodekeys.go; NodeKeys exports the table): SPEC.md's node-config
// table is generated from it by `go generate ./config`.
package config
