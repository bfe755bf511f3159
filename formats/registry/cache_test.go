package registry

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/registrytest"
	"github.com/loadnode/loadnode/table"
)

// testRegistry returns the Registry behind a decoder of format over url.
func testRegistry(t *testing.T, url, format string) (table.Decoder, *Registry) {
	t.Helper()
	d, err := NewRegistries().Decoder(&api.JobSpec{Format: format, SchemaRegistry: &api.SchemaRegistrySpec{Url: url, TimeoutMs: 10_000}})
	if err != nil {
		t.Fatal(err)
	}
	switch d := d.(type) {
	case *avroDecoder:
		return d, d.r
	case *protoDecoder:
		return d, d.r
	}
	t.Fatalf("decoder %T", d)
	return nil, nil
}

// paddedAvro is an avro record schema named name, with one long field
// "id", whose text is size bytes (padded with a doc string).
func paddedAvro(name string, size int) string {
	head := `{"type":"record","name":"` + name + `","fields":[{"name":"id","type":"long"}],"doc":"`
	return head + strings.Repeat("x", max(size-len(head)-2, 0)) + `"}`
}

// avroID7 is a wire-format record of id under an avro schema of one long
// field: 7 (zigzag 14).
func avroID7(id int) []byte {
	var h sr.ConfluentHeader
	rec, _ := h.AppendEncode(nil, id, nil)
	return append(rec, 14)
}

// cachedText is what the cache holds: its entries and the bytes of their
// schema text.
func cachedText(r *Registry) (entries, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.mu.schemas {
		bytes += len(e.schema.Schema)
	}
	return len(r.mu.schemas), bytes
}

// TestAnswerBounded (probe 2026-12-02, D19): a registry answer over 4 MiB
// (a schema, or a schema a protobuf schema references, or a schema with
// its references together) is not read past the limit: every record
// naming it is an error row naming the limit, the answer is not kept,
// and the registry's other schemas decode.
func TestAnswerBounded(t *testing.T) {
	srv := registrytest.New(t)
	huge := srv.Register(t, "huge-value", sr.TypeAvro, paddedAvro("Huge", 20<<20))
	small := srv.Register(t, "small-value", sr.TypeAvro, paddedAvro("Small", 1<<10))
	d, r := testRegistry(t, srv.URL(), "avro")
	want := fmt.Sprintf("schema id %d: the schema registry's answer is over the limit of 4194304 bytes", huge)
	for range 2 { // the second from the cache
		_, err := d.AppendJSON(nil, avroID7(huge), 1<<20)
		var pe *table.ParseError
		if !errors.As(err, &pe) || pe.Reason != want {
			t.Fatalf("err %.300v\nwant a ParseError: %s", err, want)
		}
	}
	if _, n := cachedText(r); n != 0 {
		t.Errorf("the cache holds %d bytes of schema text after a refused answer", n)
	}
	if out, err := d.AppendJSON(nil, avroID7(small), 1<<20); err != nil || string(out) != `{"id":7}` {
		t.Fatalf("small schema: %s, %v", out, err)
	}

	// Protobuf: a reference over the limit, and references that are
	// each under it but over it together.
	pad := func(n int) string { return `syntax = "proto3"; // ` + strings.Repeat("x", n) + "\n" }
	srv.Register(t, "big", sr.TypeProtobuf, pad(5<<20)+"message Big {}")
	srv.Register(t, "half1", sr.TypeProtobuf, pad(3<<20)+"message H1 {}")
	srv.Register(t, "half2", sr.TypeProtobuf, pad(3<<20)+"message H2 {}")
	bigRef := srv.Register(t, "uses-big", sr.TypeProtobuf, `syntax = "proto3"; import "big.proto"; message M { int64 id = 1; }`,
		sr.SchemaReference{Name: "big.proto", Subject: "big", Version: 1})
	halves := srv.Register(t, "uses-halves", sr.TypeProtobuf, `syntax = "proto3"; import "h1.proto"; import "h2.proto"; message M { int64 id = 1; }`,
		sr.SchemaReference{Name: "h1.proto", Subject: "half1", Version: 1}, sr.SchemaReference{Name: "h2.proto", Subject: "half2", Version: 1})
	pd, _ := testRegistry(t, srv.URL(), "protobuf")
	for _, tt := range []struct {
		id   int
		want string
	}{
		{bigRef, "schema reference big version 1: the schema registry's answer is over the limit of 4194304 bytes"},
		{halves, fmt.Sprintf("protobuf schema id %d: its text with its references is over the limit of 4194304 bytes", halves)},
	} {
		var h sr.ConfluentHeader
		rec, _ := h.AppendEncode(nil, tt.id, []int{0})
		_, err := pd.AppendJSON(nil, append(rec, 8, 7), 1<<20)
		var pe *table.ParseError
		if !errors.As(err, &pe) || pe.Reason != tt.want {
			t.Errorf("schema id %d: err %.300v\nwant a ParseError: %s", tt.id, err, tt.want)
		}
	}
}

// TestCacheBoundedByBytes (probe 2026-12-02, D19): the cache keeps at
// most 32 MiB of schema text and 4096 entries, evicting as needed; an
// evicted schema is fetched again when a record names it.
func TestCacheBoundedByBytes(t *testing.T) {
	const maxBytes, maxEntries = 32 << 20, 4096
	srv := registrytest.New(t)
	var ids []int
	for i := range 9 { // 35.1 MiB of schema text, each answer under 4 MiB
		ids = append(ids, srv.Register(t, fmt.Sprintf("s%02d-value", i), sr.TypeAvro, paddedAvro(fmt.Sprintf("R%02d", i), 3900<<10)))
	}
	d, r := testRegistry(t, srv.URL(), "avro")
	for _, id := range append(ids, ids[0]) {
		if out, err := d.AppendJSON(nil, avroID7(id), 1<<20); err != nil || string(out) != `{"id":7}` {
			t.Fatalf("schema id %d: %s, %v", id, out, err)
		}
		n, b := cachedText(r)
		if b > maxBytes {
			t.Fatalf("after schema id %d the cache holds %d entries, %d bytes of schema text: over %d", id, n, b, maxBytes)
		}
		r.mu.Lock()
		counted := r.mu.bytes
		r.mu.Unlock()
		if counted != b {
			t.Fatalf("the cache counts %d bytes, holds %d", counted, b)
		}
	}
	// Entries: ids the registry does not know are remembered too.
	for id := 100_000; id < 100_000+maxEntries+10; id++ {
		_, err := d.AppendJSON(nil, avroID7(id), 1<<20)
		var pe *table.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("unknown id %d: %v", id, err)
		}
		if n, _ := cachedText(r); n > maxEntries {
			t.Fatalf("the cache holds %d entries, over %d", n, maxEntries)
		}
	}
}

// TestAnswerBoundedTransport: an answer of MaxAnswerBytes reads whole;
// one byte more fails with errAnswerTooLarge, whether its length is
// announced (Content-Length) or streamed.
func TestAnswerBoundedTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("stream") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		for ; n > 0; n -= min(n, 64<<10) {
			_, _ = w.Write(make([]byte, min(n, 64<<10)))
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}))
	defer srv.Close()
	cl := &http.Client{Transport: limitTransport{http.DefaultTransport}}
	for _, stream := range []string{"", "1"} {
		for _, n := range []int{0, MaxAnswerBytes, MaxAnswerBytes + 1, 3 * MaxAnswerBytes} {
			resp, err := cl.Get(fmt.Sprintf("%s/?n=%d&stream=%s", srv.URL, n, stream))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case n <= MaxAnswerBytes && (err != nil || len(b) != n):
				t.Errorf("stream=%q, %d bytes: read %d, %v", stream, n, len(b), err)
			case n > MaxAnswerBytes && (!errors.Is(err, errAnswerTooLarge) || len(b) > MaxAnswerBytes):
				t.Errorf("stream=%q, %d bytes: read %d, %v; want at most %d and errAnswerTooLarge", stream, n, len(b), err, MaxAnswerBytes)
			}
		}
	}
}
