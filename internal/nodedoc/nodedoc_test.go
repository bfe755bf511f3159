package nodedoc

import (
	"os"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/funcdoc"
)

// TestDocsCurrent fails when SPEC.md's node-config table is not what
// config.NodeKeys makes: a key added, removed, re-defaulted or
// re-documented without go generate ./config.
func TestDocsCurrent(t *testing.T) {
	doc, err := os.ReadFile("../../" + Path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := funcdoc.Splice(doc, MdBegin, MdEnd, MdTable())
	if err != nil {
		t.Fatalf("%s: %v", Path, err)
	}
	if string(out) != string(doc) {
		t.Errorf("%s: the node-config table is stale: run go generate ./config", Path)
	}
}

// TestTableNamesEveryKey: one row a key, with its default.
func TestTableNamesEveryKey(t *testing.T) {
	md := MdTable()
	keys := config.NodeKeys()
	if rows := strings.Count(md, "\n") - 2; rows != len(keys) {
		t.Fatalf("%d rows for %d keys", rows, len(keys))
	}
	for _, k := range keys {
		if !strings.Contains(md, "| `"+k.Name+"` | ") {
			t.Errorf("no row for %s", k.Name)
		}
	}
	for _, want := range []string{"| `max_record_size` | `16MiB` (16777216) |", "| `source_retry_max` | `30s` |", "| `http` | `\"\"` (off) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
