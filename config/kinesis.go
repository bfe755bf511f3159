package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
)

// Kinesis start positions. A position is one of these, AT_TIMESTAMP:<RFC3339>
// or a sequence number (decimal digits; reading starts after it).
const (
	PositionTrimHorizon       = "TRIM_HORIZON"
	PositionLatest            = "LATEST"
	PositionAtTimestampPrefix = "AT_TIMESTAMP:"
	// DefaultKinesisPosition is the start of shards without a position.
	DefaultKinesisPosition = PositionTrimHorizon
)

const positionHelp = "must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number"

var (
	kinesisKeys = []string{"stream", "region", "endpoint", "credentials", "shards", "positions", "default_position"}
	credKeys    = []string{"access_key_id", "secret_access_key", "session_token", "profile"}
	// streamPattern is the AWS stream name rule.
	streamPattern = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
	shardPattern  = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
	regionPattern = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)
)

// CanonicalPosition returns a Kinesis start position in its canonical
// spelling (TRIM_HORIZON and LATEST upper case, timestamps as written), and
// whether it is valid.
func CanonicalPosition(s string) (string, bool) {
	switch u := strings.ToUpper(strings.TrimSpace(s)); {
	case u == PositionTrimHorizon || u == PositionLatest:
		return u, true
	case strings.HasPrefix(u, PositionAtTimestampPrefix):
		ts := strings.TrimSpace(s)[len(PositionAtTimestampPrefix):]
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			return s, false
		}
		return PositionAtTimestampPrefix + ts, true
	case isDigits(u) && len(u) <= 128 && (u[0] != '0' || len(u) == 1):
		// A sequence number, as the source reads it: no leading zeros.
		return u, true
	}
	return s, false
}

func (d *decoder) kinesis(n *yaml.Node) (*api.KinesisSpec, error) {
	k := &api.KinesisSpec{}
	err := d.mapping(n, "kinesis", kinesisKeys, func(key string, v *yaml.Node) error {
		field := "kinesis." + key
		var err error
		switch key {
		case "stream":
			k.Stream, err = str(v, field)
		case "region":
			k.Region, err = str(v, field)
		case "endpoint":
			k.Endpoint, err = str(v, field)
		case "credentials":
			err = d.mapping(v, field, credKeys, func(ck string, cv *yaml.Node) error {
				s, err := str(cv, field+"."+ck)
				switch ck {
				case "access_key_id":
					k.AccessKeyId = s
				case "secret_access_key":
					k.SecretAccessKey = s
				case "session_token":
					k.SessionToken = s
				case "profile":
					k.Profile = s
				}
				return err
			})
		case "shards":
			var items []item
			if items, err = d.list(v, field); err == nil {
				for _, it := range items {
					k.Shards = append(k.Shards, it.text)
				}
			}
		case "positions":
			k.Positions = map[string]string{}
			err = d.mapping(v, field, nil, func(shard string, pv *yaml.Node) error {
				f := field + "." + shard
				if pv.Kind != yaml.ScalarNode {
					return errAt(pv, f, positionHelp)
				}
				if _, ok := CanonicalPosition(pv.Value); !ok {
					return errAt(pv, f, "%q %s", pv.Value, positionHelp)
				}
				d.lines[f] = pv.Line
				k.Positions[shard] = pv.Value
				return nil
			})
		case "default_position":
			if v.Kind != yaml.ScalarNode {
				return errAt(v, field, positionHelp)
			}
			k.DefaultPosition = v.Value
			if _, ok := CanonicalPosition(v.Value); !ok {
				return errAt(v, field, "%q %s", v.Value, positionHelp)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

func applyKinesisDefaults(k *api.KinesisSpec) {
	if k == nil {
		return
	}
	if k.DefaultPosition == "" {
		k.DefaultPosition = DefaultKinesisPosition
	} else if c, ok := CanonicalPosition(k.DefaultPosition); ok {
		k.DefaultPosition = c
	}
	for s, p := range k.Positions {
		if c, ok := CanonicalPosition(p); ok {
			k.Positions[s] = c
		}
	}
}

func validateKinesis(k *api.KinesisSpec) *FieldError {
	if k.Stream == "" {
		return fieldErr("kinesis.stream", "required")
	}
	if !streamPattern.MatchString(k.Stream) {
		return fieldErr("kinesis.stream", "%q is not a valid stream name (1-128 of [a-zA-Z0-9_.-])", k.Stream)
	}
	if k.Region == "" && k.Endpoint == "" {
		return fieldErr("kinesis.region", "required (or an endpoint)")
	}
	if k.Region != "" && !regionPattern.MatchString(k.Region) {
		return fieldErr("kinesis.region", "%q is not a region name such as us-east-1", k.Region)
	}
	if k.Endpoint != "" {
		if err := checkEndpoint(k.Endpoint); err != nil {
			return err
		}
	}
	if (k.AccessKeyId == "") != (k.SecretAccessKey == "") {
		return fieldErr("kinesis.credentials", "access_key_id and secret_access_key go together")
	}
	if k.SessionToken != "" && k.AccessKeyId == "" {
		return fieldErr("kinesis.credentials.session_token", "needs access_key_id and secret_access_key")
	}
	if k.Profile != "" && k.AccessKeyId != "" {
		return fieldErr("kinesis.credentials", "give static keys or a profile, not both")
	}
	if len(k.Shards) > maxListed || len(k.Positions) > maxListed {
		return fieldErr("kinesis.shards", "%d shards and %d positions listed; at most %d each", len(k.Shards), len(k.Positions), maxListed)
	}
	for i, s := range k.Shards {
		f := fmt.Sprintf("kinesis.shards[%d]", i)
		if !shardPattern.MatchString(s) {
			return fieldErr(f, "%q is not a shard id such as shardId-000000000000", s)
		}
		if j := slices.Index(k.Shards, s); j != i {
			return fieldErr(f, "duplicate shard %s (also kinesis.shards[%d])", s, j)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(k.Positions)) {
		f := "kinesis.positions." + s
		if _, ok := CanonicalPosition(k.Positions[s]); !ok {
			return fieldErr(f, "%q %s", k.Positions[s], positionHelp)
		}
		if len(k.Shards) > 0 && !slices.Contains(k.Shards, s) {
			return fieldErr(f, "shard %s is not in kinesis.shards", s)
		}
	}
	if _, ok := CanonicalPosition(k.DefaultPosition); !ok {
		return fieldErr("kinesis.default_position", "%q %s", k.DefaultPosition, positionHelp)
	}
	return nil
}

// encodeKinesis adds the kinesis section to a marshalled spec.
func encodeKinesis(root *yaml.Node, k *api.KinesisSpec) {
	kn := mapNode(0)
	add(kn, "stream", strNode(k.Stream))
	if k.Region != "" {
		add(kn, "region", strNode(k.Region))
	}
	if k.Endpoint != "" {
		add(kn, "endpoint", strNode(k.Endpoint))
	}
	if k.AccessKeyId != "" || k.Profile != "" {
		cn := mapNode(0)
		for _, kv := range [][2]string{{"access_key_id", k.AccessKeyId}, {"secret_access_key", k.SecretAccessKey}, {"session_token", k.SessionToken}, {"profile", k.Profile}} {
			if kv[1] != "" {
				add(cn, kv[0], strNode(kv[1]))
			}
		}
		add(kn, "credentials", cn)
	}
	if len(k.Shards) > 0 {
		add(kn, "shards", strList(k.Shards))
	}
	if len(k.Positions) > 0 {
		add(kn, "positions", strMapNode(k.Positions))
	}
	if k.DefaultPosition != "" {
		add(kn, "default_position", strNode(k.DefaultPosition))
	}
	add(root, "kinesis", kn)
}

// checkEndpoint accepts an http:// or https:// URL with a host, and no
// user information (credentials go in kinesis.credentials, which are
// redacted when shown; an endpoint is shown as given), query or fragment.
func checkEndpoint(e string) *FieldError {
	u, err := url.Parse(e)
	switch {
	case err != nil:
		return fieldErr("kinesis.endpoint", "not a URL (want http://HOST[:PORT] or https://...)") // the error would echo it
	case u.User != nil:
		return fieldErr("kinesis.endpoint", "must not hold a user or password (give credentials in kinesis.credentials)")
	case u.Scheme != "http" && u.Scheme != "https":
		return fieldErr("kinesis.endpoint", "%q must be an http:// or https:// URL", e)
	case u.Host == "" || u.Hostname() == "":
		return fieldErr("kinesis.endpoint", "%q has no host", e)
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return fieldErr("kinesis.endpoint", "%q must be a plain URL (no query or fragment)", e)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fieldErr("kinesis.endpoint", "%q: bad port", e)
		}
	}
	return nil
}
