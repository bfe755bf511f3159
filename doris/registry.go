package doris

import (
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
)

// Schema registry properties of FROM KAFKA, for "format" = "avro" or
// "protobuf". Doris Routine Load reads neither format, so there is no
// Doris spelling to follow: these are the Confluent client's names
// (schema.registry.url, schema.registry.ssl.ca.location) as property.X,
// and loadnode's own for what the Confluent client takes inline (secrets
// live in files or the node's environment):
//
//	"property.schema.registry.url"                  schema_registry.url
//	"property.schema.registry.username"             schema_registry.username
//	"property.schema.registry.password_file"        schema_registry.password_file
//	"property.schema.registry.password_env"         schema_registry.password_env
//	"property.schema.registry.bearer_token_file"    schema_registry.bearer_token_file
//	"property.schema.registry.ssl.ca.location"      schema_registry.ca_file
//	"property.schema.registry.insecure_skip_verify" schema_registry.insecure_skip_verify
//	"property.schema.registry.timeout"              schema_registry.timeout
//
// The Confluent inline secrets (basic.auth.user.info, bearer.auth.token)
// are refused by name.

const registryPrefix = "property.schema.registry."

// isRegistryProperty reports whether key (lower case) is a schema registry
// property of FROM KAFKA.
func isRegistryProperty(key string) bool {
	return strings.HasPrefix(key, registryPrefix) || strings.HasPrefix(key, "property.basic.auth.") || strings.HasPrefix(key, "property.bearer.auth.")
}

// registryProperty sets one schema registry property in r; it returns the
// reason a property is refused, or "".
func registryProperty(r *api.SchemaRegistrySpec, key, val string) string {
	v := strings.TrimSpace(val)
	switch strings.TrimPrefix(key, registryPrefix) {
	case "url":
		r.Url = v
	case "username":
		r.Username = v
	case "password_file":
		r.PasswordFile = v
	case "password_env":
		r.PasswordEnv = v
	case "bearer_token_file":
		r.BearerTokenFile = v
	case "ssl.ca.location", "ca_file":
		r.CaFile = v
	case "insecure_skip_verify":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "must be true or false"
		}
		r.InsecureSkipVerify = b
	case "timeout":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d%time.Millisecond != 0 {
			return "must be a duration in whole milliseconds, such as 10s"
		}
		r.TimeoutMs = d.Milliseconds()
	case "basic.auth.user.info", "property.basic.auth.user.info", "property.bearer.auth.token", "bearer.auth.token":
		return "not supported: loadnode keeps no secret in a job; give property.schema.registry.username with property.schema.registry.password_file or password_env, or property.schema.registry.bearer_token_file"
	default:
		if strings.HasPrefix(key, "property.basic.auth.") || strings.HasPrefix(key, "property.bearer.auth.") {
			return "not supported: loadnode keeps no secret in a job; give property.schema.registry.username with property.schema.registry.password_file or password_env, or property.schema.registry.bearer_token_file"
		}
		return "not supported by loadnode (supported: property.schema.registry.url, .username, .password_file, .password_env, .bearer_token_file, .ssl.ca.location, .insecure_skip_verify, .timeout)"
	}
	return ""
}
