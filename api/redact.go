package api

import (
	"net/url"
	"strings"

	"google.golang.org/protobuf/proto"
)

// Redacted replaces a secret wherever a spec is shown. A spec sent back
// with Redacted in a secret's place (an alter from `job show -o yaml`)
// keeps the stored secret (config.Alter).
const Redacted = "<redacted>"

// SecretProperty reports whether a Kafka client property holds a secret:
// its name contains "password", "secret" or "token" (any case), unless it
// names where the secret is (a "_file" or ".location" key holds a path).
func SecretProperty(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "_file") || strings.HasSuffix(k, ".location") {
		return false
	}
	return strings.Contains(k, "password") || strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// RedactSpec returns s with every secret (secret Kafka properties, the
// Kinesis secret_access_key and session_token, user information in the
// Kinesis endpoint) replaced by Redacted: s
// itself when it holds none, otherwise a copy. s is never modified.
func RedactSpec(s *JobSpec) *JobSpec {
	if !hasSecret(s) {
		return s
	}
	c := proto.Clone(s).(*JobSpec)
	if k := c.GetKafka(); k != nil {
		for key, v := range k.Properties {
			if v != "" && SecretProperty(key) {
				k.Properties[key] = Redacted
			}
		}
	}
	for key, v := range c.ErrorTopicProperties {
		if v != "" && SecretProperty(key) {
			c.ErrorTopicProperties[key] = Redacted
		}
	}
	if k := c.GetKinesis(); k != nil {
		if k.SecretAccessKey != "" {
			k.SecretAccessKey = Redacted
		}
		if k.SessionToken != "" {
			k.SessionToken = Redacted
		}
		k.Endpoint = redactUserInfo(k.Endpoint)
	}
	if r := c.GetSchemaRegistry(); r != nil {
		// The registry's secrets live in files or the node's environment;
		// a URL with user information is refused, but never shown.
		r.Url = redactUserInfo(r.Url)
	}
	return c
}

// redactUserInfo replaces the user information of a URL (a spec stored
// before endpoints with user:password@ were refused) with Redacted.
func redactUserInfo(e string) string {
	if !strings.Contains(e, "@") {
		return e
	}
	u, err := url.Parse(e)
	if err != nil {
		return Redacted // unparsable and may hold a secret
	}
	if u.User == nil {
		return e
	}
	u.User = url.User(Redacted)
	return u.String()
}

func hasSecret(s *JobSpec) bool {
	for key, v := range s.GetKafka().GetProperties() {
		if v != "" && SecretProperty(key) {
			return true
		}
	}
	if u := s.GetSchemaRegistry().GetUrl(); redactUserInfo(u) != u {
		return true
	}
	for key, v := range s.GetErrorTopicProperties() {
		if v != "" && SecretProperty(key) {
			return true
		}
	}
	k := s.GetKinesis()
	return k.GetSecretAccessKey() != "" || k.GetSessionToken() != "" || redactUserInfo(k.GetEndpoint()) != k.GetEndpoint()
}
