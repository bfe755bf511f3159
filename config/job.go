package config

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// Formats of the records a job reads.
const (
	FormatCSV  = "csv"
	FormatJSON = "json"
	// Doris's csv family: csv_with_names and csv_with_names_and_types
	// skip 1 and 2 header lines of each record; hive_text is csv with the
	// byte 0x01 as its default separator.
	FormatCSVWithNames         = "csv_with_names"
	FormatCSVWithNamesAndTypes = "csv_with_names_and_types"
	FormatHiveText             = "hive_text"
)

// CSVFormat reports whether format f (lower case) is one of the csv family:
// csv, csv_with_names, csv_with_names_and_types, hive_text.
func CSVFormat(f string) bool {
	return f == FormatCSV || f == FormatCSVWithNames || f == FormatCSVWithNamesAndTypes || f == FormatHiveText
}

// formatHelp names the formats a spec may have.
const formatHelp = "csv, csv_with_names, csv_with_names_and_types, hive_text, json, avro or protobuf"

// hiveTextSeparator is format hive_text's default column separator (Hive's).
const hiveTextSeparator = "\x01"

// Symbolic Kafka start offsets. The lower-case spellings are accepted on input;
// ApplyDefaults rewrites them to these.
const (
	OffsetBeginning = "OFFSET_BEGINNING"
	OffsetEnd       = "OFFSET_END"
)

// Job spec defaults, applied by ApplyDefaults to fields left at their zero
// value. They follow Doris Routine Load.
const (
	DefaultFormat                  = FormatCSV
	DefaultColumnSeparator         = ","
	DefaultDesiredConcurrentNumber = 3
	DefaultMaxBatchInterval        = 10 * time.Second
	DefaultMaxBatchRows            = 200_000
	DefaultMaxBatchSize            = 100 << 20 // bytes (100 MiB)
	DefaultMaxErrorNumber          = 0
	DefaultKafkaOffset             = OffsetEnd
)

// MinMaxBatchInterval is the least max_batch_interval a spec may ask.
const MinMaxBatchInterval = minMaxBatchInterval

// Job spec limits (inclusive).
const (
	minDesiredConcurrentNumber = 1
	maxDesiredConcurrentNumber = 64
	minMaxBatchInterval        = 100 * time.Millisecond
	maxMaxBatchInterval        = time.Hour
	minMaxBatchRows            = 1
	maxMaxBatchRows            = 10_000_000
	minMaxBatchSize            = 1 << 10  // 1 KiB
	maxMaxBatchSize            = 10 << 30 // 10 GiB

	// Upper bounds on what a spec lists (docs/limits.md).
	maxColumns    = 1024
	maxProperties = 256
	maxListed     = 65536 // kafka.partitions, kafka.offsets, kinesis.shards, kinesis.positions
)

var (
	// namePattern is a job's name. tableNamePattern is a table's or a
	// column's: no '-', the rule of table.NewSchema, which every sink
	// shares; a spec is refused here already, naming its field.
	namePattern       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,127}$`)
	tableNamePattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	columnNamePattern = tableNamePattern
	topicPattern      = regexp.MustCompile(`^[A-Za-z0-9._-]{1,249}$`)
	hostPattern       = regexp.MustCompile(`^[A-Za-z0-9._:%-]+$`) // names, IPv4, IPv6 (with zone)
	propertyPattern   = regexp.MustCompile(`^[A-Za-z0-9._-]{1,255}$`)
)

// canonicalOffset returns the canonical spelling of a start offset: a
// non-negative decimal integer without leading zeros, OFFSET_BEGINNING or
// OFFSET_END. ok is false when s is none of these.
func canonicalOffset(s string) (canon string, ok bool) {
	switch s {
	case OffsetBeginning, "offset_beginning":
		return OffsetBeginning, true
	case OffsetEnd, "offset_end":
		return OffsetEnd, true
	}
	if ms, ok := strings.CutPrefix(s, OffsetTimePrefix); ok {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil || !isDigits(ms) {
			return "", false
		}
		return OffsetTimePrefix + strconv.FormatInt(n, 10), true
	}
	if !isDigits(s) {
		return "", false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// OffsetTimePrefix starts a start offset by time, "TIME:<epoch ms>": the
// first offset whose record timestamp is at or after it (Doris's
// kafka_offsets given as a datetime).
const OffsetTimePrefix = "TIME:"

const offsetHelp = "must be a non-negative integer, OFFSET_BEGINNING, OFFSET_END or TIME:<epoch ms>"

// ApplyDefaults fills the unset (zero) fields of s with their defaults and
// rewrites accepted alternative spellings to their canonical form: format in
// lower case, start offsets as OFFSET_BEGINNING / OFFSET_END / a decimal
// number. For format json without jsonpaths it sets one path "$.<column>" per
// column (Doris matches JSON keys by column name in that case). Values that
// are invalid are left as they are for ValidateJobSpec to report.
// ApplyDefaults is idempotent; a nil s is a no-op.
func ApplyDefaults(s *api.JobSpec) {
	if s == nil {
		return
	}
	if len(s.Tables) > 0 && s.Table == nil && s.Tables[0] != nil {
		// A multi-table job's table is the first of its tables.
		s.Table = proto.Clone(s.Tables[0]).(*api.TableSpec)
	}
	if s.Format == "" {
		s.Format = DefaultFormat
	} else if f := strings.ToLower(s.Format); CSVFormat(f) || f == FormatJSON || binaryFormat(f) {
		s.Format = f
	}
	switch s.Format {
	case FormatCSV, FormatCSVWithNames, FormatCSVWithNamesAndTypes, FormatHiveText:
		if s.ColumnSeparator == "" {
			s.ColumnSeparator = DefaultColumnSeparator
			if s.Format == FormatHiveText {
				s.ColumnSeparator = hiveTextSeparator
			}
		}
	case FormatJSON, FormatAvro, FormatProtobuf:
		// With a column mapping, the fields are read by their own names.
		if len(s.Jsonpaths) == 0 && s.Table != nil && len(s.ColumnsMapping) == 0 {
			for _, c := range s.Table.Columns {
				s.Jsonpaths = append(s.Jsonpaths, "$."+c.GetName())
			}
		}
	}
	if s.DesiredConcurrentNumber == 0 {
		s.DesiredConcurrentNumber = DefaultDesiredConcurrentNumber
	}
	if s.MaxBatchIntervalMs == 0 {
		s.MaxBatchIntervalMs = DefaultMaxBatchInterval.Milliseconds()
	}
	if s.MaxBatchRows == 0 {
		s.MaxBatchRows = DefaultMaxBatchRows
	}
	if s.MaxBatchSize == 0 {
		s.MaxBatchSize = DefaultMaxBatchSize
	}
	applyKinesisDefaults(s.Kinesis)
	if k := s.Kafka; k != nil {
		if k.DefaultOffset == "" {
			k.DefaultOffset = DefaultKafkaOffset
		} else if c, ok := canonicalOffset(k.DefaultOffset); ok {
			k.DefaultOffset = c
		}
		for p, off := range k.Offsets {
			if c, ok := canonicalOffset(off); ok {
				k.Offsets[p] = c
			}
		}
	}
}

// ValidateJobSpec checks a complete spec (ApplyDefaults already applied) and
// returns a *FieldError for the first problem, in the order of the fields in
// SPEC.md. It does not modify s.
func ValidateJobSpec(s *api.JobSpec) error {
	if s == nil {
		return fieldErr("", "job spec required")
	}
	if err := validateName("name", s.Name, namePattern); err != nil {
		return err
	}
	// A multi-table spec may name its tables only (YAML tables: [a, b]):
	// the create fills them from the catalog, and validates them then.
	if len(s.Tables) == 0 || len(s.Table.GetColumns()) > 0 {
		if err := validateTable(s.Table); err != nil {
			return err
		}
	}
	if err := validateTables(s); err != nil {
		return err
	}
	if err := validateFormat(s); err != nil {
		return err
	}
	if err := checkRange("desired_concurrent_number", int64(s.DesiredConcurrentNumber), minDesiredConcurrentNumber, maxDesiredConcurrentNumber); err != nil {
		return err
	}
	if err := checkInterval(s.MaxBatchIntervalMs); err != nil {
		return err
	}
	if err := checkRange("max_batch_rows", s.MaxBatchRows, minMaxBatchRows, maxMaxBatchRows); err != nil {
		return err
	}
	if err := checkSize(s.MaxBatchSize); err != nil {
		return err
	}
	if s.MaxErrorNumber < 0 {
		return fieldErr("max_error_number", "must be >= 0")
	}
	if r := s.GetMaxFilterRatio(); s.MaxFilterRatio != nil && !(r >= 0 && r <= 1) {
		return fieldErr("max_filter_ratio", "must be from 0 to 1")
	}
	if _, err := LoadTimezone(s.Timezone); err != nil {
		return fieldErr("timezone", "%v", err)
	}
	if _, err := table.LCTimeNames(s.LcTimeNames); err != nil {
		return fieldErr("lc_time_names", "%v", err)
	}
	switch {
	case s.Kafka != nil && s.Kinesis != nil:
		return fieldErr("kinesis", "a job has exactly one source: kafka or kinesis, not both")
	case s.Kinesis != nil:
		if err := validateKinesis(s.Kinesis); err != nil {
			return err
		}
	default:
		if err := validateKafka(s.Kafka); err != nil {
			return err
		}
		if err := validateCommitGroup(s.Kafka); err != nil {
			return err
		}
	}
	if err := validateErrorTopic(s); err != nil {
		return err
	}
	return nil
}

func validateName(field, name string, re *regexp.Regexp) *FieldError {
	if name == "" {
		return fieldErr(field, "required")
	}
	if !re.MatchString(name) {
		return fieldErr(field, "%q must match %s", name, re)
	}
	return nil
}

func validateTable(t *api.TableSpec) *FieldError {
	if t == nil {
		return fieldErr("table", "required")
	}
	if name, part, ok := table.SplitTemporaryPartition(t.Name); ok {
		// A temporary partition's rows, a table of their own in the
		// catalog (table.TemporaryPartitionTable).
		if err := validateName("table.name", name, tableNamePattern); err != nil {
			return err
		}
		if err := validateName("table.name", part, tableNamePattern); err != nil {
			return err
		}
	} else if err := validateName("table.name", t.Name, tableNamePattern); err != nil {
		return err
	}
	if t.Database != "" && !isIdentifier(t.Database) {
		return fieldErr("table.database", "invalid name %q: want letters, digits and _, not starting with a digit", t.Database)
	}
	if _, ok := api.TableModel_name[int32(t.Model)]; !ok {
		return fieldErr("table.model", "unknown model %v", t.Model)
	}
	if t.Model != api.TableModel_DUPLICATE && len(t.KeyColumns) == 0 {
		return fieldErr("table.keys", "a %s table needs key columns", strings.ToLower(t.Model.String()))
	}
	if len(t.Columns) == 0 {
		return fieldErr("table.columns", "at least one column required")
	}
	if len(t.Columns) > maxColumns {
		return fieldErr("table.columns", "%d columns; at most %d", len(t.Columns), maxColumns)
	}
	seen := make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		f := fmt.Sprintf("table.columns[%d]", i)
		if c == nil {
			return fieldErr(f, "required")
		}
		if err := validateName(f+".name", c.Name, columnNamePattern); err != nil {
			return err
		}
		key := strings.ToLower(c.Name)
		if j, dup := seen[key]; dup {
			return fieldErr(f+".name", "duplicate column %q (also table.columns[%d]; names are case-insensitive)", c.Name, j)
		}
		seen[key] = i
		_, known := api.ColumnType_name[int32(c.Type)]
		switch {
		case c.Type == api.ColumnType_COLUMN_TYPE_UNSPECIFIED:
			return fieldErr(f+".type", "required")
		case !known:
			return fieldErr(f+".type", "unknown column type %d", int32(c.Type))
		}
	}
	return nil
}

func validateFormat(s *api.JobSpec) *FieldError {
	if s.SkipLines < 0 {
		return fieldErr("skip_lines", "%d: must be an integer >= 0", s.SkipLines)
	}
	if !CSVFormat(s.Format) && s.Format != "" {
		switch {
		case s.SkipLines != 0:
			return fieldErr("skip_lines", "only with a csv format")
		case s.TrimDoubleQuotes:
			return fieldErr("trim_double_quotes", "only with a csv format")
		}
	}
	if s.NumAsString && s.Format != FormatJSON {
		return fieldErr("num_as_string", "only with format json")
	}
	switch s.Format {
	case FormatCSV, FormatCSVWithNames, FormatCSVWithNamesAndTypes, FormatHiveText:
		if s.ColumnSeparator == "" {
			return fieldErr("column_separator", "must not be empty")
		}
		if strings.ContainsAny(s.ColumnSeparator, "\n\r\"") {
			return fieldErr("column_separator", "must not contain a newline, carriage return or double quote")
		}
		if len(s.Jsonpaths) > 0 {
			return fieldErr("jsonpaths", "only with format json")
		}
		if s.JsonRoot != "" {
			return fieldErr("json_root", "only with format json")
		}
		if s.StripOuterArray {
			return fieldErr("strip_outer_array", "only with format json")
		}
		if len(s.GetEnclose()) > 1 {
			return fieldErr("enclose", "must be one character (or empty for none)")
		}
		if len(s.Escape) > 1 {
			return fieldErr("escape", "must be one character (or empty for none)")
		}
	case FormatJSON, FormatAvro, FormatProtobuf:
		if s.ColumnSeparator != "" {
			return fieldErr("column_separator", "only with format csv")
		}
		if s.EmptyFieldAsNull {
			return fieldErr("empty_field_as_null", "only with format csv")
		}
		if s.GetEnclose() != "" || s.Escape != "" {
			return fieldErr("enclose", "enclose and escape apply to the csv format only")
		}
		if s.StripOuterArray && s.Format != FormatJSON {
			return fieldErr("strip_outer_array", "only with format json (a %s record decodes to one object)", s.Format)
		}
		if n := len(s.Table.GetColumns()); len(s.Jsonpaths) != n && len(s.ColumnsMapping) == 0 {
			return fieldErr("jsonpaths", "%d paths for %d columns; need one per column", len(s.Jsonpaths), n)
		}
		for i, p := range s.Jsonpaths {
			if !strings.HasPrefix(p, "$") {
				return fieldErr(fmt.Sprintf("jsonpaths[%d]", i), "%q must start with \"$\"", p)
			}
		}
	case "":
		return fieldErr("format", "required")
	default:
		return fieldErr("format", "%q must be "+formatHelp, s.Format)
	}
	return validateRegistry(s)
}

func checkRange(field string, v, lo, hi int64) *FieldError {
	if v < lo || v > hi {
		return fieldErr(field, "%d out of range; must be between %d and %d", v, lo, hi)
	}
	return nil
}

func checkInterval(ms int64) *FieldError {
	if ms < minMaxBatchInterval.Milliseconds() || ms > maxMaxBatchInterval.Milliseconds() {
		return fieldErr("max_batch_interval", "%dms out of range; must be between 100ms and 1h", ms)
	}
	return nil
}

func checkSize(b int64) *FieldError {
	return checkBytes("max_batch_size", b, minMaxBatchSize, maxMaxBatchSize)
}

// checkBytes checks that a byte size is within lo..hi.
func checkBytes(field string, b, lo, hi int64) *FieldError {
	if b < lo || b > hi {
		return fieldErr(field, "%d bytes out of range; must be between %s (%d) and %s (%d)", b, formatSize(lo), lo, formatSize(hi), hi)
	}
	return nil
}

func validateKafka(k *api.KafkaSpec) *FieldError {
	if k == nil {
		return fieldErr("kafka", "a source is required: kafka or kinesis")
	}
	if len(k.Brokers) == 0 {
		return fieldErr("kafka.brokers", "required")
	}
	for i, b := range k.Brokers {
		if err := validateBroker(b); err != "" {
			return fieldErr(fmt.Sprintf("kafka.brokers[%d]", i), "%q %s", b, err)
		}
	}
	if k.Topic == "" {
		return fieldErr("kafka.topic", "required")
	}
	if !topicPattern.MatchString(k.Topic) || k.Topic == "." || k.Topic == ".." {
		return fieldErr("kafka.topic", "%q is not a valid Kafka topic name (1-249 of [A-Za-z0-9._-], not \".\" or \"..\")", k.Topic)
	}
	if len(k.Partitions) > maxListed {
		return fieldErr("kafka.partitions", "%d partitions listed; at most %d (list none to read them all)", len(k.Partitions), maxListed)
	}
	if len(k.Offsets) > maxListed {
		return fieldErr("kafka.offsets", "%d offsets; at most %d", len(k.Offsets), maxListed)
	}
	seen := make(map[int32]int, len(k.Partitions))
	for i, p := range k.Partitions {
		f := fmt.Sprintf("kafka.partitions[%d]", i)
		if p < 0 {
			return fieldErr(f, "%d must be >= 0", p)
		}
		if j, dup := seen[p]; dup {
			return fieldErr(f, "duplicate partition %d (also kafka.partitions[%d])", p, j)
		}
		seen[p] = i
	}
	keys := make([]int32, 0, len(k.Offsets))
	for p := range k.Offsets {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		f := fmt.Sprintf("kafka.offsets.%d", p)
		if p < 0 {
			return fieldErr(f, "partition %d must be >= 0", p)
		}
		if _, in := seen[p]; len(k.Partitions) > 0 && !in {
			return fieldErr(f, "partition %d is not in kafka.partitions", p)
		}
		if _, ok := canonicalOffset(k.Offsets[p]); !ok {
			return fieldErr(f, "%q %s", k.Offsets[p], offsetHelp)
		}
	}
	if _, ok := canonicalOffset(k.DefaultOffset); !ok {
		return fieldErr("kafka.default_offset", "%q %s", k.DefaultOffset, offsetHelp)
	}
	if len(k.Properties) > maxProperties {
		return fieldErr("kafka.properties", "%d properties; at most %d", len(k.Properties), maxProperties)
	}
	keys2 := make([]string, 0, len(k.Properties))
	for key := range k.Properties {
		keys2 = append(keys2, key)
	}
	slices.Sort(keys2)
	for _, key := range keys2 {
		if key == "" {
			return fieldErr("kafka.properties", "empty property name")
		}
		if !propertyPattern.MatchString(key) {
			return fieldErr("kafka.properties", "property name %q must match %s", key, propertyPattern)
		}
	}
	return nil
}

// validateBroker returns "" when b is host:port with a non-empty host and a
// port in 1..65535, otherwise what is wrong with it.
func validateBroker(b string) string {
	host, port, err := net.SplitHostPort(b)
	if err != nil {
		return "must be host:port"
	}
	if host == "" {
		return "has no host"
	}
	if !hostPattern.MatchString(host) {
		return "has an invalid host"
	}
	if n, err := strconv.Atoi(port); err != nil || !isDigits(port) || n < 1 || n > 65535 {
		return "has an invalid port (must be 1-65535)"
	}
	return ""
}

// isDigits reports whether s is a non-empty string of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// LoadTimezone resolves a job's timezone (see table.LoadTimezone).
func LoadTimezone(tz string) (*time.Location, error) { return table.LoadTimezone(tz) }

// validateTables checks a multi-table job's tables (JobSpec.tables): named,
// distinct, table the first of them, in one database, DUPLICATE where the
// model is known, and none of the settings that name one table's columns.
func validateTables(s *api.JobSpec) error {
	if len(s.Tables) == 0 {
		return nil
	}
	if len(s.Tables) > maxListed {
		return fieldErr("tables", "%d tables; at most %d", len(s.Tables), maxListed)
	}
	seen := map[string]bool{}
	for i, t := range s.Tables {
		f := fmt.Sprintf("tables[%d]", i)
		if err := validateName(f, t.GetName(), tableNamePattern); err != nil {
			return err
		}
		if seen[t.GetName()] {
			return fieldErr(f, "table %s listed twice", t.GetName())
		}
		seen[t.GetName()] = true
		if len(t.GetColumns()) > 0 {
			if err := validateTable(t); err != nil {
				return err
			}
		}
		if t.GetDatabase() != s.Tables[0].GetDatabase() {
			return fieldErr(f, "table %s is in database %q, table %s in %q: a multi-table job's tables share one database (one atomic commit)", t.GetName(), t.GetDatabase(), s.Tables[0].GetName(), s.Tables[0].GetDatabase())
		}
		if t.GetModel() != api.TableModel_DUPLICATE {
			return fieldErr(f, "table %s is a %s table: a multi-table job loads DUPLICATE tables only", t.GetName(), t.GetModel())
		}
	}
	if s.Table.GetName() != s.Tables[0].GetName() || s.Table.GetDatabase() != s.Tables[0].GetDatabase() {
		return fieldErr("table", "a multi-table job's table is the first of its tables (%s), not %s", s.Tables[0].GetName(), s.Table.GetName())
	}
	for _, c := range []struct {
		field string
		set   bool
	}{
		{"columns_mapping", len(s.GetColumnsMapping()) > 0}, {"where", s.GetWhere() != ""}, {"jsonpaths", len(s.GetJsonpaths()) > 0},
		{"merge_type", s.GetMergeType() != api.MergeType_APPEND}, {"delete_on", s.GetDeleteOn() != ""},
		{"sequence_column", s.GetSequenceColumn() != ""}, {"partial_columns", s.GetPartialColumns()}, {"unique_key_update_mode", s.GetUniqueKeyUpdateMode() != ""},
		{"schema_registry", s.GetSchemaRegistry() != nil}, {"target_partitions", len(s.GetTargetPartitions()) > 0},
	} {
		if c.set {
			return fieldErr(c.field, "not supported with tables (a multi-table load): each record's fields map onto its own table's columns in order (CSV) or by name (JSON)")
		}
	}
	return nil
}
