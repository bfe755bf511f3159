package config

import (
	"fmt"
	"slices"
	"unicode"

	"github.com/loadnode/loadnode/api"
)

// What a job publishes outside loadnode after its commits: its positions
// to a Kafka consumer group (kafka.commit_group) and its error rows to a
// dead-letter topic (error_topic). Both are best effort; neither is ever
// read back as the job's state.

// maxGroupName bounds kafka.commit_group (Kafka itself has no limit short
// of its request size).
const maxGroupName = 255

func validateCommitGroup(k *api.KafkaSpec) *FieldError {
	g := k.GetCommitGroup()
	if g == "" {
		return nil
	}
	if len(g) > maxGroupName {
		return fieldErr("kafka.commit_group", "%d bytes; at most %d", len(g), maxGroupName)
	}
	for _, r := range g {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fieldErr("kafka.commit_group", "%q must be printable, without spaces", g)
		}
	}
	return nil
}

// validateErrorTopic checks error_topic and its cluster: a Kafka job's
// error topic is on its own cluster unless error_topic_brokers names
// another; a Kinesis job must name one.
func validateErrorTopic(s *api.JobSpec) *FieldError {
	if s.ErrorTopic == "" {
		switch {
		case len(s.ErrorTopicBrokers) > 0:
			return fieldErr("error_topic_brokers", "given without error_topic")
		case len(s.ErrorTopicProperties) > 0:
			return fieldErr("error_topic_properties", "given without error_topic")
		}
		return nil
	}
	if !topicPattern.MatchString(s.ErrorTopic) || s.ErrorTopic == "." || s.ErrorTopic == ".." {
		return fieldErr("error_topic", "%q is not a valid Kafka topic name (1-249 of [A-Za-z0-9._-], not \".\" or \"..\")", s.ErrorTopic)
	}
	if s.Kafka != nil && len(s.ErrorTopicBrokers) == 0 && s.ErrorTopic == s.Kafka.Topic {
		return fieldErr("error_topic", "%q is the job's own topic: its error rows would be read again", s.ErrorTopic)
	}
	if s.Kafka == nil && len(s.ErrorTopicBrokers) == 0 {
		return fieldErr("error_topic_brokers", "required for a job without a kafka source")
	}
	if len(s.ErrorTopicProperties) > 0 && len(s.ErrorTopicBrokers) == 0 {
		return fieldErr("error_topic_properties", "given without error_topic_brokers (the job's own cluster uses kafka.properties)")
	}
	for i, b := range s.ErrorTopicBrokers {
		if err := validateBroker(b); err != "" {
			return fieldErr(fmt.Sprintf("error_topic_brokers[%d]", i), "%q %s", b, err)
		}
	}
	if len(s.ErrorTopicProperties) > maxProperties {
		return fieldErr("error_topic_properties", "%d properties; at most %d", len(s.ErrorTopicProperties), maxProperties)
	}
	keys := make([]string, 0, len(s.ErrorTopicProperties))
	for key := range s.ErrorTopicProperties {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if !propertyPattern.MatchString(key) {
			return fieldErr("error_topic_properties", "property name %q must match %s", key, propertyPattern)
		}
	}
	return nil
}
