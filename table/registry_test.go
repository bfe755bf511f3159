package table

import "testing"

// TestIntervalFormsParse: every function listed as taking INTERVAL parses
// with one, so the docs' list says what the parser reads.
func TestIntervalFormsParse(t *testing.T) {
	for name := range intervalForms {
		if _, err := EvalConst(name+"('2024-01-31', INTERVAL 1 DAY)", nil); err != nil {
			t.Errorf("%s with INTERVAL: %v", name, err)
		}
		if _, ok := functions[name]; !ok {
			t.Errorf("%s is no function of the registry", name)
		}
	}
}
