// Command gen rewrites the node-config table of config/SPEC.md from
// config.NodeKeys (package nodedoc). Run it with `go generate ./config`
// (its working directory is config/).
package main

import (
	"fmt"
	"os"

	"github.com/loadnode/loadnode/internal/nodedoc"
)

func main() {
	root := ".."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := nodedoc.Write(root); err != nil {
		fmt.Fprintln(os.Stderr, "nodedoc:", err)
		os.Exit(1)
	}
}
