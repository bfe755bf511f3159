package kinesis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/loadnode/loadnode/sources"
)

// Discover lists the chosen shards (and their descendants) and resolves
// the starts of those the job does not read yet: at the job's first look
// from the spec's positions, later (children of splits and merges) from
// their beginning.
func (s *Source) Discover(ctx context.Context, known map[int32]bool) ([]int32, map[int32]sources.Start, error) {
	return sources.Discover(ctx, s, known)
}

// ResolveReset resolves new positions of shards the job reads, by shard
// id. A shard's ordinal (its progress) does not move back: records read
// again after a reset get new ordinals, so no row is overwritten by
// another.
func (s *Source) ResolveReset(ctx context.Context, reset sources.Reset, cur map[int32]sources.Start) (map[int32]sources.Start, error) {
	if len(reset.Offsets) > 0 {
		return nil, &sources.ConfigError{Field: "reset_offsets", Err: errors.New("a Kinesis job's positions are reset by shard id (reset_positions)")}
	}
	byID := map[string]int32{}
	for p, st := range cur {
		byID[s.Describe(p, st.Checkpoint).ID] = p
	}
	want := map[int32]string{}
	for _, id := range slices.Sorted(maps.Keys(reset.Positions)) {
		pos := reset.Positions[id]
		p, ok := byID[id]
		if !ok {
			return nil, &sources.ConfigError{Field: "reset_positions." + id, Err: fmt.Errorf("the job does not read shard %s", id)}
		}
		canon, ok := pos, true
		if s.canonical != nil {
			canon, ok = s.canonical(pos)
		}
		if !ok {
			return nil, &sources.ConfigError{Field: "reset_positions." + id,
				Err: fmt.Errorf("%q must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number", pos)}
		}
		want[p] = canon
	}
	out, err := s.ResolveStarts(ctx, want, true)
	if err != nil {
		return nil, err
	}
	for p, st := range out {
		st.Offset = cur[p].Offset
		out[p] = st
	}
	return out, nil
}

// Render names a Kinesis position: "shard shardId-000000000001 position",
// the sequence number (or start position).
func (s *Source) Render(p int32, st sources.Start) (string, string) {
	d := s.Describe(p, st.Checkpoint)
	return "shard " + d.ID + " position", d.Seq
}
