package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

// Offset keywords accepted by ParseOffset and KafkaSpec.offsets.
const (
	OffsetBeginning = "OFFSET_BEGINNING"
	OffsetEnd       = "OFFSET_END"
)

// offsetKind is what a spec offset string asks for.
type offsetKind int

const (
	offsetExact offsetKind = iota
	offsetBeginning
	offsetEnd
	offsetTime // n: epoch milliseconds
)

// OffsetTimePrefix starts a start offset by time: "TIME:<epoch ms>", the
// first offset whose record timestamp is at or after that time (the end
// when there is none), as Kafka's offsets-for-times.
const OffsetTimePrefix = "TIME:"

// ParseOffset validates one spec offset: a number >= 0, OFFSET_BEGINNING or
// OFFSET_END (the keywords also in lower case).
func ParseOffset(s string) error {
	_, _, err := parseOffset(s)
	return err
}

func parseOffset(s string) (offsetKind, int64, error) {
	switch s {
	case OffsetBeginning, "offset_beginning":
		return offsetBeginning, 0, nil
	case OffsetEnd, "offset_end":
		return offsetEnd, 0, nil
	}
	if ms, ok := strings.CutPrefix(s, OffsetTimePrefix); ok {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("kafka: offset %q: want %s<epoch milliseconds >= 0>", s, OffsetTimePrefix)
		}
		return offsetTime, n, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, 0, fmt.Errorf("kafka: offset %q: want a number >= 0, %s, %s or %s<epoch ms>", s, OffsetBeginning, OffsetEnd, OffsetTimePrefix)
	}
	return offsetExact, n, nil
}

// Security protocols and SASL mechanisms, spelled as Kafka spells them.
const (
	protocolPlaintext     = "PLAINTEXT"
	protocolSSL           = "SSL"
	protocolSASLPlaintext = "SASL_PLAINTEXT"
	protocolSASLSSL       = "SASL_SSL"

	mechanismPlain       = "PLAIN"
	mechanismSCRAMSHA256 = "SCRAM-SHA-256"
	mechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// clientConfig is KafkaSpec.properties parsed. Zero values mean the franz-go
// default.
type clientConfig struct {
	clientID      string
	protocol      string // default PLAINTEXT
	caFile        string
	certFile      string
	keyFile       string
	verifyHost    bool // ssl.endpoint.identification.algorithm=https (default)
	mechanism     string
	username      string
	password      string
	fetchMaxBytes int32
	partMaxBytes  int32
	fetchMinBytes int32
	fetchMaxWait  time.Duration
	reqTimeout    time.Duration
	metaMaxAge    time.Duration
	idleTimeout   time.Duration
	dialTimeout   time.Duration

	tls  *tls.Config    // built by build; nil without SSL
	sasl sasl.Mechanism // built by build; nil without SASL
}

// property is one supported key of KafkaSpec.properties.
type property struct {
	name string
	set  func(c *clientConfig, v string) error
}

// supportedProperties lists every supported key, in the order doc.go
// documents them.
func supportedProperties() []property {
	return []property{
		{"client.id", func(c *clientConfig, v string) error { c.clientID = v; return nil }},
		{"security.protocol", func(c *clientConfig, v string) error {
			switch v {
			case protocolPlaintext, protocolSSL, protocolSASLPlaintext, protocolSASLSSL:
				c.protocol = v
				return nil
			}
			return fmt.Errorf("want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got %q", v)
		}},
		{"ssl.ca.location", func(c *clientConfig, v string) error { c.caFile = v; return nil }},
		{"ssl.certificate.location", func(c *clientConfig, v string) error { c.certFile = v; return nil }},
		{"ssl.key.location", func(c *clientConfig, v string) error { c.keyFile = v; return nil }},
		{"ssl.endpoint.identification.algorithm", func(c *clientConfig, v string) error {
			switch v {
			case "https", "HTTPS":
				c.verifyHost = true
			case "none", "NONE", "":
				c.verifyHost = false
			default:
				return fmt.Errorf("want https or none, got %q", v)
			}
			return nil
		}},
		{"sasl.mechanism", func(c *clientConfig, v string) error {
			switch v {
			case mechanismPlain, mechanismSCRAMSHA256, mechanismSCRAMSHA512:
				c.mechanism = v
				return nil
			}
			return fmt.Errorf("want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, got %q", v)
		}},
		{"sasl.username", func(c *clientConfig, v string) error { c.username = v; return nil }},
		{"sasl.password", func(c *clientConfig, v string) error { c.password = v; return nil }},
		{"sasl.password_file", func(c *clientConfig, v string) error {
			// A reference instead of an inline secret: the file is read
			// by the node whenever the properties are parsed (a create,
			// an alter, a source opened), so a rotated password is read
			// on the next reopen. One trailing line break is dropped.
			b, err := os.ReadFile(v)
			if err != nil {
				return err
			}
			p := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
			if p == "" {
				return fmt.Errorf("%s is empty", v)
			}
			c.password = p
			return nil
		}},
		{"fetch.max.bytes", bytesProp(func(c *clientConfig) *int32 { return &c.fetchMaxBytes })},
		{"max.partition.fetch.bytes", bytesProp(func(c *clientConfig) *int32 { return &c.partMaxBytes })},
		{"fetch.min.bytes", bytesProp(func(c *clientConfig) *int32 { return &c.fetchMinBytes })},
		{"fetch.max.wait.ms", msProp(func(c *clientConfig) *time.Duration { return &c.fetchMaxWait })},
		{"request.timeout.ms", msProp(func(c *clientConfig) *time.Duration { return &c.reqTimeout })},
		{"metadata.max.age.ms", msProp(func(c *clientConfig) *time.Duration { return &c.metaMaxAge })},
		{"connections.max.idle.ms", msProp(func(c *clientConfig) *time.Duration { return &c.idleTimeout })},
		{"socket.connection.setup.timeout.ms", msProp(func(c *clientConfig) *time.Duration { return &c.dialTimeout })},
		// librdkafka's partition-EOF events end a Doris task early; loadnode's
		// reader ends a batch on its own bounds, so the setting changes
		// nothing. Accepted so that Doris statements that give it load.
		{"enable.partition.eof", func(c *clientConfig, v string) error {
			if v != "true" && v != "false" {
				return fmt.Errorf("want true or false, got %q", v)
			}
			return nil
		}},
	}
}

func bytesProp(field func(*clientConfig) *int32) func(*clientConfig, string) error {
	return func(c *clientConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a number of bytes in [1, %d], got %q", math.MaxInt32, v)
		}
		*field(c) = int32(n)
		return nil
	}
}

func msProp(field func(*clientConfig) *time.Duration) func(*clientConfig, string) error {
	return func(c *clientConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n > int64(24*time.Hour/time.Millisecond) {
			return fmt.Errorf("want milliseconds in [1, 86400000], got %q", v)
		}
		*field(c) = time.Duration(n) * time.Millisecond
		return nil
	}
}

// propErr is the ConfigError for property name.
func propErr(name string, err error) error {
	return &sources.ConfigError{Field: "kafka.properties." + name, Err: fmt.Errorf("kafka: property %s: %w", name, err)}
}

// ValidateProperties checks KafkaSpec.properties: every key is supported,
// every value parses, the settings agree with each other, and the TLS files
// named load. A failure is a *sources.ConfigError whose Field names the
// property ("kafka.properties.<name>").
func ValidateProperties(props map[string]string) error {
	_, err := parseProperties(props)
	return err
}

// parseProperties parses and cross-checks props and builds TLS and SASL.
func parseProperties(props map[string]string) (*clientConfig, error) {
	c := &clientConfig{protocol: protocolPlaintext, verifyHost: true}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys) // deterministic: the first bad key in order is named
	properties := supportedProperties()
	for _, k := range keys {
		i := slices.IndexFunc(properties, func(p property) bool { return p.name == k })
		if i < 0 {
			if k == "group.id" {
				return nil, propErr(k, errors.New("not a client setting here: loadnode reads partitions directly and keeps its positions itself; set kafka.commit_group to commit them to a consumer group for lag tools"))
			}
			return nil, propErr(k, errors.New("unknown property"))
		}
		if err := properties[i].set(c, props[k]); err != nil {
			return nil, propErr(k, err)
		}
	}

	useTLS := c.protocol == protocolSSL || c.protocol == protocolSASLSSL
	useSASL := c.protocol == protocolSASLPlaintext || c.protocol == protocolSASLSSL
	for _, k := range []string{"ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.endpoint.identification.algorithm"} {
		if _, ok := props[k]; ok && !useTLS {
			return nil, propErr(k, fmt.Errorf("set, but security.protocol is %s", c.protocol))
		}
	}
	_, inline := props["sasl.password"]
	_, file := props["sasl.password_file"]
	if inline && file {
		return nil, propErr("sasl.password_file", errors.New("set together with sasl.password: give one"))
	}
	for _, k := range []string{"sasl.mechanism", "sasl.username", "sasl.password", "sasl.password_file"} {
		_, ok := props[k]
		if ok && !useSASL {
			return nil, propErr(k, fmt.Errorf("set, but security.protocol is %s", c.protocol))
		}
		if !ok && useSASL {
			switch {
			case k == "sasl.password" && !file:
				return nil, propErr(k, fmt.Errorf("required with security.protocol %s (or sasl.password_file)", c.protocol))
			case k == "sasl.mechanism" || k == "sasl.username":
				return nil, propErr(k, fmt.Errorf("required with security.protocol %s", c.protocol))
			}
		}
	}
	if (c.certFile == "") != (c.keyFile == "") {
		if c.certFile == "" {
			return nil, propErr("ssl.certificate.location", errors.New("required with ssl.key.location"))
		}
		return nil, propErr("ssl.key.location", errors.New("required with ssl.certificate.location"))
	}
	if c.fetchMaxBytes > 0 && c.partMaxBytes > c.fetchMaxBytes {
		return nil, propErr("max.partition.fetch.bytes", fmt.Errorf("%d is above fetch.max.bytes %d", c.partMaxBytes, c.fetchMaxBytes))
	}

	if useTLS {
		tc, err := c.buildTLS()
		if err != nil {
			return nil, err
		}
		c.tls = tc
	}
	if useSASL {
		switch c.mechanism {
		case mechanismPlain:
			c.sasl = plain.Auth{User: c.username, Pass: c.password}.AsMechanism()
		case mechanismSCRAMSHA256:
			c.sasl = scram.Auth{User: c.username, Pass: c.password}.AsSha256Mechanism()
		case mechanismSCRAMSHA512:
			c.sasl = scram.Auth{User: c.username, Pass: c.password}.AsSha512Mechanism()
		}
	}
	return c, nil
}

func (c *clientConfig) buildTLS() (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, propErr("ssl.ca.location", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, propErr("ssl.ca.location", fmt.Errorf("%s: no PEM certificate found", c.caFile))
		}
		tc.RootCAs = pool
	}
	if c.certFile != "" {
		cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, propErr("ssl.certificate.location", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if !c.verifyHost {
		// Verify the chain but not the host name, as librdkafka does
		// with ssl.endpoint.identification.algorithm=none.
		roots := tc.RootCAs
		tc.InsecureSkipVerify = true
		tc.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("kafka: broker sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return tc, nil
}

// opts is the client options every client of the cluster shares.
func (c *clientConfig) opts(brokers []string) []kgo.Opt {
	// No KIP-714 client metrics: a broker that asks for them (kfake
	// does) has every client compress and push them, which kept ~1 MB of
	// gzip and lz4 writers per reader client (half a member's heap with
	// 100 jobs); the node's own metrics are at /metrics.
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.DisableClientMetrics()}
	if c.clientID != "" {
		opts = append(opts, kgo.ClientID(c.clientID))
	} else {
		opts = append(opts, kgo.ClientID("loadnode"))
	}
	if c.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(c.tls.Clone()))
	}
	if c.sasl != nil {
		opts = append(opts, kgo.SASL(c.sasl))
	}
	if c.reqTimeout > 0 {
		opts = append(opts, kgo.RequestTimeoutOverhead(c.reqTimeout))
	}
	if c.metaMaxAge > 0 {
		opts = append(opts, kgo.MetadataMaxAge(c.metaMaxAge))
	}
	if c.idleTimeout > 0 {
		opts = append(opts, kgo.ConnIdleTimeout(c.idleTimeout))
	}
	if c.dialTimeout > 0 {
		opts = append(opts, kgo.DialTimeout(c.dialTimeout))
	}
	return opts
}

// consumerOpts is the fetch tuning for readers.
func (c *clientConfig) consumerOpts() []kgo.Opt {
	var opts []kgo.Opt
	if c.fetchMaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxBytes(c.fetchMaxBytes))
	}
	if c.partMaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxPartitionBytes(c.partMaxBytes))
	}
	if c.fetchMinBytes > 0 {
		opts = append(opts, kgo.FetchMinBytes(c.fetchMinBytes))
	}
	if c.fetchMaxWait > 0 {
		opts = append(opts, kgo.FetchMaxWait(c.fetchMaxWait))
	}
	return opts
}

// Choose applies a job's kafka section to a topic's partitions: the
// partitions the job reads (kafka.partitions, else all of them, so that
// partitions added later are read too) and, for each of those not in
// known, its start (kafka.offsets, else kafka.default_offset). A chosen
// partition that the topic lacks is a ConfigError.
func Choose(spec *api.KafkaSpec, all []int32, known map[int32]bool) (parts []int32, want map[int32]string, err error) {
	parts = all
	if wanted := spec.GetPartitions(); len(wanted) > 0 {
		have := make(map[int32]bool, len(all))
		for _, p := range all {
			have[p] = true
		}
		for _, p := range wanted {
			if !have[p] {
				return nil, nil, &sources.ConfigError{Field: "kafka.partitions", Err: fmt.Errorf("partition %d does not exist in the topic", p)}
			}
		}
		parts = slices.Sorted(slices.Values(wanted))
	}
	want = map[int32]string{}
	for _, p := range parts {
		if known[p] {
			continue
		}
		if o, ok := spec.GetOffsets()[p]; ok {
			want[p] = o
		} else {
			want[p] = spec.GetDefaultOffset()
		}
	}
	return parts, want, nil
}
