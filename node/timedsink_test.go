package node

import (
	"reflect"
	"testing"

	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
)

// TestTimedSinkKeepsEveryMethod: timing the embedded store's commits (a
// node with an admin endpoint) must not hide any of its methods, since
// the actors find the optional ones (Inserter, Truncater, Dropper, the
// journaled starts) by type assertion. Every method of the store's sink
// is a method of timedSink.
func TestTimedSinkKeepsEveryMethod(t *testing.T) {
	raw := reflect.TypeOf(&persistence.Sink{})
	var timed sink.Sink = timedSink{}
	tt := reflect.TypeOf(timed)
	for i := range raw.NumMethod() {
		m := raw.Method(i)
		if _, ok := tt.MethodByName(m.Name); !ok {
			t.Errorf("timedSink hides the embedded store's %s", m.Name)
		}
	}
	for _, opt := range []any{(*sink.Inserter)(nil), (*sink.Truncater)(nil), (*sink.Dropper)(nil)} {
		it := reflect.TypeOf(opt).Elem()
		if raw.Implements(it) && !tt.Implements(it) {
			t.Errorf("timedSink is not a %s", it)
		}
	}
}
