package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

const (
	// DefaultTimeout bounds one registry request when the spec sets none.
	DefaultTimeout = 10 * time.Second
	// maxCached and maxCachedBytes bound the schemas a Registry keeps: in
	// entries, and in bytes of schema text (a protobuf schema's with its
	// references). Past either, entries are evicted (arbitrary ones, in
	// map order) and fetched again when a record names them.
	maxCached      = 4096
	maxCachedBytes = 32 << 20
	// MaxAnswerBytes bounds one registry answer (its HTTP body), and a
	// protobuf schema's text with its references: a record naming a
	// schema over it is an error row.
	MaxAnswerBytes = 4 << 20
	// unknownTTL is how long a schema id the registry did not know is
	// answered from the cache.
	unknownTTL = 30 * time.Second
)

// Registries holds one Registry per distinct schema_registry section, so
// that the jobs naming the same registry share its client and its cache.
type Registries struct {
	mu   sync.Mutex
	regs map[string]*Registry
}

// NewRegistries returns an empty set.
func NewRegistries() *Registries { return &Registries{regs: map[string]*Registry{}} }

// Decoder returns the decoder of a job's format (avro or protobuf) over the
// registry its spec names. Secrets (password, token) are read from their
// files or the environment now.
func (rs *Registries) Decoder(spec *api.JobSpec) (table.Decoder, error) {
	rspec := spec.GetSchemaRegistry()
	if rspec == nil {
		return nil, errors.New("registry: the job has no schema_registry")
	}
	var kind string
	switch strings.ToLower(spec.GetFormat()) {
	case "avro":
		kind = "avro"
	case "protobuf":
		kind = "protobuf"
	default:
		return nil, fmt.Errorf("registry: format %q is not avro or protobuf", spec.GetFormat())
	}
	r, err := rs.registry(rspec)
	if err != nil {
		return nil, err
	}
	if kind == "avro" {
		return &avroDecoder{r: r}, nil
	}
	return &protoDecoder{r: r}, nil
}

func (rs *Registries) registry(s *api.SchemaRegistrySpec) (*Registry, error) {
	auth, err := credentials(s)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s|%s|%s|%s|%t|%d", s.GetUrl(), s.GetUsername(), auth, s.GetCaFile(), s.GetInsecureSkipVerify(), s.GetTimeoutMs())
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r, ok := rs.regs[key]; ok {
		return r, nil
	}
	r, err := New(s)
	if err != nil {
		return nil, err
	}
	rs.regs[key] = r
	return r, nil
}

// credentials reads the password or token a spec points to.
func credentials(s *api.SchemaRegistrySpec) (string, error) {
	read := func(path, what string) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("registry: schema_registry.%s: %w", what, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	switch {
	case s.GetPasswordFile() != "":
		return read(s.GetPasswordFile(), "password_file")
	case s.GetPasswordEnv() != "":
		v, ok := os.LookupEnv(s.GetPasswordEnv())
		if !ok {
			return "", fmt.Errorf("registry: schema_registry.password_env: $%s is not set on the node", s.GetPasswordEnv())
		}
		return v, nil
	case s.GetBearerTokenFile() != "":
		return read(s.GetBearerTokenFile(), "bearer_token_file")
	}
	return "", nil
}

// Registry is a schema registry client with a cache of compiled schemas.
type Registry struct {
	cl      *sr.Client
	timeout time.Duration

	mu struct {
		sync.Mutex
		schemas map[int]*entry
		// bytes is the sum of the entries' size.
		// INVARIANT: bytes <= maxCachedBytes, len(schemas) <= maxCached.
		bytes int
	}
	// fetching serializes fetches (a burst of records naming a new id
	// costs one request).
	fetching sync.Mutex
}

// entry is one schema id: its registry answer, compiled on first use per
// format, or the time it was found unknown.
type entry struct {
	schema  sr.Schema
	unknown time.Time // the registry answered 404
	avro    *avroSchema
	proto   *protoSchema
	err     error // the schema did not compile or was too large (every record naming it is an error row)
	size    int   // bytes of schema text counted in the cache (guarded by Registry.mu)
}

// New builds a client of the registry s describes.
func New(s *api.SchemaRegistrySpec) (*Registry, error) {
	secret, err := credentials(s)
	if err != nil {
		return nil, err
	}
	timeout := DefaultTimeout
	if s.GetTimeoutMs() > 0 {
		timeout = time.Duration(s.GetTimeoutMs()) * time.Millisecond
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	if s.GetCaFile() != "" || s.GetInsecureSkipVerify() {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: s.GetInsecureSkipVerify()}
		if f := s.GetCaFile(); f != "" {
			pem, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("registry: schema_registry.ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("registry: schema_registry.ca_file %s: no PEM certificate", f)
			}
			tc.RootCAs = pool
		}
		tr.TLSClientConfig = tc
	}
	opts := []sr.ClientOpt{
		sr.URLs(s.GetUrl()),
		sr.HTTPClient(&http.Client{Transport: limitTransport{tr}, Timeout: timeout}),
		sr.UserAgent("loadnode"),
	}
	switch {
	case s.GetUsername() != "":
		opts = append(opts, sr.BasicAuth(s.GetUsername(), secret))
	case s.GetBearerTokenFile() != "":
		opts = append(opts, sr.BearerToken(secret))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r := &Registry{cl: cl, timeout: timeout}
	r.mu.schemas = map[int]*entry{}
	return r, nil
}

// lookup returns the entry of id, fetching it when it is not cached (or
// was unknown longer than unknownTTL ago). Its errors are
// *table.ParseError (unknown id) or *table.UnavailableError; an answer
// over MaxAnswerBytes is an entry whose err (a *table.ParseError) the
// compile returns.
func (r *Registry) lookup(id int) (*entry, error) {
	if e := r.cached(id); e != nil {
		return e, e.unknownErr(id)
	}
	r.fetching.Lock()
	defer r.fetching.Unlock()
	if e := r.cached(id); e != nil {
		return e, e.unknownErr(id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	s, err := r.cl.SchemaByID(ctx, id)
	e := &entry{schema: s, size: len(s.Schema)}
	if err != nil {
		var re *sr.ResponseError
		switch {
		case errors.Is(err, errAnswerTooLarge):
			e = &entry{err: &table.ParseError{Reason: fmt.Sprintf("schema id %d: %v", id, errAnswerTooLarge)}}
		case errors.As(err, &re) && re.StatusCode == http.StatusNotFound:
			e = &entry{unknown: time.Now()}
		default:
			return nil, &table.UnavailableError{Err: fmt.Errorf("schema id %d: %w", id, err)}
		}
	}
	r.mu.Lock()
	r.remove(id)
	r.evict(e.size, nil)
	r.mu.schemas[id] = e
	r.mu.bytes += e.size
	r.mu.Unlock()
	return e, e.unknownErr(id)
}

// evict removes entries other than keep until one more entry of size
// bytes fits (keep already counted).
// REQUIRES: r.mu is held.
func (r *Registry) evict(size int, keep *entry) {
	for id, e := range r.mu.schemas {
		if r.mu.bytes+size <= maxCachedBytes && (keep != nil || len(r.mu.schemas) < maxCached) {
			return
		}
		if e != keep {
			r.remove(id)
		}
	}
}

// remove drops id from the cache.
// REQUIRES: r.mu is held.
func (r *Registry) remove(id int) {
	if e, ok := r.mu.schemas[id]; ok {
		r.mu.bytes -= e.size
		delete(r.mu.schemas, id)
	}
}

// resize counts e (the entry of id) as size bytes, evicting others to
// keep the bound; an entry evicted meanwhile is not counted.
func (r *Registry) resize(id int, e *entry, size int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.schemas[id] != e {
		return
	}
	r.mu.bytes += size - e.size
	e.size = size
	r.evict(0, e)
}

func (r *Registry) cached(id int) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.mu.schemas[id]
	if e != nil && !e.unknown.IsZero() && time.Since(e.unknown) > unknownTTL {
		r.remove(id)
		return nil
	}
	return e
}

func (e *entry) unknownErr(id int) error {
	if e.unknown.IsZero() {
		return nil
	}
	return &table.ParseError{Reason: fmt.Sprintf("schema id %d is not in the schema registry (404)", id)}
}

// subjectSchema fetches a referenced schema (protobuf imports).
func (r *Registry) subjectSchema(subject string, version int) (sr.SubjectSchema, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	s, err := r.cl.SchemaByVersion(ctx, subject, version)
	if err != nil {
		if errors.Is(err, errAnswerTooLarge) {
			return s, &table.ParseError{Reason: fmt.Sprintf("schema reference %s version %d: %v", subject, version, errAnswerTooLarge)}
		}
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return s, &table.ParseError{Reason: fmt.Sprintf("schema reference %s version %d is not in the schema registry (404)", subject, version)}
		}
		return s, &table.UnavailableError{Err: fmt.Errorf("schema reference %s version %d: %w", subject, version, err)}
	}
	return s, nil
}

// header splits the wire format's header off raw.
func header(raw []byte) (int, []byte, error) {
	var h sr.ConfluentHeader
	id, rest, err := h.DecodeID(raw)
	if err != nil {
		return 0, nil, &table.ParseError{Reason: fmt.Sprintf("not in the schema registry wire format (want magic byte 0 and a 4-byte schema id): %v", err)}
	}
	return id, rest, nil
}

// errAnswerTooLarge is the error reading a registry answer over
// MaxAnswerBytes.
var errAnswerTooLarge = fmt.Errorf("the schema registry's answer is over the limit of %d bytes", MaxAnswerBytes)

// limitTransport bounds the body of every answer at MaxAnswerBytes: past
// it, reading fails with errAnswerTooLarge (pkg/sr reads an answer whole,
// then decodes it).
type limitTransport struct{ rt http.RoundTripper }

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > MaxAnswerBytes {
		resp.Body.Close()
		resp.Body = &limitedBody{left: -1}
		return resp, nil
	}
	resp.Body = &limitedBody{rc: resp.Body, left: MaxAnswerBytes}
	return resp, nil
}

// limitedBody reads at most left bytes of rc; one more is an error.
type limitedBody struct {
	rc   io.ReadCloser
	left int64 // < 0: over the limit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n - 1, errAnswerTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error {
	if b.rc == nil {
		return nil
	}
	return b.rc.Close()
}
