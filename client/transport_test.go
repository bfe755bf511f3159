package client_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
)

// fakeNode is a bare protoactor endpoint; receive (if not nil) runs as its
// "manager" actor.
func fakeNode(t *testing.T, receive actor.ReceiveFunc) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	r := remote.NewRemote(sys, remote.Configure("127.0.0.1", 0))
	r.Start()
	t.Cleanup(func() { r.Shutdown(false); sys.Shutdown() })
	if receive != nil {
		if _, err := sys.Root.SpawnNamed(actor.PropsFromFunc(receive), api.ManagerName); err != nil {
			t.Fatal(err)
		}
	}
	return sys.Address()
}

// TestTimeout: a manager that answers the dial check (ping) and then goes silent.
func TestTimeout(t *testing.T) {
	addr := fakeNode(t, func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *api.PingRequest:
			ctx.Respond(&api.PingResponse{})
		case *api.ShowJobRequest:
			_ = m // never answered
		}
	})
	ctx := context.Background()
	// 1s: long enough for the first request (which sets up the connections
	// both ways) on a loaded machine.
	c, err := client.Dial(ctx, addr, client.WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	_, err = c.ShowJob(ctx, "x")
	if !errors.Is(err, client.ErrNoAnswer) {
		t.Fatalf("got %v, want ErrNoAnswer", err)
	}
	if want := "client: no answer from node at " + addr + " within 1s"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}

	// A sooner context deadline bounds the wait.
	c2, err := client.Dial(ctx, addr, client.WithTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c2.ShowJob(dctx, "x")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ctx deadline of 50ms waited %s", d)
	}
}

func TestUnexpectedAndErrorReplies(t *testing.T) {
	addr := fakeNode(t, func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case *api.PingRequest:
			ctx.Respond(&api.PingResponse{})
		case *api.TableCountRequest:
			// An old node: the request type is unknown to its manager.
			ctx.Respond(&api.JobResponse{Error: &api.Error{Code: api.ErrorCode_UNKNOWN_MESSAGE, Message: "unknown message"}})
		case *api.ShowJobRequest:
			ctx.Respond(&api.ListJobsResponse{}) // wrong type
		case *api.StopJobRequest:
			ctx.Respond(&api.JobResponse{}) // neither job nor error
		case *api.TableScanRequest:
			ctx.Respond(&api.TableScanResponse{Error: &api.Error{Code: api.ErrorCode_NOT_FOUND, Field: "table", Message: `table "t" not found`}})
		}
	})
	ctx := context.Background()
	c, err := client.Dial(ctx, addr, client.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var ce *client.Error
	if _, err := c.Count(ctx, "t"); !errors.As(err, &ce) || ce.Code != api.ErrorCode_UNKNOWN_MESSAGE {
		t.Errorf("count: %v", err)
	}
	if _, err := c.ShowJob(ctx, "x"); err == nil || !strings.Contains(err.Error(), "unexpected reply *api.ListJobsResponse") {
		t.Errorf("show: %v", err)
	}
	if _, err := c.StopJob(ctx, "x"); err == nil || !strings.Contains(err.Error(), "reply has no job") {
		t.Errorf("stop: %v", err)
	}
	if _, _, err := c.Scan(ctx, "t", 5); !errors.As(err, &ce) || ce.Code != api.ErrorCode_NOT_FOUND {
		t.Errorf("scan: %v", err)
	}
}

// TestScanPages: the client follows the cursor and stops at the limit.
func TestScanPages(t *testing.T) {
	const total = 2500
	var asked []int64
	addr := fakeNode(t, func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case *api.PingRequest:
			ctx.Respond(&api.PingResponse{})
		case *api.TableScanRequest:
			asked = append(asked, m.GetLimit())
			start := 0
			if len(m.GetAfter()) > 0 {
				start = int(m.GetAfter()[0])<<8 | int(m.GetAfter()[1])
			}
			resp := &api.TableScanResponse{Schema: &api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "i", Type: api.ColumnType_INT64}}}}
			end := min(start+int(m.GetLimit()), total)
			for i := start; i < end; i++ {
				resp.Rows = append(resp.Rows, &api.Row{Values: []*api.Value{{Kind: &api.Value_Int64{Int64: int64(i)}}}})
			}
			if end < total {
				resp.Next = []byte{byte(end >> 8), byte(end)}
			}
			ctx.Respond(resp)
		}
	})
	ctx := context.Background()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	for _, tc := range []struct {
		limit, want int
	}{{0, total}, {1500, 1500}, {7, 7}, {5000, total}} {
		asked = nil
		schema, rows, err := c.Scan(ctx, "t", tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if schema.GetName() != "t" || len(rows) != tc.want {
			t.Fatalf("limit %d: %d rows, want %d", tc.limit, len(rows), tc.want)
		}
		for i, r := range rows {
			if r.GetValues()[0].GetInt64() != int64(i) {
				t.Fatalf("limit %d: row %d is %d", tc.limit, i, r.GetValues()[0].GetInt64())
			}
		}
		t.Logf("limit %d: pages asked %v", tc.limit, asked)
	}
}

// TestUnreachable: an endpoint without a manager answers with a dead letter.
func TestUnreachable(t *testing.T) {
	addr := fakeNode(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Dial(ctx, addr)
	if !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnreachable", err)
	}
}
