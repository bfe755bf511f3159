// Package client is the Go client of a loadnode node: it reaches the node's
// manager actor over protoactor-go remote (gRPC, protobuf serializer) and
// turns each request into a typed call.
//
// A Client owns a private actor system and a remote endpoint of its own (a
// remote peer must listen too, so that the node's replies can reach it). It
// is safe for concurrent use; every call is one request and one reply,
// bounded by the client's per-request timeout and the caller's context.
// Close stops the endpoint; calls after Close fail with ErrClosed.
//
// An error that the node answered is returned as *Error, with a stable
// api.ErrorCode; branch on it with errors.As.
//
// The client speaks typed requests only: it links no SQL grammar, no job
// spec format and no YAML. Doris-compatible statements (`loadnode sql`) are
// package doris/exec's, which runs them over this client's methods.
//
// A node bound beyond loopback requires a token and TLS: give WithToken and
// WithTLS. Dial checks the token before anything reaches the node's actors
// and fails with an error matching ErrUnauthenticated when the node refuses
// it. With TLS, the client's own endpoint serves TLS too and accepts only
// the node it verified (see package internal/remoteauth for the protocol).
package client
