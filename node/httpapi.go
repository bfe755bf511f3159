package node

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/config"
	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/table"
)

// The HTTP/JSON API under /v1 (docs/api.md): every route is a row of
// apiRoutes, which both registers the handler and writes the OpenAPI
// document served at /v1/openapi.json (openapi.go), so the two cannot
// disagree (TestOpenAPIMatchesRoutes). Handlers run what the CLI runs:
// the calls of package client, through a client bound to the node's own
// manager (client.Local), and answer JSON. An error is
// {"code": CODE, "message": ..., "field": ...} with the api.ErrorCode name
// the Go client branches on and the HTTP status of httpStatusOf.
//
// Auth is the admin endpoint's (authenticate, checkHost): the node token
// as a bearer token, or the bearer of a live console session (the web
// console calls /v1 with it; console.go). There is no cookie auth on /v1,
// and a request that a
// browser sends from another origin (Origin or Sec-Fetch-Site naming
// another site) is refused before it runs, so that no page of another
// site can change anything even on a node without a token. Bodies are at
// most maxAPIBody bytes of JSON (or YAML where a spec is expected) with
// that Content-Type.

// maxAPIBody bounds a request body on /v1.
const maxAPIBody = 1 << 20

// apiRowsDefault is the rows of a page of GET /v1/tables/{name}/rows
// without limit=; api.MaxScanPage is the most.
const apiRowsDefault = 100

// apiTimeout bounds one /v1 request's calls to the manager.
const apiTimeout = 30 * time.Second

// apiRoute is one route of /v1: its method and pattern (net/http's), what
// it takes and answers (schema names of openAPISchemas), and its handler.
type apiRoute struct {
	method, path string
	summary      string
	query        []apiParam
	// body is the request's schema ("" none); yaml: the body may also be
	// YAML (Content-Type application/yaml).
	body string
	yaml bool
	// status is the answer's status on success; result its schema.
	status int
	result string
	handle func(h *httpAPI, r *http.Request) (any, error)
}

// apiParam is a query parameter of a route.
type apiParam struct {
	name, typ, about string
}

// apiRoutes is the API: see the comment at the top of this file.
var apiRoutes = []apiRoute{
	{method: "POST", path: "/v1/jobs", summary: "Create a job from a job spec (JSON with the spec file's field names, or YAML).",
		body: "JobSpec", yaml: true, status: http.StatusCreated, result: "JobInfo", handle: (*httpAPI).createJob},
	{method: "GET", path: "/v1/jobs", summary: "List jobs: a page in id order (limit, after), or sorted and filtered (sort, desc/order, q, offset).",
		query: []apiParam{{"limit", "integer", "jobs per page (default and most: api.MaxListPage)"}, {"after", "integer", "nextAfterId of the previous page"},
			{"sort", "string", "a sort key (name, state, rows_per_sec, lag, ...)"}, {"desc", "boolean", "descending"}, {"order", "string", "asc or desc"},
			{"q", "string", "case-insensitive substring filter"}, {"offset", "integer", "nextOffset of the previous page"}},
		status: http.StatusOK, result: "JobList", handle: (*httpAPI).listJobs},
	{method: "GET", path: "/v1/jobs/{name}", summary: "Show a job (what `job show` prints).", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).showJob},
	{method: "GET", path: "/v1/jobs/{name}/committed", summary: "A job's committed positions, loaded rows and last commit time: a light read from memory, cheap to poll; with wait_ms a long poll.",
		query: []apiParam{{"after_batches", "integer", "with wait_ms: answer once the job has more committed batches than this (or its state changed)"},
			{"wait_ms", "integer", "the long poll's bound, at most api.MaxCommittedWaitMs (default 0: at once)"},
			{"history", "boolean", "true: commits lists each commit after after_batches this node published (at most api.MaxCommittedHistory), with its own time and positions"}},
		status: http.StatusOK, result: "JobCommitted", handle: (*httpAPI).jobCommitted},
	{method: "PATCH", path: "/v1/jobs/{name}", summary: "Alter a job: a partial spec naming the fields to change (as `job alter`).",
		body: "JobPatch", yaml: true, status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).alterJob},
	{method: "POST", path: "/v1/jobs/{name}/pause", summary: "Pause a job.", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).pauseJob},
	{method: "POST", path: "/v1/jobs/{name}/resume", summary: "Resume a paused job.", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).resumeJob},
	{method: "POST", path: "/v1/jobs/{name}/stop", summary: "Stop a job (final).", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).stopJob},
	{method: "POST", path: "/v1/jobs/{name}/offsets", summary: "Reset a PAUSED job's start positions: Kafka partitions or Kinesis shards.",
		body: "OffsetsReset", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).resetOffsets},
	{method: "DELETE", path: "/v1/jobs/{name}", summary: "Delete a STOPPED or CANCELLED job (its table and rows stay).", status: http.StatusOK, result: "JobInfo", handle: (*httpAPI).deleteJob},
	{method: "GET", path: "/v1/tables", summary: "List the tables of the catalog.", status: http.StatusOK, result: "TableList", handle: (*httpAPI).listTables},
	{method: "GET", path: "/v1/tables/{name}", summary: "Describe a table: schema, database, jobs, row count.", status: http.StatusOK, result: "TableInfo", handle: (*httpAPI).describeTable},
	{method: "GET", path: "/v1/tables/{name}/rows", summary: "A page of a table's rows in storage order; next is the cursor of the following page.",
		query:  []apiParam{{"limit", "integer", "rows per page (default 100, at most api.MaxScanPage)"}, {"cursor", "string", "next of the previous page"}},
		status: http.StatusOK, result: "Rows", handle: (*httpAPI).tableRows},
	{method: "DELETE", path: "/v1/tables/{name}", summary: "Drop a table and its rows (refused while a job loads into it).",
		query: []apiParam{{"if_exists", "boolean", "an unknown table is not an error"}}, status: http.StatusOK, result: "Dropped", handle: (*httpAPI).dropTable},
	{method: "POST", path: "/v1/sql", summary: "Run one Doris statement, as `loadnode sql` does.", body: "SQLRequest", status: http.StatusOK, result: "SQLResult", handle: (*httpAPI).sql},
	{method: "GET", path: "/v1/cluster", summary: "The cluster's members, leader and jobs per member (cluster mode).", status: http.StatusOK, result: "ClusterStatus", handle: (*httpAPI).cluster},
	{method: "GET", path: "/v1/openapi.json", summary: "This document.", status: http.StatusOK, result: "OpenAPI", handle: (*httpAPI).openAPI},
}

// httpAPI serves apiRoutes for an admin endpoint.
type httpAPI struct {
	a *admin
	c *client.Client
	// doc is the OpenAPI document, JSON; written by routes.
	doc json.RawMessage
}

// routes registers apiRoutes on mux, and a JSON NOT_FOUND for the rest of
// /v1.
func (h *httpAPI) routes(mux *http.ServeMux) {
	h.doc, _ = json.Marshal(openAPIDocument()) // maps of strings: cannot fail
	for _, rt := range apiRoutes {
		mux.Handle(rt.method+" "+rt.path, h.serve(rt))
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeAPIError(w, &apiError{code: api.ErrorCode_NOT_FOUND, msg: fmt.Sprintf("no route %s %s (see /v1/openapi.json)", r.Method, api.Clip(r.URL.Path, api.MaxEchoBytes))})
	})
}

// serve runs one route: the origin and body checks of a change, then the
// handler, then its answer or error as JSON.
func (h *httpAPI) serve(rt apiRoute) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			if err := crossSite(r); err != nil {
				h.a.logger.Warn("api: refused a request", "peer", r.RemoteAddr, "path", r.URL.Path, "reason", err.msg)
				writeAPIError(w, err)
				return
			}
			if err := checkBody(w, r, rt); err != nil {
				writeAPIError(w, err)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
		defer cancel()
		out, err := rt.handle(h, r.WithContext(ctx))
		if err != nil {
			writeAPIError(w, toAPIError(err))
			return
		}
		if r.Method != http.MethodGet {
			h.a.logger.Info("api: "+rt.method+" "+rt.path, "path", r.URL.Path, "peer", r.RemoteAddr)
		}
		writeAPIJSON(w, rt.status, out)
	})
}

// crossSite refuses a change a browser sends from a page of another
// origin: curl and other clients send no Origin.
func crossSite(r *http.Request) *apiError {
	if sf := r.Header.Get("Sec-Fetch-Site"); sf != "" && sf != "same-origin" && sf != "none" {
		return &apiError{code: api.ErrorCode_UNAUTHENTICATED, status: http.StatusForbidden, msg: "refused: Sec-Fetch-Site " + api.Quote(sf) + " (no cross-site changes)"}
	}
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			return &apiError{code: api.ErrorCode_UNAUTHENTICATED, status: http.StatusForbidden, msg: "refused: origin " + api.Quote(o) + " is not this endpoint"}
		}
	}
	return nil
}

// checkBody bounds the body and checks its Content-Type: JSON (or YAML
// where rt takes it) for a route with a body; none or JSON without.
func checkBody(w http.ResponseWriter, r *http.Request, rt apiRoute) *apiError {
	r.Body = http.MaxBytesReader(w, r.Body, maxAPIBody)
	ct := r.Header.Get("Content-Type")
	if ct == "" && rt.body == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == "application/json":
		return nil
	case err == nil && rt.yaml && (mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/yaml"):
		return nil
	}
	want := "application/json"
	if rt.yaml {
		want += " or application/yaml"
	}
	if rt.body == "" {
		want += " (or none: this request has no body)"
	}
	return &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "Content-Type", status: http.StatusUnsupportedMediaType,
		msg: fmt.Sprintf("Content-Type %s: want %s", api.Quote(ct), want)}
}

// readBody reads a request's body (bounded by checkBody).
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "body", status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("body over %d bytes", maxAPIBody)}
	}
	if err != nil {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "body", msg: "reading the body: " + err.Error()}
	}
	if len(b) == 0 {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "body", msg: "empty body"}
	}
	return b, nil
}

// decodeJSON decodes a JSON body strictly (unknown fields are errors).
func decodeJSON(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "body", msg: "body: " + err.Error()}
	}
	if dec.More() {
		return &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "body", msg: "body: more than one JSON value"}
	}
	return nil
}

// apiError is an error answer of /v1.
type apiError struct {
	code  api.ErrorCode
	msg   string
	field string
	// status overrides httpStatusOf(code) when not 0.
	status int
}

func (e *apiError) Error() string { return e.code.String() + ": " + e.msg }

// httpStatusOf is the HTTP status of an error code.
func httpStatusOf(c api.ErrorCode) int {
	switch c {
	case api.ErrorCode_INVALID_ARGUMENT:
		return http.StatusBadRequest
	case api.ErrorCode_NOT_FOUND:
		return http.StatusNotFound
	case api.ErrorCode_ALREADY_EXISTS, api.ErrorCode_FAILED_PRECONDITION:
		return http.StatusConflict
	case api.ErrorCode_UNAUTHENTICATED:
		return http.StatusUnauthorized
	case api.ErrorCode_UNAVAILABLE:
		return http.StatusServiceUnavailable
	case api.ErrorCode_UNKNOWN_MESSAGE:
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// toAPIError turns a handler's error into an answer: the node's *client.Error
// keeps its code; no answer from the manager is UNAVAILABLE.
func toAPIError(err error) *apiError {
	var ae *apiError
	var ce *client.Error
	var fe *config.FieldError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ce):
		return &apiError{code: ce.Code, msg: ce.Message, field: ce.Field}
	case errors.As(err, &fe):
		return &apiError{code: api.ErrorCode_INVALID_ARGUMENT, msg: fe.Error(), field: fe.Field}
	case errors.Is(err, client.ErrNoAnswer), errors.Is(err, client.ErrUnreachable), errors.Is(err, client.ErrClosed),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return &apiError{code: api.ErrorCode_UNAVAILABLE, msg: err.Error()}
	}
	return &apiError{code: api.ErrorCode_INTERNAL, msg: err.Error()}
}

// apiErrorBody is the JSON of an error answer.
type apiErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	st := e.status
	if st == 0 {
		st = httpStatusOf(e.code)
	}
	writeAPIJSON(w, st, apiErrorBody{Code: e.code.String(), Message: api.Clip(e.msg, api.MaxMessageBytes), Field: e.field})
}

// writeAPIJSON writes v: a proto message as protojson (the field names of
// `job show -o json`), anything else as encoding/json.
func writeAPIJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	var err error
	if m, ok := v.(proto.Message); ok {
		b, err = protojson.Marshal(m)
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"code":"INTERNAL","message":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	_, _ = io.WriteString(w, "\n")
}

// ---------------------------------------------------------------- jobs

func (h *httpAPI) createJob(r *http.Request) (any, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	spec, err := config.ParseJobSpec(b)
	if err != nil {
		return nil, err
	}
	return h.c.CreateJob(r.Context(), spec)
}

func (h *httpAPI) listJobs(r *http.Request) (any, error) {
	req, err := listRequest(r)
	if err != nil {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, msg: err.Error()}
	}
	res, err := h.a.ask(r.Context(), req)
	if err != nil {
		return nil, &apiError{code: api.ErrorCode_UNAVAILABLE, msg: "no answer from the manager: " + err.Error()}
	}
	resp, ok := res.(*api.ListJobsResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T", res)
	}
	if e := resp.GetError(); e != nil {
		return nil, &apiError{code: e.GetCode(), msg: e.GetMessage(), field: e.GetField()}
	}
	b, err := listJSON(resp)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

func (h *httpAPI) showJob(r *http.Request) (any, error) {
	return h.c.ShowJob(r.Context(), r.PathValue("name"))
}

func (h *httpAPI) jobCommitted(r *http.Request) (any, error) {
	q := r.URL.Query()
	var after, wait int64
	for _, p := range []struct {
		name string
		v    *int64
		min  int64
		max  int64
	}{{"after_batches", &after, -1, math.MaxInt64}, {"wait_ms", &wait, 0, api.MaxCommittedWaitMs}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < p.min || n > p.max {
				return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: p.name, msg: fmt.Sprintf("%s %s must be an integer within %d and %d", p.name, api.Quote(s), p.min, p.max)}
			}
			*p.v = n
		}
	}
	switch hist := q.Get("history"); hist {
	case "", "false", "0":
	case "true", "1":
		return h.c.WaitCommits(r.Context(), r.PathValue("name"), after, time.Duration(wait)*time.Millisecond)
	default:
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "history", msg: fmt.Sprintf("history %s must be true or false", api.Quote(hist))}
	}
	return h.c.WaitCommitted(r.Context(), r.PathValue("name"), after, time.Duration(wait)*time.Millisecond)
}

func (h *httpAPI) alterJob(r *http.Request) (any, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	patch, mask, err := config.ParseJobPatch(b)
	if err != nil {
		return nil, err
	}
	if patch.GetName() != "" && patch.GetName() != name {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "name", msg: fmt.Sprintf("a job's name does not change (the patch names %s, the path %s)", api.Quote(patch.GetName()), api.Quote(name))}
	}
	patch.Name = name
	return h.c.Alter(r.Context(), &api.AlterJobRequest{Name: name, Spec: patch, UpdateMask: mask})
}

func (h *httpAPI) pauseJob(r *http.Request) (any, error) {
	return h.c.PauseJob(r.Context(), r.PathValue("name"))
}

func (h *httpAPI) resumeJob(r *http.Request) (any, error) {
	return h.c.ResumeJob(r.Context(), r.PathValue("name"))
}

func (h *httpAPI) stopJob(r *http.Request) (any, error) {
	return h.c.StopJob(r.Context(), r.PathValue("name"))
}

func (h *httpAPI) deleteJob(r *http.Request) (any, error) {
	return h.c.DeleteJob(r.Context(), r.PathValue("name"))
}

// offsetsReset is the body of POST /v1/jobs/{name}/offsets.
type offsetsReset struct {
	// Partitions: Kafka partition -> offset (a number, OFFSET_BEGINNING or
	// OFFSET_END).
	Partitions map[string]json.RawMessage `json:"partitions"`
	// Positions: Kinesis shard id -> TRIM_HORIZON, LATEST,
	// AT_TIMESTAMP:<RFC3339> or a sequence number.
	Positions map[string]string `json:"positions"`
}

func (h *httpAPI) resetOffsets(r *http.Request) (any, error) {
	var body offsetsReset
	if err := decodeJSON(r, &body); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	switch {
	case len(body.Partitions) > 0 && len(body.Positions) > 0:
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "positions", msg: "partitions are a Kafka job's, positions a Kinesis job's: not both"}
	case len(body.Positions) > 0:
		return h.c.ResetPositions(r.Context(), name, nil, body.Positions)
	case len(body.Partitions) == 0:
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "partitions", msg: `give "partitions" {"0": 123, ...} (Kafka) or "positions" {"SHARD": "TRIM_HORIZON", ...} (Kinesis)`}
	}
	offsets := make(map[int32]string, len(body.Partitions))
	for p, raw := range body.Partitions {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "partitions." + p, msg: "a partition is a number >= 0"}
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "partitions." + p, msg: err.Error()}
		}
		switch v := v.(type) {
		case string:
			offsets[int32(n)] = v
		case float64:
			if v != math.Trunc(v) {
				return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "partitions." + p, msg: "an offset is a whole number, OFFSET_BEGINNING or OFFSET_END"}
			}
			offsets[int32(n)] = string(raw)
		default:
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "partitions." + p, msg: "an offset is a number, OFFSET_BEGINNING or OFFSET_END"}
		}
	}
	return h.c.AlterJob(r.Context(), name, nil, offsets)
}

// ---------------------------------------------------------------- tables

func (h *httpAPI) listTables(r *http.Request) (any, error) {
	tables, err := h.c.ListTables(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, len(tables))
	for _, t := range tables {
		b, err := protojson.Marshal(t)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return map[string]any{"tables": out}, nil
}

func (h *httpAPI) describeTable(r *http.Request) (any, error) {
	return h.c.DescribeTable(r.Context(), r.PathValue("name"))
}

func (h *httpAPI) dropTable(r *http.Request) (any, error) {
	ifExists := false
	if v := r.URL.Query().Get("if_exists"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "if_exists", msg: "must be true or false"}
		}
		ifExists = b
	}
	dropped, err := h.c.DropTable(r.Context(), r.PathValue("name"), ifExists)
	if err != nil {
		return nil, err
	}
	return map[string]bool{"dropped": dropped}, nil
}

// rowsPage is the answer of GET /v1/tables/{name}/rows.
type rowsPage struct {
	Columns []string `json:"columns"`
	Types   []string `json:"types"`
	Rows    [][]any  `json:"rows"`
	// Next is the cursor of the next page; "" at the end of the table.
	Next string `json:"next"`
}

func (h *httpAPI) tableRows(r *http.Request) (any, error) {
	q := r.URL.Query()
	limit := apiRowsDefault
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > api.MaxScanPage {
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "limit", msg: fmt.Sprintf("limit %s must be 1..%d", api.Quote(v), api.MaxScanPage)}
		}
		limit = n
	}
	var after []byte
	if v := q.Get("cursor"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || len(b) == 0 {
			return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "cursor", msg: "cursor is the next of the previous page"}
		}
		after = b
	}
	res, err := h.a.ask(r.Context(), &api.TableScanRequest{Table: r.PathValue("name"), Limit: int64(limit), After: after})
	if err != nil {
		return nil, &apiError{code: api.ErrorCode_UNAVAILABLE, msg: "no answer from the manager: " + err.Error()}
	}
	resp, ok := res.(*api.TableScanResponse)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T", res)
	}
	if e := resp.GetError(); e != nil {
		return nil, &apiError{code: e.GetCode(), msg: e.GetMessage(), field: e.GetField()}
	}
	page := rowsPage{Columns: []string{}, Types: []string{}, Rows: make([][]any, 0, len(resp.GetRows()))}
	for _, c := range resp.GetSchema().GetColumns() {
		page.Columns = append(page.Columns, c.GetName())
		page.Types = append(page.Types, c.GetType().String())
	}
	for _, row := range resp.GetRows() {
		vals := make([]any, 0, len(row.GetValues()))
		for _, v := range row.GetValues() {
			vals = append(vals, valueJSON(v))
		}
		page.Rows = append(page.Rows, vals)
	}
	if len(resp.GetNext()) > 0 {
		page.Next = base64.RawURLEncoding.EncodeToString(resp.GetNext())
	}
	return page, nil
}

// valueJSON is a cell as JSON: numbers and booleans as themselves, NULL as
// null, exact decimals as strings, dates and times as text, JSON as JSON.
// An int64 past 2^53 is a string, so that JavaScript reads it exactly.
func valueJSON(v *api.Value) any {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		if k.Int64 > 1<<53 || k.Int64 < -(1<<53) {
			return strconv.FormatInt(k.Int64, 10)
		}
		return k.Int64
	case *api.Value_Float64:
		if math.IsNaN(k.Float64) || math.IsInf(k.Float64, 0) {
			return strconv.FormatFloat(k.Float64, 'g', -1, 64)
		}
		return k.Float64
	case *api.Value_String_:
		return k.String_
	case *api.Value_Bool:
		return k.Bool
	case *api.Value_TimestampMicros:
		return time.UnixMicro(k.TimestampMicros).UTC().Format(time.RFC3339Nano)
	case *api.Value_Decimal:
		return k.Decimal
	case *api.Value_Json:
		if json.Valid([]byte(k.Json)) {
			return json.RawMessage(k.Json)
		}
		return k.Json
	case *api.Value_Date:
		return time.Unix(int64(k.Date)*86400, 0).UTC().Format(time.DateOnly)
	case *api.Value_DatetimeMicros:
		return strings.TrimSuffix(time.UnixMicro(k.DatetimeMicros).UTC().Format("2006-01-02 15:04:05.999999"), ".")
	}
	return nil
}

// ---------------------------------------------------------------- sql, cluster

// sqlRequest is the body of POST /v1/sql.
type sqlRequest struct {
	Statement string `json:"statement"`
}

// sqlResult is the answer of POST /v1/sql: the statement's result set
// (columns and rows of text cells, Doris's column names), or none and a
// message for a statement that answers none.
type sqlResult struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	Message string     `json:"message,omitempty"`
}

func (h *httpAPI) sql(r *http.Request) (any, error) {
	var req sqlRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Statement) == "" {
		return nil, &apiError{code: api.ErrorCode_INVALID_ARGUMENT, field: "statement", msg: "empty statement"}
	}
	res, err := dorisexec.Exec(r.Context(), h.c, req.Statement)
	if err != nil {
		return nil, err
	}
	out := sqlResult{Columns: []string{}, Rows: [][]string{}, Message: res.GetMessage()}
	switch {
	case res.GetResult() != nil:
		out.Columns = append(out.Columns, res.GetResult().GetColumns()...)
		for _, row := range res.GetResult().GetRows() {
			out.Rows = append(out.Rows, append([]string{}, row.GetValues()...))
		}
	case len(res.GetTables()) > 0 && res.GetTable() != nil: // DESC
		out.Columns = []string{"Field", "Type", "Null"}
		for _, c := range res.GetTable().GetColumns() {
			out.Rows = append(out.Rows, []string{c.GetName(), table.DorisTypeName(c), map[bool]string{true: "NO", false: "YES"}[c.GetNotNull()]})
		}
	case len(res.GetTables()) > 0: // SHOW TABLES
		out.Columns = []string{"Tables"}
		for _, t := range res.GetTables() {
			out.Rows = append(out.Rows, []string{t.GetSpec().GetName()})
		}
	case res.GetJob() != nil && out.Message == "":
		s := res.GetJob().GetSummary()
		out.Message = fmt.Sprintf("routine load %s: %s", s.GetName(), s.GetState())
	}
	return out, nil
}

func (h *httpAPI) cluster(r *http.Request) (any, error) {
	return h.c.ClusterStatus(r.Context())
}

func (h *httpAPI) openAPI(*http.Request) (any, error) {
	return h.doc, nil
}
