package client

import (
	"errors"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  Error
		want string
	}{
		{"field and plain message", Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "kafka.topic", Message: "required"}, "INVALID_ARGUMENT: kafka.topic: required"},
		{"message names the field", Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "kafka.topic", Message: "config: kafka.topic: required"}, "INVALID_ARGUMENT: kafka.topic: required"},
		{"message starts with the field", Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "name", Message: "name: required"}, "INVALID_ARGUMENT: name: required"},
		{"field inside a word is not a match", Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "name", Message: "table.name: required"}, "INVALID_ARGUMENT: name: table.name: required"},
		{"no field", Error{Code: api.ErrorCode_FAILED_PRECONDITION, Message: "job x is STOPPED"}, "FAILED_PRECONDITION: job x is STOPPED"},
		{"field of another code is not shown", Error{Code: api.ErrorCode_NOT_FOUND, Field: "name", Message: `job "x" not found`}, `NOT_FOUND: job "x" not found`},
		{"empty message", Error{Code: api.ErrorCode_INTERNAL}, "INTERNAL: (no message)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFromAPI(t *testing.T) {
	if err := fromAPI(nil); err != nil {
		t.Errorf("nil: %v", err)
	}
	if err := fromAPI(&api.Error{Code: api.ErrorCode_OK}); err != nil {
		t.Errorf("OK: %v", err)
	}
	err := fromAPI(&api.Error{Code: api.ErrorCode_NOT_FOUND, Message: "m", Field: "f"})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("%T is not *Error", err)
	}
	if ce.Code != api.ErrorCode_NOT_FOUND || ce.Message != "m" || ce.Field != "f" {
		t.Errorf("got %+v", ce)
	}
}

func TestTransportErrors(t *testing.T) {
	na := error(&noAnswerError{addr: "127.0.0.1:7070", timeout: 10 * time.Second})
	if got, want := na.Error(), "client: no answer from node at 127.0.0.1:7070 within 10s"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(na, ErrNoAnswer) || errors.Is(na, ErrUnreachable) {
		t.Error("noAnswerError must match ErrNoAnswer only")
	}
	un := error(&unreachableError{addr: "h:1"})
	if !errors.Is(un, ErrUnreachable) || errors.Is(un, ErrNoAnswer) {
		t.Error("unreachableError must match ErrUnreachable only")
	}
}
