package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/pgtest"
)

// TestPostgresLoadTimeAndTimestamp: in a PostgreSQL table, as in the
// embedded store, a DATETIME DEFAULT CURRENT_TIMESTAMP column takes the
// batch's load time in the job's zone, the same for every row of the
// batch, and a Doris TIMESTAMP reads zone-less text in the job's zone.
func TestPostgresLoadTimeAndTimestamp(t *testing.T) {
	pg := pgtest.Start(t)
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "events"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	c := startPostgresNode(t, map[string]string{"analytics": pg.CreateDatabase(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pc, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for _, v := range []string{"1,2020-01-01 10:00:00", "2,2025-01-01 11:11:11"} {
		if err := pc.ProduceSync(ctx, &kgo.Record{Topic: "events", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.Exec(ctx, c, `CREATE TABLE analytics.lt (id INT, t TIMESTAMP, dt DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3)) DUPLICATE KEY(id)`); err != nil {
		t.Fatal(err)
	}
	zone := time.FixedZone("+10:00", 10*3600)
	before := time.Now().In(zone).Truncate(time.Millisecond)
	if _, err := exec.Exec(ctx, c, fmt.Sprintf(`CREATE ROUTINE LOAD analytics.j ON lt COLUMNS TERMINATED BY ",", COLUMNS(id, t)
		PROPERTIES ("timezone" = "+10:00", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "events", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`,
		strings.Join(kc.ListenAddrs(), ","))); err != nil {
		t.Fatal(err)
	}
	var rows []*api.Row
	for {
		_, rs, err := c.Scan(ctx, "lt", 100)
		if err == nil && len(rs) == 2 {
			rows = rs
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("2 rows not loaded: %v (%v)", rs, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	after := time.Now().In(zone)
	wantT := map[int64]time.Time{1: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), 2: time.Date(2025, 1, 1, 1, 11, 11, 0, time.UTC)}
	var dts []int64
	for _, r := range rows {
		v := r.GetValues()
		id, tm, dt := v[0].GetInt64(), v[1].GetTimestampMicros(), v[2].GetDatetimeMicros()
		if tm != wantT[id].UnixMicro() {
			t.Errorf("row %d: t = %v, want %v", id, time.UnixMicro(tm).UTC(), wantT[id])
		}
		// dt is the +10:00 wall clock, kept as micros of a UTC-less clock.
		wall := func(x time.Time) int64 { _, off := x.Zone(); return x.UnixMicro() + int64(off)*1e6 }
		if dt < wall(before) || dt > wall(after) {
			t.Errorf("row %d: dt = %d, want a +10:00 wall clock within the load (%d..%d)", id, dt, wall(before), wall(after))
		}
		dts = append(dts, dt)
	}
	if len(dts) == 2 && dts[0] != dts[1] {
		t.Logf("the two rows came in two batches: %d, %d", dts[0], dts[1])
	}
}
