package node

import (
	"regexp"
	"strconv"

	"github.com/loadnode/loadnode/api"
)

// openAPIDocument is the OpenAPI 3 document of /v1, written from
// apiRoutes and openAPISchemas: a route is in it exactly when it is
// registered (TestOpenAPIMatchesRoutes).
func openAPIDocument() map[string]any {
	paths := map[string]map[string]any{}
	for _, rt := range apiRoutes {
		op := map[string]any{
			"summary":     rt.summary,
			"operationId": operationID(rt),
			"security":    []any{map[string]any{"bearer": []any{}}},
		}
		var params []any
		for _, name := range pathParams.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, map[string]any{"name": name[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.about, "schema": map[string]any{"type": q.typ}})
		}
		if params != nil {
			op["parameters"] = params
		}
		if rt.body != "" {
			content := map[string]any{"application/json": map[string]any{"schema": ref(rt.body)}}
			if rt.yaml {
				content["application/yaml"] = map[string]any{"schema": ref(rt.body)}
			}
			op["requestBody"] = map[string]any{"required": true, "content": content}
		}
		responses := map[string]any{
			strconv.Itoa(rt.status): jsonResponse("success", rt.result),
			"default":               jsonResponse("an error: code is an api.ErrorCode name", "Error"),
		}
		op["responses"] = responses
		if paths[rt.path] == nil {
			paths[rt.path] = map[string]any{}
		}
		paths[rt.path][lower(rt.method)] = op
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{"title": "loadnode HTTP/JSON API", "version": "v1",
			"description": "The admin endpoint's /v1: jobs, tables, Doris statements and the cluster. See docs/api.md."},
		"paths": paths,
		"components": map[string]any{
			"schemas":         openAPISchemas(),
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "the node's token (auth_token); none when the node has no token"}},
		},
	}
}

var pathParams = regexp.MustCompile(`\{([a-z_]+)\}`)

func operationID(rt apiRoute) string {
	return lower(rt.method) + pathParams.ReplaceAllString(rt.path, "_$1_")
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func jsonResponse(about, schema string) map[string]any {
	return map[string]any{"description": about, "content": map[string]any{"application/json": map[string]any{"schema": ref(schema)}}}
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// obj is an object schema; open: other properties are allowed.
func obj(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func typ(t string) map[string]any { return map[string]any{"type": t} }

func arrayOf(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

// int64s are strings in protojson (as in `job show -o json`).
var protoInt64 = map[string]any{"type": "string", "pattern": "^-?[0-9]+$"}

// openAPISchemas are the request and answer schemas the routes name. The
// job spec's fields are SPEC.md's; only the outline is given here.
func openAPISchemas() map[string]any {
	codes := []any{}
	for i := range len(api.ErrorCode_name) {
		if i != int(api.ErrorCode_OK) {
			codes = append(codes, api.ErrorCode_name[int32(i)])
		}
	}
	summary := obj(map[string]any{"id": protoInt64, "name": typ("string"), "state": typ("string"), "reason": typ("string"),
		"table": typ("string"), "sink": typ("string"), "source": typ("string"), "totalLag": protoInt64, "rowsPerSecond": typ("number")}, "name", "state")
	source := typ("object")
	return map[string]any{
		"Error": obj(map[string]any{"code": map[string]any{"type": "string", "enum": codes}, "message": typ("string"),
			"field": map[string]any{"type": "string", "description": "the spec or request field at fault"}}, "code", "message"),
		"JobSpec": obj(map[string]any{"name": typ("string"), "table": typ("object"), "tables": arrayOf(typ("object")), "format": typ("string"),
			"kafka": source, "kinesis": source, "max_batch_interval": map[string]any{}, "max_batch_rows": typ("integer"),
			"desired_concurrent_number": typ("integer"), "max_error_number": typ("integer")}, "name"),
		"JobPatch": map[string]any{"type": "object", "minProperties": 1,
			"description": "the spec fields to change, by their spec names (config.Alterable); kafka's by kafka.<key>"},
		"JobSummary": summary,
		"JobInfo":    obj(map[string]any{"summary": summary, "spec": typ("object"), "stats": typ("object"), "health": typ("string"), "history": arrayOf(typ("object"))}, "summary"),
		"JobCommitted": obj(map[string]any{"id": protoInt64, "name": typ("string"), "state": typ("string"), "reason": typ("string"),
			"positions":  arrayOf(obj(map[string]any{"partition": typ("integer"), "committedOffset": protoInt64})),
			"loadedRows": protoInt64, "errorRows": protoInt64, "committedBatches": protoInt64, "lastCommitUnixNs": protoInt64, "stored": typ("boolean")}, "name"),
		"JobList": obj(map[string]any{"jobs": arrayOf(summary), "total": protoInt64, "matched": protoInt64,
			"nextAfterId": protoInt64, "nextOffset": typ("integer")}, "jobs", "total", "matched"),
		"OffsetsReset": obj(map[string]any{
			"partitions": map[string]any{"type": "object", "description": "Kafka partition -> offset, OFFSET_BEGINNING or OFFSET_END",
				"additionalProperties": map[string]any{"oneOf": []any{typ("integer"), typ("string")}}},
			"positions": map[string]any{"type": "object", "description": "Kinesis shard id -> TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339> or a sequence number",
				"additionalProperties": typ("string")}}),
		"TableInfo": obj(map[string]any{"spec": obj(map[string]any{"name": typ("string"), "columns": arrayOf(typ("object"))}, "name"),
			"jobs": arrayOf(typ("string")), "rows": protoInt64, "sink": typ("string"), "countError": typ("string")}, "spec"),
		"TableList": obj(map[string]any{"tables": arrayOf(ref("TableInfo"))}, "tables"),
		"Rows": obj(map[string]any{"columns": arrayOf(typ("string")), "types": arrayOf(typ("string")),
			"rows": arrayOf(typ("array")), "next": map[string]any{"type": "string", "description": `the cursor of the next page; "" at the end`}},
			"columns", "types", "rows", "next"),
		"Dropped":    obj(map[string]any{"dropped": typ("boolean")}, "dropped"),
		"SQLRequest": obj(map[string]any{"statement": typ("string")}, "statement"),
		"SQLResult": obj(map[string]any{"columns": arrayOf(typ("string")), "rows": arrayOf(arrayOf(typ("string"))), "message": typ("string")},
			"columns", "rows"),
		"ClusterStatus": obj(map[string]any{"members": arrayOf(typ("object")), "leader": typ("string")}),
		"OpenAPI":       obj(map[string]any{"openapi": typ("string"), "paths": typ("object")}, "openapi", "paths"),
	}
}
