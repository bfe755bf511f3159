package client_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

func startNode(t *testing.T) *node.Node {
	t.Helper()
	n := startNodeNoCleanup(t)
	t.Cleanup(func() { n.Close() })
	return n
}

func startNodeNoCleanup(t *testing.T) *node.Node {
	t.Helper()
	cfg := config.DefaultNode()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func dial(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// validSpec is a spec the node accepts (no broker needs to run for create).
func validSpec(name string) *api.JobSpec {
	return &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: "orders", Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
		}},
		Format: "csv",
		Kafka:  &api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Topic: "orders", DefaultOffset: "OFFSET_BEGINNING"},
	}
}

func wantCode(t *testing.T, err error, code api.ErrorCode, field string) {
	t.Helper()
	var ce *client.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v (%T), want a *client.Error %s", err, err, code)
	}
	if ce.Code != code || (field != "" && ce.Field != field) {
		t.Fatalf("got %s field %q (%v), want %s field %q", ce.Code, ce.Field, ce, code, field)
	}
}

func TestClientAgainstNode(t *testing.T) {
	n := startNode(t)
	c := dial(t, n.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	jobs, err := c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Fatalf("fresh node lists %d jobs", len(jobs))
	}
	if n, err := c.Ping(ctx); err != nil || n != 0 {
		t.Fatalf("Ping on a fresh node = %d, %v; want 0 jobs", n, err)
	}

	_, err = c.ShowJob(ctx, "nope")
	wantCode(t, err, api.ErrorCode_NOT_FOUND, "")

	bad := validSpec("bad")
	bad.Kafka.Topic = ""
	_, err = c.CreateJob(ctx, bad)
	wantCode(t, err, api.ErrorCode_INVALID_ARGUMENT, "kafka.topic")
	if got, want := err.Error(), "INVALID_ARGUMENT: kafka.topic: required"; got != want {
		t.Errorf("error text %q, want %q", got, want)
	}

	_, err = c.Count(ctx, "nope")
	wantCode(t, err, api.ErrorCode_NOT_FOUND, "")

	info, err := c.CreateJob(ctx, validSpec("orders_load"))
	if err != nil {
		t.Fatal(err)
	}
	if n, perr := c.Ping(ctx); perr != nil || n != 1 {
		t.Fatalf("Ping after a create = %d, %v; want 1 job", n, perr)
	}
	if info.GetSummary().GetName() != "orders_load" || info.GetSummary().GetId() == 0 {
		t.Fatalf("created %v", info.GetSummary())
	}
	_, err = c.CreateJob(ctx, validSpec("orders_load"))
	wantCode(t, err, api.ErrorCode_ALREADY_EXISTS, "")

	jobs, err = c.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].GetName() != "orders_load" {
		t.Fatalf("list: %v", jobs)
	}

	if _, err := c.PauseJob(ctx, "orders_load"); err != nil {
		t.Fatal(err)
	}
	shown, err := c.ShowJob(ctx, "orders_load")
	if err != nil {
		t.Fatal(err)
	}
	if s := shown.GetSummary(); s.GetState() != api.JobState_PAUSED || s.GetReason() != api.Reason_USER_PAUSE {
		t.Fatalf("after pause: %v", s)
	}
	if _, err := c.StopJob(ctx, "orders_load"); err != nil {
		t.Fatal(err)
	}
	_, err = c.ResumeJob(ctx, "orders_load")
	wantCode(t, err, api.ErrorCode_FAILED_PRECONDITION, "")

	// The job created its table.
	count, err := c.Count(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if count != 0 {
		t.Fatalf("count %d", count)
	}
	schema, rows, err := c.Scan(ctx, "orders", 10)
	if err != nil {
		t.Fatal(err)
	}
	if schema.GetName() != "orders" || len(schema.GetColumns()) != 2 || len(rows) != 0 {
		t.Fatalf("scan: %v, %d rows", schema, len(rows))
	}
}

func TestDialNoNode(t *testing.T) {
	n := startNodeNoCleanup(t)
	addr := n.Addr()
	n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := client.Dial(ctx, addr)
	if err == nil {
		t.Fatal("dialed a closed node")
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("Dial took %s to fail on a closed port", time.Since(start))
	}
}

func TestCloseAndReuse(t *testing.T) {
	n := startNode(t)
	c := dial(t, n.Addr())
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Close took %s", time.Since(start))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %s", d)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.ListJobs(context.Background()); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	// The node still serves a new client.
	c2 := dial(t, n.Addr())
	if _, err := c2.ListJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestContextCancel(t *testing.T) {
	n := startNode(t)
	c := dial(t, n.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.ListJobs(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
}

// TestDialByName: a host name reaches the node, whose actors know it by its
// IP address.
func TestDialByName(t *testing.T) {
	n := startNode(t)
	_, port, err := net.SplitHostPort(n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, net.JoinHostPort("localhost", port))
	if _, err := c.ListJobs(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestDialNotANode (issue 12, defect 9): a client pointed at an HTTP
// server (the node's --http admin port) says so instead of blaming TLS.
func TestDialNotANode(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := client.Dial(ctx, strings.TrimPrefix(srv.URL, "http://"))
	if err == nil || !strings.Contains(err.Error(), "is an HTTP server, not a loadnode node's client port") {
		t.Fatalf("dial an HTTP server: %v", err)
	}
}
