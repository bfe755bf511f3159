package sources

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
)

type fakeStarter struct {
	parts   []int32
	err     error
	want    map[int32]string
	initial bool
	calls   int
}

func (f *fakeStarter) Partitions(context.Context) ([]int32, error) { return f.parts, f.err }

func (f *fakeStarter) ResolveStarts(_ context.Context, want map[int32]string, initial bool) (map[int32]Start, error) {
	f.calls++
	f.want, f.initial = want, initial
	out := map[int32]Start{}
	for p := range want {
		out[p] = Start{Offset: int64(p) * 10}
	}
	return out, nil
}

// TestDiscover: the first look (nothing known) resolves every partition as
// initial; a later look resolves only the new ones, not as initial; nothing
// new asks nothing.
func TestDiscover(t *testing.T) {
	for _, tc := range []struct {
		name        string
		known       map[int32]bool
		wantStarts  []int32
		wantInitial bool
	}{
		{"first look", nil, []int32{0, 1, 2}, true},
		{"new partition", map[int32]bool{0: true, 1: true}, []int32{2}, false},
		{"nothing new", map[int32]bool{0: true, 1: true, 2: true}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeStarter{parts: []int32{0, 1, 2}}
			parts, starts, err := Discover(context.Background(), f, tc.known)
			if err != nil || !slices.Equal(parts, f.parts) {
				t.Fatalf("Discover = %v, %v", parts, err)
			}
			if got := slices.Sorted(maps.Keys(starts)); !slices.Equal(got, tc.wantStarts) {
				t.Fatalf("starts of %v, want %v", got, tc.wantStarts)
			}
			if tc.wantStarts == nil {
				if f.calls != 0 || starts != nil {
					t.Fatalf("nothing new: %d look-ups, starts %v", f.calls, starts)
				}
				return
			}
			if f.initial != tc.wantInitial {
				t.Fatalf("initial = %v", f.initial)
			}
			for p, w := range f.want {
				if w != "" {
					t.Fatalf("partition %d asked with position %q, want the spec's", p, w)
				}
			}
		})
	}
	boom := errors.New("down")
	if _, _, err := Discover(context.Background(), &fakeStarter{err: boom}, nil); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}
