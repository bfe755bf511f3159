package layering

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/loadnode/loadnode/"

// testSupport reports whether p (module-relative) is test code: the black-box
// harnesses under tests/, the test servers and helpers (a last element
// ending in "test", internal/testnode, testdeps, testcert, ledger), and the
// benchmark command built on them.
func testSupport(p string) bool {
	last := p[strings.LastIndex(p, "/")+1:]
	return strings.HasPrefix(p, "tests/") || strings.HasSuffix(last, "test") ||
		slices.Contains([]string{"internal/testnode", "internal/testdeps", "internal/testcert", "internal/ledger", "cmd/loadnode-bench"}, p)
}

// product is "any package that is not test support".
const product = "*"

// layers is, for every package of the module that is not test support, the
// module packages it may import (non-test files). docs/design.md's package
// table says why.
var layers = map[string][]string{
	"api":                  {},
	"sources":              {},
	"alerts":               {"internal/backoff"},
	"internal/backoff":     {},
	"internal/jobgroup":    {},
	"internal/remoteauth":  {},
	"table":                {"api"},
	"sink":                 {"api", "table"},
	"metastore":            {"api"},
	"supervisor":           {"internal/backoff"},
	"cluster":              {"api", "metastore/etcdmeta"},
	"metastore/etcdmeta":   {"api", "internal/jobgroup", "metastore"},
	"actors":               {"api", "internal/backoff", "metastore", "query", "sink", "sources", "supervisor", "table"},
	"persistence":          {"api", "metastore", "sink", "table"},
	"sink/postgres":        {"api", "internal/jobgroup", "sink", "table"},
	"sources/kafka":        {"api", "sources"},
	"sources/kinesis":      {"api", "sources"},
	"config":               {"api", "internal/remoteauth", "table"},
	"doris":                {"api", "config", "table"},
	"query":                {"api", "table"},
	"formats/registry":     {"api", "table"},
	"internal/layering":    {},
	"internal/funcdoc":     {"table"},
	"internal/funcdoc/gen": {"internal/funcdoc"},
	"internal/nodedoc":     {"config", "internal/funcdoc"},
	"internal/nodedoc/gen": {"internal/nodedoc"},
	"client":               {"api", "internal/remoteauth"},
	"doris/exec":           {"api", "client", "doris", "query"},
	"mysqlserver":          {"api", "client", "table"},
	"node":                 {product},
	"cmd/loadnode":         {"api", "client", "config", "doris", "doris/exec", "node", "persistence", "query", "table"},
}

// goList returns each package of the module with its imports (non-test
// files), both module-relative where they are in the module.
func goList(t *testing.T, args ...string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		p := strings.TrimPrefix(f[0], module)
		var imps []string
		for _, i := range f[1:] {
			if rel, ok := strings.CutPrefix(i, module); ok {
				imps = append(imps, rel)
			}
		}
		pkgs[p] = imps
	}
	return pkgs
}

// TestLayers: every package imports only what its row allows; no package
// that is not test support imports test support; every package has a row.
func TestLayers(t *testing.T) {
	pkgs := goList(t, "github.com/loadnode/loadnode/...")
	if len(pkgs) < 20 {
		t.Fatalf("go list named %d packages", len(pkgs))
	}
	for p, imps := range pkgs {
		if testSupport(p) {
			continue
		}
		allowed, ok := layers[p]
		if !ok {
			t.Errorf("package %s has no row in layers (internal/layering) and docs/design.md's package table: add one", p)
			continue
		}
		for _, i := range imps {
			switch {
			case testSupport(i):
				t.Errorf("%s imports test code %s: only tests and test support may", p, i)
			case slices.Contains(allowed, product):
			case !slices.Contains(allowed, i):
				t.Errorf("%s imports %s, which its layer does not allow (allowed: %v)", p, i, allowed)
			}
		}
	}
	for p := range layers {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("layers names %s, which is no package of the module", p)
		}
	}
}

// TestReleaseBinaryHasNoTestCode: the binary users run links neither the
// standard testing package nor any test support of the module.
func TestReleaseBinaryHasNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/loadnode/loadnode/cmd/loadnode").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		rel, inModule := strings.CutPrefix(dep, module)
		if dep == "testing" || strings.HasPrefix(dep, "testing/") || inModule && testSupport(rel) ||
			strings.HasSuffix(dep, "/srfake") {
			t.Errorf("cmd/loadnode links test code: %s", dep)
		}
	}
}

func TestTestSupport(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/bench": true, "internal/pgtest": true, "sink/sinktest": true, "internal/testnode": true,
		"cmd/loadnode-bench": true, "table": false, "node": false, "internal/remoteauth": false,
	} {
		if testSupport(p) != want {
			t.Errorf("testSupport(%s) = %v", p, !want)
		}
	}
}

// TestSourceNeutral: the actors know no source SDK, no statement dialect,
// no config format and no store. `go list -deps` of the package (tests
// excluded) must name none of them; a new import of one fails here.
func TestSourceNeutral(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"actors").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{
		"github.com/twmb/franz-go",
		"github.com/aws/",
		module + "doris",
		module + "config",
		module + "sources/kafka",
		module + "sources/kinesis",
		module + "persistence",
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

// TestClientIsAClient: a Go program that only wants CreateJob links no SQL
// grammar, no config or expression engine and no YAML parser. `go list
// -deps` of package client (tests excluded) must name none of them; Doris
// statements are package doris/exec's, over the typed client.
func TestClientIsAClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"client").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{module + "doris", module + "config", module + "table", module + "query", "gopkg.in/yaml.v3"}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("client depends on %s", dep)
			}
		}
	}
}
