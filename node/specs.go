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
// source family's checks of its own section.
type specRules struct{}

var _ actors.Specs = specRules{}

// Prepare applies the defaults and validates spec.
func (specRules) Prepare(spec *api.JobSpec) error {
	config.ApplyDefaults(spec)
	if err := config.ValidateJobSpec(spec); err != nil {
		return err
	}
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
	return checkSource(spec)
}

// Alter applies config's alter rules, then the source's own checks.
func (specRules) Alter(cur *api.JobSpec, req *api.AlterJobRequest) (*api.JobSpec, []string, bool, error) {
	next, changes, reopen, err := config.Alter(cur, req)
	if err != nil {
		return nil, nil, false, err
	}
	if err := checkSource(next); err != nil {
		return nil, nil, false, err
	}
	return next, changes, reopen, nil
}

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
