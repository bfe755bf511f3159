package config

// The node-config table of SPEC.md comes from NodeKeys (internal/nodedoc).
//go:generate go run ../internal/nodedoc/gen
