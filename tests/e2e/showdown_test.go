package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/ledger"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestShowWhileDatabaseDown (issue 25, D7): with a real PostgreSQL stopped
// under a running node, a job whose table is there is still shown by `job
// show`, /v1/jobs/NAME and the console, with its sink marked unreachable
// and the error rows (for a stopped job, the statistics) unavailable with
// the reason; SHOW ROUTINE LOAD lists every job, the one into the embedded
// store as usual. Once PostgreSQL is back, the show is whole again.
func TestShowWhileDatabaseDown(t *testing.T) {
	const pgTopic, embTopic = "showdown_pg", "showdown_emb"
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, pgTopic, embTopic)
	l := ledger.New()
	produce(t, l, b, pgTopic, 0, 200)
	produce(t, l, b, embTopic, 0, 200)
	p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), Args: pgNode(t, dsn), HTTP: true})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, j := range []struct{ name, table, topic, database string }{
		{"pg_live", "pg_live_rows", pgTopic, "analytics"},
		{"pg_ended", "pg_ended_rows", pgTopic, "analytics"},
		{"emb_live", "emb_live_rows", embTopic, ""},
	} {
		spec := jsonSpec(j.name, j.table, j.topic, b.Addrs())
		spec.Table.Database = j.database
		if _, err := c.CreateJob(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	waitDrained(t, c, b, "pg_live", pgTopic, time.Minute)
	waitDrained(t, c, b, "pg_ended", pgTopic, time.Minute)
	waitDrained(t, c, b, "emb_live", embTopic, time.Minute)
	if _, err := c.StopJob(ctx, "pg_ended"); err != nil {
		t.Fatal(err)
	}

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}

	// job show, as the CLI prints it.
	code, out := cli(t, p, "job", "show", "pg_live")
	if code != 0 || !strings.Contains(out, "State:") || !strings.Contains(out, "(unreachable: see below)") ||
		!strings.Contains(out, "Last error rows: unavailable: ") || !strings.Contains(out, "loaded rows ") {
		t.Fatalf("job show of a job whose database is down: exit %d\n%s\nwant the job, its sink unreachable, its error rows unavailable", code, out)
	}
	code, out = cli(t, p, "job", "show", "pg_ended")
	if code != 0 || !strings.Contains(out, "STOPPED") || !strings.Contains(out, "Stats: unavailable: ") {
		t.Fatalf("job show of a stopped job whose database is down: exit %d\n%s\nwant it STOPPED, its statistics unavailable", code, out)
	}
	info := showJob(t, c, "pg_live")
	if u := info.GetErrorRowsUnavailable(); u == "" || info.GetStats().GetLoadedRows() != 200 {
		t.Fatalf("show pg_live: error rows unavailable %q, loaded rows %d; want a reason and the 200 rows the job knows", u, info.GetStats().GetLoadedRows())
	}
	t.Logf("pg_live's error rows: unavailable: %s", info.GetErrorRowsUnavailable())

	// SHOW ROUTINE LOAD: both live jobs; only the PostgreSQL one says its
	// sink is unreachable.
	rows, _ := sqlRows(t, p, "SHOW ROUTINE LOAD")
	byName := map[string]map[string]string{}
	for _, r := range rows {
		byName[r["Name"]] = r
	}
	if len(rows) != 2 || byName["pg_live"] == nil || byName["emb_live"] == nil {
		t.Fatalf("SHOW ROUTINE LOAD while one job's database is down: %d rows %v, want pg_live and emb_live", len(rows), byName)
	}
	if m := byName["pg_live"]["OtherMsg"]; !strings.Contains(m, "sink unreachable: error rows unavailable: ") {
		t.Errorf("SHOW ROUTINE LOAD: pg_live's OtherMsg %q, want its sink unreachable", m)
	}
	if m := byName["emb_live"]["OtherMsg"]; strings.Contains(m, "unreachable") || !strings.Contains(byName["emb_live"]["Statistic"], `"loadedRows":200`) {
		t.Errorf("SHOW ROUTINE LOAD: emb_live's OtherMsg %q Statistic %s, want it whole", m, byName["emb_live"]["Statistic"])
	}
	if rows, _ := sqlRows(t, p, "SHOW ALL ROUTINE LOAD"); len(rows) != 3 {
		t.Errorf("SHOW ALL ROUTINE LOAD while a database is down: %d rows, want 3", len(rows))
	}

	// /v1/jobs/NAME (which the console's job page reads).
	hc := &http.Client{Timeout: 30 * time.Second}
	resp, err := hc.Get("http://" + p.AdminAddr() + "/v1/jobs/pg_live")
	if err != nil {
		t.Fatalf("GET /v1/jobs/pg_live: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"errorRowsUnavailable"`) || !strings.Contains(string(body), `"pg_live"`) {
		t.Errorf("GET /v1/jobs/pg_live while the database is down: %d %s, want the job with its error rows unavailable", resp.StatusCode, body)
	}

	if err := pg.StartAgain(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "a whole show once PostgreSQL is back", func() (bool, string) {
		info := showJob(t, c, "pg_live")
		ended := showJob(t, c, "pg_ended")
		return info.GetErrorRowsUnavailable() == "" && ended.GetProgressUnavailable() == "" && ended.GetStats().GetLoadedRows() == 200,
			fmt.Sprintf("pg_live error rows unavailable %q; pg_ended progress unavailable %q, loaded rows %d",
				info.GetErrorRowsUnavailable(), ended.GetProgressUnavailable(), ended.GetStats().GetLoadedRows())
	})
	if s := showJob(t, c, "pg_live").GetSummary(); s.GetState() == api.JobState_PAUSED && s.GetReason() != api.Reason_SINK_UNREACHABLE {
		t.Errorf("pg_live after its database came back: %s %s: %s", s.GetState(), s.GetReason(), s.GetReasonMessage())
	}
}
