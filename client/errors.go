package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
)

// Error is what the node answered when it refused or failed a request.
// Branch on Code with errors.As:
//
//	var ce *client.Error
//	if errors.As(err, &ce) && ce.Code == api.ErrorCode_NOT_FOUND { ... }
type Error struct {
	// Code is the stable error code.
	Code api.ErrorCode
	// Message is the node's explanation.
	Message string
	// Field is the spec or request field at fault (set for
	// INVALID_ARGUMENT, sometimes for others), or "".
	Field string
}

// Error renders "CODE: message"; for INVALID_ARGUMENT, "CODE: field:
// message", e.g. "INVALID_ARGUMENT: kafka.topic: required". When the message
// already names the field ("config: kafka.topic: required"), what precedes
// the field is dropped instead of repeating it. (Other codes' messages name
// their subject already: `NOT_FOUND: job "x" not found`.)
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Code.String())
	b.WriteString(": ")
	msg := e.Message
	if e.Field != "" && e.Code == api.ErrorCode_INVALID_ARGUMENT {
		if i := strings.Index(msg, e.Field+": "); i >= 0 && (i == 0 || msg[i-1] == ' ') {
			msg = msg[i:]
		} else {
			b.WriteString(e.Field)
			b.WriteString(": ")
		}
	}
	if msg == "" {
		msg = "(no message)"
	}
	b.WriteString(msg)
	return b.String()
}

// fromAPI converts a reply's error; nil when the reply carries none (or an
// OK code, which no node sends).
func fromAPI(e *api.Error) error {
	if e == nil || e.GetCode() == api.ErrorCode_OK {
		return nil
	}
	return &Error{Code: e.GetCode(), Message: e.GetMessage(), Field: e.GetField()}
}

var (
	// ErrClosed is returned by calls on a closed Client.
	ErrClosed = errors.New("client: closed")
	// ErrNoAnswer matches (errors.Is) the error of a request that got no
	// reply within the client's timeout.
	ErrNoAnswer = errors.New("client: no answer from node")
	// ErrUnreachable matches (errors.Is) the error of a request that the
	// node's endpoint could not deliver (no manager at the address, or the
	// connection was lost).
	ErrUnreachable = errors.New("client: node unreachable")
	// ErrUnauthenticated matches (errors.Is) the error of Dial when the node
	// refused the client's token (or its lack of one). Nothing was sent to
	// the node's actors.
	ErrUnauthenticated = errors.New("client: authentication failed")
)

// authError is a node's refusal of the client's token.
type authError struct {
	addr    string
	msg     string // the node's reason: "authentication failed: wrong token"
	noToken bool
}

func (e *authError) Error() string {
	s := fmt.Sprintf("client: node %s refused the connection: %s", e.addr, e.msg)
	if e.noToken {
		s += " (this client has no token)"
	}
	return s
}

func (e *authError) Is(target error) bool { return target == ErrUnauthenticated }

// noAnswerError is a request that timed out.
type noAnswerError struct {
	addr    string
	timeout time.Duration
}

func (e *noAnswerError) Error() string {
	return fmt.Sprintf("client: no answer from node at %s within %s", e.addr, e.timeout.Round(time.Millisecond))
}

func (e *noAnswerError) Is(target error) bool { return target == ErrNoAnswer }

// unreachableError is a request that came back as a dead letter.
type unreachableError struct{ addr string }

func (e *unreachableError) Error() string {
	return fmt.Sprintf("client: node at %s did not take the request (no manager there, or the connection was lost)", e.addr)
}

func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

func errorf(format string, args ...any) error {
	return fmt.Errorf("client: "+format, args...)
}
