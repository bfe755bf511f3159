package config

import (
	"strings"
	"testing"
)

const strictBase = `name: strict
table: {name: strict_rows, columns: [{name: id, type: int64}]}
format: csv
`

// TestDecimalIntegersOnly (issue 12, defect 10): SPEC.md says integers are
// decimal; YAML's hexadecimal, octal and underscored forms are refused
// instead of read as other numbers.
func TestDecimalIntegersOnly(t *testing.T) {
	kafka := "kafka: {brokers: [\"127.0.0.1:9092\"], topic: t}\n"
	for _, v := range []string{"0x10", "0o17", "1_000", "0b101", "1e3", "10.0"} {
		_, err := ParseJobSpec([]byte(strictBase + kafka + "desired_concurrent_number: " + v + "\n"))
		if err == nil || !strings.Contains(err.Error(), "decimal integer") {
			t.Errorf("desired_concurrent_number: %s: %v", v, err)
		}
	}
	for v, want := range map[string]int32{"16": 16, "\"7\"": 7, "+3": 3, "010": 10} {
		s, err := ParseJobSpec([]byte(strictBase + kafka + "desired_concurrent_number: " + v + "\n"))
		if err != nil || s.GetDesiredConcurrentNumber() != want {
			t.Errorf("desired_concurrent_number: %s: %v, %d", v, err, s.GetDesiredConcurrentNumber())
		}
	}
}

// TestKinesisEndpoint (issue 12, defect 10): an endpoint is an http(s) URL
// with a host and without user information, checked at create; the error
// does not echo a password.
func TestKinesisEndpoint(t *testing.T) {
	spec := func(e string) []byte {
		return []byte(strictBase + "kinesis: {stream: s, region: us-east-1, endpoint: \"" + e + "\"}\n")
	}
	for _, e := range []string{"http://127.0.0.1:4567", "https://kinesis.us-east-1.amazonaws.com", "http://[::1]:4567/"} {
		if _, err := ParseJobSpec(spec(e)); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
	for _, e := range []string{"127.0.0.1:4567", "localhost", "ftp://h", "http://", "http://user:s3cret@h:1", "http://h:99999", "http://h/?a=b", "http://u:s3cret@h:bad"} {
		_, err := ParseJobSpec(spec(e))
		if err == nil || !strings.Contains(err.Error(), "kinesis.endpoint") {
			t.Errorf("%s: accepted or wrong field: %v", e, err)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error echoes the password: %v", e, err)
		}
	}
}
