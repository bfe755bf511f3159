// Package e2e holds black-box end-to-end tests: they build the loadnode
// binary, run it as a real process (internal/testnode) against an
// in-process kfake broker, and talk to it only through the Go client.
package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testnode"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testnode.RemoveBinary()
	os.Exit(code)
}

// loadnodeBinary is the binary the nodes run, for CLI commands.
func loadnodeBinary(t *testing.T) string {
	t.Helper()
	bin, err := testnode.BuildBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startNode runs `loadnode serve` on dataDir with extra environment and
// returns once it is ready.
func startNode(t *testing.T, dataDir string, env ...string) *testnode.Proc {
	t.Helper()
	return testnode.Start(t, testnode.Options{DataDir: dataDir, Env: env})
}

// startNodeArgs is startNode with extra `serve` arguments.
func startNodeArgs(t *testing.T, dataDir string, args []string, env ...string) *testnode.Proc {
	t.Helper()
	return testnode.Start(t, testnode.Options{DataDir: dataDir, Args: args, Env: env})
}

// endOffsets returns the high watermark of every partition of topic.
func endOffsets(t *testing.T, b *testnode.Broker, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := b.EndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return ends
}

func jsonSpec(name, tableName, topic string, brokers []string) *api.JobSpec {
	return &api.JobSpec{
		Name: name,
		Table: &api.TableSpec{Name: tableName, Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "note", Type: api.ColumnType_STRING},
		}},
		Format:                  "json",
		DesiredConcurrentNumber: 2,
		MaxBatchIntervalMs:      200,
		MaxBatchRows:            5000,
		MaxBatchSize:            4 << 20,
		Kafka: &api.KafkaSpec{
			Brokers: brokers, Topic: topic, DefaultOffset: "OFFSET_BEGINNING",
		},
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		if state != "" {
			last = state
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last: %s", d, what, last)
		}
		<-tick.C
	}
}

// scanAll reads every row of a table through the client (which pages).
func scanAll(t *testing.T, c *client.Client, tableName string) []*api.Row {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, rows, err := c.Scan(ctx, tableName, 0)
	if err != nil {
		t.Fatalf("scan %s: %v", tableName, err)
	}
	return rows
}
