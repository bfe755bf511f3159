package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/etcdtest"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestClusterNonOwnerProtocols: in a cluster of two members (etcd,
// PostgreSQL), each with the admin endpoint and the MySQL endpoint, a job
// is created and paused through the member that does not own it over both
// protocols: go-sql-driver/mysql (CREATE TABLE, CREATE ROUTINE LOAD, then
// PAUSE ROUTINE LOAD and SHOW ROUTINE LOAD through the non-owner) and the
// HTTP API (POST /v1/jobs, POST .../pause, GET /v1/jobs/{name} through the
// non-owner); the owner agrees the job is paused. GET /v1/cluster on each
// member names both members and the same leader.
//
// The leader gives a new job to the member with the fewest jobs, so the
// create goes through the one that will not own it: a first job (through
// the Go client) goes to one member, F; the MySQL job, created through F,
// goes to the other, G; once the first job is stopped (a final job has no
// owner), the HTTP job, created through G, goes to F.
func TestClusterNonOwnerProtocols(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	etcd := etcdtest.Start(t)
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t)
	b := testnode.StartBroker(t, 2, "np_mysql", "np_http")
	produceValues(t, b, "np_mysql", `{"id":1,"note":"a"}`, `{"id":2,"note":"b"}`)
	produceValues(t, b, "np_http", `{"id":1,"note":"a"}`, `{"id":2,"note":"b"}`)
	var ms []*member
	for i := range 2 {
		name := fmt.Sprintf("m%d", i)
		p := testnode.Start(t, testnode.Options{DataDir: t.TempDir(), HTTP: true, MySQL: true, Args: clusterArgs(t, name, etcd.Endpoints(), dsn)})
		ms = append(ms, &member{name: name, p: p, c: p.Client(t)})
	}
	hc := &http.Client{Timeout: 30 * time.Second}
	call := func(m *member, method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+m.p.AdminAddr()+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s on %s: %v", method, path, m.name, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s %s on %s: %d, not a JSON object: %s", method, path, m.name, resp.StatusCode, b)
		}
		return resp.StatusCode, v
	}
	state := func(v map[string]any) string {
		s, _ := v["summary"].(map[string]any)
		st, _ := s["state"].(string)
		return st
	}
	other := func(name string) *member {
		for _, m := range ms {
			if m.name != name {
				return m
			}
		}
		t.Fatalf("no member but %s", name)
		return nil
	}

	// GET /v1/cluster: both members, one leader, the same on each.
	waitFor(t, 60*time.Second, "/v1/cluster on each member naming both and the same leader", func() (bool, string) {
		leaders := map[string]bool{}
		for _, m := range ms {
			code, v := call(m, "GET", "/v1/cluster", "")
			if code != http.StatusOK {
				return false, fmt.Sprintf("%s: %d %v", m.name, code, v)
			}
			var names []string
			members, _ := v["members"].([]any)
			for _, x := range members {
				mm, _ := x.(map[string]any)
				n, _ := mm["name"].(string)
				names = append(names, n)
			}
			slices.Sort(names)
			leader, _ := v["leader"].(string)
			if !slices.Equal(names, []string{"m0", "m1"}) || (leader != "m0" && leader != "m1") || v["self"] != m.name {
				return false, fmt.Sprintf("%s: members %v, leader %q, self %v", m.name, names, leader, v["self"])
			}
			leaders[leader] = true
		}
		return len(leaders) == 1, fmt.Sprintf("leaders %v", leaders)
	})

	byName := func(name string) *member {
		for _, m := range ms {
			if m.name == name {
				return m
			}
		}
		t.Fatalf("no member %q", name)
		return nil
	}
	// jobsOf is each member's assigned jobs, as m's /v1/cluster says.
	jobsOf := func(m *member) map[string]string {
		_, v := call(m, "GET", "/v1/cluster", "")
		out := map[string]string{}
		members, _ := v["members"].([]any)
		for _, x := range members {
			mm, _ := x.(map[string]any)
			n, _ := mm["name"].(string)
			// An int64 is a string in protojson, left out when 0.
			out[n] = "0"
			if j, ok := mm["jobs"].(string); ok {
				out[n] = j
			}
		}
		return out
	}

	// A first job, through the Go client, goes to F.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	filler := jsonSpec("np_first", "np_first_t", "np_http", b.Addrs())
	filler.Table.Database = "analytics"
	_, err := ms[0].c.CreateJob(ctx, filler)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	f := byName(waitOwned(t, ms[0].c, []string{"np_first"}, []string{"m0", "m1"}, 60*time.Second)["np_first"])
	g := other(f.name)

	// The MySQL protocol: the table and the load through F.
	open := func(m *member) *sql.DB {
		t.Helper()
		db, err := sql.Open("mysql", "root@tcp("+m.p.MySQLAddr()+")/loadnode?timeout=10s")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	exec := func(db *sql.DB, stmt string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(open(f), "CREATE TABLE analytics.np_mysql_t (id BIGINT, note STRING) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
	exec(open(f), `CREATE ROUTINE LOAD analytics.np_mysql_load ON np_mysql_t PROPERTIES ("format" = "json", "max_batch_interval" = "1")
 FROM KAFKA ("kafka_broker_list" = "`+b.Addrs()[0]+`", "kafka_topic" = "np_mysql", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`)

	if own := waitOwned(t, ms[0].c, []string{"np_mysql_load"}, []string{"m0", "m1"}, 60*time.Second); own["np_mysql_load"] != g.name {
		t.Fatalf("np_mysql_load, created through %s, is owned by %s: want %s (the member with the fewest jobs)", f.name, own["np_mysql_load"], g.name)
	}

	// The first job stopped, F has no job and G one.
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
	_, err = ms[0].c.StopJob(ctx, "np_first")
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the stopped job's assignment gone", func() (bool, string) {
		j := jobsOf(f)
		return j[f.name] == "0" && j[g.name] == "1", fmt.Sprint(j)
	})

	// The HTTP API: the job through G.
	brokers, _ := json.Marshal(b.Addrs())
	spec := `{"name": "np_http_load", "format": "json", "max_batch_interval": "200ms",
		"table": {"name": "np_http_t", "database": "analytics", "columns": [{"name": "id", "type": "int64"}, {"name": "note", "type": "string"}]},
		"kafka": {"brokers": ` + string(brokers) + `, "topic": "np_http", "default_offset": "OFFSET_BEGINNING"}}`
	if code, v := call(g, "POST", "/v1/jobs", spec); code != http.StatusCreated {
		t.Fatalf("POST /v1/jobs on %s: %d %v", g.name, code, v)
	}
	own := waitOwned(t, ms[0].c, []string{"np_mysql_load", "np_http_load"}, []string{"m0", "m1"}, 60*time.Second)
	if own["np_http_load"] != f.name {
		t.Fatalf("np_http_load, created through %s, is owned by %s: want %s (the member with the fewest jobs)", g.name, own["np_http_load"], f.name)
	}

	// PAUSE and SHOW ROUTINE LOAD through the member that does not own the
	// job (F).
	far := other(own["np_mysql_load"])
	db := open(far)
	exec(db, "PAUSE ROUTINE LOAD FOR np_mysql_load")
	waitFor(t, 30*time.Second, "SHOW ROUTINE LOAD through "+far.name+" says PAUSED", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rows, err := db.QueryContext(ctx, "SHOW ROUTINE LOAD FOR np_mysql_load")
		if err != nil {
			return false, err.Error()
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		i := slices.Index(cols, "State")
		if i < 0 || !rows.Next() {
			return false, fmt.Sprintf("columns %v, no row", cols)
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for k := range vals {
			ptrs[k] = &vals[k]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return false, err.Error()
		}
		return vals[i].String == "PAUSED", "State " + vals[i].String
	})

	// POST .../pause and GET /v1/jobs/{name} through the non-owner (G).
	far = other(own["np_http_load"])
	if code, v := call(far, "POST", "/v1/jobs/np_http_load/pause", ""); code != http.StatusOK {
		t.Fatalf("POST /v1/jobs/np_http_load/pause on %s: %d %v", far.name, code, v)
	}
	waitFor(t, 30*time.Second, "GET /v1/jobs/np_http_load through "+far.name+" says PAUSED", func() (bool, string) {
		code, v := call(far, "GET", "/v1/jobs/np_http_load", "")
		return code == http.StatusOK && state(v) == "PAUSED", fmt.Sprintf("%d %s", code, state(v))
	})

	// The owners agree.
	for _, name := range []string{"np_mysql_load", "np_http_load"} {
		owner := byName(own[name])
		if s := show(t, owner.c, name).GetSummary(); s.GetState() != api.JobState_PAUSED || s.GetOwner() != owner.name {
			t.Errorf("%s on its owner %s: %s, owner %q", name, owner.name, s.GetState(), s.GetOwner())
		}
	}
}
