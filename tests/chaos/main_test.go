package chaos

import (
	"fmt"
	"os"
	"testing"

	"github.com/loadnode/loadnode/internal/testnode"
)

// TestMain runs the tests and prints the package's summary line last:
// chaos: records=N lost=0 duplicated=0 regressions=0 faults=K restarts=R.
func TestMain(m *testing.M) {
	code := m.Run()
	totals.mu.Lock()
	if totals.n > 0 {
		fmt.Println(totals.sum.Line())
	}
	totals.mu.Unlock()
	testnode.RemoveBinary()
	os.Exit(code)
}
