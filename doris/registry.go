package doris

import (
	"strings"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
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
	switch name := strings.TrimPrefix(key, registryPrefix); name {
	case "url", "username", "password_file", "password_env", "bearer_token_file", "insecure_skip_verify", "timeout":
		return config.SetRegistryField(r, name, v)
	case "ssl.ca.location", "ca_file":
		return config.SetRegistryField(r, "ca_file", v)
	case "basic.auth.user.info", "property.basic.auth.user.info", "property.bearer.auth.token", "bearer.auth.token":
		return inlineSecret
	default:
		if strings.HasPrefix(key, "property.basic.auth.") || strings.HasPrefix(key, "property.bearer.auth.") {
			return inlineSecret
		}
		return "not supported by loadnode (supported: property.schema.registry.url, .username, .password_file, .password_env, .bearer_token_file, .ssl.ca.location, .insecure_skip_verify, .timeout)"
	}
}

// inlineSecret is why the Confluent client's inline secrets are refused.
const inlineSecret = "not supported: loadnode keeps no secret in a job; give property.schema.registry.username with property.schema.registry.password_file or password_env, or property.schema.registry.bearer_token_file"
