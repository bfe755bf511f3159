package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/loadnode/loadnode/sources"
)

// isAuthErr reports whether err is a failure that retrying cannot fix:
// authentication, authorization or a TLS handshake that cannot succeed.
func isAuthErr(err error) bool {
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		return true
	}
	for _, ke := range []*kerr.Error{
		kerr.SaslAuthenticationFailed,
		kerr.IllegalSaslState,
		kerr.UnsupportedSaslMechanism,
		kerr.TopicAuthorizationFailed,
		kerr.ClusterAuthorizationFailed,
		kerr.GroupAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed,
		kerr.DelegationTokenAuthorizationFailed,
	} {
		if errors.Is(err, ke) {
			return true
		}
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
		header           tls.RecordHeaderError
	)
	return errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &verify) || errors.As(err, &header)
}

// classify turns an admin (kadm) failure into a typed sources error: auth ->
// *sources.ConfigError, a cancelled ctx -> the ctx error, anything else ->
// *sources.UnreachableError (transient).
func classify(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return fmt.Errorf("kafka: %s: %w", op, err)
	case isAuthErr(err):
		return &sources.ConfigError{Field: "kafka.properties", Err: fmt.Errorf("kafka: %s: %s: %w", op, authHint(err), err)}
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		return &sources.ConfigError{Field: "kafka.topic", Err: fmt.Errorf("kafka: %s: %w", op, err)}
	default:
		return &sources.UnreachableError{Err: fmt.Errorf("kafka: %s: %w", op, err)}
	}
}

// authHint says what an authentication or authorization failure asks of
// the person reading the job's reason.
func authHint(err error) string {
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, kerr.IllegalSaslState):
		return "SASL authentication failed (check sasl.username and sasl.password; the job stays paused until resumed)"
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return "the broker does not offer this sasl.mechanism"
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed),
		errors.Is(err, kerr.GroupAuthorizationFailed), errors.Is(err, kerr.TransactionalIDAuthorizationFailed),
		errors.Is(err, kerr.DelegationTokenAuthorizationFailed):
		return "not authorized (the broker's ACLs refuse this user)"
	}
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		return "not authorized (the broker's ACLs refuse this user)"
	}
	return "TLS or authentication failed"
}
