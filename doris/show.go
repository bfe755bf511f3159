package doris

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/table"
)

// The answers of SHOW ROUTINE LOAD, SHOW ROUTINE LOAD TASK and SHOW CREATE
// ROUTINE LOAD, shaped as Doris shapes them from what a node tells of a
// job (api.JobInfo): Doris's columns in Doris's order, so that a tool that
// reads a row by position ([8] State, [14] Statistic, [17]
// ReasonOfStateChanged) reads the same cell. A figure loadnode does not
// have is left out of a JSON cell rather than made up.

// RoutineLoadColumns are the columns of SHOW [ALL] ROUTINE LOAD, as Doris
// (ShowRoutineLoadCommand) has them.
var RoutineLoadColumns = []string{
	"Id", "Name", "CreateTime", "PauseTime", "EndTime", "DbName", "TableName",
	"IsMultiTable", "State", "DataSourceType", "CurrentTaskNum", "JobProperties",
	"DataSourceProperties", "CustomProperties", "Statistic", "Progress", "Lag",
	"ReasonOfStateChanged", "ErrorLogUrls", "OtherMsg", "User", "Comment",
}

// RoutineLoadTaskColumns are the columns of SHOW ROUTINE LOAD TASK, as
// Doris (ShowRoutineLoadTaskCommand) has them.
var RoutineLoadTaskColumns = []string{
	"TaskId", "TxnId", "TxnStatus", "JobId", "CreateTime", "ExecuteStartTime",
	"Timeout", "BeId", "DataSourceProperties",
}

// CreateRoutineLoadColumns are the columns of SHOW CREATE ROUTINE LOAD.
var CreateRoutineLoadColumns = []string{"JobId", "JobName", "CreateStmt"}

// null is how Doris shows a time that has not happened.
const null = "NULL"

// timeText renders a time as Doris does ("2006-01-02 15:04:05" in loc), or
// NULL for 0.
func timeText(ms int64, loc *time.Location) string {
	if ms <= 0 {
		return null
	}
	return time.UnixMilli(ms).In(loc).Format(time.DateTime)
}

// jsonText renders v as compact JSON (maps with sorted keys).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return string(b)
}

// jobLocation is the job's time zone (its timezone property), or loc.
func jobLocation(spec *api.JobSpec, loc *time.Location) *time.Location {
	if tz := spec.GetTimezone(); tz != "" {
		if l, err := config.LoadTimezone(tz); err == nil {
			return l
		}
	}
	return loc
}

// RoutineLoadRow is the SHOW ROUTINE LOAD row of a job, one cell per
// RoutineLoadColumns; times are in loc. Secrets are not shown: info comes
// from the node with its spec redacted.
func RoutineLoadRow(info *api.JobInfo, loc *time.Location) []string {
	s, spec := info.GetSummary(), info.GetSpec()
	pauseMs, endMs := stateTimes(info)
	source := "KAFKA"
	if spec.GetKinesis() != nil {
		source = "KINESIS"
	}
	reason := ""
	switch s.GetState() {
	case api.JobState_PAUSED, api.JobState_STOPPED, api.JobState_CANCELLED:
		reason = s.GetReasonMessage()
		if reason == "" {
			reason = s.GetReason().String()
		}
	}
	tableName, multi := spec.GetTable().GetName(), "false"
	if t, _, ok := table.SplitTemporaryPartition(tableName); ok {
		tableName = t // Doris's TableName: the table whose temporary partition it loads
	}
	if ts := spec.GetTables(); len(ts) > 0 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.GetName()
		}
		tableName, multi = strings.Join(names, ","), "true"
	}
	var other []string
	if info.GetRetries() > 0 {
		other = append(other, fmt.Sprintf("retrying (%d failures in a row): %s", info.GetRetries(), s.GetReasonMessage()))
	}
	// A sink the node could not read for this show (issue 25, D7): the
	// row shows what is known and says what is missing.
	if u := info.GetProgressUnavailable(); u != "" {
		other = append(other, "sink unreachable: progress and statistics unavailable: "+u)
	}
	if u := info.GetErrorRowsUnavailable(); u != "" && u != info.GetProgressUnavailable() {
		other = append(other, "sink unreachable: error rows unavailable: "+u)
	}
	return []string{
		strconv.FormatUint(s.GetId(), 10),
		s.GetName(),
		timeText(info.GetCreatedUnixMs(), loc),
		timeText(pauseMs, loc),
		timeText(endMs, loc),
		spec.GetTable().GetDatabase(),
		tableName,
		multi,
		s.GetState().String(),
		source,
		strconv.Itoa(int(info.GetRunningTasks())),
		jsonText(jobProperties(spec, info.GetRunningTasks())),
		jsonText(dataSourceProperties(info)),
		jsonText(customProperties(spec)),
		jsonText(statistic(info)),
		jsonText(progress(info)),
		jsonText(lag(info)),
		reason,
		"",
		strings.Join(other, "; "),
		"",
		"",
	}
}

// stateTimes are when the job last paused (while it is PAUSED) and when it
// ended (STOPPED or CANCELLED), from its journal; 0 when not.
func stateTimes(info *api.JobInfo) (pauseMs, endMs int64) {
	state := info.GetSummary().GetState()
	for _, t := range info.GetHistory() {
		switch {
		case t.GetTo() == api.JobState_PAUSED && t.GetFrom() != api.JobState_PAUSED:
			pauseMs = t.GetTimeUnixMs()
		case t.GetTo().Final():
			endMs = t.GetTimeUnixMs()
		}
	}
	if state != api.JobState_PAUSED {
		pauseMs = 0
	}
	if !state.Final() {
		endMs = 0
	}
	return pauseMs, endMs
}

func boolText(b bool) string { return strconv.FormatBool(b) }

// jobProperties is the JobProperties cell: Doris's keys for what the spec
// holds.
func jobProperties(spec *api.JobSpec, running int32) map[string]string {
	m := map[string]string{
		"desired_concurrent_number": strconv.Itoa(int(spec.GetDesiredConcurrentNumber())),
		"current_concurrent_number": strconv.Itoa(int(running)),
		"max_batch_interval":        intervalText(spec.GetMaxBatchIntervalMs()),
		"max_batch_rows":            strconv.FormatInt(spec.GetMaxBatchRows(), 10),
		"max_batch_size":            strconv.FormatInt(spec.GetMaxBatchSize(), 10),
		"max_error_number":          strconv.FormatInt(spec.GetMaxErrorNumber(), 10),
		"strict_mode":               boolText(spec.GetStrictMode()),
		"timezone":                  spec.GetTimezone(),
		"format":                    spec.GetFormat(),
		"json_root":                 spec.GetJsonRoot(),
		"jsonpaths":                 "",
		"merge_type":                mergeType(spec),
		"partial_columns":           boolText(spec.GetPartialColumns()),
		"columnToColumnExpr":        strings.Join(spec.GetColumnsMapping(), ","),
		"whereExpr":                 orStar(spec.GetWhere()),
		"delete":                    orStar(spec.GetDeleteOn()),
		"precedingFilter":           "*",
		"partitions":                orStar(strings.Join(spec.GetTargetPartitions(), ",")),
	}
	if spec.GetFormat() == config.FormatJSON {
		m["strip_outer_array"] = boolText(spec.GetStripOuterArray())
		m["num_as_string"] = boolText(spec.GetNumAsString())
	}
	if spec.MaxFilterRatio != nil {
		m["max_filter_ratio"] = strconv.FormatFloat(spec.GetMaxFilterRatio(), 'g', -1, 64)
	}
	if len(spec.GetJsonpaths()) > 0 && !config.DefaultJSONPaths(spec) {
		// The paths loadnode derived from the columns are Doris's
		// reading without jsonpaths: it shows "" for them.
		m["jsonpaths"] = jsonText(spec.GetJsonpaths())
	}
	if config.CSVFormat(spec.GetFormat()) {
		m["column_separator"] = "'" + spec.GetColumnSeparator() + "'"
		m["enclose"] = spec.GetEnclose()
		m["escape"] = spec.GetEscape()
		m["empty_field_as_null"] = boolText(spec.GetEmptyFieldAsNull())
	}
	if spec.GetSequenceColumn() != "" {
		m["sequence_col"] = spec.GetSequenceColumn()
	}
	if b := spec.GetPartialUpdateNewKeyBehavior(); b != "" {
		m["partial_update_new_key_behavior"] = b
	}
	if um := spec.GetUniqueKeyUpdateMode(); um != "" {
		m["unique_key_update_mode"] = um
	}
	if spec.FillMissingColumns != nil {
		m["fill_missing_columns"] = boolText(spec.GetFillMissingColumns())
	}
	return m
}

func orStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func mergeType(spec *api.JobSpec) string {
	return spec.GetMergeType().String()
}

// dataSourceProperties is the DataSourceProperties cell: topic, brokers and
// the partitions the job loads now (Kinesis: stream, region and shards).
func dataSourceProperties(info *api.JobInfo) map[string]string {
	spec := info.GetSpec()
	if k := spec.GetKinesis(); k != nil {
		var shards []string
		for _, p := range info.GetPartitions() {
			if id := p.GetShardId(); id != "" {
				shards = append(shards, id)
			}
		}
		m := map[string]string{"stream": k.GetStream(), "region": k.GetRegion(), "currentShards": strings.Join(shards, ",")}
		if k.GetEndpoint() != "" {
			m["endpoint"] = k.GetEndpoint()
		}
		return m
	}
	k := spec.GetKafka()
	parts := make([]string, 0, len(info.GetPartitions()))
	for _, p := range info.GetPartitions() {
		parts = append(parts, strconv.Itoa(int(p.GetPartition())))
	}
	return map[string]string{
		"topic":                  k.GetTopic(),
		"brokerList":             strings.Join(k.GetBrokers(), ","),
		"currentKafkaPartitions": strings.Join(parts, ","),
	}
}

// customProperties is the CustomProperties cell: the client properties
// (secrets redacted by the node), the default offset and group.id.
func customProperties(spec *api.JobSpec) map[string]string {
	m := map[string]string{}
	if k := spec.GetKinesis(); k != nil {
		if k.GetDefaultPosition() != "" {
			m["kinesis_default_position"] = k.GetDefaultPosition()
		}
		return m
	}
	k := spec.GetKafka()
	maps.Copy(m, k.GetProperties())
	if off := k.GetDefaultOffset(); off != "" {
		m["kafka_default_offsets"] = offsetText(off, jobLocation(spec, time.UTC))
	}
	if g := k.GetCommitGroup(); g != "" {
		m["group.id"] = g
	}
	return m
}

// statistic is the Statistic cell, with Doris's keys for the figures
// loadnode keeps: totalRows is every row read (loaded, error and
// unselected, as in Doris), committedTaskNum and abortedTaskNum count
// batches, loadRowsRate is rows/s over the last minute. runningTxns is
// always empty: a batch's rows and progress commit in one transaction that
// is never left open between statements.
func statistic(info *api.JobInfo) map[string]any {
	if info.GetProgressUnavailable() != "" {
		return map[string]any{} // not read (OtherMsg says why): none made up
	}
	st := info.GetStats()
	return map[string]any{
		"receivedBytes":    st.GetReceivedBytes(),
		"runningTxns":      []int64{},
		"errorRows":        st.GetErrorRows(),
		"committedTaskNum": st.GetCommittedBatches(),
		"loadedRows":       st.GetLoadedRows(),
		"loadRowsRate":     int64(info.GetRowsPerSecond()),
		"abortedTaskNum":   st.GetAbortedBatches(),
		"totalRows":        st.GetLoadedRows() + st.GetErrorRows() + st.GetUnselectedRows(),
		"unselectedRows":   st.GetUnselectedRows(),
	}
}

// progress is the Progress cell. Kafka: per partition the offset of the
// last record consumed, as Doris shows it (loadnode's committed next offset
// minus one; -1 when none was). Kinesis: per shard id the last committed
// sequence number.
func progress(info *api.JobInfo) map[string]string {
	m := map[string]string{}
	for _, p := range info.GetPartitions() {
		if id := p.GetShardId(); id != "" || p.GetSequence() != "" {
			if id == "" {
				id = strconv.Itoa(int(p.GetPartition()))
			}
			m[id] = p.GetSequence()
			continue
		}
		m[strconv.Itoa(int(p.GetPartition()))] = strconv.FormatInt(p.GetCommittedOffset()-1, 10)
	}
	return m
}

// lag is the Lag cell: per partition the records behind the high
// watermark (-1 when not known yet); Kinesis: MillisBehindLatest.
func lag(info *api.JobInfo) map[string]int64 {
	m := map[string]int64{}
	for _, p := range info.GetPartitions() {
		if id := p.GetShardId(); id != "" {
			m[id] = p.GetMillisBehind()
			continue
		}
		m[strconv.Itoa(int(p.GetPartition()))] = p.GetLag()
	}
	return m
}

// RoutineLoadTaskRows are the SHOW ROUTINE LOAD TASK rows of a job: one per
// current task (none while the job is not RUNNING). loadnode has no
// transactions that outlive a batch nor backends: TxnId is the task's
// generation (its commits' fence), TxnStatus is PREPARE (a task's batch is
// open until it commits), BeId is -1, Timeout is the batch interval in
// seconds, and DataSourceProperties maps each of the task's partitions to
// its next offset to read (Kinesis: shard id to last sequence number).
func RoutineLoadTaskRows(info *api.JobInfo, loc *time.Location) [][]string {
	next := map[int32]string{}
	for _, p := range info.GetPartitions() {
		next[p.GetPartition()] = strconv.FormatInt(p.GetCommittedOffset(), 10)
		if id := p.GetShardId(); id != "" {
			next[p.GetPartition()] = p.GetSequence()
		}
	}
	shard := map[int32]string{}
	for _, p := range info.GetPartitions() {
		shard[p.GetPartition()] = p.GetShardId()
	}
	timeout := strconv.FormatInt(max(info.GetSpec().GetMaxBatchIntervalMs()/1000, 1), 10)
	var rows [][]string
	for _, t := range info.GetTasks() {
		src := map[string]string{}
		for _, p := range t.GetPartitions() {
			key := strconv.Itoa(int(p))
			if id := shard[p]; id != "" {
				key = id
			}
			src[key] = next[p]
		}
		rows = append(rows, []string{
			t.GetId(),
			strconv.FormatUint(t.GetGeneration(), 10),
			"PREPARE",
			strconv.FormatUint(info.GetSummary().GetId(), 10),
			timeText(t.GetCreatedUnixMs(), loc),
			timeText(t.GetCreatedUnixMs(), loc),
			timeout,
			"-1",
			jsonText(src),
		})
	}
	return rows
}

// CreateRoutineLoadRow is the SHOW CREATE ROUTINE LOAD row of a job.
func CreateRoutineLoadRow(info *api.JobInfo) []string {
	s := info.GetSummary()
	return []string{strconv.FormatUint(s.GetId(), 10), s.GetName(), CreateStatement(info.GetSpec())}
}

// sqlString renders s as a double-quoted statement string that the lexer
// reads back as s.
func sqlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// separatorString renders a column separator: control characters other
// than tab and newline as Doris's \xHH.
func separatorString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			fmt.Fprintf(&b, `\x%02X`, c)
			continue
		}
		b.WriteByte(c)
	}
	return sqlString(b.String())
}

func ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// offsetText renders a stored start offset as a statement gives it: a
// time offset as "2006-01-02 15:04:05" in the job's time zone.
func offsetText(off string, loc *time.Location) string {
	if ms, ok := strings.CutPrefix(off, config.OffsetTimePrefix); ok {
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil {
			return time.UnixMilli(n).In(loc).Format(time.DateTime)
		}
	}
	return off
}

// CreateStatement renders a job spec as the CREATE ROUTINE LOAD statement
// that creates the same job (Parse reads it back to the same spec). Start
// positions are the spec's, not the job's progress; secrets come as the
// node shows them (redacted) and must be given again.
func CreateStatement(spec *api.JobSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE ROUTINE LOAD %s", qualified(spec.GetTable().GetDatabase(), spec.GetName()))
	if len(spec.GetTables()) == 0 {
		// A multi-table load has no ON: it loads its database's tables.
		on := spec.GetTable().GetName()
		if t, _, ok := table.SplitTemporaryPartition(on); ok {
			on = t
		}
		fmt.Fprintf(&b, " ON %s", ident(on))
	}
	if mt := spec.GetMergeType(); mt != api.MergeType_APPEND {
		fmt.Fprintf(&b, " WITH %s", mt)
	}
	var clauses []string
	if config.CSVFormat(spec.GetFormat()) && spec.GetColumnSeparator() != "" {
		clauses = append(clauses, "COLUMNS TERMINATED BY "+separatorString(spec.GetColumnSeparator()))
	}
	if m := spec.GetColumnsMapping(); len(m) > 0 {
		items := make([]string, len(m))
		for i, it := range m {
			name, expr, ok := strings.Cut(it, " = ")
			items[i] = ident(name)
			if ok {
				items[i] += " = " + expr
			}
		}
		clauses = append(clauses, "COLUMNS ("+strings.Join(items, ", ")+")")
	}
	if w := spec.GetWhere(); w != "" {
		clauses = append(clauses, "WHERE "+w)
	}
	if d := spec.GetDeleteOn(); d != "" {
		clauses = append(clauses, "DELETE ON "+d)
	}
	if c := spec.GetSequenceColumn(); c != "" {
		clauses = append(clauses, "ORDER BY "+ident(c))
	}
	if ps := spec.GetTargetPartitions(); len(ps) > 0 {
		names := make([]string, len(ps))
		for i, n := range ps {
			names[i] = ident(n)
		}
		clauses = append(clauses, "PARTITION ("+strings.Join(names, ", ")+")")
	}
	if _, tp, ok := table.SplitTemporaryPartition(spec.GetTable().GetName()); ok && len(spec.GetTables()) == 0 {
		clauses = append(clauses, "TEMPORARY PARTITION ("+ident(tp)+")")
	}
	for i, c := range clauses {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
		b.WriteString(c)
	}
	loc := jobLocation(spec, time.UTC)
	props := [][2]string{
		{"desired_concurrent_number", strconv.Itoa(int(spec.GetDesiredConcurrentNumber()))},
		{"max_batch_interval", intervalText(spec.GetMaxBatchIntervalMs())},
		{"max_batch_rows", strconv.FormatInt(spec.GetMaxBatchRows(), 10)},
		{"max_batch_size", strconv.FormatInt(spec.GetMaxBatchSize(), 10)},
		{"max_error_number", strconv.FormatInt(spec.GetMaxErrorNumber(), 10)},
		{"strict_mode", boolText(spec.GetStrictMode())},
		{"format", spec.GetFormat()},
	}
	add := func(k, v string) { props = append(props, [2]string{k, v}) }
	if spec.MaxFilterRatio != nil {
		add("max_filter_ratio", strconv.FormatFloat(spec.GetMaxFilterRatio(), 'g', -1, 64))
	}
	if tz := spec.GetTimezone(); tz != "" {
		add("timezone", tz)
	}
	if n := spec.GetLcTimeNames(); n != "" {
		add("lc_time_names", n)
	}
	if len(spec.GetJsonpaths()) > 0 {
		add("jsonpaths", jsonText(spec.GetJsonpaths()))
	}
	if r := spec.GetJsonRoot(); r != "" {
		add("json_root", r)
	}
	if spec.GetEmptyFieldAsNull() {
		add("empty_field_as_null", "true")
	}
	if e := spec.GetEnclose(); e != "" {
		add("enclose", e)
	}
	if e := spec.GetEscape(); e != "" {
		add("escape", e)
	}
	if spec.GetStripOuterArray() {
		add("strip_outer_array", "true")
	}
	if spec.GetTrimDoubleQuotes() {
		add("trim_double_quotes", "true")
	}
	if n := spec.GetSkipLines(); n != 0 {
		add("skip_lines", strconv.Itoa(int(n)))
	}
	if spec.GetNumAsString() {
		add("num_as_string", "true")
	}
	if spec.GetPartialColumns() {
		add("partial_columns", "true")
	}
	if nk := spec.GetPartialUpdateNewKeyBehavior(); nk != "" && spec.GetPartialColumns() {
		// Only with partial_columns, as Doris takes it (a YAML spec may
		// say APPEND, the behaviour of every whole-row load, without it).
		add("partial_update_new_key_behavior", nk)
	}
	if um := spec.GetUniqueKeyUpdateMode(); um != "" {
		add("unique_key_update_mode", um)
	}
	if spec.FillMissingColumns != nil {
		add("fill_missing_columns", boolText(spec.GetFillMissingColumns()))
	}
	if t := spec.GetErrorTopic(); t != "" {
		add(fieldErrorTopic, t)
	}
	if bs := spec.GetErrorTopicBrokers(); len(bs) > 0 {
		add(fieldErrorBrokers, strings.Join(bs, ","))
	}
	b.WriteString("\nPROPERTIES\n(\n")
	writeProps(&b, props)
	b.WriteString(")\n")

	var src [][2]string
	if k := spec.GetKinesis(); k != nil {
		b.WriteString("FROM KINESIS\n(\n")
		src = append(src, [2]string{"kinesis_stream", k.GetStream()})
		for _, kv := range [][2]string{
			{"kinesis_region", k.GetRegion()}, {"kinesis_endpoint", k.GetEndpoint()},
			{"aws.access_key", k.GetAccessKeyId()}, {"aws.secret_key", k.GetSecretAccessKey()},
			{"aws.session_token", k.GetSessionToken()}, {"aws.profile", k.GetProfile()},
		} {
			if kv[1] != "" {
				src = append(src, kv)
			}
		}
		if len(k.GetShards()) > 0 {
			src = append(src, [2]string{"kinesis_shards", strings.Join(k.GetShards(), ",")})
			if len(k.GetPositions()) > 0 {
				pos := make([]string, len(k.GetShards()))
				for i, sh := range k.GetShards() {
					pos[i] = k.GetPositions()[sh]
					if pos[i] == "" {
						pos[i] = k.GetDefaultPosition()
					}
				}
				src = append(src, [2]string{"kinesis_positions", strings.Join(pos, ",")})
			}
		}
		if d := k.GetDefaultPosition(); d != "" {
			src = append(src, [2]string{"property.kinesis_default_position", d})
		}
	} else {
		k := spec.GetKafka()
		b.WriteString("FROM KAFKA\n(\n")
		src = append(src, [2]string{"kafka_broker_list", strings.Join(k.GetBrokers(), ",")}, [2]string{"kafka_topic", k.GetTopic()})
		if len(k.GetPartitions()) > 0 {
			parts := make([]string, len(k.GetPartitions()))
			for i, p := range k.GetPartitions() {
				parts[i] = strconv.Itoa(int(p))
			}
			src = append(src, [2]string{"kafka_partitions", strings.Join(parts, ",")})
			if len(k.GetOffsets()) > 0 {
				offs := make([]string, len(k.GetPartitions()))
				for i, p := range k.GetPartitions() {
					off, ok := k.GetOffsets()[p]
					if !ok {
						off = k.GetDefaultOffset()
					}
					offs[i] = offsetText(off, loc)
				}
				src = append(src, [2]string{"kafka_offsets", strings.Join(offs, ",")})
			}
		}
		if d := k.GetDefaultOffset(); d != "" {
			src = append(src, [2]string{"property.kafka_default_offsets", offsetText(d, loc)})
		}
		if g := k.GetCommitGroup(); g != "" {
			src = append(src, [2]string{"property.group.id", g})
		}
		for _, key := range slices.Sorted(maps.Keys(k.GetProperties())) {
			src = append(src, [2]string{"property." + key, k.GetProperties()[key]})
		}
		if r := spec.GetSchemaRegistry(); r != nil {
			for _, kv := range [][2]string{
				{"url", r.GetUrl()}, {"username", r.GetUsername()}, {"password_file", r.GetPasswordFile()},
				{"password_env", r.GetPasswordEnv()}, {"bearer_token_file", r.GetBearerTokenFile()}, {"ssl.ca.location", r.GetCaFile()},
			} {
				if kv[1] != "" {
					src = append(src, [2]string{registryPrefix + kv[0], kv[1]})
				}
			}
			if r.GetInsecureSkipVerify() {
				src = append(src, [2]string{registryPrefix + "insecure_skip_verify", "true"})
			}
			if ms := r.GetTimeoutMs(); ms > 0 {
				src = append(src, [2]string{registryPrefix + "timeout", (time.Duration(ms) * time.Millisecond).String()})
			}
		}
	}
	writeProps(&b, src)
	b.WriteString(");")
	return b.String()
}

func qualified(db, name string) string {
	if db == "" {
		return ident(name)
	}
	return ident(db) + "." + ident(name)
}

// intervalText renders max_batch_interval: whole seconds as Doris writes
// them, else a Go duration in milliseconds ("100ms", which PROPERTIES
// takes back; not "0").
func intervalText(ms int64) string {
	if ms%1000 == 0 {
		return strconv.FormatInt(ms/1000, 10)
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

func writeProps(b *strings.Builder, props [][2]string) {
	for i, kv := range props {
		fmt.Fprintf(b, "    %s = %s", sqlString(kv[0]), sqlString(kv[1]))
		if i < len(props)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
}
