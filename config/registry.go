package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
)

// Binary formats, read through a schema registry.
const (
	FormatAvro     = "avro"
	FormatProtobuf = "protobuf"
)

var (
	registryKeys = []string{"url", "username", "password_file", "password_env", "bearer_token_file", "ca_file", "insecure_skip_verify", "timeout"}
	envPattern   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

const (
	minRegistryTimeout = 100 * time.Millisecond
	maxRegistryTimeout = 5 * time.Minute
)

// binaryFormat reports whether f is read through a schema registry.
func binaryFormat(f string) bool { return f == FormatAvro || f == FormatProtobuf }

func (d *decoder) schemaRegistry(n *yaml.Node) (*api.SchemaRegistrySpec, error) {
	r := &api.SchemaRegistrySpec{}
	err := d.mapping(n, "schema_registry", registryKeys, func(key string, v *yaml.Node) error {
		field := "schema_registry." + key
		s, err := str(v, field)
		if err != nil {
			return err
		}
		if reason := SetRegistryField(r, key, s); reason != "" {
			return errAt(v, field, "%s", reason)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// SetRegistryField sets r's field named key (a schema_registry key of the
// YAML spec: url, username, ..., timeout) from its text s, and returns why
// s is refused, or "". The YAML spec and the Doris properties
// (doris: property.schema.registry.*) both read their values with it.
func SetRegistryField(r *api.SchemaRegistrySpec, key, s string) string {
	switch key {
	case "url":
		r.Url = s
	case "username":
		r.Username = s
	case "password_file":
		r.PasswordFile = s
	case "password_env":
		r.PasswordEnv = s
	case "bearer_token_file":
		r.BearerTokenFile = s
	case "ca_file":
		r.CaFile = s
	case "insecure_skip_verify":
		b, err := strconv.ParseBool(s)
		if err != nil {
			return "must be true or false"
		}
		r.InsecureSkipVerify = b
	case "timeout":
		t, err := time.ParseDuration(s)
		if err != nil || t%time.Millisecond != 0 {
			return fmt.Sprintf("%q must be a duration in whole milliseconds (10s, 500ms)", s)
		}
		if t < minRegistryTimeout || t > maxRegistryTimeout {
			return fmt.Sprintf("%s out of range; must be between %s and %s", t, minRegistryTimeout, maxRegistryTimeout)
		}
		r.TimeoutMs = t.Milliseconds()
	default:
		return "unknown schema registry setting (supported: " + strings.Join(registryKeys, ", ") + ")"
	}
	return ""
}

// validateRegistry checks the schema_registry section against the format.
func validateRegistry(s *api.JobSpec) *FieldError {
	r := s.GetSchemaRegistry()
	if !binaryFormat(s.Format) {
		if r != nil {
			return fieldErr("schema_registry", "only with format avro or protobuf")
		}
		return nil
	}
	if r == nil {
		return fieldErr("schema_registry", "required by format %s (the registry its records name their schema in)", s.Format)
	}
	u, err := url.Parse(r.Url)
	switch {
	case r.Url == "":
		return fieldErr("schema_registry.url", "required")
	case err != nil:
		return fieldErr("schema_registry.url", "not a URL (want http://HOST[:PORT][/PATH] or https://...)")
	case u.User != nil:
		return fieldErr("schema_registry.url", "must not hold a user or password (give schema_registry.username and password_file or password_env)")
	case u.Scheme != "http" && u.Scheme != "https":
		return fieldErr("schema_registry.url", "%q must be an http:// or https:// URL", r.Url)
	case u.Host == "" || u.Hostname() == "":
		return fieldErr("schema_registry.url", "%q has no host", r.Url)
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return fieldErr("schema_registry.url", "%q must be a plain URL (no query or fragment)", r.Url)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fieldErr("schema_registry.url", "%q: bad port", r.Url)
		}
	}
	switch {
	case r.PasswordFile != "" && r.PasswordEnv != "":
		return fieldErr("schema_registry.password_env", "give password_file or password_env, not both")
	case (r.PasswordFile != "" || r.PasswordEnv != "") && r.Username == "":
		return fieldErr("schema_registry.username", "required with a password")
	case r.Username != "" && r.BearerTokenFile != "":
		return fieldErr("schema_registry.bearer_token_file", "basic auth (username) and a bearer token exclude each other")
	case r.PasswordEnv != "" && !envPattern.MatchString(r.PasswordEnv):
		return fieldErr("schema_registry.password_env", "%q is not an environment variable name", r.PasswordEnv)
	case r.CaFile != "" && u.Scheme != "https":
		return fieldErr("schema_registry.ca_file", "only with an https:// url")
	case r.TimeoutMs != 0 && (r.TimeoutMs < minRegistryTimeout.Milliseconds() || r.TimeoutMs > maxRegistryTimeout.Milliseconds()):
		return fieldErr("schema_registry.timeout", "%dms out of range; must be between %s and %s", r.TimeoutMs, minRegistryTimeout, maxRegistryTimeout)
	}
	for _, f := range [][2]string{{"username", r.Username}, {"password_file", r.PasswordFile}, {"bearer_token_file", r.BearerTokenFile}, {"ca_file", r.CaFile}} {
		if strings.ContainsAny(f[1], "\n\r\x00") {
			return fieldErr("schema_registry."+f[0], "must not contain a line break or NUL")
		}
	}
	return nil
}

// encodeRegistry adds the schema_registry section to a marshalled spec.
func encodeRegistry(root *yaml.Node, r *api.SchemaRegistrySpec) {
	if r == nil {
		return
	}
	rn := mapNode(0)
	for _, kv := range [][2]string{{"url", r.Url}, {"username", r.Username}, {"password_file", r.PasswordFile}, {"password_env", r.PasswordEnv}, {"bearer_token_file", r.BearerTokenFile}, {"ca_file", r.CaFile}} {
		if kv[1] != "" {
			add(rn, kv[0], strNode(kv[1]))
		}
	}
	if r.InsecureSkipVerify {
		add(rn, "insecure_skip_verify", strNode("true"))
	}
	if r.TimeoutMs != 0 {
		add(rn, "timeout", strNode((time.Duration(r.TimeoutMs) * time.Millisecond).String()))
	}
	add(root, "schema_registry", rn)
}
