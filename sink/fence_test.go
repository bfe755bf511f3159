package sink

import "testing"

func TestEpochFence(t *testing.T) {
	if EpochFence(5, MaxLocal) >= EpochFence(6, 0) {
		t.Error("a later epoch's lowest fence is not above an earlier epoch's highest")
	}
	if f := EpochFence(77, 12); FenceEpoch(f) != 77 || FenceLocal(f) != 12 {
		t.Errorf("EpochFence(77, 12) = %d: epoch %d local %d", f, FenceEpoch(f), FenceLocal(f))
	}
	if int64(EpochFence(1<<40-1, MaxLocal)) < 0 {
		t.Error("fences of epochs below 2^40 must fit a signed 64-bit column")
	}
}
