package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// Alterable lists the job spec fields an alter may change, by their spec
// (YAML) names. It is the one list: `job alter -f`, an AlterJobRequest's
// update_mask and Doris's ALTER ROUTINE LOAD all go through Alter, which
// refuses any other field by name.
var Alterable = []string{
	"desired_concurrent_number", "max_batch_interval", "max_batch_rows", "max_batch_size",
	"max_error_number", "strict_mode", "max_filter_ratio", "timezone", "lc_time_names", "json_root", "strip_outer_array", "num_as_string", "empty_field_as_null", "enclose", "escape",
	"kafka.properties", "kafka.default_offset", "kafka.brokers", "kafka.topic",
	// Only together with a change of kafka.topic: the new topic's
	// partitions and their start offsets.
	"kafka.partitions", "kafka.offsets",
	// Only while the job is PAUSED (PausedOnly): how records map onto
	// rows, Doris's load_property clauses of ALTER ROUTINE LOAD.
	"column_separator", "columns_mapping", "where", "delete_on", "sequence_column", "jsonpaths",
	"unique_key_update_mode",
	// Only in an update_mask, only while PAUSED, and only to a table of
	// the same database (Doris's ALTER ROUTINE LOAD ... ON table): the
	// caller gives the new table's catalog spec.
	"table",
}

// pausedOnly are the alterable fields that change how a record becomes a
// row (Doris's load properties: COLUMNS TERMINATED BY, COLUMNS, WHERE,
// DELETE ON, ORDER BY; and jsonpaths): as in Doris, only a PAUSED job's.
var pausedOnly = []string{"column_separator", "columns_mapping", "where", "delete_on", "sequence_column", "jsonpaths", "unique_key_update_mode", "table"}

// PausedOnly names the fields next changes from cur that an alter may
// change only while the job is PAUSED (Doris: "Only supports modification
// of PAUSED jobs"), in Alterable order; none: the alter may apply to a
// job in any state.
func PausedOnly(cur, next *api.JobSpec) []string {
	var out []string
	for _, f := range pausedOnly {
		var same bool
		switch f {
		case "column_separator":
			same = cur.GetColumnSeparator() == next.GetColumnSeparator()
		case "columns_mapping":
			same = slices.Equal(cur.GetColumnsMapping(), next.GetColumnsMapping())
		case "where":
			same = cur.GetWhere() == next.GetWhere()
		case "delete_on":
			same = cur.GetDeleteOn() == next.GetDeleteOn()
		case "sequence_column":
			same = cur.GetSequenceColumn() == next.GetSequenceColumn()
		case "jsonpaths":
			same = slices.Equal(cur.GetJsonpaths(), next.GetJsonpaths())
		case "unique_key_update_mode":
			same = strings.EqualFold(cur.GetUniqueKeyUpdateMode(), next.GetUniqueKeyUpdateMode())
		case "table":
			same = cur.GetTable().GetName() == next.GetTable().GetName() && cur.GetTable().GetDatabase() == next.GetTable().GetDatabase()
		}
		if !same {
			out = append(out, f)
		}
	}
	return out
}

// Rebases reports whether next reads another stream than cur (a Kafka
// topic change): the job's progress does not apply to it, and the alter
// must replace it (only while the job is PAUSED).
func Rebases(cur, next *api.JobSpec) bool {
	return cur.GetKafka() != nil && next.GetKafka() != nil && cur.GetKafka().GetTopic() != next.GetKafka().GetTopic()
}

// alterableField reports whether a mask entry names an alterable field
// ("kafka.properties.<key>" is one key of kafka.properties).
func alterableField(f string) bool {
	return slices.Contains(Alterable, f) || strings.HasPrefix(f, "kafka.properties.") && len(f) > len("kafka.properties.")
}

func alterHelp() string {
	return "an alter may change only " + strings.Join(Alterable, ", ") + " (kafka.partitions and kafka.offsets only with kafka.topic; " + strings.Join(pausedOnly, ", ") + " only while PAUSED; table only by name in an update_mask: ALTER ROUTINE LOAD ... ON); name, format and the source family stay (create a new job instead)"
}

// Alter returns cur changed by req, with defaults applied and validated,
// the changes it makes as the journal shows them ("max_batch_rows
// 10->20", "kafka.properties") and whether the source's client settings
// changed (the source must be reopened). cur is never modified.
//
// Without req.UpdateMask, req.Spec is the whole new spec (`job alter -f`):
// fields outside Alterable must equal cur's; kafka.offsets and
// kinesis.positions are ignored (start positions move only by a reset).
// With it, only the masked fields are read from req.Spec (see
// api.AlterJobRequest). A field that may not change is a *FieldError
// naming it.
//
// A secret whose new value is api.Redacted (a spec copied from `job show`,
// where secrets are redacted) keeps cur's value.
func Alter(cur *api.JobSpec, req *api.AlterJobRequest) (next *api.JobSpec, changes []string, reopen bool, err error) {
	switch {
	case len(req.GetUpdateMask()) > 0:
		next, err = applyMask(cur, unredact(cur, req.GetSpec()), req.GetUpdateMask())
	case req.GetSpec() != nil:
		next, err = wholeSpec(cur, unredact(cur, req.GetSpec()))
	default:
		return cur, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	changes = describeChanges(cur, next)
	reopen = !maps.Equal(next.GetKafka().GetProperties(), cur.GetKafka().GetProperties()) ||
		!slices.Equal(next.GetKafka().GetBrokers(), cur.GetKafka().GetBrokers()) || Rebases(cur, next)
	return next, changes, reopen, nil
}

// applyMask sets the masked fields of patch on a copy of cur.
func applyMask(cur, patch *api.JobSpec, mask []string) (*api.JobSpec, error) {
	next := proto.Clone(cur).(*api.JobSpec)
	for _, f := range mask {
		if !alterableField(f) {
			return nil, fieldErr(f, "%s", alterHelp())
		}
		if strings.HasPrefix(f, "kafka") && next.Kafka == nil {
			return nil, fieldErr(f, "the job has no kafka source")
		}
		switch f {
		case "desired_concurrent_number":
			next.DesiredConcurrentNumber = patch.GetDesiredConcurrentNumber()
		case "max_batch_interval":
			next.MaxBatchIntervalMs = patch.GetMaxBatchIntervalMs()
		case "max_batch_rows":
			next.MaxBatchRows = patch.GetMaxBatchRows()
		case "max_batch_size":
			next.MaxBatchSize = patch.GetMaxBatchSize()
		case "max_error_number":
			next.MaxErrorNumber = patch.GetMaxErrorNumber()
		case "strict_mode":
			next.StrictMode = patch.StrictMode
		case "max_filter_ratio":
			next.MaxFilterRatio = patch.MaxFilterRatio
		case "timezone":
			next.Timezone = patch.GetTimezone()
		case "lc_time_names":
			next.LcTimeNames = patch.GetLcTimeNames()
		case "json_root":
			next.JsonRoot = patch.GetJsonRoot()
		case "strip_outer_array":
			next.StripOuterArray = patch.GetStripOuterArray()
		case "num_as_string":
			next.NumAsString = patch.GetNumAsString()
		case "enclose":
			next.Enclose = patch.Enclose
		case "escape":
			next.Escape = patch.GetEscape()
		case "empty_field_as_null":
			next.EmptyFieldAsNull = patch.GetEmptyFieldAsNull()
		case "column_separator":
			next.ColumnSeparator = patch.GetColumnSeparator()
		case "columns_mapping":
			next.ColumnsMapping = slices.Clone(patch.GetColumnsMapping())
		case "where":
			next.Where = patch.GetWhere()
		case "delete_on":
			next.DeleteOn = patch.GetDeleteOn()
		case "sequence_column":
			next.SequenceColumn = patch.GetSequenceColumn()
		case "unique_key_update_mode":
			next.UniqueKeyUpdateMode = patch.GetUniqueKeyUpdateMode()
		case "jsonpaths":
			next.Jsonpaths = slices.Clone(patch.GetJsonpaths())
		case "table":
			if err := retarget(cur, next, patch.GetTable(), mask); err != nil {
				return nil, err
			}
		case "kafka.default_offset":
			next.Kafka.DefaultOffset = patch.GetKafka().GetDefaultOffset()
		case "kafka.brokers":
			next.Kafka.Brokers = slices.Clone(patch.GetKafka().GetBrokers())
		case "kafka.topic":
			next.Kafka.Topic = patch.GetKafka().GetTopic()
		case "kafka.partitions":
			next.Kafka.Partitions = slices.Clone(patch.GetKafka().GetPartitions())
		case "kafka.offsets":
			next.Kafka.Offsets = maps.Clone(patch.GetKafka().GetOffsets())
		case "kafka.properties":
			next.Kafka.Properties = maps.Clone(patch.GetKafka().GetProperties())
		default: // kafka.properties.<key>
			key := strings.TrimPrefix(f, "kafka.properties.")
			v, ok := patch.GetKafka().GetProperties()[key]
			if next.Kafka.Properties == nil {
				next.Kafka.Properties = map[string]string{}
			}
			if ok {
				next.Kafka.Properties[key] = v
			} else {
				delete(next.Kafka.Properties, key)
			}
		}
	}
	if cur.GetKafka() != nil && !Rebases(cur, next) {
		for _, f := range []string{"kafka.partitions", "kafka.offsets"} {
			if slices.Contains(mask, f) {
				return nil, fieldErr(f, "may change only with kafka.topic (a job keeps the partitions of its topic; move their start offsets with reset_offsets while PAUSED)")
			}
		}
	}
	if slices.Contains(mask, "columns_mapping") && !slices.Contains(mask, "jsonpaths") && len(cur.GetColumnsMapping()) == 0 &&
		len(next.GetColumnsMapping()) > 0 && DefaultJSONPaths(cur) {
		// The paths ApplyDefaults gave a JSON job without a mapping (one
		// "$.<column>" per column) read each column by its name; with a
		// mapping and no jsonpaths the fields are read by their own names,
		// which is what the statement asks for.
		next.Jsonpaths = nil
	}
	if Rebases(cur, next) {
		// The old topic's partitions and offsets name partitions of
		// another topic: they do not carry over unless given again.
		if !slices.Contains(mask, "kafka.partitions") {
			next.Kafka.Partitions = nil
		}
		if !slices.Contains(mask, "kafka.offsets") {
			next.Kafka.Offsets = nil
		}
	}
	ApplyDefaults(next)
	if err := ValidateJobSpec(next); err != nil {
		return nil, err
	}
	return next, nil
}

// retarget moves next to table t (its catalog spec), as Doris's ALTER
// ROUTINE LOAD ... ON does: a single-table job, to a table of the same
// database (a job's progress is kept with its rows, in its database). The
// jsonpaths loadnode derived from the old table's columns are derived
// again from the new one's, unless the mask gives jsonpaths.
func retarget(cur, next *api.JobSpec, t *api.TableSpec, mask []string) error {
	switch {
	case t.GetName() == "":
		return fieldErr("table", "names no table")
	case len(cur.GetTables()) > 0:
		return fieldErr("table", "a multi-table job loads the tables its records name; it has no table to change")
	case t.GetDatabase() != cur.GetTable().GetDatabase():
		return fieldErr("table", "%s is in %s, the job's table %s in %s: a job moves only to a table of its own database, where its progress is kept with its rows",
			t.GetName(), databaseText(t.GetDatabase()), cur.GetTable().GetName(), databaseText(cur.GetTable().GetDatabase()))
	}
	next.Table = proto.Clone(t).(*api.TableSpec)
	if !slices.Contains(mask, "jsonpaths") && DefaultJSONPaths(cur) {
		next.Jsonpaths = nil // ApplyDefaults derives the new table's
	}
	return nil
}

// databaseText names a table's database for errors.
func databaseText(db string) string {
	if db == "" {
		return "the embedded store"
	}
	return "database " + db
}

// DefaultJSONPaths reports whether s's jsonpaths are those ApplyDefaults
// gives a JSON job without a column mapping (one "$.<column>" per
// column, in order).
func DefaultJSONPaths(s *api.JobSpec) bool {
	cols := s.GetTable().GetColumns()
	if len(cols) == 0 || len(s.GetJsonpaths()) != len(cols) {
		return false
	}
	for i, c := range cols {
		if s.GetJsonpaths()[i] != "$."+c.GetName() {
			return false
		}
	}
	return true
}

// wholeSpec checks a whole new spec against cur.
func wholeSpec(cur, in *api.JobSpec) (*api.JobSpec, error) {
	next := proto.Clone(in).(*api.JobSpec)
	if len(cur.GetTables()) > 0 && len(next.GetTables()) == len(cur.GetTables()) {
		// A multi-table spec names its tables (job show -o yaml): the
		// same names are the same tables.
		same := true
		for i, t := range next.GetTables() {
			same = same && t.GetName() == cur.GetTables()[i].GetName()
		}
		if same {
			next.Tables = cur.Tables
			next.Table = cur.Table
			next = proto.Clone(next).(*api.JobSpec)
		}
	}
	ApplyDefaults(next)
	if err := ValidateJobSpec(next); err != nil {
		return nil, err
	}
	// Fields that may not change: compare with the alterable ones (and
	// the ignored start positions) copied over.
	probe := proto.Clone(next).(*api.JobSpec)
	probe.DesiredConcurrentNumber, probe.MaxBatchIntervalMs = cur.GetDesiredConcurrentNumber(), cur.GetMaxBatchIntervalMs()
	probe.MaxBatchRows, probe.MaxBatchSize, probe.MaxErrorNumber = cur.GetMaxBatchRows(), cur.GetMaxBatchSize(), cur.GetMaxErrorNumber()
	probe.StrictMode, probe.MaxFilterRatio, probe.Timezone = cur.StrictMode, cur.MaxFilterRatio, cur.GetTimezone()
	probe.LcTimeNames = cur.GetLcTimeNames()
	probe.JsonRoot, probe.EmptyFieldAsNull, probe.StripOuterArray = cur.GetJsonRoot(), cur.GetEmptyFieldAsNull(), cur.GetStripOuterArray()
	probe.NumAsString = cur.GetNumAsString()
	probe.Enclose, probe.Escape = cur.Enclose, cur.GetEscape()
	probe.ColumnSeparator, probe.ColumnsMapping, probe.Where = cur.GetColumnSeparator(), cur.GetColumnsMapping(), cur.GetWhere()
	probe.DeleteOn, probe.SequenceColumn, probe.Jsonpaths = cur.GetDeleteOn(), cur.GetSequenceColumn(), cur.GetJsonpaths()
	probe.UniqueKeyUpdateMode = cur.GetUniqueKeyUpdateMode()
	rebase := Rebases(cur, next)
	if probe.Kafka != nil && cur.Kafka != nil {
		probe.Kafka.Properties, probe.Kafka.DefaultOffset, probe.Kafka.Offsets = cur.GetKafka().GetProperties(), cur.GetKafka().GetDefaultOffset(), cur.GetKafka().GetOffsets()
		probe.Kafka.Brokers, probe.Kafka.Topic = cur.GetKafka().GetBrokers(), cur.GetKafka().GetTopic()
		if rebase {
			probe.Kafka.Partitions = cur.GetKafka().GetPartitions()
		}
	}
	if probe.Kinesis != nil {
		probe.Kinesis.Positions = cur.GetKinesis().GetPositions()
	}
	if !proto.Equal(probe, cur) {
		return nil, fieldErr(firstDifference(probe, cur), "%s", alterHelp())
	}
	if next.Kafka != nil && !rebase {
		// The same topic: its start offsets move only by a reset. A new
		// topic starts where next says.
		next.Kafka.Offsets = cur.GetKafka().GetOffsets()
	}
	if next.Kinesis != nil {
		next.Kinesis.Positions = cur.GetKinesis().GetPositions()
	}
	return next, nil
}

// describeChanges lists what changes from old to next, in Alterable order.
func describeChanges(old, next *api.JobSpec) []string {
	var changed []string
	if next.GetDesiredConcurrentNumber() != old.GetDesiredConcurrentNumber() {
		changed = append(changed, fmt.Sprintf("desired_concurrent_number %d->%d", old.GetDesiredConcurrentNumber(), next.GetDesiredConcurrentNumber()))
	}
	if next.GetMaxBatchIntervalMs() != old.GetMaxBatchIntervalMs() {
		changed = append(changed, fmt.Sprintf("max_batch_interval %s->%s", time.Duration(old.GetMaxBatchIntervalMs())*time.Millisecond, time.Duration(next.GetMaxBatchIntervalMs())*time.Millisecond))
	}
	if next.GetStrictMode() != old.GetStrictMode() || (next.StrictMode == nil) != (old.StrictMode == nil) {
		changed = append(changed, fmt.Sprintf("strict_mode %v->%v", old.StrictMode == nil || old.GetStrictMode(), next.StrictMode == nil || next.GetStrictMode()))
	}
	if next.GetMaxFilterRatio() != old.GetMaxFilterRatio() || (next.MaxFilterRatio == nil) != (old.MaxFilterRatio == nil) {
		changed = append(changed, "max_filter_ratio")
	}
	if next.GetEnclose() != old.GetEnclose() || (next.Enclose == nil) != (old.Enclose == nil) {
		changed = append(changed, fmt.Sprintf("enclose %q->%q", old.GetEnclose(), next.GetEnclose()))
	}
	if next.GetEscape() != old.GetEscape() {
		changed = append(changed, fmt.Sprintf("escape %q->%q", old.GetEscape(), next.GetEscape()))
	}
	if next.GetJsonRoot() != old.GetJsonRoot() {
		changed = append(changed, fmt.Sprintf("json_root %q->%q", old.GetJsonRoot(), next.GetJsonRoot()))
	}
	if next.GetTable().GetName() != old.GetTable().GetName() {
		changed = append(changed, fmt.Sprintf("table %s->%s", old.GetTable().GetName(), next.GetTable().GetName()))
	}
	if !strings.EqualFold(next.GetUniqueKeyUpdateMode(), old.GetUniqueKeyUpdateMode()) {
		changed = append(changed, fmt.Sprintf("unique_key_update_mode %q->%q", old.GetUniqueKeyUpdateMode(), next.GetUniqueKeyUpdateMode()))
	}
	if next.GetStripOuterArray() != old.GetStripOuterArray() {
		changed = append(changed, fmt.Sprintf("strip_outer_array %v->%v", old.GetStripOuterArray(), next.GetStripOuterArray()))
	}
	if next.GetNumAsString() != old.GetNumAsString() {
		changed = append(changed, fmt.Sprintf("num_as_string %v->%v", old.GetNumAsString(), next.GetNumAsString()))
	}
	if next.GetEmptyFieldAsNull() != old.GetEmptyFieldAsNull() {
		changed = append(changed, fmt.Sprintf("empty_field_as_null %v->%v", old.GetEmptyFieldAsNull(), next.GetEmptyFieldAsNull()))
	}
	if next.GetTimezone() != old.GetTimezone() {
		changed = append(changed, fmt.Sprintf("timezone %q->%q", old.GetTimezone(), next.GetTimezone()))
	}
	if next.GetLcTimeNames() != old.GetLcTimeNames() {
		changed = append(changed, fmt.Sprintf("lc_time_names %q->%q", old.GetLcTimeNames(), next.GetLcTimeNames()))
	}
	if next.GetMaxBatchRows() != old.GetMaxBatchRows() {
		changed = append(changed, fmt.Sprintf("max_batch_rows %d->%d", old.GetMaxBatchRows(), next.GetMaxBatchRows()))
	}
	if next.GetMaxBatchSize() != old.GetMaxBatchSize() {
		changed = append(changed, fmt.Sprintf("max_batch_size %d->%d", old.GetMaxBatchSize(), next.GetMaxBatchSize()))
	}
	if next.GetMaxErrorNumber() != old.GetMaxErrorNumber() {
		changed = append(changed, fmt.Sprintf("max_error_number %d->%d", old.GetMaxErrorNumber(), next.GetMaxErrorNumber()))
	}
	if next.GetColumnSeparator() != old.GetColumnSeparator() {
		changed = append(changed, fmt.Sprintf("column_separator %q->%q", old.GetColumnSeparator(), next.GetColumnSeparator()))
	}
	if !slices.Equal(next.GetColumnsMapping(), old.GetColumnsMapping()) {
		changed = append(changed, fmt.Sprintf("columns_mapping (%s)->(%s)", strings.Join(old.GetColumnsMapping(), ", "), strings.Join(next.GetColumnsMapping(), ", ")))
	}
	if !slices.Equal(next.GetJsonpaths(), old.GetJsonpaths()) {
		changed = append(changed, fmt.Sprintf("jsonpaths %q->%q", old.GetJsonpaths(), next.GetJsonpaths()))
	}
	if next.GetWhere() != old.GetWhere() {
		changed = append(changed, fmt.Sprintf("where %q->%q", old.GetWhere(), next.GetWhere()))
	}
	if next.GetDeleteOn() != old.GetDeleteOn() {
		changed = append(changed, fmt.Sprintf("delete_on %q->%q", old.GetDeleteOn(), next.GetDeleteOn()))
	}
	if next.GetSequenceColumn() != old.GetSequenceColumn() {
		changed = append(changed, fmt.Sprintf("sequence_column %q->%q", old.GetSequenceColumn(), next.GetSequenceColumn()))
	}
	if !maps.Equal(next.GetKafka().GetProperties(), old.GetKafka().GetProperties()) {
		changed = append(changed, "kafka.properties")
	}
	if !slices.Equal(next.GetKafka().GetBrokers(), old.GetKafka().GetBrokers()) {
		changed = append(changed, fmt.Sprintf("kafka.brokers %s->%s", strings.Join(old.GetKafka().GetBrokers(), ","), strings.Join(next.GetKafka().GetBrokers(), ",")))
	}
	if next.GetKafka().GetTopic() != old.GetKafka().GetTopic() {
		changed = append(changed, fmt.Sprintf("kafka.topic %s->%s", old.GetKafka().GetTopic(), next.GetKafka().GetTopic()))
	}
	if !slices.Equal(next.GetKafka().GetPartitions(), old.GetKafka().GetPartitions()) {
		changed = append(changed, fmt.Sprintf("kafka.partitions %v->%v", old.GetKafka().GetPartitions(), next.GetKafka().GetPartitions()))
	}
	if Rebases(old, next) && len(next.GetKafka().GetOffsets()) > 0 {
		changed = append(changed, "kafka.offsets")
	}
	if next.GetKafka().GetDefaultOffset() != old.GetKafka().GetDefaultOffset() {
		changed = append(changed, fmt.Sprintf("kafka.default_offset %s->%s", old.GetKafka().GetDefaultOffset(), next.GetKafka().GetDefaultOffset()))
	}
	return changed
}

// firstDifference names the first field, in SPEC.md order, in which a and
// b differ ("spec" when none of the named ones does).
func firstDifference(a, b *api.JobSpec) string {
	fields := []struct {
		name string
		get  func(*api.JobSpec) proto.Message
	}{
		{"table", func(s *api.JobSpec) proto.Message { return s.GetTable() }},
		{"kafka.brokers", func(s *api.JobSpec) proto.Message {
			return &api.KafkaSpec{Brokers: s.GetKafka().GetBrokers()}
		}},
		{"kafka.topic", func(s *api.JobSpec) proto.Message { return &api.KafkaSpec{Topic: s.GetKafka().GetTopic()} }},
		{"kafka.partitions", func(s *api.JobSpec) proto.Message {
			return &api.KafkaSpec{Partitions: s.GetKafka().GetPartitions()}
		}},
		{"kafka", func(s *api.JobSpec) proto.Message { return s.GetKafka() }},
		{"kinesis", func(s *api.JobSpec) proto.Message { return s.GetKinesis() }},
		{"schema_registry", func(s *api.JobSpec) proto.Message { return s.GetSchemaRegistry() }},
	}
	switch {
	case a.GetName() != b.GetName():
		return "name"
	case a.GetFormat() != b.GetFormat():
		return "format"
	case a.GetColumnSeparator() != b.GetColumnSeparator():
		return "column_separator"
	case !slices.Equal(a.GetJsonpaths(), b.GetJsonpaths()):
		return "jsonpaths"
	}
	for _, f := range fields {
		if !proto.Equal(f.get(a), f.get(b)) {
			return f.name
		}
	}
	return "spec"
}

// unredact returns in with every secret that reads api.Redacted set back to
// cur's value (in itself when there is none; in is never modified).
func unredact(cur, in *api.JobSpec) *api.JobSpec {
	redacted := func(v string) bool { return v == api.Redacted }
	found := false
	for k, v := range in.GetKafka().GetProperties() {
		found = found || redacted(v) && api.SecretProperty(k)
	}
	for k, v := range in.GetErrorTopicProperties() {
		found = found || redacted(v) && api.SecretProperty(k)
	}
	found = found || redacted(in.GetKinesis().GetSecretAccessKey()) || redacted(in.GetKinesis().GetSessionToken())
	if !found {
		return in
	}
	out := proto.Clone(in).(*api.JobSpec)
	if k := out.GetKafka(); k != nil {
		for key, v := range k.Properties {
			if redacted(v) && api.SecretProperty(key) {
				if old, ok := cur.GetKafka().GetProperties()[key]; ok {
					k.Properties[key] = old
				}
			}
		}
	}
	for key, v := range out.ErrorTopicProperties {
		if redacted(v) && api.SecretProperty(key) {
			if old, ok := cur.GetErrorTopicProperties()[key]; ok {
				out.ErrorTopicProperties[key] = old
			}
		}
	}
	if k := out.GetKinesis(); k != nil {
		if redacted(k.SecretAccessKey) {
			k.SecretAccessKey = cur.GetKinesis().GetSecretAccessKey()
		}
		if redacted(k.SessionToken) {
			k.SessionToken = cur.GetKinesis().GetSessionToken()
		}
	}
	return out
}
