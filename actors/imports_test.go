package actors

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSourceNeutral: the actors know no source SDK, no statement dialect
// and no config format. `go list -deps` of the package (tests excluded)
// must name none of them; a new import of one fails here.
func TestSourceNeutral(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/loadnode/loadnode/actors").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/twmb/franz-go",
		"github.com/aws/",
		"github.com/loadnode/loadnode/doris",
		"github.com/loadnode/loadnode/config",
		"github.com/loadnode/loadnode/sources/kafka",
		"github.com/loadnode/loadnode/sources/kinesis",
		"github.com/loadnode/loadnode/persistence",
		"github.com/cockroachdb/pebble",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/") || strings.HasPrefix(dep, f) && strings.HasSuffix(f, "/") {
				t.Errorf("actors depends on %s", dep)
			}
		}
	}
}
