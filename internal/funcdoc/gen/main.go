// Command gen rewrites the function lists of doris/doc.go and docs/doris.md
// from the expression engine's registry (package funcdoc). Run it with
// `go generate ./doris` (its working directory is doris/).
package main

import (
	"fmt"
	"os"

	"github.com/loadnode/loadnode/internal/funcdoc"
)

func main() {
	root := ".."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := funcdoc.Write(root); err != nil {
		fmt.Fprintln(os.Stderr, "funcdoc:", err)
		os.Exit(1)
	}
}
