package node

import (
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// mappingCache remembers the mappings checkMapping accepted, so that a
// burst of creates with one table and format (the usual case: many jobs
// loading one table, one per topic) builds the schema and parser once, not
// once per create in the manager's mailbox. A mapping is named by its
// fingerprint: the spec's wire encoding without the fields checkMapping
// does not read (mappingFree). Safe for concurrent use.
type mappingCache struct {
	mu  sync.Mutex
	buf []byte              // REQUIRES: mu is held
	ok  map[string]struct{} // accepted fingerprints; REQUIRES: mu is held
}

// maxMappings bounds the cache; when full it starts over.
const maxMappings = 256

// mappingFree are the JobSpec fields checkMapping does not read: the
// job's name and its source section. Every other field, including ones
// added later, is part of the fingerprint, so that a new mapping field
// can only make the cache miss, never accept an unchecked mapping.
var mappingFree = map[protowire.Number]bool{
	1:  true, // name
	11: true, // kafka
	12: true, // kinesis
}

func newMappingCache() *mappingCache {
	return &mappingCache{ok: map[string]struct{}{}}
}

// check is checkMapping(spec), skipped when a spec with the same
// fingerprint passed it. A nil cache checks every time.
func (c *mappingCache) check(spec *api.JobSpec) error {
	if c == nil {
		return checkMapping(spec)
	}
	c.mu.Lock()
	key, fine := c.fingerprint(spec)
	var name string
	if fine {
		if _, seen := c.ok[string(key)]; seen { // no allocation for the look-up
			c.mu.Unlock()
			return nil
		}
		name = string(key)
	}
	c.mu.Unlock()
	if err := checkMapping(spec); err != nil {
		return err
	}
	if fine {
		c.mu.Lock()
		if len(c.ok) >= maxMappings {
			clear(c.ok)
		}
		c.ok[name] = struct{}{}
		c.mu.Unlock()
	}
	return nil
}

// fingerprint encodes spec deterministically into c.buf and drops the
// mappingFree fields; false if the encoding fails (then nothing is cached).
// The key aliases c.buf: use it under mu only.
// REQUIRES: c.mu is held.
func (c *mappingCache) fingerprint(spec *api.JobSpec) ([]byte, bool) {
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(c.buf[:0], spec)
	if err != nil {
		return nil, false
	}
	out := b[:0]
	for rest := b; len(rest) > 0; {
		num, _, n := protowire.ConsumeField(rest)
		if n < 0 {
			return nil, false
		}
		if !mappingFree[num] {
			out = append(out, rest[:n]...) // in place: out never passes rest
		}
		rest = rest[n:]
	}
	c.buf = b
	return out, true
}
