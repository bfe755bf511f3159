package testnode

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// mainPkg is the package of the loadnode binary.
const mainPkg = "github.com/loadnode/loadnode/cmd/loadnode"

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// BuildBinary builds cmd/loadnode once per process, as `make loadnode` does
// (CGO_ENABLED=0), into a temporary directory, and returns its path. The
// go command runs in the current directory, which must be inside the
// module (a test's package directory is). RemoveBinary removes it.
func BuildBinary() (string, error) {
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "loadnode-testnode-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "loadnode")
		cmd := exec.Command("go", "build", "-o", built.path, mainPkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("testnode: build loadnode: %v\n%s", err, out)
		}
	})
	return built.path, built.err
}

// RemoveBinary removes what BuildBinary built; a TestMain calls it after
// m.Run.
func RemoveBinary() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
