package config

import (
	"fmt"

	"github.com/loadnode/loadnode/api"
)

// FieldError reports the first problem found in a spec or a node config. Field
// is the YAML path of the field at fault ("kafka.offsets[2]",
// "table.columns[1].type", "max_batch_interval", "kafka.offsets.7" for the
// map form); the manager copies it into api.Error.Field.
type FieldError struct {
	Field string
	Msg   string
	// Line is the 1-based line in the YAML source the problem was found on,
	// or 0 when the spec did not come from YAML (or the line is unknown).
	Line int
}

// Error renders "config: kafka.topic: required", with " (line N)" appended
// when the line is known.
func (e *FieldError) Error() string {
	msg := "config: "
	if e.Field != "" {
		msg += e.Field + ": "
	}
	msg += e.Msg
	if e.Line > 0 {
		msg += fmt.Sprintf(" (line %d)", e.Line)
	}
	return msg
}

func fieldErr(field, format string, args ...any) *FieldError {
	// A name or value echoed in the message is cut to api.MaxEchoBytes: a
	// 10,000-character name is not echoed whole.
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > api.MaxEchoBytes {
			args[i] = api.Clip(s, api.MaxEchoBytes)
		}
	}
	return &FieldError{Field: api.Clip(field, api.MaxEchoBytes), Msg: api.Clip(fmt.Sprintf(format, args...), api.MaxMessageBytes)}
}

// SpecField names the field at fault (the actors answer the error as
// INVALID_ARGUMENT for it).
func (e *FieldError) SpecField() string { return e.Field }
