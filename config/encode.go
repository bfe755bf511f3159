package config

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// MarshalJobSpec renders s as a job spec file in the format ParseJobSpec
// reads (used by `job show -o yaml`). Offsets are written as a map
// {partition: offset}, max_batch_interval as a Go duration, max_batch_size in
// bytes. s is rendered as it is, without defaults or validation; for a spec
// that ParseJobSpec returned (or any spec that is valid after ApplyDefaults,
// with ApplyDefaults applied), ParseJobSpec(MarshalJobSpec(s)) equals s.
func MarshalJobSpec(s *api.JobSpec) ([]byte, error) {
	if s == nil {
		return nil, errors.New("config: marshal job spec: nil spec")
	}
	root := mapNode(yaml.Style(0))
	if s.Name != "" {
		add(root, "name", strNode(s.Name))
	}
	if len(s.Tables) > 0 {
		// A multi-table job names its tables; table is the first of them.
		names := make([]string, len(s.Tables))
		for i, t := range s.Tables {
			names[i] = t.GetName()
		}
		add(root, "tables", strList(names))
	}
	if t := s.Table; t != nil && len(s.Tables) == 0 {
		tn := mapNode(0)
		if t.Name != "" {
			add(tn, "name", strNode(t.Name))
		}
		if t.Database != "" {
			add(tn, "database", strNode(t.Database))
		}
		if t.Model != api.TableModel_DUPLICATE {
			add(tn, "model", strNode(strings.ToLower(t.Model.String())))
		}
		if len(t.KeyColumns) > 0 {
			add(tn, "keys", strList(t.KeyColumns))
		}
		if t.SequenceColumn != "" {
			add(tn, "sequence_column", strNode(t.SequenceColumn))
		}
		if t.HiddenSequenceType != api.ColumnType_COLUMN_TYPE_UNSPECIFIED {
			add(tn, "sequence_type", strNode(table.TypeString(&api.Column{Type: t.HiddenSequenceType})))
		}
		if t.SkipBitmapColumn {
			add(tn, "skip_bitmap_column", strNode("true"))
		}
		cols := &yaml.Node{Kind: yaml.SequenceNode}
		for _, c := range t.Columns {
			cn := mapNode(yaml.FlowStyle)
			add(cn, "name", strNode(c.GetName()))
			add(cn, "type", strNode(table.TypeString(c)))
			if c.GetNotNull() {
				add(cn, "not_null", strNode("true"))
			}
			if c.DefaultValue != nil {
				add(cn, "default", strNode(c.GetDefaultValue()))
			}
			if c.GetTextInJobZone() {
				add(cn, "text_in_job_zone", strNode("true"))
			}
			if c.GetDefaultCurrentTimestamp() {
				add(cn, "default_current_timestamp", strNode("true"))
				if p := c.GetDefaultCurrentTimestampPrecision(); p != 0 {
					add(cn, "default_current_timestamp_precision", strNode(strconv.Itoa(int(p))))
				}
			}
			if c.Aggregation != api.Aggregation_AGG_NONE {
				add(cn, "aggregation", strNode(c.Aggregation.String()))
			}
			cols.Content = append(cols.Content, cn)
		}
		add(tn, "columns", cols)
		add(root, "table", tn)
	}
	if s.Format != "" {
		add(root, "format", strNode(s.Format))
	}
	if s.ColumnSeparator != "" {
		add(root, "column_separator", strNode(s.ColumnSeparator))
	}
	if len(s.Jsonpaths) > 0 {
		add(root, "jsonpaths", strList(s.Jsonpaths))
	}
	add(root, "desired_concurrent_number", intNode(int64(s.DesiredConcurrentNumber)))
	add(root, "max_batch_interval", strNode((time.Duration(s.MaxBatchIntervalMs) * time.Millisecond).String()))
	add(root, "max_batch_rows", intNode(s.MaxBatchRows))
	add(root, "max_batch_size", intNode(s.MaxBatchSize))
	add(root, "max_error_number", intNode(s.MaxErrorNumber))
	if s.StrictMode != nil {
		add(root, "strict_mode", strNode(strconv.FormatBool(s.GetStrictMode())))
	}
	if s.MaxFilterRatio != nil {
		add(root, "max_filter_ratio", strNode(strconv.FormatFloat(s.GetMaxFilterRatio(), 'g', -1, 64)))
	}
	if s.Timezone != "" {
		add(root, "timezone", strNode(s.Timezone))
	}
	if s.LcTimeNames != "" {
		add(root, "lc_time_names", strNode(s.LcTimeNames))
	}
	if len(s.ColumnsMapping) > 0 {
		add(root, "columns_mapping", strList(s.ColumnsMapping))
	}
	if s.Where != "" {
		add(root, "where", strNode(s.Where))
	}
	if s.JsonRoot != "" {
		add(root, "json_root", strNode(s.JsonRoot))
	}
	if s.Enclose != nil {
		add(root, "enclose", strNode(s.GetEnclose()))
	}
	if s.Escape != "" {
		add(root, "escape", strNode(s.Escape))
	}
	if s.EmptyFieldAsNull {
		add(root, "empty_field_as_null", strNode("true"))
	}
	if s.MergeType != api.MergeType_APPEND {
		add(root, "merge_type", strNode(s.MergeType.String()))
	}
	if s.DeleteOn != "" {
		add(root, "delete_on", strNode(s.DeleteOn))
	}
	if s.SequenceColumn != "" {
		add(root, "sequence_column", strNode(s.SequenceColumn))
	}
	if s.PartialColumns {
		add(root, "partial_columns", strNode("true"))
	}
	if s.FillMissingColumns != nil {
		add(root, "fill_missing_columns", strNode(strconv.FormatBool(s.GetFillMissingColumns())))
	}
	if s.UniqueKeyUpdateMode != "" {
		add(root, "unique_key_update_mode", strNode(s.UniqueKeyUpdateMode))
	}
	if s.PartialUpdateNewKeyBehavior != "" {
		add(root, "partial_update_new_key_behavior", strNode(s.PartialUpdateNewKeyBehavior))
	}
	if s.StripOuterArray {
		add(root, "strip_outer_array", strNode("true"))
	}
	if s.TrimDoubleQuotes {
		add(root, "trim_double_quotes", strNode("true"))
	}
	if s.SkipLines != 0 {
		add(root, "skip_lines", strNode(strconv.Itoa(int(s.SkipLines))))
	}
	if s.NumAsString {
		add(root, "num_as_string", strNode("true"))
	}
	if len(s.TargetPartitions) > 0 {
		add(root, "target_partitions", strList(s.TargetPartitions))
	}
	encodeRegistry(root, s.SchemaRegistry)
	if k := s.Kafka; k != nil {
		kn := mapNode(0)
		add(kn, "brokers", strList(k.Brokers))
		if k.Topic != "" {
			add(kn, "topic", strNode(k.Topic))
		}
		if len(k.Partitions) > 0 {
			pn := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, p := range k.Partitions {
				pn.Content = append(pn.Content, intNode(int64(p)))
			}
			add(kn, "partitions", pn)
		}
		if len(k.Offsets) > 0 {
			on := mapNode(yaml.FlowStyle)
			keys := make([]int32, 0, len(k.Offsets))
			for p := range k.Offsets {
				keys = append(keys, p)
			}
			slices.Sort(keys)
			for _, p := range keys {
				add(on, strconv.FormatInt(int64(p), 10), offsetNode(k.Offsets[p]))
			}
			on.Content = intKeys(on.Content)
			add(kn, "offsets", on)
		}
		if k.DefaultOffset != "" {
			add(kn, "default_offset", strNode(k.DefaultOffset))
		}
		if len(k.Properties) > 0 {
			add(kn, "properties", strMapNode(k.Properties))
		}
		if k.CommitGroup != "" {
			add(kn, "commit_group", strNode(k.CommitGroup))
		}
		add(root, "kafka", kn)
	}
	if s.ErrorTopic != "" {
		add(root, "error_topic", strNode(s.ErrorTopic))
	}
	if len(s.ErrorTopicBrokers) > 0 {
		add(root, "error_topic_brokers", strList(s.ErrorTopicBrokers))
	}
	if len(s.ErrorTopicProperties) > 0 {
		add(root, "error_topic_properties", strMapNode(s.ErrorTopicProperties))
	}
	if k := s.Kinesis; k != nil {
		encodeKinesis(root, k)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("config: marshal job spec: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config: marshal job spec: %w", err)
	}
	return buf.Bytes(), nil
}

// strMapNode is a block mapping of m's entries in key order.
func strMapNode(m map[string]string) *yaml.Node {
	n := mapNode(0)
	for _, key := range slices.Sorted(maps.Keys(m)) {
		add(n, key, strNode(m[key]))
	}
	return n
}

func mapNode(style yaml.Style) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Style: style}
}

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, strNode(key), v)
}

func strNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if needsQuotes(s) {
		// yaml.v3 may write such strings as block scalars that do not read
		// back the same (a leading newline is lost); double quotes escape all.
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// needsQuotes reports whether s has leading or trailing white space, or a
// character outside printable ASCII other than a plain non-ASCII letter.
func needsQuotes(s string) bool {
	if s != strings.TrimSpace(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && !unicode.IsPrint(r)) || r == '\ufeff' {
			return true
		}
	}
	return false
}

func intNode(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
}

func strList(list []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range list {
		n.Content = append(n.Content, strNode(s))
	}
	return n
}

// offsetNode writes a numeric offset as a YAML integer and anything else as a
// string.
func offsetNode(off string) *yaml.Node {
	if c, ok := canonicalOffset(off); ok && c == off && isDigits(off) {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: off}
	}
	return strNode(off)
}

// intKeys retags the keys of a mapping's content as integers.
func intKeys(content []*yaml.Node) []*yaml.Node {
	for i := 0; i < len(content); i += 2 {
		content[i].Tag = "!!int"
	}
	return content
}
