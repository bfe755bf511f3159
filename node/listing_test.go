package node_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/node"
)

// TestJobsSortAndFilter: /v1/jobs (which the console's list reads) sorts
// and filters over every job, not over a page: with jobs created in an order
// that is not their name order, the first page by name starts with the
// first name, a filter finds a job past the first page in id order, pages
// move by offset, and bad parameters are 400 naming the parameter.
func TestJobsSortAndFilter(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	n, err := node.Start(context.Background(), node.Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	// b00..b05 first (ids 1..6), then a00..a05 (ids 7..12).
	var names []string
	for _, p := range []string{"b", "a"} {
		for i := range 6 {
			names = append(names, fmt.Sprintf("%s%02d", p, i))
		}
	}
	for _, name := range names {
		spec := &api.JobSpec{Name: name, Format: "json",
			Table: &api.TableSpec{Name: "t_" + name, Columns: []*api.Column{{Name: "v", Type: api.ColumnType_INT64}}},
			Kafka: &api.KafkaSpec{Brokers: kc.ListenAddrs(), Topic: "s", DefaultOffset: "OFFSET_BEGINNING"}}
		config.ApplyDefaults(spec)
		res, err := n.System().Root.RequestFuture(n.Manager(), &api.CreateJobRequest{Spec: spec}, 5*time.Second).Result()
		if err != nil || res.(*api.JobResponse).GetError() != nil {
			t.Fatalf("create %s: %v %v", name, res, err)
		}
	}
	base := "http://" + n.AdminAddr()

	list := func(query string) *api.ListJobsResponse {
		t.Helper()
		code, body := get(t, base+"/v1/jobs?"+query)
		if code != 200 {
			t.Fatalf("/v1/jobs?%s = %d %s", query, code, body)
		}
		var resp api.ListJobsResponse
		if err := protojson.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("/v1/jobs?%s: %v in %s", query, err, body)
		}
		return &resp
	}
	jobNames := func(resp *api.ListJobsResponse) string {
		var s []string
		for _, j := range resp.GetJobs() {
			s = append(s, j.GetName())
		}
		return strings.Join(s, ",")
	}
	if r := list("limit=5"); jobNames(r) != "b00,b01,b02,b03,b04" || r.NextAfterId == 0 || r.Matched != 12 {
		t.Errorf("id order: %s, next %d, matched %d", jobNames(r), r.NextAfterId, r.Matched)
	}
	if r := list("sort=name&limit=5"); jobNames(r) != "a00,a01,a02,a03,a04" || r.NextOffset != 5 || r.Total != 12 || r.Matched != 12 {
		t.Errorf("sort=name: %s, next offset %d, total %d, matched %d", jobNames(r), r.NextOffset, r.Total, r.Matched)
	}
	if r := list("sort=name&limit=5&offset=10"); jobNames(r) != "b04,b05" || r.NextOffset != 0 {
		t.Errorf("sort=name offset 10: %s, next offset %d", jobNames(r), r.NextOffset)
	}
	for _, q := range []string{"sort=name&desc=true&limit=2", "sort=name&order=desc&limit=2", "sort=name&desc=1&order=desc&limit=2"} {
		if r := list(q); jobNames(r) != "b05,b04" {
			t.Errorf("%s: %s", q, jobNames(r))
		}
	}
	for _, q := range []string{"q=A03&limit=5", "filter=a03&limit=5"} {
		if r := list(q); jobNames(r) != "a03" || r.Matched != 1 || r.Total != 12 {
			t.Errorf("%s: %s, matched %d, total %d", q, jobNames(r), r.Matched, r.Total)
		}
	}
	// A filter that matches nothing still says "jobs": [] (and the counts).
	if code, body := get(t, base+"/v1/jobs?q=nosuchjob"); code != 200 || !strings.Contains(body, `"jobs":[]`) || !strings.Contains(body, `"matched":"0"`) || !strings.Contains(body, `"total":"12"`) {
		t.Errorf("/v1/jobs?q=nosuchjob = %d %s; want jobs [] and matched 0 of 12", code, body)
	}
	if r := list("q=0&sort=table&order=desc&limit=3&offset=3"); jobNames(r) != "b02,b01,b00" || r.Matched != 12 || r.NextOffset != 6 {
		t.Errorf("q=0 by table descending at offset 3: %s, matched %d, next %d", jobNames(r), r.Matched, r.NextOffset)
	}
	for q, param := range map[string]string{
		"sort=colour":                    "sort",
		"desc=maybe":                     "desc",
		"order=up":                       "order",
		"order=asc&desc=true":            "order",
		"offset=-1":                      "offset",
		"offset=x":                       "offset",
		"q=a&filter=b":                   "q",
		"sort=name&after=3":              "after",
		"q=" + strings.Repeat("x", 1025): "filter",
	} {
		code, body := get(t, base+"/v1/jobs?"+q)
		if code != http.StatusBadRequest || !strings.Contains(body, param) {
			t.Errorf("/v1/jobs?%.40s = %d %q, want 400 naming %s", q, code, body, param)
		}
	}
}
