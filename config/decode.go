package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// ParseJobSpec parses a job spec file (YAML, see SPEC.md) strictly: unknown
// and duplicate keys are errors naming the key and its line. It fills
// defaults (ApplyDefaults), validates (ValidateJobSpec) and returns the wire
// spec. Problems with a field are reported as *FieldError.
func ParseJobSpec(data []byte) (*api.JobSpec, error) {
	root, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, &FieldError{Msg: "job spec is empty"}
	}
	d := &decoder{lines: make(map[string]int)}
	s, err := d.jobSpec(root)
	if err != nil {
		return nil, err
	}
	ApplyDefaults(s)
	if err := ValidateJobSpec(s); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.Line = d.line(fe.Field)
		}
		return nil, err
	}
	return s, nil
}

// parseDocument returns the top node of the single YAML document in data, or
// nil when data holds no document (or only a null one).
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Msg: "more than one YAML document", Line: extra.Line}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, nil
	}
	root := resolve(doc.Content[0])
	if isNull(root) {
		return nil, nil
	}
	return root, nil
}

// decoder walks a YAML node tree. lines records the line of every field it
// visits so that errors found later by ValidateJobSpec can name a line.
type decoder struct {
	lines map[string]int
}

// line returns the recorded line of field or of its nearest recorded parent.
func (d *decoder) line(field string) int {
	for field != "" {
		if l, ok := d.lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			break
		}
		field = field[:i]
	}
	return 0
}

func errAt(n *yaml.Node, field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...), Line: n.Line}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping calls fn with every key and (resolved) value of the mapping n, in
// document order. Keys must be scalars and unique. With known set, keys must
// be in it and null values are skipped (a null field is an absent one);
// without, fn sees null values too.
func (d *decoder) mapping(n *yaml.Node, path string, known []string, fn func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return errAt(n, path, "must be a mapping")
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return errAt(k, path, "keys must be scalars")
		}
		field := join(path, k.Value)
		if seen[k.Value] {
			return errAt(k, field, "duplicate key")
		}
		seen[k.Value] = true
		if known != nil {
			if !contains(known, k.Value) {
				return errAt(k, field, "unknown key (known: %s)", strings.Join(known, ", "))
			}
		}
		d.lines[field] = k.Line
		if known != nil && isNull(v) {
			continue
		}
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str returns the text of a scalar.
func str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errAt(n, field, "must be a string")
	}
	return n.Value, nil
}

// integer returns the value of an integer scalar, written as a YAML integer
// or as a string of decimal digits (Doris properties are strings). Digits
// with leading zeros are decimal ("0010" is 10, not YAML 1.1 octal).
func integer(n *yaml.Node, field string) (int64, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!int", "!!str":
			if text := strings.TrimSpace(n.Value); isDigits(text) {
				if v, err := strconv.ParseInt(text, 10, 64); err == nil {
					return v, nil
				}
			}
		}
		// Decimal only (SPEC.md): YAML's 0x10, 0o17 and 1_000 are
		// refused, not read as 16, 15 and 1000. A sign is allowed.
		switch n.ShortTag() {
		case "!!int", "!!str":
			if v, err := strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64); err == nil {
				return v, nil
			}
		}
	}
	return 0, errAt(n, field, "must be a decimal integer")
}

// item is one element of a list given as a YAML sequence or as a
// comma-separated string.
type item struct {
	field string
	text  string
	node  *yaml.Node // the element, or the whole string for a comma list
	comma bool
}

// list returns the elements of a sequence of scalars, of a comma-separated
// string (elements trimmed; an empty string is an empty list), or of a single
// non-string scalar (one element).
func (d *decoder) list(n *yaml.Node, field string) ([]item, error) {
	switch n.Kind {
	case yaml.SequenceNode:
		items := make([]item, 0, len(n.Content))
		for i, e := range n.Content {
			e = resolve(e)
			f := fmt.Sprintf("%s[%d]", field, i)
			if e.Kind != yaml.ScalarNode || isNull(e) {
				return nil, errAt(e, f, "must be a scalar")
			}
			d.lines[f] = e.Line
			items = append(items, item{field: f, text: e.Value, node: e})
		}
		return items, nil
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" {
			return []item{{field: field + "[0]", text: n.Value, node: n}}, nil
		}
		if strings.TrimSpace(n.Value) == "" {
			return nil, nil
		}
		parts := strings.Split(n.Value, ",")
		items := make([]item, 0, len(parts))
		for i, p := range parts {
			f := fmt.Sprintf("%s[%d]", field, i)
			d.lines[f] = n.Line
			items = append(items, item{field: f, text: strings.TrimSpace(p), node: n, comma: true})
		}
		return items, nil
	}
	return nil, errAt(n, field, "must be a list or a comma-separated string")
}

// integer returns the integer value of it.
func (it item) integer() (int64, error) {
	if !it.comma {
		return integer(it.node, it.field)
	}
	v, err := strconv.ParseInt(it.text, 10, 64)
	if err != nil {
		return 0, errAt(it.node, it.field, "%q must be an integer", it.text)
	}
	return v, nil
}

// offsetText returns the text of an offset value: YAML integers other than
// plain digits (0x10, 1_000) in decimal, anything else as written.
func offsetText(n *yaml.Node) string {
	if n.ShortTag() == "!!int" && !isDigits(n.Value) {
		var v int64
		if err := n.Decode(&v); err == nil {
			return strconv.FormatInt(v, 10)
		}
	}
	return n.Value
}

var (
	jobKeys   = []string{"name", "table", "tables", "format", "column_separator", "jsonpaths", "desired_concurrent_number", "max_batch_interval", "max_batch_rows", "max_batch_size", "max_error_number", "strict_mode", "max_filter_ratio", "timezone", "lc_time_names", "columns_mapping", "where", "json_root", "empty_field_as_null", "enclose", "escape", "schema_registry", "merge_type", "delete_on", "sequence_column", "partial_columns", "partial_update_new_key_behavior", "unique_key_update_mode", "fill_missing_columns", "strip_outer_array", "trim_double_quotes", "skip_lines", "num_as_string", "target_partitions", "error_topic", "error_topic_brokers", "error_topic_properties", "kafka", "kinesis"}
	tableKeys = []string{"name", "columns", "model", "database", "keys", "sequence_column", "sequence_type", "skip_bitmap_column"}
	colKeys   = []string{"name", "type", "not_null", "default", "default_current_timestamp", "default_current_timestamp_precision", "text_in_job_zone", "aggregation"}
	kafkaKeys = []string{"brokers", "topic", "partitions", "offsets", "default_offset", "properties", "commit_group"}
)

func (d *decoder) jobSpec(root *yaml.Node) (*api.JobSpec, error) {
	s := &api.JobSpec{}
	err := d.mapping(root, "", jobKeys, func(key string, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			s.Name, err = str(v, key)
		case "table":
			s.Table, err = d.table(v)
		case "format":
			if s.Format, err = str(v, key); err == nil {
				// An explicit value must be valid; only absence means the default.
				if f := strings.ToLower(s.Format); !CSVFormat(f) && f != FormatJSON && !binaryFormat(f) {
					return errAt(v, key, "%q must be "+formatHelp, s.Format)
				}
			}
		case "column_separator":
			if s.ColumnSeparator, err = str(v, key); err == nil && s.ColumnSeparator == "" {
				return errAt(v, key, "must not be empty")
			}
		case "tables":
			var items []item
			if items, err = d.list(v, key); err == nil {
				for _, it := range items {
					s.Tables = append(s.Tables, &api.TableSpec{Name: it.text})
				}
				if len(s.Tables) == 0 {
					return errAt(v, key, "must name at least one table")
				}
			}
		case "jsonpaths":
			s.Jsonpaths, err = d.jsonpaths(v)
		case "desired_concurrent_number":
			var n int64
			if n, err = integer(v, key); err == nil {
				if fe := checkRange(key, n, minDesiredConcurrentNumber, maxDesiredConcurrentNumber); fe != nil {
					fe.Line = v.Line
					return fe
				}
				s.DesiredConcurrentNumber = int32(n)
			}
		case "max_batch_interval":
			s.MaxBatchIntervalMs, err = interval(v)
		case "max_batch_rows":
			if s.MaxBatchRows, err = integer(v, key); err == nil {
				if fe := checkRange(key, s.MaxBatchRows, minMaxBatchRows, maxMaxBatchRows); fe != nil {
					fe.Line = v.Line
					return fe
				}
			}
		case "max_batch_size":
			s.MaxBatchSize, err = size(v)
		case "max_error_number":
			if s.MaxErrorNumber, err = integer(v, key); err == nil && s.MaxErrorNumber < 0 {
				return errAt(v, key, "must be >= 0")
			}
		case "strict_mode":
			var b string
			if b, err = str(v, key); err == nil {
				t, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				s.StrictMode = &t
			}
		case "max_filter_ratio":
			var r string
			if r, err = str(v, key); err == nil {
				f, perr := strconv.ParseFloat(r, 64)
				if perr != nil || f < 0 || f > 1 {
					return errAt(v, key, "must be a number from 0 to 1")
				}
				s.MaxFilterRatio = &f
			}
		case "timezone":
			s.Timezone, err = str(v, key)
		case "lc_time_names":
			s.LcTimeNames, err = str(v, key)
		case "columns_mapping":
			if v.Kind != yaml.SequenceNode {
				return errAt(v, key, "must be a list of field names and \"column = expression\" items")
			}
			for i, e := range v.Content {
				var it string
				if it, err = str(resolve(e), fmt.Sprintf("columns_mapping[%d]", i)); err != nil {
					return err
				}
				s.ColumnsMapping = append(s.ColumnsMapping, it)
			}
		case "where":
			s.Where, err = str(v, key)
		case "json_root":
			s.JsonRoot, err = str(v, key)
		case "enclose":
			var c string
			if c, err = str(v, key); err == nil {
				s.Enclose = &c
			}
		case "escape":
			s.Escape, err = str(v, key)
		case "merge_type":
			var m string
			if m, err = str(v, key); err == nil {
				mt, ok := api.MergeType_value[strings.ToUpper(m)]
				if !ok {
					return errAt(v, key, "%q must be APPEND, MERGE or DELETE", m)
				}
				s.MergeType = api.MergeType(mt)
			}
		case "delete_on":
			s.DeleteOn, err = str(v, key)
		case "sequence_column":
			s.SequenceColumn, err = str(v, key)
		case "partial_columns":
			var b string
			if b, err = str(v, key); err == nil {
				pb, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				s.PartialColumns = pb
			}
		case "partial_update_new_key_behavior":
			s.PartialUpdateNewKeyBehavior, err = str(v, key)
		case "unique_key_update_mode":
			s.UniqueKeyUpdateMode, err = str(v, key)
		case "fill_missing_columns":
			var b string
			if b, err = str(v, key); err == nil {
				fb, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				s.FillMissingColumns = &fb
			}
		case "strip_outer_array":
			var b string
			if b, err = str(v, key); err == nil {
				sb, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				s.StripOuterArray = sb
			}
		case "target_partitions":
			var items []item
			if items, err = d.list(v, key); err == nil {
				for _, it := range items {
					s.TargetPartitions = append(s.TargetPartitions, it.text)
				}
			}
		case "error_topic":
			s.ErrorTopic, err = str(v, key)
		case "error_topic_brokers":
			var items []item
			if items, err = d.list(v, key); err == nil {
				for _, it := range items {
					s.ErrorTopicBrokers = append(s.ErrorTopicBrokers, it.text)
				}
			}
		case "error_topic_properties":
			s.ErrorTopicProperties, err = d.properties(v)
		case "trim_double_quotes", "num_as_string":
			var b string
			if b, err = str(v, key); err == nil {
				t, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				if key == "trim_double_quotes" {
					s.TrimDoubleQuotes = t
				} else {
					s.NumAsString = t
				}
			}
		case "skip_lines":
			var b string
			if b, err = str(v, key); err == nil {
				n, perr := strconv.ParseInt(b, 10, 32)
				if perr != nil || n < 0 {
					return errAt(v, key, "must be an integer >= 0")
				}
				s.SkipLines = int32(n)
			}
		case "empty_field_as_null":
			var b string
			if b, err = str(v, key); err == nil {
				t, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, key, "must be true or false")
				}
				s.EmptyFieldAsNull = t
			}
		case "kafka":
			s.Kafka, err = d.kafka(v)
		case "kinesis":
			s.Kinesis, err = d.kinesis(v)
		case "schema_registry":
			s.SchemaRegistry, err = d.schemaRegistry(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (d *decoder) table(n *yaml.Node) (*api.TableSpec, error) {
	t := &api.TableSpec{}
	err := d.mapping(n, "table", tableKeys, func(key string, v *yaml.Node) error {
		field := "table." + key
		var err error
		switch key {
		case "name":
			t.Name, err = str(v, field)
		case "database":
			t.Database, err = str(v, field)
		case "model":
			var m string
			if m, err = str(v, field); err == nil {
				mv, ok := api.TableModel_value[strings.ToUpper(m)]
				if !ok {
					return errAt(v, field, "%q must be duplicate, unique or aggregate", m)
				}
				t.Model = api.TableModel(mv)
			}
		case "keys":
			if v.Kind != yaml.SequenceNode {
				return errAt(v, field, "must be a list of column names")
			}
			for i, e := range v.Content {
				k, err := str(resolve(e), fmt.Sprintf("%s[%d]", field, i))
				if err != nil {
					return err
				}
				t.KeyColumns = append(t.KeyColumns, k)
			}
		case "sequence_column":
			t.SequenceColumn, err = str(v, field)
		case "sequence_type":
			var s string
			if s, err = str(v, field); err == nil {
				ct, perr := table.ParseType(s)
				if perr != nil {
					return errAt(v, field, "%s", strings.TrimPrefix(perr.Error(), "table: "))
				}
				t.HiddenSequenceType = ct.Type
			}
		case "skip_bitmap_column":
			var b string
			if b, err = str(v, field); err == nil {
				sb, perr := strconv.ParseBool(b)
				if perr != nil {
					return errAt(v, field, "must be true or false")
				}
				t.SkipBitmapColumn = sb
			}
		case "columns":
			if v.Kind != yaml.SequenceNode {
				return errAt(v, field, "must be a list of {name, type}")
			}
			for i, e := range v.Content {
				c, err := d.column(resolve(e), fmt.Sprintf("table.columns[%d]", i))
				if err != nil {
					return err
				}
				t.Columns = append(t.Columns, c)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (d *decoder) column(n *yaml.Node, path string) (*api.Column, error) {
	d.lines[path] = n.Line
	c := &api.Column{}
	err := d.mapping(n, path, colKeys, func(key string, v *yaml.Node) error {
		field := path + "." + key
		s, err := str(v, field)
		if err != nil {
			return err
		}
		switch key {
		case "name":
			c.Name = s
		case "type":
			t, err := table.ParseType(s)
			if err != nil {
				return errAt(v, field, "%s", strings.TrimPrefix(err.Error(), "table: "))
			}
			c.Type, c.Length, c.Precision, c.Scale = t.Type, t.Length, t.Precision, t.Scale
		case "not_null":
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errAt(v, field, "must be true or false")
			}
			c.NotNull = b
		case "default":
			c.DefaultValue = &s
		case "text_in_job_zone":
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errAt(v, field, "must be true or false")
			}
			c.TextInJobZone = b
		case "default_current_timestamp":
			b, err := strconv.ParseBool(s)
			if err != nil {
				return errAt(v, field, "must be true or false")
			}
			c.DefaultCurrentTimestamp = b
		case "default_current_timestamp_precision":
			p, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return errAt(v, field, "must be a number of fraction digits, 0 to 6")
			}
			c.DefaultCurrentTimestampPrecision = int32(p)
		case "aggregation":
			a, ok := api.Aggregation_value[strings.ToUpper(s)]
			if !ok || a == 0 {
				return errAt(v, field, "%q must be SUM, MIN, MAX, REPLACE or REPLACE_IF_NOT_NULL", s)
			}
			c.Aggregation = api.Aggregation(a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// jsonpaths accepts a YAML list of strings or, as Doris does, a string holding
// a JSON array of strings.
func (d *decoder) jsonpaths(n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.SequenceNode:
		paths := make([]string, 0, len(n.Content))
		for i, e := range n.Content {
			e = resolve(e)
			f := fmt.Sprintf("jsonpaths[%d]", i)
			d.lines[f] = e.Line
			p, err := str(e, f)
			if err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
		return paths, nil
	case yaml.ScalarNode:
		var paths []string
		if err := json.Unmarshal([]byte(n.Value), &paths); err != nil {
			return nil, errAt(n, "jsonpaths", "must be a list or a JSON array of strings: %v", err)
		}
		return paths, nil
	}
	return nil, errAt(n, "jsonpaths", "must be a list or a JSON array of strings")
}

// interval reads max_batch_interval: a Go duration string ("10s", "500ms")
// or an integer number of seconds (Doris), and returns milliseconds. A YAML
// integer is seconds; a string is read by ParseInterval.
func interval(n *yaml.Node) (int64, error) {
	const field = "max_batch_interval"
	var ms int64
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int":
		sec, err := integer(n, field)
		if err != nil {
			return 0, err
		}
		if sec > math.MaxInt64/1000 || sec < math.MinInt64/1000 {
			return 0, errAt(n, field, "%d seconds out of range; must be between 100ms and 1h", sec)
		}
		ms = sec * 1000
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		var err error
		if ms, err = ParseInterval(n.Value); err != nil {
			return 0, errAt(n, field, "%q %v", n.Value, err)
		}
	default:
		return 0, errAt(n, field, "must be a duration such as 10s or an integer number of seconds")
	}
	if fe := checkInterval(ms); fe != nil {
		fe.Line = n.Line
		return 0, fe
	}
	return ms, nil
}

// ParseInterval reads max_batch_interval written as text (a job spec
// string, a Doris property): an integer number of seconds ("10", as in
// Doris) or a Go duration ("500ms", "1m") in whole milliseconds, with
// surrounding blanks ignored. It returns milliseconds and leaves the range
// to ValidateJobSpec; an error says what is wrong without naming the field.
func ParseInterval(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if isDigits(s) {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec > math.MaxInt64/1000 {
			return 0, errors.New("seconds out of range; must be between 100ms and 1h")
		}
		return sec * 1000, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("must be a duration such as 10s or an integer number of seconds")
	}
	if d%time.Millisecond != 0 {
		return 0, errors.New("must be a whole number of milliseconds")
	}
	return d.Milliseconds(), nil
}

// sizeUnits are the units accepted by byte sizes (max_batch_size, the node's
// max_record_size and error_row_raw_size), lower case.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// size reads max_batch_size (see byteSize).
func size(n *yaml.Node) (int64, error) {
	return byteSize(n, "max_batch_size", minMaxBatchSize, maxMaxBatchSize)
}

// byteSize reads a byte size: a YAML integer number of bytes or a string
// read by ParseSize, between lo and hi bytes.
func byteSize(n *yaml.Node, field string, lo, hi int64) (int64, error) {
	var b int64
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" {
		var err error
		if b, err = integer(n, field); err != nil {
			return 0, err
		}
	} else {
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
			return 0, errAt(n, field, "must be a number of bytes or a size such as 64MiB")
		}
		var err error
		b, err = ParseSize(n.Value)
		switch {
		case errors.Is(err, errSizeOverflow):
			return 0, errAt(n, field, "%q out of range; must be between %s and %s", n.Value, formatSize(lo), formatSize(hi))
		case err != nil:
			return 0, errAt(n, field, "%q %v", n.Value, err)
		}
	}
	if fe := checkBytes(field, b, lo, hi); fe != nil {
		fe.Line = n.Line
		return 0, fe
	}
	return b, nil
}

// errSizeOverflow is ParseSize's error for a size beyond int64.
var errSizeOverflow = errors.New("out of range")

// ParseSize reads a byte size written as text (a job or node config
// string, a Doris property): an integer number of bytes with an optional
// unit, B, KB, MB, GB, KiB, MiB or GiB, case-insensitive ("104857600",
// "64MiB", "100 MB"), surrounding blanks ignored. It leaves the range to the
// caller; an error says what is wrong without naming the field.
func ParseSize(s string) (int64, error) {
	text := strings.TrimSpace(s)
	i := 0
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		i++
	}
	num, unit := text[:i], strings.ToLower(strings.TrimSpace(text[i:]))
	mult, ok := sizeUnits[unit]
	v, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil {
		return 0, errors.New("must be a number of bytes or a size such as 64MiB (units B, KB, MB, GB, KiB, MiB, GiB)")
	}
	if v > math.MaxInt64/mult {
		return 0, errSizeOverflow
	}
	return v * mult, nil
}

// formatSize writes b in the largest binary unit that divides it: 1KiB,
// 10GiB, 1000B.
func formatSize(b int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.mult == 0 {
			return strconv.FormatInt(b/u.mult, 10) + u.name
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}

func (d *decoder) kafka(n *yaml.Node) (*api.KafkaSpec, error) {
	k := &api.KafkaSpec{}
	var offsets *yaml.Node
	err := d.mapping(n, "kafka", kafkaKeys, func(key string, v *yaml.Node) error {
		field := "kafka." + key
		var err error
		switch key {
		case "brokers":
			var items []item
			if items, err = d.list(v, field); err == nil {
				for _, it := range items {
					k.Brokers = append(k.Brokers, it.text)
				}
			}
		case "topic":
			k.Topic, err = str(v, field)
		case "partitions":
			var items []item
			if items, err = d.list(v, field); err == nil {
				for _, it := range items {
					p, err := it.integer()
					if err != nil {
						return err
					}
					if p < 0 || p > math.MaxInt32 {
						return errAt(it.node, it.field, "%d out of range; must be between 0 and %d", p, math.MaxInt32)
					}
					k.Partitions = append(k.Partitions, int32(p))
				}
			}
		case "offsets":
			offsets = v // needs the partitions, which may come later
		case "default_offset":
			if v.Kind != yaml.ScalarNode {
				return errAt(v, field, offsetHelp)
			}
			k.DefaultOffset = offsetText(v)
			if _, ok := canonicalOffset(k.DefaultOffset); !ok {
				return errAt(v, field, "%q %s", k.DefaultOffset, offsetHelp)
			}
		case "properties":
			k.Properties, err = d.properties(v)
		case "commit_group":
			k.CommitGroup, err = str(v, field)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if offsets != nil {
		if k.Offsets, err = d.offsets(offsets, k.Partitions); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// offsets reads kafka.offsets: a map {partition: offset}, or a list (or
// comma-separated string) aligned with partitions, as in Doris.
func (d *decoder) offsets(n *yaml.Node, partitions []int32) (map[int32]string, error) {
	const field = "kafka.offsets"
	out := make(map[int32]string)
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := resolve(n.Content[i]), resolve(n.Content[i+1])
			p, err := integer(kn, field)
			if err != nil {
				return nil, errAt(kn, field, "key %q must be a partition number", kn.Value)
			}
			f := fmt.Sprintf("%s.%d", field, p)
			if p < 0 || p > math.MaxInt32 {
				return nil, errAt(kn, f, "partition %d out of range; must be between 0 and %d", p, math.MaxInt32)
			}
			if _, dup := out[int32(p)]; dup {
				return nil, errAt(kn, f, "duplicate partition %d", p)
			}
			if vn.Kind != yaml.ScalarNode {
				return nil, errAt(vn, f, offsetHelp)
			}
			d.lines[f] = vn.Line
			out[int32(p)] = offsetText(vn)
		}
		return out, nil
	}
	items, err := d.list(n, field)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(partitions) == 0 {
		return nil, errAt(n, field, "requires kafka.partitions (or give offsets as a map {partition: offset})")
	}
	if len(items) != len(partitions) {
		return nil, errAt(n, field, "%d offsets for %d partitions; a list must have one offset per partition", len(items), len(partitions))
	}
	for i, it := range items {
		text := it.text
		if !it.comma {
			text = offsetText(it.node)
		}
		if _, ok := canonicalOffset(text); !ok {
			return nil, errAt(it.node, it.field, "%q %s", text, offsetHelp)
		}
		d.lines[fmt.Sprintf("%s.%d", field, partitions[i])] = it.node.Line
		out[partitions[i]] = text
	}
	return out, nil
}

// properties reads kafka.properties, a map of strings; scalar values of other
// types are taken as written (30000, true).
func (d *decoder) properties(n *yaml.Node) (map[string]string, error) {
	out := make(map[string]string)
	err := d.mapping(n, "kafka.properties", nil, func(key string, v *yaml.Node) error {
		if isNull(v) {
			out[key] = ""
			return nil
		}
		s, err := str(v, "kafka.properties."+key)
		out[key] = s
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
