package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestMultiTableExactlyOnce runs a multi-table job (each record is
// Doris's table|record) through the binary: created from YAML (tables:)
// on the embedded store and with Doris's CREATE ROUTINE LOAD without ON
// on PostgreSQL; killed with SIGKILL while loading and restarted. Every
// table holds exactly its records once, the loaded-rows statistic is their
// sum, and records naming an unknown table or none are error rows whose
// reason names the table. job show lists the tables.
func TestMultiTableExactlyOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Run("embedded", func(t *testing.T) { testMultiTable(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testMultiTable(t, pg.CreateDatabase(t))
	})
}

func testMultiTable(t *testing.T, dsn string) {
	const (
		topic, name = "events", "events_load"
		n           = 12000 // records per phase, spread over the tables
		bad         = 30
	)
	tables := []string{"mt_orders", "mt_refunds", "mt_clicks"}
	b := testnode.StartBroker(t, 2, topic)
	var args []string
	db := ""
	if dsn != "" {
		args, db = pgNode(t, dsn), "analytics."
	}
	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	for _, tb := range tables {
		stmt := fmt.Sprintf("CREATE TABLE %s%s (id BIGINT, note STRING) DUPLICATE KEY(id)", db, tb)
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Fatalf("%s: %s", stmt, out)
		}
	}
	// produce writes records [from, from+n): record i goes to table i%3,
	// as CSV id,note.
	produce := func(from int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for i := from; i < from+n; i++ {
			wg.Add(1)
			v := fmt.Sprintf("%s|%d,note %d", tables[i%3], i, i)
			b.Client().Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if first != nil {
			t.Fatal(first)
		}
	}
	produce(0)
	var bads []string
	for i := range bad {
		if i%2 == 0 {
			bads = append(bads, fmt.Sprintf("mt_nosuch|%d,x", i))
		} else {
			bads = append(bads, fmt.Sprintf("%d,no table", i))
		}
	}
	produceValues(t, b, topic, bads...)

	if dsn == "" {
		spec := fmt.Sprintf("name: %s\ntables: [%s]\nformat: csv\nmax_batch_rows: 1000\nmax_batch_interval: 200ms\nmax_error_number: 1000\nkafka:\n  brokers: [%s]\n  topic: %s\n  default_offset: OFFSET_BEGINNING\n",
			name, strings.Join(tables, ", "), b.Addrs()[0], topic)
		file := filepath.Join(t.TempDir(), "job.yaml")
		if err := os.WriteFile(file, []byte(spec), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out := cli(t, p, "job", "create", "-f", file); code != 0 {
			t.Fatalf("job create: %s", out)
		}
	} else {
		stmt := fmt.Sprintf(`CREATE ROUTINE LOAD analytics.%s COLUMNS TERMINATED BY ","
PROPERTIES ("max_batch_rows" = "1000", "max_batch_interval" = "1", "max_error_number" = "1000")
FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "%s", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`, name, b.Addrs()[0], topic)
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Fatalf("%s: %s", stmt, out)
		}
	}
	waitFor(t, 120*time.Second, "part of the records loaded", func() (bool, string) {
		s := showJob(t, c, name).GetStats()
		return s.GetLoadedRows() >= n/4, fmt.Sprintf("loaded %d", s.GetLoadedRows())
	})
	p.MustKill(t)
	c.Close()
	produce(n)
	p.MustRestart(t)
	c = p.Client(t)
	waitDrained(t, c, b, name, topic, 180*time.Second)

	info := showJob(t, c, name)
	if got := info.GetStats().GetLoadedRows(); got != 2*n {
		t.Errorf("loaded-rows statistic = %d, want %d", got, 2*n)
	}
	if got := info.GetStats().GetErrorRows(); got != bad {
		t.Errorf("error rows = %d, want %d", got, bad)
	}
	for _, er := range info.GetErrorRows() {
		r := er.GetReason()
		if !strings.Contains(r, `"mt_nosuch" does not exist`) && !strings.Contains(r, "names no table") {
			t.Errorf("error row reason %q names neither the unknown table nor the missing name", r)
		}
	}
	for ti, tb := range tables {
		seen := map[int64]int{}
		rows := scanAll(t, c, tb)
		for _, r := range rows {
			seen[r.GetValues()[0].GetInt64()]++
		}
		want, wrong := 0, 0
		for i := range 2 * n {
			if i%3 != ti {
				if seen[int64(i)] != 0 {
					wrong++
				}
				continue
			}
			want++
			if seen[int64(i)] != 1 {
				wrong++
			}
		}
		t.Logf("table %s: %d rows, want %d; %d ids not as expected", tb, len(rows), want, wrong)
		if len(rows) != want || wrong != 0 {
			t.Errorf("table %s not exactly once: %d rows, want %d; %d ids wrong", tb, len(rows), want, wrong)
		}
		if dsn != "" {
			var count int64
			pgQuery(t, dsn, `SELECT count(*) FROM public.`+tb, &count)
			if count != int64(want) {
				t.Errorf("PostgreSQL %s: %d rows, want %d", tb, count, want)
			}
		}
	}
	code, out := cli(t, p, "job", "show", name)
	line := ""
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "Tables:") {
			line = l
		}
	}
	for _, tb := range tables {
		if code != 0 || !strings.Contains(line, tb) {
			t.Errorf("job show does not list table %s:\n%s", tb, out)
		}
	}
}
