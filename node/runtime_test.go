package node

import (
	"runtime/debug"
	"testing"
)

// TestTuneRuntime: without GOGC the process runs at DefaultGCPercent; a
// GOGC in the environment is left to the runtime.
func TestTuneRuntime(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := TuneRuntime(getenv); got != DefaultGCPercent {
		t.Errorf("TuneRuntime without GOGC = %d, want %d", got, DefaultGCPercent)
	}
	if now := debug.SetGCPercent(100); now != DefaultGCPercent {
		t.Errorf("GC percent after TuneRuntime without GOGC: %d, want %d", now, DefaultGCPercent)
	}
	for v, want := range map[string]int{"50": 50, "off": -1} {
		env["GOGC"] = v
		if got := TuneRuntime(getenv); got != want {
			t.Errorf("TuneRuntime with GOGC=%s = %d, want %d", v, got, want)
		}
		if now := debug.SetGCPercent(100); now != 100 {
			t.Errorf("GOGC=%s: TuneRuntime changed the GC percent to %d", v, now)
		}
	}
}
