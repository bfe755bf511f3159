package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

const devTopic, devJob, devTable = "demo_orders", "demo_orders_load", "demo_orders"

// runDev starts an embedded Kafka-protocol broker (kfake) on loopback, seeds
// it and keeps producing, starts a node on a Pebble store, creates a demo job
// through the client, and prints a progress line every second until ctx is
// done or --duration passes.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", "", "data directory (default: a new temporary directory, removed at exit)")
	listen := fs.String("listen", "127.0.0.1:7070", "client endpoint of the dev node")
	duration := fs.Duration("duration", 0, "stop after this long (0: until Ctrl-C)")
	rate := fs.Int("rate", 5000, "records per second the demo producer writes")
	seed := fs.Int("seed", 50000, "records written before the job starts")
	partitions := fs.Int("partitions", 4, "partitions of the demo topic")
	logLevel := fs.String("log-level", "warn", "node log level (debug|info|warn|error)")
	httpAddr := fs.String("http", "", "admin endpoint `HOST:PORT` of the dev node, with the web console at /ui (e.g. 127.0.0.1:8080; port 0 picks one); off by default")
	logFormat := fs.String("log-format", "text", "node log format (text|json)")
	mysqlAddr := fs.String("mysql", "auto", "MySQL-protocol endpoint `HOST:PORT` of the dev node (mysql -h 127.0.0.1 -P PORT -uroot); auto: 127.0.0.1:9030 when it is free, else a free port; off: none")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: loadnode dev [flags]\n\nRuns a self-contained demo: an embedded Kafka-protocol broker (kfake) on\nloopback, a producer, a node on a Pebble store and a demo job, with a live\nprogress line.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *partitions < 1 || *rate < 0 || *seed < 0 {
		return errors.New("dev: --partitions must be >= 1, --rate and --seed >= 0")
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("dev: --log-level: %w", err)
	}
	if *logFormat != "text" && *logFormat != "json" {
		return fmt.Errorf("dev: --log-format %q must be text or json", *logFormat)
	}
	logger := config.NewLogger(stderr, *logFormat, level)

	// 1. The broker.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(*partitions), devTopic))
	if err != nil {
		return fmt.Errorf("dev: start kfake: %w", err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(devTopic), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return fmt.Errorf("dev: producer: %w", err)
	}
	defer prod.Close()
	var produced atomic.Int64
	if err := produceDemo(ctx, prod, 0, *seed, &produced); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "dev: kfake broker on %v, topic %s with %d partitions, %d records seeded\n", brokers, devTopic, *partitions, *seed)

	// 2. The node.
	dir := *dataDir
	if dir == "" {
		dir, err = os.MkdirTemp("", "loadnode-dev-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen = dir, *listen
	cfg.WatermarkInterval = time.Second
	cfg.HTTP = *httpAddr
	switch *mysqlAddr {
	case "off":
	case "auto":
		cfg.MySQL = devMySQLAddr()
	default:
		cfg.MySQL = *mysqlAddr
	}
	node.TuneRuntime(os.Getenv)
	n, err := node.Start(ctx, node.Config{Node: cfg, Logger: logger})
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	defer n.Close()
	fmt.Fprintf(stdout, "dev: node on %s, data in %s\n", n.Addr(), dir)
	if a := n.AdminAddr(); a != "" {
		fmt.Fprintf(stdout, "dev: web console on http://%s/ui/ (metrics on http://%s/metrics)\n", a, a)
	}
	if a := n.MySQLAddr(); a != "" {
		host, port, _ := net.SplitHostPort(a)
		fmt.Fprintf(stdout, "dev: MySQL protocol on %s; connect as to a Doris FE: mysql -h %s -P %s -uroot (then SHOW ROUTINE LOAD\\G)\n", a, host, port)
	}

	// 3. The demo job, through the client like any program would.
	c, err := client.Dial(ctx, n.Addr())
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	defer c.Close()
	if _, err := c.ShowJob(ctx, devJob); err != nil {
		if _, err := c.CreateJob(ctx, devSpec(brokers)); err != nil {
			return fmt.Errorf("dev: create demo job: %w", err)
		}
	}
	fmt.Fprintf(stdout, "dev: job %s loads topic %s into table %s\n", devJob, devTopic, devTable)
	fmt.Fprintf(stdout, "dev: try, in another terminal: go run ./cmd/loadnode job show %s --addr %s\n", devJob, n.Addr())
	fmt.Fprintf(stdout, "dev:                           go run ./cmd/loadnode table scan %s --limit 5 --addr %s\n", devTable, n.Addr())

	// 4. A producer that keeps writing.
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		next := *seed
		per := max(*rate/10, 0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if per == 0 {
					continue
				}
				if err := produceDemo(ctx, prod, next, per, &produced); err != nil {
					return
				}
				next += per
			}
		}
	}()

	// 5. The progress line.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastRows int64
	lastAt := time.Now()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stdout, "dev: stopping (%d records produced, %d loaded)\n", produced.Load(), lastRows)
			return nil
		case now := <-tick.C:
			sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			info, err := c.ShowJob(sctx, devJob)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					continue
				}
				fmt.Fprintf(stdout, "dev: show: %v\n", err)
				continue
			}
			rows := info.GetStats().GetLoadedRows()
			rate := float64(rows-lastRows) / now.Sub(lastAt).Seconds()
			lastRows, lastAt = rows, now
			lag := "?"
			if info.GetTotalLag() >= 0 {
				lag = strconv.FormatInt(info.GetTotalLag(), 10)
			}
			fmt.Fprintf(stdout, "dev: %s  state=%-13s rows loaded=%-9d rows/s=%-8.0f lag=%-7s error rows=%d batches=%d\n",
				now.Format("15:04:05"), info.GetSummary().GetState(), rows, rate, lag,
				info.GetStats().GetErrorRows(), info.GetStats().GetCommittedBatches())
		}
	}
}

func devSpec(brokers []string) *api.JobSpec {
	s := &api.JobSpec{
		Name: devJob,
		Table: &api.TableSpec{Name: devTable, Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64},
			{Name: "customer", Type: api.ColumnType_STRING},
			{Name: "amount", Type: api.ColumnType_FLOAT64},
			{Name: "paid", Type: api.ColumnType_BOOL},
			{Name: "at", Type: api.ColumnType_TIMESTAMP},
		}},
		Format:                  "json",
		DesiredConcurrentNumber: 2,
		MaxBatchIntervalMs:      500,
		MaxBatchRows:            20000,
		MaxBatchSize:            16 << 20,
		Kafka:                   &api.KafkaSpec{Brokers: brokers, Topic: devTopic, DefaultOffset: "OFFSET_BEGINNING"},
	}
	config.ApplyDefaults(s)
	return s
}

func produceDemo(ctx context.Context, cl *kgo.Client, from, n int, produced *atomic.Int64) error {
	if n == 0 {
		return nil
	}
	recs := make([]*kgo.Record, n)
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := from + i
		v := fmt.Appendf(nil, `{"id":%d,"customer":"c%03d","amount":%d.%02d,"paid":%t,"at":"%s"}`,
			id, id%997, id%500, id%100, id%3 != 0, base.Add(time.Duration(id)*time.Second).Format(time.RFC3339))
		recs[i] = &kgo.Record{Key: []byte(strconv.Itoa(id)), Value: v}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("dev: produce: %w", err)
	}
	produced.Add(int64(n))
	return nil
}

// devMySQLAddr is Doris's FE port on loopback, 127.0.0.1:9030, when it is
// free, else a free port.
func devMySQLAddr() string {
	const doris = "127.0.0.1:9030"
	l, err := net.Listen("tcp", doris)
	if err != nil {
		return "127.0.0.1:0"
	}
	l.Close()
	return doris
}
