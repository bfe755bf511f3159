package registry

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// FuzzSchemaText: any schema text a registry answers, avro or protobuf,
// either compiles or is a ParseError (every record naming it an error
// row): never a panic or a stack overflow. The seeds carry the hostile
// shapes of the 2026-12-02 probe: schemas nested 100,000 deep in every
// bracket, and a wide one of 20,000 fields.
func FuzzSchemaText(f *testing.F) {
	deep := func(open, leaf, close string, n int) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
	}
	// wide joins n fields made by field, with sep between.
	wide := func(n int, sep string, field func(i int) string) string {
		fs := make([]string, n)
		for i := range fs {
			fs[i] = field(i)
		}
		return strings.Join(fs, sep)
	}
	for _, s := range []string{
		`{"type":"record","name":"R","fields":[{"name":"id","type":"long"},{"name":"s","type":["null","string"]}]}`,
		deep(`{"type":"array","items":`, `"int"`, `}`, 100_000),
		deep(`[`, `"int"`, `]`, 100_000),
		deep(`{"type":"record","name":"R","fields":[{"name":"f","type":`, `"int"`, `}]}`, 20_000),
		`{"type":"record","name":"W","fields":[` + wide(20_000, ",", func(i int) string { return `{"name":"f` + strconv.Itoa(i) + `","type":"long"}` }) + `]}`,
	} {
		f.Add(false, s)
	}
	for _, s := range []string{
		`syntax = "proto3"; message M { int64 id = 1; string s = 2; M next = 3; }`,
		`syntax = "proto3"; ` + deep(`message M { `, `int64 id = 1;`, ` }`, 20_000),
		`syntax = "proto3"; message M { option (x) = ` + deep(`{ a: `, `1`, ` }`, 100_000) + `; }`,
		`syntax = "proto3"; message W { ` + wide(20_000, " ", func(i int) string { return "int64 f" + strconv.Itoa(i) + " = " + strconv.Itoa(i+1) + ";" }) + `}`,
	} {
		f.Add(true, s)
	}
	r, err := New(&api.SchemaRegistrySpec{Url: "http://127.0.0.1:1"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, proto bool, text string) {
		e := &entry{schema: sr.Schema{Schema: text, Type: sr.TypeAvro}}
		var err error
		if proto {
			e.schema.Type = sr.TypeProtobuf
			_, err = r.compileProto(1, e)
		} else {
			_, err = r.compileAvro(1, e)
		}
		var pe *table.ParseError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("%.200q: %v (%T), want a ParseError", text, err, err)
		}
	})
}
