package sources

import "context"

// Starter is a source whose partitions are listed by one look-up and whose
// starts are resolved by another (Kinesis shards; the actors' test
// sources).
type Starter interface {
	// Partitions lists the partitions the job reads now, sorted.
	Partitions(ctx context.Context) ([]int32, error)
	// ResolveStarts returns the start of each partition of want. A
	// non-empty value is an explicit position for it; "" means the spec
	// decides: where the spec says at the job's first look (initial), from
	// the partition's beginning later.
	ResolveStarts(ctx context.Context, want map[int32]string, initial bool) (map[int32]Start, error)
}

// Discover lists s's partitions and resolves the starts of those not in
// known, as the spec says for each (initial when known is empty: the job's
// first look). It returns no starts when every partition is known.
func Discover(ctx context.Context, s Starter, known map[int32]bool) ([]int32, map[int32]Start, error) {
	parts, err := s.Partitions(ctx)
	if err != nil {
		return nil, nil, err
	}
	want := map[int32]string{}
	for _, p := range parts {
		if !known[p] {
			want[p] = ""
		}
	}
	if len(want) == 0 {
		return parts, nil, nil
	}
	starts, err := s.ResolveStarts(ctx, want, len(known) == 0)
	return parts, starts, err
}
