package conformance

// The Doris corpus (issue 26): load cases and function rows harvested from
// Doris's regression suites, kept outside the repository, at
// ../shared/conformance/doris-corpus beside it or $LOADNODE_DORIS_CORPUS
// (its README describes the format). Every expected value in it is
// Doris's. TestDorisFunctions evaluates its functions/ rows through
// loadnode's expression engine (functions_test.go); TestDorisLoad runs its
// load/ cases through the binary (load_test.go). Each holds what does not
// pass against a checked-in known-failing table in testdata, and TestMain
// prints the summary line scripts read.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadnode/loadnode/internal/testdeps"
)

// corpusEnv names the corpus's directory when it is not beside the
// repository.
const corpusEnv = "LOADNODE_DORIS_CORPUS"

// corpusBeside is ../shared/conformance/doris-corpus relative to the
// repository's root, from this package's directory.
var corpusBeside = filepath.Join("..", "..", "..", "shared", "conformance", "doris-corpus")

// findCorpus returns the corpus's directory: $LOADNODE_DORIS_CORPUS when
// set, else the one beside the repository. When it is not there it
// returns an error naming both places.
func findCorpus() (string, error) {
	var tried []string
	if dir := os.Getenv(corpusEnv); dir != "" {
		if isCorpus(dir) {
			return dir, nil
		}
		tried = append(tried, fmt.Sprintf("$%s=%s", corpusEnv, dir))
	} else {
		tried = append(tried, fmt.Sprintf("$%s (not set)", corpusEnv))
	}
	if isCorpus(corpusBeside) {
		return corpusBeside, nil
	}
	abs, _ := filepath.Abs(corpusBeside)
	tried = append(tried, abs+" (../shared/conformance/doris-corpus beside the repository)")
	return "", fmt.Errorf("the Doris conformance corpus (a directory holding load/ and functions/) is in neither %s", strings.Join(tried, " nor "))
}

// isCorpus reports whether dir holds a corpus's load/ and functions/.
func isCorpus(dir string) bool {
	for _, sub := range []string{"load", "functions"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// requireCorpus returns the corpus's directory; without one it fails t,
// unless LOADNODE_SKIP_DORIS_CORPUS=1 skips it.
func requireCorpus(t *testing.T) string {
	t.Helper()
	dir, err := findCorpus()
	testdeps.Require(t, testdeps.DorisCorpus, err)
	return dir
}

// summary gathers the figures of the summary line; TestMain prints it
// when both areas ran.
var summary struct {
	sync.Mutex
	loadRan, funcsRan                bool
	loadPass, loadAll                int // cases that need no missing type
	funcPass, funcAll                int // rows of functions loadnode accepts
	rowsPass, rowsAll                int // every row
	loadUnsupported, funcUnsupported int
}

// summaryLine is the line scripts read, or "" when an area did not run.
func summaryLine() string {
	summary.Lock()
	defer summary.Unlock()
	if !summary.loadRan || !summary.funcsRan {
		return ""
	}
	return fmt.Sprintf("conformance-summary: load %d/%d functions %d/%d all-function-rows %d/%d unsupported %d",
		summary.loadPass, summary.loadAll, summary.funcPass, summary.funcAll, summary.rowsPass, summary.rowsAll,
		summary.loadUnsupported+summary.funcUnsupported)
}

// writeKnownEnv, set to 1, makes the corpus tests rewrite their
// known-failing tables from what they observe instead of holding what
// they observe against them: review the diff before committing it.
const writeKnownEnv = "LOADNODE_CONFORMANCE_WRITE_KNOWN"

func TestFindCorpus(t *testing.T) {
	t.Setenv(corpusEnv, filepath.Join(t.TempDir(), "nothing-here"))
	dir, err := findCorpus()
	if isCorpus(corpusBeside) {
		if err != nil || dir != corpusBeside {
			t.Errorf("findCorpus() = %q, %v; want the corpus beside the repository", dir, err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "nothing-here") || !strings.Contains(err.Error(), "../shared/conformance/doris-corpus") {
		t.Errorf("findCorpus() = %q, %v; want an error naming both places", dir, err)
	}
	good := t.TempDir()
	for _, sub := range []string{"load", "functions"} {
		if err := os.Mkdir(filepath.Join(good, sub), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			t.Fatal(err)
		}
	}
	t.Setenv(corpusEnv, good)
	if dir, err := findCorpus(); err != nil || dir != good {
		t.Errorf("findCorpus() = %q, %v; want %s", dir, err, good)
	}
}
