package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

const apiTestToken = "0123456789abcdef-token"

// apiTester drives a node's /v1 and checks every answer (and every body it
// sends) against the OpenAPI document the node serves: the route's result
// schema on success, Error otherwise. It records the routes that answered
// with success.
type apiTester struct {
	t       *testing.T
	base    string
	token   string
	doc     map[string]any
	mux     *http.ServeMux
	success map[string]bool // "METHOD /v1/..." pattern -> answered with its success status
}

func newAPITester(t *testing.T, base, token string) *apiTester {
	at := &apiTester{t: t, base: base, token: token, mux: http.NewServeMux(), success: map[string]bool{}}
	for _, rt := range apiRoutes {
		at.mux.HandleFunc(rt.method+" "+rt.path, func(http.ResponseWriter, *http.Request) {})
	}
	code, doc := at.do("GET", "/v1/openapi.json", "", "")
	if code != 200 {
		t.Fatalf("/v1/openapi.json: %d %v", code, doc)
	}
	at.doc = doc.(map[string]any)
	return at
}

// route is the row of apiRoutes that answers method path.
func (at *apiTester) route(method, path string) (apiRoute, bool) {
	req, _ := http.NewRequest(method, at.base+path, nil)
	_, pattern := at.mux.Handler(req)
	for _, rt := range apiRoutes {
		if rt.method+" "+rt.path == pattern {
			return rt, true
		}
	}
	return apiRoute{}, false
}

// do sends a request (body with Content-Type ctype when not "") and
// returns the status and the decoded JSON answer.
func (at *apiTester) do(method, path, ctype, body string) (int, any) {
	at.t.Helper()
	req, err := http.NewRequest(method, at.base+path, strings.NewReader(body))
	if err != nil {
		at.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if at.token != "" {
		req.Header.Set("Authorization", "Bearer "+at.token)
	}
	return at.send(req)
}

func (at *apiTester) send(req *http.Request) (int, any) {
	at.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		at.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		at.t.Fatalf("%s %s: Content-Type %q: %s", req.Method, req.URL.Path, ct, b)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		at.t.Fatalf("%s %s: %d, not JSON: %v: %s", req.Method, req.URL.Path, resp.StatusCode, err, b)
	}
	if at.doc == nil {
		return resp.StatusCode, v
	}
	schema := "Error"
	rt, ok := at.route(req.Method, req.URL.Path)
	if ok && resp.StatusCode == rt.status {
		schema = rt.result
		at.success[rt.method+" "+rt.path] = true
	}
	if err := at.validate(map[string]any{"$ref": "#/components/schemas/" + schema}, v, "$"); err != nil {
		at.t.Errorf("%s %s: %d answer does not match schema %s: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, schema, err, b)
	}
	return resp.StatusCode, v
}

// want sends a request and checks its status (and, for an error, its code).
func (at *apiTester) want(method, path, ctype, body string, status int, code string) map[string]any {
	at.t.Helper()
	if rt, ok := at.route(method, path); ok && rt.body != "" && ctype == "application/json" && body != "" {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err == nil {
			if err := at.validate(map[string]any{"$ref": "#/components/schemas/" + rt.body}, v, "$"); err != nil && status < 300 {
				at.t.Errorf("%s %s: the sample request does not match schema %s: %v", method, path, rt.body, err)
			}
		}
	}
	got, v := at.do(method, path, ctype, body)
	m, _ := v.(map[string]any)
	if got != status || code != "" && m["code"] != code {
		at.t.Fatalf("%s %s = %d %v, want %d %s", method, path, got, v, status, code)
	}
	return m
}

// validate checks v against an OpenAPI schema (the subset openapi.go
// writes: $ref, type, properties, required, items, additionalProperties,
// enum, oneOf, pattern, minProperties).
func (at *apiTester) validate(s map[string]any, v any, path string) error {
	if r, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/components/schemas/")
		target, ok := at.doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: no schema %s", path, name)
		}
		return at.validate(target, v, path)
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if at.validate(a.(map[string]any), v, path) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: %v matches %d of oneOf", path, v, n)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			found = found || e == v
		}
		if !found {
			return fmt.Errorf("%s: %v not in %v", path, v, enum)
		}
	}
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want object", path, v)
		}
		if n, ok := s["minProperties"].(float64); ok && len(m) < int(n) {
			return fmt.Errorf("%s: %d properties, want at least %v", path, len(m), n)
		}
		for _, r := range asList(s["required"]) {
			if _, ok := m[r.(string)]; !ok {
				return fmt.Errorf("%s: no %s", path, r)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, pv := range m {
			if ps, ok := props[k].(map[string]any); ok {
				if err := at.validate(ps, pv, path+"."+k); err != nil {
					return err
				}
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				if err := at.validate(ap, pv, path+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, want array", path, v)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range l {
				if err := at.validate(items, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %T %v, want string", path, v, v)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", path, str, p)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: %v, want integer", path, v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return fmt.Errorf("%s: %v, want number", path, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v, want boolean", path, v)
		}
	}
	return nil
}

func asList(v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	return nil
}

// TestOpenAPIMatchesRoutes: the document names every registered route once,
// and nothing else.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	b, err := json.Marshal(openAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, item := range doc["paths"].(map[string]any) {
		ops += len(item.(map[string]any))
	}
	if ops != len(apiRoutes) {
		t.Fatalf("the document has %d operations, %d routes are registered", ops, len(apiRoutes))
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, rt := range apiRoutes {
		op, ok := doc["paths"].(map[string]any)[rt.path].(map[string]any)[strings.ToLower(rt.method)].(map[string]any)
		if !ok {
			t.Errorf("%s %s is not in the document", rt.method, rt.path)
			continue
		}
		if _, ok := op["responses"].(map[string]any)[strconv.Itoa(rt.status)]; !ok {
			t.Errorf("%s %s: no %d response", rt.method, rt.path, rt.status)
		}
		for _, name := range []string{rt.body, rt.result} {
			if _, ok := schemas[name]; name != "" && !ok {
				t.Errorf("%s %s: no schema %s", rt.method, rt.path, name)
			}
		}
	}
}

// TestHTTPAPI drives a job's whole life over /v1 on a node with a token:
// create (JSON and YAML), list, show, rows by pages, alter, pause, reset
// offsets, resume, stop, delete, tables, SQL, and the errors, statuses and
// bounds on the way; every answer matches the OpenAPI document, and every
// route of the document answers with success at least once.
func TestHTTPAPI(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	prod, _ := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.DefaultProduceTopic("t"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer prod.Close()
	for i := range 5 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, `{"v":%d}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.AuthToken = apiTestToken
	n, err := Start(context.Background(), Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()
	at := newAPITester(t, base, apiTestToken)

	// Auth: no token, a wrong one.
	anon := &apiTester{t: t, base: base, doc: at.doc, mux: at.mux, success: map[string]bool{}}
	anon.want("GET", "/v1/jobs", "", "", 401, "UNAUTHENTICATED")
	anon.token = "wrong-token-0123456789"
	anon.want("POST", "/v1/jobs/x/pause", "", "", 401, "UNAUTHENTICATED")

	brokers, _ := json.Marshal(kc.ListenAddrs())
	spec := `{"name": "orders", "table": {"name": "orders", "columns": [{"name": "v", "type": "int64"}]}, "format": "json",
		"max_batch_interval": "100ms", "kafka": {"brokers": ` + string(brokers) + `, "topic": "t", "default_offset": "OFFSET_BEGINNING"}}`

	// Bad bodies: the type, the size, the spec.
	at.want("POST", "/v1/jobs", "text/plain", spec, 415, "INVALID_ARGUMENT")
	at.want("POST", "/v1/jobs", "", spec, 415, "INVALID_ARGUMENT")
	at.want("POST", "/v1/jobs", "application/json", `{"name": "x", "x": `+strings.Repeat(" ", maxAPIBody)+`1}`, 413, "INVALID_ARGUMENT")
	if m := at.want("POST", "/v1/jobs", "application/json", `{"name": "bad", "table": {"name": "b", "columns": [{"name": "v", "type": "int64"}]}, "kafka": {"topic": "t"}}`, 400, "INVALID_ARGUMENT"); m["field"] != "kafka.brokers" {
		t.Errorf("a spec without brokers: field %v", m["field"])
	}
	at.want("POST", "/v1/jobs", "application/json", `{"name": "bad", "nonsense": 1}`, 400, "INVALID_ARGUMENT")

	// Create, twice.
	at.want("POST", "/v1/jobs", "application/json", spec, 201, "")
	at.want("POST", "/v1/jobs", "application/json", spec, 409, "ALREADY_EXISTS")
	yamlSpec := "name: orders_yaml\ntable: {name: orders_y, columns: [{name: v, type: int64}]}\nformat: json\nkafka: {brokers: " + string(brokers) + ", topic: t}\n"
	at.want("POST", "/v1/jobs", "application/yaml", yamlSpec, 201, "")

	// A cross-site change is refused whatever the token.
	req, _ := http.NewRequest("POST", base+"/v1/jobs/orders/stop", nil)
	req.Header.Set("Authorization", "Bearer "+apiTestToken)
	req.Header.Set("Origin", "http://evil.example")
	if code, v := at.send(req); code != 403 {
		t.Fatalf("cross-site stop: %d %v", code, v)
	}

	if m := at.want("GET", "/v1/jobs?sort=name&desc=true", "", "", 200, ""); len(m["jobs"].([]any)) != 2 {
		t.Fatalf("list: %v", m)
	}
	at.want("GET", "/v1/jobs?sort=nonsense", "", "", 400, "INVALID_ARGUMENT")
	at.want("GET", "/v1/jobs/nope", "", "", 404, "NOT_FOUND")
	at.want("GET", "/v1/jobs/orders", "", "", 200, "")
	at.want("GET", "/v1/jobs/orders/committed?after_batches=-1&wait_ms=1000", "", "", 200, "")
	at.want("GET", "/v1/jobs/orders/committed?wait_ms=100000", "", "", 400, "INVALID_ARGUMENT")
	at.want("GET", "/v1/jobs/nope/committed", "", "", 404, "NOT_FOUND")
	at.want("GET", "/v1/openapi.json", "", "", 200, "")
	at.want("GET", "/v1/nope", "", "", 404, "NOT_FOUND")

	// The rows arrive; read them two at a time.
	waitTableRows(t, at, "orders", "5")
	// The light read sees the commit (published just after it: long
	// polls, each past the batches the last one saw).
	for after, polls := "-1", 0; ; polls++ {
		m := at.want("GET", "/v1/jobs/orders/committed?wait_ms=1000&after_batches="+after, "", "", 200, "")
		if m["loadedRows"] == "5" && len(m["positions"].([]any)) == 2 {
			break
		}
		if polls > 20 {
			t.Fatalf("committed after 5 rows: %v", m)
		}
		// Rows show in the table just before the job publishes their
		// commit: an answer may still have none (committedBatches 0 is
		// left out of the JSON); the next poll waits past it.
		after = "0"
		if b, ok := m["committedBatches"].(string); ok {
			after = b
		}
	}
	// With history, every commit the node published, with its positions.
	m := at.want("GET", "/v1/jobs/orders/committed?history=true", "", "", 200, "")
	if cs, ok := m["commits"].([]any); !ok || len(cs) == 0 || cs[len(cs)-1].(map[string]any)["committedBatches"] != m["committedBatches"] {
		t.Fatalf("committed with history: %v, want its commits up to the last", m)
	}
	at.want("GET", "/v1/jobs/orders/committed?history=maybe", "", "", 400, "INVALID_ARGUMENT")
	var vals []string
	for cursor, pages := "", 0; ; pages++ {
		m := at.want("GET", "/v1/tables/orders/rows?limit=2&cursor="+cursor, "", "", 200, "")
		for _, r := range m["rows"].([]any) {
			vals = append(vals, fmt.Sprint(r.([]any)[0]))
		}
		cursor = m["next"].(string)
		if cursor == "" || pages > 10 {
			break
		}
	}
	if strings.Join(vals, ",") != "0,1,2,3,4" {
		t.Fatalf("rows by pages: %v", vals)
	}
	at.want("GET", "/v1/tables/orders/rows?limit=0", "", "", 400, "INVALID_ARGUMENT")
	at.want("GET", "/v1/tables/orders/rows?limit="+strconv.Itoa(api.MaxScanPage+1), "", "", 400, "INVALID_ARGUMENT")
	at.want("GET", "/v1/tables/orders/rows?cursor=!!", "", "", 400, "INVALID_ARGUMENT")
	at.want("GET", "/v1/tables/nope/rows", "", "", 404, "NOT_FOUND")
	if m := at.want("GET", "/v1/tables", "", "", 200, ""); len(m["tables"].([]any)) != 2 {
		t.Fatalf("tables: %v", m)
	}

	// Alter: a partial spec; a field that may not change is named.
	if m := at.want("PATCH", "/v1/jobs/orders", "application/json", `{"max_batch_rows": 1234}`, 200, ""); !strings.Contains(fmt.Sprint(m["spec"]), "1234") {
		t.Errorf("alter: %v", m["spec"])
	}
	at.want("PATCH", "/v1/jobs/orders", "application/json", `{"format": "csv"}`, 400, "INVALID_ARGUMENT")
	at.want("PATCH", "/v1/jobs/orders", "application/json", `{"name": "other", "max_batch_rows": 10}`, 400, "INVALID_ARGUMENT")
	at.want("PATCH", "/v1/jobs/orders", "application/yaml", "max_error_number: 3\n", 200, "")

	// Offsets: PAUSED only.
	at.want("POST", "/v1/jobs/orders/offsets", "application/json", `{"partitions": {"0": 2}}`, 409, "FAILED_PRECONDITION")
	at.want("POST", "/v1/jobs/orders/pause", "", "", 200, "")
	at.want("POST", "/v1/jobs/orders/offsets", "application/json", `{"partitions": {"x": 2}}`, 400, "INVALID_ARGUMENT")
	at.want("POST", "/v1/jobs/orders/offsets", "application/json", `{}`, 400, "INVALID_ARGUMENT")
	at.want("POST", "/v1/jobs/orders/offsets", "application/json", `{"partitions": {"0": 3, "1": "OFFSET_BEGINNING"}}`, 200, "")
	at.want("POST", "/v1/jobs/orders/resume", "application/json", "", 200, "")
	waitTableRows(t, at, "orders", "7") // 5, then offsets 3 and 4 again: new rows

	// SQL: a Doris statement's result set; a bad one.
	if m := at.want("POST", "/v1/sql", "application/json", `{"statement": "SHOW ROUTINE LOAD FOR orders"}`, 200, ""); len(m["rows"].([]any)) != 1 || len(m["columns"].([]any)) < 10 {
		t.Errorf("SHOW ROUTINE LOAD: %v", m)
	}
	at.want("POST", "/v1/sql", "application/json", `{"statement": "SHOW TABLES"}`, 200, "")
	// DESC names Doris's types, as the MySQL protocol does; SHOW CREATE TABLE.
	if m := at.want("POST", "/v1/sql", "application/json", `{"statement": "DESC orders"}`, 200, ""); fmt.Sprint(m["rows"]) != "[[v BIGINT YES]]" {
		t.Errorf("DESC: %v", m)
	}
	if m := at.want("POST", "/v1/sql", "application/json", `{"statement": "SHOW CREATE TABLE orders"}`, 200, ""); !strings.Contains(fmt.Sprint(m["rows"]), "CREATE TABLE `orders` (") {
		t.Errorf("SHOW CREATE TABLE: %v", m)
	}
	at.want("POST", "/v1/sql", "application/json", `{"statement": "FROB"}`, 400, "INVALID_ARGUMENT")
	at.want("POST", "/v1/sql", "application/json", `{"sql": "SHOW TABLES"}`, 400, "INVALID_ARGUMENT")

	at.want("GET", "/v1/cluster", "", "", 409, "FAILED_PRECONDITION")

	// Stop, delete, drop.
	at.want("DELETE", "/v1/jobs/orders", "", "", 409, "FAILED_PRECONDITION")
	at.want("DELETE", "/v1/tables/orders", "", "", 409, "FAILED_PRECONDITION")
	at.want("POST", "/v1/jobs/orders/stop", "", "", 200, "")
	at.want("POST", "/v1/jobs/orders/resume", "", "", 409, "FAILED_PRECONDITION")
	at.want("DELETE", "/v1/jobs/orders", "", "", 200, "")
	at.want("GET", "/v1/jobs/orders", "", "", 404, "NOT_FOUND")
	if m := at.want("DELETE", "/v1/tables/orders", "", "", 200, ""); m["dropped"] != true {
		t.Errorf("drop: %v", m)
	}
	at.want("DELETE", "/v1/tables/orders", "", "", 404, "NOT_FOUND")
	at.want("DELETE", "/v1/tables/orders?if_exists=true", "", "", 200, "")

	for _, rt := range apiRoutes {
		if k := rt.method + " " + rt.path; !at.success[k] && rt.path != "/v1/cluster" {
			t.Errorf("%s never answered with success", k)
		}
	}
}

// TestHTTPAPIWithoutToken: a node without a token answers /v1 without one;
// a bearer token sent anyway is not needed, and a browser's cross-site
// change is still refused.
func TestHTTPAPIWithoutToken(t *testing.T) {
	cfg := config.DefaultNode()
	cfg.DataDir, cfg.Listen, cfg.HTTP = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	n, err := Start(context.Background(), Config{Node: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.AdminAddr()
	at := newAPITester(t, base, "")
	at.want("GET", "/v1/jobs", "", "", 200, "")
	at.want("POST", "/v1/sql", "application/json", `{"statement": "CREATE TABLE t (v BIGINT) DUPLICATE KEY(v) DISTRIBUTED BY HASH(v)"}`, 200, "")
	at.want("GET", "/v1/tables/t", "", "", 200, "")
	for _, h := range []map[string]string{{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}} {
		req, _ := http.NewRequest("DELETE", base+"/v1/tables/t", bytes.NewReader(nil))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		if code, v := at.send(req); code != 403 {
			t.Fatalf("cross-site drop (%v): %d %v", h, code, v)
		}
	}
	at.want("DELETE", "/v1/tables/t", "", "", 200, "")
}

// waitTableRows waits until GET /v1/tables/{table} counts rows rows.
func waitTableRows(t *testing.T, at *apiTester, table, rows string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		m := at.want("GET", "/v1/tables/"+table, "", "", 200, "")
		if m["rows"] == rows {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("table %s never held %s rows: %v", table, rows, m)
		case <-tick.C:
		}
	}
}
