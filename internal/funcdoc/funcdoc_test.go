package funcdoc

import (
	"os"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/table"
)

// TestDocsCurrent fails when a list in the docs is not what the registry
// makes: a function added, removed or renamed without go generate ./doris.
func TestDocsCurrent(t *testing.T) {
	for _, f := range Files() {
		doc, err := os.ReadFile("../../" + f.Path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Splice(doc, f.Begin, f.End, f.List)
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		if string(out) != string(doc) {
			t.Errorf("%s: the function list is stale: run go generate ./doris", f.Path)
		}
	}
}

// TestListsNameEveryFunction: each list names every function of the
// registry, and KnownFunction accepts every name listed.
func TestListsNameEveryFunction(t *testing.T) {
	fs := table.Functions()
	if len(fs) < 50 {
		t.Fatalf("only %d functions listed", len(fs))
	}
	goList, md := GoList(), MdList()
	for _, f := range fs {
		if !table.KnownFunction(f.Name) {
			t.Errorf("%s listed but not known", f.Name)
		}
		if !strings.Contains(goList, "\t"+f.Name+" ") {
			t.Errorf("doc.go list misses %s", f.Name)
		}
		if !strings.Contains(md, "`"+strings.ToLower(f.Name)+"`") {
			t.Errorf("docs/doris.md list misses %s", f.Name)
		}
	}
	if table.KnownFunction("FROBNICATE") || strings.Contains(goList, "FROBNICATE") {
		t.Error("an unknown function is listed")
	}
}

func TestSplice(t *testing.T) {
	doc := "a\nB\nold\nE\nz\n"
	out, err := Splice([]byte(doc), "B", "E", "new\n")
	if err != nil || string(out) != "a\nB\nnew\nE\nz\n" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := Splice([]byte("a\n"), "B", "E", ""); err == nil {
		t.Error("missing marker accepted")
	}
	if _, err := Splice([]byte("B\nx\n"), "B", "E", ""); err == nil {
		t.Error("missing end marker accepted")
	}
}
