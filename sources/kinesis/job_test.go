package kinesis

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/sources"
)

// TestResolveResetRefusals: a Kinesis reset names positions of shards the
// job reads, spelled as the spec's canonical form allows; anything else is
// a ConfigError naming the field, found before any look-up.
func TestResolveResetRefusals(t *testing.T) {
	upper := func(s string) (string, bool) {
		u := strings.ToUpper(s)
		return u, u == TrimHorizon || u == Latest
	}
	s, err := NewSource(testSpec("http://127.0.0.1:1", "s"), Options{CanonicalPosition: upper})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cur := map[int32]sources.Start{0: {Offset: 7, Checkpoint: EncodeCheckpoint(Checkpoint{Shard: ShardID(0), Start: TrimHorizon})}}
	for _, tc := range []struct {
		reset sources.Reset
		field string
	}{
		{sources.Reset{Offsets: map[int32]string{0: "1"}}, "reset_offsets"},
		{sources.Reset{Positions: map[string]string{ShardID(9): Latest}}, "reset_positions." + ShardID(9)},
		{sources.Reset{Positions: map[string]string{ShardID(0): "yesterday"}}, "reset_positions." + ShardID(0)},
	} {
		var ce *sources.ConfigError
		if _, err := s.ResolveReset(context.Background(), tc.reset, cur); !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("ResolveReset(%+v) = %v, want a ConfigError on %s", tc.reset, err, tc.field)
		}
	}
	if p, pos := s.Render(0, cur[0]); p != "shard "+ShardID(0)+" position" || pos != TrimHorizon {
		t.Fatalf("Render = %q, %q", p, pos)
	}
}
