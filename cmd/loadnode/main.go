// Command loadnode runs a loadnode node (`loadnode serve`) and talks to one
// (`loadnode job ...`, `loadnode table ...`). See `loadnode help`.
//
// main only wires the process to Main (app.go), which tests drive directly.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	m := NewMain()
	err := m.ParseFlags(ctx, os.Args[1:])
	if err == nil {
		err = m.Run(ctx)
	}
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	stop()
	os.Exit(m.Report(err))
}
