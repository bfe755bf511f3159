package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
)

// Crash makes the receiving actor (manager, scheduler, job or task) panic
// with Reason, as a fault-injection point for chaos tests. It is not a
// protobuf message, so only code in the node's own process can send it.
type Crash struct{ Reason string }

// InspectJob asks a job actor for its runtime view; it answers
// *JobRuntime. In-process only, like Crash.
type InspectJob struct{}

// JobRuntime answers InspectJob.
type JobRuntime struct {
	State      api.JobState
	Generation uint64
	Progress   map[int32]int64
	Tasks      []*actor.PID
	Timers     int // timers held (pending ones only)
}

// crashOn panics if msg is a *Crash. Every actor calls it first (a job
// actor once its stop latch has admitted the message, stopping.go).
func crashOn(msg any) {
	if c, ok := msg.(*Crash); ok {
		panic("actors: injected crash: " + c.Reason)
	}
}

// PanicError is a panic recovered in a goroutine an actor started (a source
// read, a look-up), reported to the actor as a failure.
type PanicError struct {
	Where string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("actors: %s panicked: %v", e.Where, e.Value)
}
