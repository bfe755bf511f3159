package config

import (
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// FuzzParseJobSpec checks that ParseJobSpec never panics, that every spec it
// returns is valid and canonical (ApplyDefaults changes nothing), and that
// MarshalJobSpec round-trips it. The seed corpus is in
// testdata/fuzz/FuzzParseJobSpec (it includes testdata/orders.yaml).
func FuzzParseJobSpec(f *testing.F) {
	if data, err := os.ReadFile("testdata/orders.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(minimal))
	// Deep nesting: over yaml.v3's 10,000 levels, and expressions over
	// table.MaxExprDepth (refused later, by the node).
	f.Add([]byte(minimal + "columns_mapping: " + strings.Repeat("[", 10_001) + strings.Repeat("]", 10_001) + "\n"))
	f.Add([]byte(minimal + "where: " + strings.Repeat("{a: ", 10_001) + "1" + strings.Repeat("}", 10_001) + "\n"))
	f.Add([]byte(minimal + "jsonpaths:\n  " + strings.Repeat("- ", 10_001) + "x\n"))
	f.Add([]byte(minimal + "columns_mapping: [a, \"b = " + strings.Repeat("(", 5000) + "a" + strings.Repeat(")", 5000) + "\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseJobSpec(data)
		if err != nil {
			if s != nil {
				t.Fatalf("spec and error: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		if err := ValidateJobSpec(s); err != nil {
			t.Fatalf("ParseJobSpec returned an invalid spec: %v\n%v", err, s)
		}
		c := proto.Clone(s).(*api.JobSpec)
		ApplyDefaults(c)
		if !proto.Equal(s, c) {
			t.Fatalf("ApplyDefaults changed a parsed spec:\n%v\n%v", s, c)
		}
		assertRoundTrip(t, s)
	})
}
