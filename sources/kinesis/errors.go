package kinesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/loadnode/loadnode/sources"
)

// errKind is what a failed SDK call means to this package.
type errKind int

const (
	kindOther      errKind = iota // unexpected: fails the operation, untyped (transient to the job)
	kindCtx                       // the caller's context (or our call timeout) ended
	kindThrottle                  // throttling, 5xx, InternalFailure: back off and retry
	kindExpired                   // ExpiredIteratorException: re-acquire the iterator
	kindTransport                 // no HTTP response: the endpoint is unreachable
	kindNotFound                  // ResourceNotFoundException
	kindAuth                      // credentials, signature, authorization
	kindInvalidArg                // InvalidArgumentException
)

// Error codes the service (or kinesalite) answers with.
var (
	throttleCodes = map[string]bool{
		"ProvisionedThroughputExceededException": true,
		"LimitExceededException":                 true,
		"KMSThrottlingException":                 true,
		"ThrottlingException":                    true,
		"InternalFailure":                        true,
		"InternalFailureException":               true,
		"InternalServerError":                    true,
		"ServiceUnavailable":                     true,
		"ServiceUnavailableException":            true,
	}
	authCodes = map[string]bool{
		"AccessDeniedException":               true,
		"AccessDenied":                        true,
		"UnrecognizedClientException":         true,
		"InvalidSignatureException":           true,
		"IncompleteSignature":                 true,
		"IncompleteSignatureException":        true,
		"MissingAuthenticationToken":          true,
		"MissingAuthenticationTokenException": true,
		"InvalidClientTokenId":                true,
		"ExpiredTokenException":               true,
		"SignatureDoesNotMatch":               true,
		"KMSAccessDeniedException":            true,
		"KMSDisabledException":                true,
		"KMSInvalidStateException":            true,
		"KMSNotFoundException":                true,
		"KMSOptInRequired":                    true,
	}
)

// kindOf classifies an SDK error.
func kindOf(err error) errKind {
	if err == nil {
		return kindOther
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return kindCtx
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code := ae.ErrorCode()
		switch {
		case code == "ExpiredIteratorException":
			return kindExpired
		case code == "ResourceNotFoundException":
			return kindNotFound
		case code == "InvalidArgumentException":
			return kindInvalidArg
		case throttleCodes[code]:
			return kindThrottle
		case authCodes[code]:
			return kindAuth
		}
	}
	var se *smithyhttp.RequestSendError
	if errors.As(err, &se) {
		return kindTransport
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		switch s := re.HTTPStatusCode(); {
		case s >= 500 || s == 429:
			return kindThrottle
		case s == 401 || s == 403:
			return kindAuth
		}
		return kindOther
	}
	var ipe smithy.InvalidParamsError
	var de *smithy.DeserializationError
	var ser *smithy.SerializationError
	if ae != nil || errors.As(err, &ipe) || errors.As(err, &de) || errors.As(err, &ser) {
		return kindOther
	}
	// No response and no API error: a dial failed, credentials could not
	// be fetched from their endpoint, and so on.
	return kindTransport
}

// classify turns a failed Source call (listing shards) into a typed sources
// error: stream missing or credentials refused -> *sources.ConfigError,
// the caller's context -> the wrapped context error, anything else ->
// *sources.UnreachableError (transient: the job retries with back-off).
func classify(op string, err error) error {
	werr := fmt.Errorf("kinesis: %s: %w", op, err)
	switch kindOf(err) {
	case kindCtx:
		return werr
	case kindNotFound:
		return &sources.ConfigError{Field: "kinesis.stream", Err: werr}
	case kindAuth:
		return &sources.ConfigError{Field: "kinesis credentials", Err: werr}
	case kindInvalidArg:
		return &sources.ConfigError{Err: werr}
	default:
		return &sources.UnreachableError{Err: werr}
	}
}
