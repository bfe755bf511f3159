package actors

import (
	"errors"
	"fmt"
	"testing"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
)

type fieldErr struct{ field string }

func (e *fieldErr) Error() string     { return e.field + ": bad" }
func (e *fieldErr) SpecField() string { return e.field }

// TestSinkTableAnswer: a sink's refusal of a table at create reaches the
// client with a code that says whether to retry: a spec field's fault is
// INVALID_ARGUMENT, a database's refusal retrying cannot fix
// (sink.ErrRefused) and a table changed under loadnode FAILED_PRECONDITION,
// the database unreachable (or anything else) UNAVAILABLE.
func TestSinkTableAnswer(t *testing.T) {
	for _, c := range []struct {
		err   error
		code  api.ErrorCode
		field string
	}{
		{&fieldErr{"table.columns[1].name"}, api.ErrorCode_INVALID_ARGUMENT, "table.columns[1].name"},
		{fmt.Errorf("postgres: create schema loadnode: %w: permission denied", sink.ErrRefused), api.ErrorCode_FAILED_PRECONDITION, "table.database"},
		{fmt.Errorf("postgres: table t: %w", sink.ErrTableChanged), api.ErrorCode_FAILED_PRECONDITION, "table"},
		{fmt.Errorf("postgres: %w: connection refused", sink.ErrUnavailable), api.ErrorCode_UNAVAILABLE, "table.database"},
		{errors.New("postgres: too many connections (SQLSTATE 53300)"), api.ErrorCode_UNAVAILABLE, "table.database"},
	} {
		got := (&sinkTableError{err: c.err}).answer()
		if got.GetCode() != c.code || got.GetField() != c.field || got.GetMessage() != c.err.Error() {
			t.Errorf("answer(%v) = %v; want code %s, field %s and the error's message", c.err, got, c.code, c.field)
		}
	}
}
