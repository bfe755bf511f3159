package api

// Final reports whether a job in state s is over: STOPPED (by its user) or
// CANCELLED. No owner acts on a final job; only a final job can be deleted;
// SHOW ROUTINE LOAD without ALL leaves it out, and a new job may take its
// name, as in Doris.
func (s JobState) Final() bool { return s == JobState_STOPPED || s == JobState_CANCELLED }
