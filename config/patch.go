package config

import (
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
)

// ParseJobPatch parses a partial job spec (YAML or JSON, the spec file's
// field names) for an alter with an update mask: it returns the spec with
// the given fields set and the mask naming them (top-level keys;
// "kafka.<key>" for kafka's, "kafka.properties.<key>" for each property),
// for Alter to apply to the job's current spec. Defaults are not applied
// and the spec is not validated: Alter validates the spec the patch makes.
// Keys are checked strictly as in ParseJobSpec; "name", when given, is
// returned in the spec and left out of the mask.
func ParseJobPatch(data []byte) (*api.JobSpec, []string, error) {
	root, err := parseDocument(data)
	if err != nil {
		return nil, nil, err
	}
	if root == nil || root.Kind != yaml.MappingNode || len(root.Content) == 0 {
		return nil, nil, &FieldError{Msg: "the patch must be a mapping of spec fields to change"}
	}
	d := &decoder{lines: make(map[string]int)}
	s, err := d.jobSpec(root)
	if err != nil {
		return nil, nil, err
	}
	var mask []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, v := resolve(root.Content[i]).Value, resolve(root.Content[i+1])
		switch {
		case key == "name":
		case key == "kafka" && v.Kind == yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				k, pv := resolve(v.Content[j]).Value, resolve(v.Content[j+1])
				if k == "properties" && pv.Kind == yaml.MappingNode {
					for p := 0; p+1 < len(pv.Content); p += 2 {
						mask = append(mask, "kafka.properties."+resolve(pv.Content[p]).Value)
					}
					continue
				}
				mask = append(mask, "kafka."+k)
			}
		default:
			mask = append(mask, key)
		}
	}
	if len(mask) == 0 {
		return nil, nil, &FieldError{Msg: "the patch changes nothing (give the fields to change)"}
	}
	return s, slices.Compact(mask), nil
}
