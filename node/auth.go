package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/remoteauth"
)

// security is the node's token and TLS certificate, shared by the remote
// and the HTTP endpoint. See package remoteauth for the protocol.
type security struct {
	token  string           // "" is no authentication
	cert   *tls.Certificate // nil is no TLS
	pins   remoteauth.Pins  // client endpoints' certificates, by address
	logger *slog.Logger
}

// loadSecurity reads the token and the certificate the configuration names.
func loadSecurity(cfg config.Node, logger *slog.Logger) (*security, error) {
	tok, err := cfg.Token()
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	if tok != "" && cfg.AuthToken == "" && cfg.AuthTokenFile != "" {
		if fi, err := os.Stat(cfg.AuthTokenFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			logger.Warn("loadnode: the token file is readable by other users; chmod 600 it", "file", cfg.AuthTokenFile, "mode", fi.Mode().Perm().String())
		}
	}
	cert, err := cfg.LoadTLS()
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	return &security{token: tok, cert: cert, logger: logger}, nil
}

// serverTLS is the TLS configuration of both endpoints; nil without TLS.
func (s *security) serverTLS() *tls.Config {
	if s.cert == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*s.cert}}
}

// serverOptions are the remote endpoint's gRPC options: TLS, the token
// check before anything else, then the panic guards and the answer to
// messages of unknown types, sent through system.
func (s *security) serverOptions(system *actor.ActorSystem) []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.UnknownServiceHandler(authCheckHandler),
		grpc.ChainStreamInterceptor(s.stream, RecoverStream(s.logger), answerUnknown(system, s.logger)),
		grpc.ChainUnaryInterceptor(s.unary, RecoverUnary(s.logger)),
	}
	if c := s.serverTLS(); c != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(c)))
	}
	return opts
}

// dialOptions are the options of the node's connections to client
// endpoints (where replies go): with TLS, only to a certificate an
// authenticated client pinned, presenting the node's own certificate. nil
// keeps protoactor's default (plaintext).
func (s *security) dialOptions() []grpc.DialOption {
	if s.cert == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(&remoteauth.ReplyDialCreds{Pins: &s.pins, Cert: *s.cert})}
}

// authenticate checks the token of one call; its refusal is the call's
// status, sent before the handler (and so before any message) runs.
func (s *security) authenticate(ctx context.Context, method string) error {
	if s.token == "" {
		return nil
	}
	err := remoteauth.CheckToken(ctx, s.token)
	if err != nil {
		from := "?"
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			from = p.Addr.String()
		}
		s.logger.Warn("remote: refused a client", "peer", from, "method", method, "reason", status.Convert(err).Message())
	}
	return err
}

func (s *security) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.authenticate(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	if s.cert != nil && info.FullMethod != remoteauth.CheckMethod {
		// The remote stream: pin the client's endpoint certificate for the
		// node's replies while the stream lasts.
		md, _ := metadata.FromIncomingContext(ss.Context())
		addr, fp := first(md, remoteauth.ReplyAddrKey), first(md, remoteauth.ReplyCertKey)
		if addr == "" || fp == "" {
			return status.Error(codes.FailedPrecondition, "loadnode: this node answers over TLS and the client did not name its endpoint's certificate ("+remoteauth.ReplyCertKey+"); use the loadnode client")
		}
		defer s.pins.Add(addr, fp)()
	}
	return handler(srv, ss)
}

func (s *security) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.authenticate(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// authCheckHandler answers remoteauth.CheckMethod (the interceptors have
// checked the token by then) and refuses every other unknown method.
func authCheckHandler(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	if method != remoteauth.CheckMethod {
		return status.Errorf(codes.Unimplemented, "unknown method %s", method)
	}
	var in emptypb.Empty
	if err := ss.RecvMsg(&in); err != nil {
		return err
	}
	return ss.SendMsg(&emptypb.Empty{})
}
