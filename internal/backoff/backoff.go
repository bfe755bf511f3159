// Package backoff is the one capped exponential back-off of the module:
// the supervisor's restarts, a job's source retries and auto-resumes, and
// the alert deliveries all wait Doubling(base, n, limit).
package backoff

import "time"

// Doubling is base doubled n times, at most limit (base when n <= 0; never
// more than limit, never an overflow, whatever n).
func Doubling(base time.Duration, n int, limit time.Duration) time.Duration {
	d := base
	for i := 0; i < n && d < limit; i++ {
		if d > limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}
