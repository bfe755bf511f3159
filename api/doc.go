// Package api is loadnode's wire contract: the protobuf messages that clients
// and nodes exchange over protoactor-go remote, and the records a node keeps
// in its store. The Go code is generated from loadnode.proto by
// `make proto`; the generated file is committed so that building needs no
// protoc. Messages are plain values with no concurrency of their own.
package api
