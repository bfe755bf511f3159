package bench

import "testing"

func TestRecoveryLine(t *testing.T) {
	log := "time=x level=INFO msg=\"Found 1 WALs\"\n" +
		"time=y level=INFO msg=\"recovered jobs\" jobs=3 load=1ms journal=0s respawning=3\n" +
		"time=z level=INFO msg=\"loadnode: node started\"\n" +
		"time=z level=INFO msg=\"respawned jobs\" jobs=3 spawn=2ms\n"
	if got, want := recoveryLine(log), "jobs=3 load=1ms journal=0s respawning=3; respawned jobs=3 spawn=2ms"; got != want {
		t.Errorf("recoveryLine = %q, want %q", got, want)
	}
	if got := recoveryLine("msg=\"loadnode: node started\"\n"); got != "" {
		t.Errorf("recoveryLine without the line = %q", got)
	}
}
