package node

import (
	"fmt"

	"github.com/loadnode/loadnode/actors"
	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/sources/kafka"
	"github.com/loadnode/loadnode/table"
)

// specRules is the node's actors.Specs: config's defaults, validation and
// alter rules, the table package's schema and format checks, and each
// source family's checks of its own section. maps, if not nil, skips
// checking a mapping it has seen pass.
type specRules struct{ maps *mappingCache }

var _ actors.Specs = specRules{}

// Prepare applies the defaults and validates spec.
func (r specRules) Prepare(spec *api.JobSpec) error {
	config.ApplyDefaults(spec)
	if err := config.ValidateJobSpec(spec); err != nil {
		return err
	}
	if err := r.maps.check(spec); err != nil {
		return err
	}
	return checkSource(spec)
}

// checkMapping compiles how spec's records become rows of its table: the
// format, columns_mapping, where, delete_on, and the unique-model
// settings (sequence_column, partial_columns), so that a mistake in them
// is refused by the create or alter that makes it, naming the field.
func checkMapping(spec *api.JobSpec) error {
	schema, err := table.NewSchema(spec.GetTable())
	if err != nil {
		return err
	}
	format := table.FormatOf(spec)
	if _, err := table.NewParser(schema, format); err != nil {
		if _, ok := err.(*table.FieldError); ok {
			return err
		}
		return &config.FieldError{Field: "format", Msg: err.Error()}
	}
	if _, err := table.UpdateOf(schema, spec); err != nil {
		return err
	}
	return nil
}

// Alter applies config's alter rules, then the source's own checks.
func (r specRules) Alter(cur *api.JobSpec, req *api.AlterJobRequest) (*api.JobSpec, []string, bool, error) {
	next, changes, reopen, err := config.Alter(cur, req)
	if err != nil {
		return nil, nil, false, err
	}
	if len(config.PausedOnly(cur, next)) > 0 {
		// A new mapping (COLUMNS, WHERE, ...) compiles against the table
		// now, not when the job resumes.
		if err := r.maps.check(next); err != nil {
			return nil, nil, false, err
		}
	}
	if err := checkSource(next); err != nil {
		return nil, nil, false, err
	}
	return next, changes, reopen, nil
}

// PausedOnly: how records map onto rows (config.PausedOnly).
func (specRules) PausedOnly(cur, next *api.JobSpec) []string { return config.PausedOnly(cur, next) }

// Rebases: a new Kafka topic (config.Rebases).
func (specRules) Rebases(cur, next *api.JobSpec) bool { return config.Rebases(cur, next) }

// SourceName names the job's source: kafka://topic or kinesis://stream.
func (specRules) SourceName(spec *api.JobSpec) string {
	if k := spec.GetKafka(); k != nil {
		return "kafka://" + k.GetTopic()
	}
	if k := spec.GetKinesis(); k != nil {
		return "kinesis://" + k.GetStream()
	}
	return ""
}

// checkSource runs the source family's checks of its spec section that
// config's do not cover (Kafka client properties).
func checkSource(spec *api.JobSpec) error {
	if k := spec.GetKafka(); k != nil {
		if err := kafka.ValidateProperties(k.GetProperties()); err != nil {
			return &config.FieldError{Field: "kafka.properties", Msg: fmt.Sprint(err)}
		}
	}
	return nil
}
