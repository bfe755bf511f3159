package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseKfake(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want command
	}{
		{[]string{"kfake"}, kfakeCmd{partitions: 1, recordBytes: 200}},
		{[]string{"kfake", "--port", "9092", "--partitions", "4", "--topic", "a,b", "--topic", "c", "--data-dir", "/d", "--seed-records", "10", "--record-bytes", "50"},
			kfakeCmd{port: 9092, partitions: 4, topics: []string{"a", "b", "c"}, dataDir: "/d", seedRecords: 10, recordBytes: 50}},
	} {
		m, _, _ := testMain(nil)
		if err := m.ParseFlags(context.Background(), tc.args); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.cmd, tc.want) {
			t.Fatalf("%v: got %#v, want %#v", tc.args, m.cmd, tc.want)
		}
	}
	for _, args := range [][]string{
		{"kfake", "--partitions", "0"},
		{"kfake", "--port", "70000"},
		{"kfake", "--seed-records", "5"},
		{"kfake", "extra"},
	} {
		m, _, _ := testMain(nil)
		var ue *usageError
		if err := m.ParseFlags(context.Background(), args); err == nil || !errorsAs(err, &ue) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}

func errorsAs(err error, ue **usageError) bool {
	e, ok := err.(*usageError)
	*ue = e
	return ok
}

// TestKfake runs `loadnode kfake` with seed records, waits for its one
// stdout line, reads the records back and stops it by cancelling.
func TestKfake(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	m, _, _ := testMain(nil)
	m.Stdout = pw
	if err := m.ParseFlags(ctx, []string{"kfake", "--topic", "seeded", "--partitions", "3", "--seed-records", "25", "--record-bytes", "10"}); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx); pw.Close() }()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatalf("no ready line: %v", <-done)
	}
	line := sc.Text()
	addr, ok := strings.CutPrefix(line, kfakeReadyPrefix)
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("ready line %q", line)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("seeded"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	n := 0
	for n < 25 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of 25 seed records", n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if len(r.Value) != 10 {
				t.Errorf("record of %d bytes, want 10", len(r.Value))
			}
			n++
		})
	}
	// A topic nobody created is created by its first produce, with
	// --partitions partitions.
	pc, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := pc.ProduceSync(ctx, &kgo.Record{Topic: "fresh", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce to a new topic: %v", err)
	}
	md, err := kadm.NewClient(pc).ListTopics(ctx, "fresh")
	if err != nil || md["fresh"].Err != nil || len(md["fresh"].Partitions) != 3 {
		t.Fatalf("topic created on produce: %v %v", md["fresh"], err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if sc.Scan() {
		t.Fatalf("more stdout after the ready line: %q", sc.Text())
	}
}

// TestFindBench: loadnode bench runs loadnode-bench beside the executable,
// else on PATH, else fails saying how to build it.
func TestFindBench(t *testing.T) {
	dir := t.TempDir()
	exe := dir + "/loadnode"
	t.Setenv("PATH", t.TempDir())
	if _, err := findBench(exe); err == nil || !strings.Contains(err.Error(), "make loadnode-bench") {
		t.Fatalf("no loadnode-bench: got %v", err)
	}
	if err := os.WriteFile(dir+"/loadnode-bench", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := findBench(exe); err != nil || p != dir+"/loadnode-bench" {
		t.Fatalf("beside: got %q %v", p, err)
	}
	other := t.TempDir()
	if err := os.WriteFile(other+"/loadnode-bench", []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other)
	if p, err := findBench(t.TempDir() + "/loadnode"); err != nil || p != other+"/loadnode-bench" {
		t.Fatalf("on PATH: got %q %v", p, err)
	}
}
