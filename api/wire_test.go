package api

import (
	"strings"
	"testing"
)

func TestJobStateFinal(t *testing.T) {
	for s := range JobState_name {
		st := JobState(s)
		want := st == JobState_STOPPED || st == JobState_CANCELLED
		if st.Final() != want {
			t.Errorf("%s.Final() = %v, want %v", st, st.Final(), want)
		}
	}
}

func TestValidListSort(t *testing.T) {
	for _, k := range append([]string{""}, ListSortKeys...) {
		if err := ValidListSort(k); err != nil {
			t.Errorf("ValidListSort(%q): %v", k, err)
		}
	}
	err := ValidListSort("bogus")
	if err == nil || !strings.Contains(err.Error(), strings.Join(ListSortKeys, ", ")) {
		t.Errorf("ValidListSort(bogus) = %v, want the allowed keys named", err)
	}
}
