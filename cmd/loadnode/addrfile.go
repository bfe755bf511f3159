package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// boundAddrs is what `serve --addr-file` writes once the node is ready:
//
//	{"addr":"127.0.0.1:41234","http":"127.0.0.1:41235","mysql":"","pid":4242}
//
// addr is the client endpoint, http the admin endpoint and mysql the
// MySQL-protocol endpoint ("" when it is off).
// Harnesses (internal/testnode) start a node on port 0 and read the ports it
// bound from here, so that no port is picked by one process and bound by
// another.
type boundAddrs struct {
	Addr  string `json:"addr"`
	HTTP  string `json:"http"`
	MySQL string `json:"mysql"`
	PID   int    `json:"pid"`
}

// writeAddrFile writes a to path atomically: a reader sees no file or the
// whole file, never a part.
func writeAddrFile(path string, a boundAddrs) error {
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("serve: --addr-file: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("serve: --addr-file: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("serve: --addr-file: %w", err)
	}
	return nil
}
