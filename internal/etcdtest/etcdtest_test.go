package etcdtest

import (
	"context"
	"testing"
	"time"
)

// TestRestartKeepsData: a write acknowledged before Kill is read after
// Restart, on the same endpoint.
func TestRestartKeepsData(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, "k", "v1"); err != nil {
		t.Fatalf("put: %v", err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
	if _, err := c.Get(short, "k"); err == nil {
		t.Error("a read succeeded while etcd was killed")
	}
	cancel2()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("get after restart: %v", err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Errorf("after restart k = %v, want v1", resp.Kvs)
	}
}
