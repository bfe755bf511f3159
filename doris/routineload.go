package doris

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/table"
)

// Alter is ALTER ROUTINE LOAD FOR [db.]name [load properties] [PROPERTIES
// (...)] [FROM KAFKA (...)].
type Alter struct {
	// DB (ignored by loadnode) and Name name the job.
	DB, Name string
	// Properties are the job PROPERTIES as written, keys in lower case,
	// including the accepted no-op ones (strict_mode "true", ...).
	Properties map[string]string
	// Kafka holds the FROM KAFKA fields given, nil without FROM KAFKA:
	// Brokers, Topic, DefaultOffset, Properties (property.X, merged into the
	// job's), and Offsets (kafka_partitions paired with kafka_offsets: new
	// start offsets for partitions the job already loads). Partitions is
	// never set: ALTER cannot change which partitions a job loads.
	Kafka *api.KafkaSpec
	// Changed lists the spec fields the statement changes, by their job
	// spec (YAML) names, in the order of config/SPEC.md:
	// desired_concurrent_number, max_batch_interval, max_batch_rows,
	// max_batch_size, max_error_number, jsonpaths, column_separator,
	// columns_mapping, where, delete_on, sequence_column (the load
	// properties), kafka.brokers, kafka.topic, kafka.offsets,
	// kafka.default_offset, kafka.properties.
	Changed []string
	// Request is the statement as the typed request a client sends: the
	// changed fields in Spec, named by UpdateMask ("kafka.properties.<key>"
	// for each property.X), and kafka.offsets as ResetOffsets (which the
	// job takes only while PAUSED). The node decides which fields may
	// change (config.Alterable) and refuses the others by name.
	Request *api.AlterJobRequest
}

// Spec field names in Alter.Changed, in SPEC.md order.
const (
	fieldConcurrency = "desired_concurrent_number"
	fieldInterval    = "max_batch_interval"
	fieldRows        = "max_batch_rows"
	fieldSize        = "max_batch_size"
	fieldErrors      = "max_error_number"
	fieldStrict      = "strict_mode"
	fieldRatio       = "max_filter_ratio"
	fieldTimezone    = "timezone"
	fieldTimeNames   = "lc_time_names"
	fieldJSONRoot    = "json_root"
	fieldStrip       = "strip_outer_array"
	fieldEmptyNull   = "empty_field_as_null"
	fieldEnclose     = "enclose"
	fieldEscape      = "escape"
	fieldJSONPaths   = "jsonpaths"
	fieldTrimQuotes  = "trim_double_quotes"
	fieldSkipLines   = "skip_lines"
	fieldNumAsString = "num_as_string"
	fieldUpdateMode  = "unique_key_update_mode"
	// Doris's load_property clauses (ALTER: only a PAUSED job's).
	fieldColumnSep = "column_separator"
	fieldColumns   = "columns_mapping"
	fieldWhere     = "where"
	fieldDeleteOn  = "delete_on"
	fieldSequence  = "sequence_column"
	// Doris has no dead-letter topic: loadnode's own properties.
	fieldErrorTopic    = "loadnode.error_topic"
	fieldErrorBrokers  = "loadnode.error_topic_brokers"
	fieldBrokers       = "kafka.brokers"
	fieldTopic         = "kafka.topic"
	fieldOffsets       = "kafka.offsets"
	fieldPartitions    = "kafka.partitions"
	fieldDefaultOffset = "kafka.default_offset"
	fieldKafkaProps    = "kafka.properties"
	// ALTER ROUTINE LOAD ... ON table.
	fieldTable = "table"
)

var changeOrder = []string{
	fieldConcurrency, fieldInterval, fieldRows, fieldSize, fieldErrors, fieldStrict, fieldRatio, fieldTimezone, fieldTimeNames, fieldJSONPaths, fieldJSONRoot, fieldStrip, fieldNumAsString, fieldEmptyNull, fieldEnclose, fieldEscape,
	fieldTable, fieldColumnSep, fieldColumns, fieldWhere, fieldDeleteOn, fieldSequence, fieldUpdateMode,
	fieldBrokers, fieldTopic, fieldPartitions, fieldOffsets, fieldDefaultOffset, fieldKafkaProps,
}

// jobPropertiesHelp lists the job PROPERTIES that map onto the spec.
const jobPropertiesHelp = "supported: desired_concurrent_number, max_batch_interval, max_batch_rows, max_batch_size, max_error_number, max_filter_ratio, strict_mode, timezone, lc_time_names, format, jsonpaths, json_root, strip_outer_array, num_as_string, empty_field_as_null, enclose, escape, trim_double_quotes, skip_lines, fill_missing_columns, partial_columns, partial_update_new_key_behavior, unique_key_update_mode, fuzzy_parse, and loadnode's own loadnode.error_topic, loadnode.error_topic_brokers"

// loadClauses are the load_properties of CREATE ROUTINE LOAD that loadnode
// refuses, keyed by their first word, with the reason.
var refusedLoadClauses = map[string]string{
	"PRECEDING": "filtering rows not supported by loadnode",
	"ROWS":      "records are Kafka messages; there is no row separator",
}

// createRoutineLoad parses the rest of
// CREATE ROUTINE LOAD [db.]name ON table [WITH APPEND] [load_properties]
// [PROPERTIES (...)] FROM KAFKA (...) [COMMENT '...'].
func (p *parser) createRoutineLoad(create token) (*Statement, *Error) {
	const clause = "CREATE ROUTINE LOAD"
	db, name, _, err := p.qualifiedName(clause, "a job name")
	if err != nil {
		return nil, err
	}
	spec := &api.JobSpec{Name: name, Table: &api.TableSpec{}}
	multi := false
	if t := p.peek(); t.is("ON") {
		p.next()
		_, table, _, err := p.qualifiedName("ON", "a table name")
		if err != nil {
			return nil, err
		}
		spec.Table.Name = table
	} else {
		// Without ON: a multi-table load (Doris: each record is
		// "table|record").
		multi = true
	}
	if t := p.peek(); t.is("WITH") {
		p.next()
		m, err := p.ident("WITH", "APPEND, MERGE or DELETE")
		if err != nil {
			return nil, err
		}
		mt, ok := api.MergeType_value[strings.ToUpper(m.text)]
		if !ok {
			return nil, p.errf(m, "WITH "+strings.ToUpper(m.text), "unknown merge type (APPEND, MERGE or DELETE)")
		}
		spec.MergeType = api.MergeType(mt)
	}

	// load_properties, separated by commas, in any order.
	lc, err := p.loadProperties(clause, spec)
	if err != nil {
		return nil, err
	}
	hasSep, sepTok := lc.given[fieldColumnSep], lc.sepTok
	if lc.temporary != nil {
		// The job's table is the temporary partition's rows, a table of
		// their own in the catalog (table.TemporaryPartitionTable).
		switch {
		case multi:
			return nil, p.errf(lc.tempTok, "TEMPORARY PARTITION", "a multi-table load (no ON) takes no TEMPORARY PARTITION")
		case len(spec.GetTargetPartitions()) > 0:
			return nil, p.errf(lc.tempTok, "TEMPORARY PARTITION", "a load names PARTITION or TEMPORARY PARTITION, not both")
		case len(lc.temporary) > 1:
			return nil, p.errf(lc.temporary[1], "TEMPORARY PARTITION", "a load into more than one temporary partition is not supported by loadnode; load each with its own job")
		}
		spec.Table.Name = table.TemporaryPartitionTable(spec.Table.Name, lc.temporary[0].text)
	}

	jp := &jobProps{}
	if p.accept("PROPERTIES") {
		props, err := p.properties("PROPERTIES")
		if err != nil {
			return nil, err
		}
		for _, pr := range props {
			if err := p.jobProperty(jp, pr, false); err != nil {
				return nil, err
			}
		}
		if err := p.checkFuzzyParse(jp); err != nil {
			return nil, err
		}
		if jp.given["partial_update_new_key_behavior"] && !jp.partial {
			// Doris refuses the statement: "partial_update_new_key_behavior
			// can only be set when partial update is enabled".
			return nil, p.errf(jp.newKeyTok, "PROPERTIES "+quote(jp.newKeyTok.text), "can only be set when partial update is enabled (\"partial_columns\" = \"true\"), as in Doris")
		}
	}
	jp.apply(spec)
	if spec.StrictMode == nil {
		spec.StrictMode = proto.Bool(false) // the Doris default, unlike loadnode's
	}
	if spec.Enclose == nil && (spec.Format == "" || config.CSVFormat(spec.Format)) {
		spec.Enclose = proto.String("") // Doris: quotes are literal unless enclose is set
	}
	switch {
	case spec.Format == config.FormatHiveText:
		// Without a separator, hive_text's own (the byte 0x01) applies.
	case spec.Format == "" || config.CSVFormat(spec.Format):
		if !hasSep {
			spec.ColumnSeparator = "\t" // the Doris default, unlike loadnode's ","
		}
	case hasSep && spec.Format == config.FormatJSON:
		// Doris reads a JSON record's fields by name and ignores the
		// separator (test_stream_load_cast loads json with one).
		spec.ColumnSeparator = ""
	case hasSep:
		return nil, p.errf(sepTok, "COLUMNS TERMINATED BY", "only with format csv or json (ignored with json, as in Doris)")
	}

	loc, _ := config.LoadTimezone(spec.GetTimezone()) // validated with the property
	k, err := p.fromSource(false, loc)
	if err != nil {
		return nil, err
	}
	if k.kinesis != nil {
		spec.Kinesis = k.kinesis
	} else {
		spec.Kafka = k.spec
		spec.SchemaRegistry = k.registry
	}
	if t := p.peek(); t.is("COMMENT") {
		// A comment on the job: loadnode has nowhere to keep it.
		p.next()
		if v := p.peek(); v.kind != tokString {
			return nil, p.errf(v, "COMMENT", "expected a string, found %s", v.describe())
		}
		p.next()
	}
	if multi {
		if len(spec.GetTable().GetColumns()) > 0 || len(spec.GetColumnsMapping()) > 0 || spec.GetWhere() != "" || spec.GetMergeType() != api.MergeType_APPEND || len(spec.GetTargetPartitions()) > 0 {
			return nil, p.errf(create, clause, "a multi-table load (no ON) takes no COLUMNS, WHERE, PARTITION or merge type: each record's fields map onto its own table's columns")
		}
		spec.Table = nil
	}
	return &Statement{CreateRoutineLoad: spec, DB: db, MultiTable: multi, LoadToSingleTablet: jp.singleTablet}, nil
}

// loadClauses records which load_property clauses a statement gave.
type loadClauses struct {
	given   map[string]bool // spec field names: column_separator, columns_mapping, where, delete_on, sequence_column
	sepTok  token           // the string of COLUMNS TERMINATED BY
	partTok token           // the PARTITION of a PARTITION clause
	// temporary are the partitions of a TEMPORARY PARTITION (tp, ...)
	// clause (tempTok its TEMPORARY), which the caller applies.
	temporary []token
	tempTok   token
}

// loadProperties parses the load_property clauses of CREATE or ALTER
// ROUTINE LOAD, separated by commas, in any order, into spec: COLUMNS
// TERMINATED BY, COLUMNS (...), WHERE, DELETE ON, ORDER BY, PARTITION
// and TEMPORARY PARTITION (the caller applies them, and refuses them in
// ALTER); PRECEDING FILTER and ROWS TERMINATED BY are refused by name. It stops at PROPERTIES, FROM or anything that is not a word.
func (p *parser) loadProperties(clause string, spec *api.JobSpec) (*loadClauses, *Error) {
	lc := &loadClauses{given: map[string]bool{}}
	for {
		t := p.peek()
		if t.kind != tokIdent || t.is("PROPERTIES") || t.is("FROM") {
			return lc, nil
		}
		word := strings.ToUpper(t.text)
		if word == "WHERE" {
			if lc.given[fieldWhere] {
				return nil, p.errf(t, "WHERE", "given twice")
			}
			p.next()
			src, err := p.exprText("WHERE", true)
			if err != nil {
				return nil, err
			}
			spec.Where = src
			lc.given[fieldWhere] = true
			p.acceptSym(",")
			continue
		}
		if word == "DELETE" && p.peekAt(1).is("ON") {
			if lc.given[fieldDeleteOn] {
				return nil, p.errf(t, "DELETE ON", "given twice")
			}
			p.next()
			p.next()
			src, err := p.exprText("DELETE ON", true)
			if err != nil {
				return nil, err
			}
			spec.DeleteOn = src
			lc.given[fieldDeleteOn] = true
			p.acceptSym(",")
			continue
		}
		if word == "ORDER" && p.peekAt(1).is("BY") {
			if lc.given[fieldSequence] {
				return nil, p.errf(t, "ORDER BY", "given twice")
			}
			p.next()
			p.next()
			c, err := p.ident("ORDER BY", "a column name")
			if err != nil {
				return nil, err
			}
			spec.SequenceColumn = c.text
			lc.given[fieldSequence] = true
			p.acceptSym(",")
			continue
		}
		if word == "TEMPORARY" {
			// TEMPORARY PARTITION (tp1, tp2) or TEMPORARY PARTITION tp1:
			// the job loads into those temporary partitions only.
			if lc.temporary != nil {
				return nil, p.errf(t, "TEMPORARY PARTITION", "given twice")
			}
			lc.tempTok = t
			p.next()
			if n := p.peek(); !n.is("PARTITION") && !n.is("PARTITIONS") {
				return nil, p.errf(n, "TEMPORARY PARTITION", "expected PARTITION, found %s", n.describe())
			}
			p.next()
			if p.peek().isSym("(") {
				list, err := p.identList("TEMPORARY PARTITION", "a partition name")
				if err != nil {
					return nil, err
				}
				lc.temporary = list
			} else {
				n, err := p.ident("TEMPORARY PARTITION", "a partition name")
				if err != nil {
					return nil, err
				}
				lc.temporary = []token{n}
			}
			p.acceptSym(",")
			continue
		}
		if word == "PARTITION" || word == "PARTITIONS" {
			// PARTITION (p1, p2) or PARTITION p1: the partitions of the
			// table the job loads into (table.Format.TargetPartitions
			// checks the names and the rows).
			if len(spec.TargetPartitions) > 0 {
				return nil, p.errf(t, "PARTITION", "given twice")
			}
			lc.partTok = t
			p.next()
			var names []token
			if p.peek().isSym("(") {
				list, err := p.identList("PARTITION", "a partition name")
				if err != nil {
					return nil, err
				}
				names = list
			} else {
				n, err := p.ident("PARTITION", "a partition name")
				if err != nil {
					return nil, err
				}
				names = []token{n}
			}
			for _, n := range names {
				spec.TargetPartitions = append(spec.TargetPartitions, n.text)
			}
			p.acceptSym(",")
			continue
		}
		if reason, ok := refusedLoadClauses[word]; ok {
			what := word
			switch word {
			case "PRECEDING":
				what = "PRECEDING FILTER"
			case "ROWS":
				what = "ROWS TERMINATED BY"
			}
			return nil, p.errf(t, what, "%s", reason)
		}
		if !t.is("COLUMNS") {
			return nil, p.errf(t, clause, "unexpected %s (expected COLUMNS, WHERE, DELETE ON, ORDER BY, PROPERTIES or FROM)", t.describe())
		}
		p.next()
		if p.accept("TERMINATED") {
			if lc.given[fieldColumnSep] {
				return nil, p.errf(t, "COLUMNS TERMINATED BY", "given twice")
			}
			if err := p.expect("COLUMNS TERMINATED BY", "BY"); err != nil {
				return nil, err
			}
			lc.sepTok = p.peek()
			if lc.sepTok.kind != tokString {
				return nil, p.errf(lc.sepTok, "COLUMNS TERMINATED BY", "expected a string, found %s", lc.sepTok.describe())
			}
			p.next()
			sep := decodeSeparator(lc.sepTok.text)
			if sep == "" {
				return nil, p.errf(lc.sepTok, "COLUMNS TERMINATED BY", "the separator must not be empty")
			}
			spec.ColumnSeparator = sep
			lc.given[fieldColumnSep] = true
		} else {
			if lc.given[fieldColumns] {
				return nil, p.errf(t, "COLUMNS", "given twice")
			}
			items, err := p.columnsMapping()
			if err != nil {
				return nil, err
			}
			spec.ColumnsMapping = items
			lc.given[fieldColumns] = true
		}
		p.acceptSym(",")
	}
}

// columnsMapping parses COLUMNS (item, ...) after the COLUMNS keyword:
// each item is a field name or "column = expression", kept as written for
// the node to compile (table/mapping.go).
func (p *parser) columnsMapping() ([]string, *Error) {
	const clause = "COLUMNS"
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	var items []string
	for {
		t, err := p.ident(clause, "a column name")
		if err != nil {
			return nil, err
		}
		item := t.text
		if p.peek().isSym("=") {
			p.next()
			src, err := p.exprText("COLUMNS "+quote(t.text), false)
			if err != nil {
				return nil, err
			}
			item += " = " + src
		}
		items = append(items, item)
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		return items, nil
	}
}

// exprText reads an expression up to a "," or ")" outside parentheses
// (inside COLUMNS), or, in a WHERE clause (top), up to a "," outside
// parentheses, PROPERTIES, FROM or the end, and returns its source text.
func (p *parser) exprText(clause string, top bool) (string, *Error) {
	start := p.peek()
	depth := 0
	for {
		t := p.peek()
		if t.kind == tokEOF {
			if depth > 0 || !top {
				return "", p.errf(t, clause, "unexpected end of the statement in an expression")
			}
			break
		}
		if depth == 0 && (t.isSym(",") || !top && t.isSym(")") || top && (t.is("PROPERTIES") || t.is("FROM") || t.isSym(";"))) {
			break
		}
		switch {
		case t.isSym("("):
			if depth++; depth > table.MaxExprDepth {
				return "", p.errf(t, clause, "expression nests deeper than %d levels", table.MaxExprDepth)
			}
		case t.isSym(")"):
			depth--
		}
		p.next()
	}
	// The source up to the next token, without the space before it.
	src := strings.TrimSpace(p.src[start.pos:p.peek().pos])
	if src == "" {
		return "", p.errf(start, clause, "expected an expression, found %s", start.describe())
	}
	return src, nil
}

// decodeSeparator turns Doris's `\xHH` escapes (written as the four
// characters, e.g. "\x01") into the byte they stand for.
func decodeSeparator(s string) string {
	if !strings.Contains(s, `\x`) && !strings.Contains(s, `\X`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// jobProps collects the job PROPERTIES that map onto the spec.
type jobProps struct {
	given       map[string]bool // spec field names set
	concurrency int32
	intervalMs  int64
	rows        int64
	size        int64
	errors      int64
	strict      bool
	ratio       float64
	timezone    string
	timeNames   string
	jsonRoot    string
	emptyNull   bool
	enclose     string
	escape      string
	format      string
	jsonpaths   []string
	partial     bool
	updateMode  string
	fill        bool
	strip       bool
	trimQuotes  bool
	skipLines   int32
	numAsString bool
	newKey      string
	newKeyTok   token // the key of partial_update_new_key_behavior
	errorTopic  string
	errBrokers  []string
	raw         map[string]string
	// singleTablet: "load_to_single_tablet" = "true" (no spec field: the
	// caller checks the table's distribution, Statement.LoadToSingleTablet)
	singleTablet bool
	// fuzzyTok is the key of "fuzzy_parse" = "true" (no spec field: see
	// propFuzzyParse), or the zero token.
	fuzzyTok token
}

// propFuzzyParse is Doris's fuzzy_parse job property: a hint that every
// object of a JSON array has the keys of the first, in the same order.
// Doris's default JSON reader (simdjson, enable_simdjson_reader = true)
// reads every object by its keys whatever the hint, and so does loadnode:
// "true" and "false" load the same rows. (Doris's older reader,
// enable_simdjson_reader = false, reads the later objects of an array at
// the positions of the first object's keys, so objects whose keys are in
// another order load differently there; loadnode does not model it.)
// Doris refuses it with a flexible partial update, and so does loadnode
// (checkFuzzyParse).
const propFuzzyParse = "fuzzy_parse"

// checkFuzzyParse refuses "fuzzy_parse" = "true" with
// UPDATE_FLEXIBLE_COLUMNS given in the same statement, as Doris does.
func (p *parser) checkFuzzyParse(j *jobProps) *Error {
	if j.fuzzyTok.text == "" || j.updateMode != table.UpdateFlexible {
		return nil
	}
	return p.errf(j.fuzzyTok, "PROPERTIES "+quote(j.fuzzyTok.text), "flexible partial update does not support fuzzy_parse (\"unique_key_update_mode\" = \"UPDATE_FLEXIBLE_COLUMNS\"), as in Doris")
}

// propSingleTablet is Doris's load_to_single_tablet job property.
const propSingleTablet = "load_to_single_tablet"

func (j *jobProps) set(field string) {
	if j.given == nil {
		j.given = make(map[string]bool)
	}
	j.given[field] = true
}

// apply copies the given properties into s.
func (j *jobProps) apply(s *api.JobSpec) {
	if j.given[fieldConcurrency] {
		s.DesiredConcurrentNumber = j.concurrency
	}
	if j.given[fieldInterval] {
		s.MaxBatchIntervalMs = j.intervalMs
	}
	if j.given[fieldRows] {
		s.MaxBatchRows = j.rows
	}
	if j.given[fieldSize] {
		s.MaxBatchSize = j.size
	}
	if j.given[fieldErrors] {
		s.MaxErrorNumber = j.errors
	}
	if j.given[fieldStrict] {
		s.StrictMode = proto.Bool(j.strict)
	}
	if j.given[fieldRatio] {
		s.MaxFilterRatio = proto.Float64(j.ratio)
	}
	if j.given[fieldTimezone] {
		s.Timezone = j.timezone
	}
	if j.given[fieldTimeNames] {
		s.LcTimeNames = j.timeNames
	}
	if j.given[fieldJSONRoot] {
		s.JsonRoot = j.jsonRoot
	}
	if j.given[fieldEmptyNull] {
		s.EmptyFieldAsNull = j.emptyNull
	}
	if j.given[fieldEnclose] {
		s.Enclose = proto.String(j.enclose)
	}
	if j.given[fieldEscape] {
		s.Escape = j.escape
	}
	if j.given["format"] {
		s.Format = j.format
	}
	if j.given["fill_missing_columns"] {
		s.FillMissingColumns = proto.Bool(j.fill)
	}
	if j.given[fieldStrip] {
		s.StripOuterArray = j.strip
	}
	if j.given[fieldTrimQuotes] {
		s.TrimDoubleQuotes = j.trimQuotes
	}
	if j.given[fieldSkipLines] {
		s.SkipLines = j.skipLines
	}
	if j.given[fieldNumAsString] {
		s.NumAsString = j.numAsString
	}
	if j.given["partial_columns"] {
		s.PartialColumns = j.partial
	}
	if j.given["partial_update_new_key_behavior"] {
		s.PartialUpdateNewKeyBehavior = j.newKey
	}
	if j.given[fieldUpdateMode] {
		s.UniqueKeyUpdateMode = j.updateMode
	}
	if j.given[fieldJSONPaths] {
		s.Jsonpaths = slices.Clone(j.jsonpaths)
	}
	if j.given[fieldErrorTopic] {
		s.ErrorTopic = j.errorTopic
	}
	if j.given[fieldErrorBrokers] {
		s.ErrorTopicBrokers = slices.Clone(j.errBrokers)
	}
}

func isTrue(v string) bool  { return strings.EqualFold(strings.TrimSpace(v), "true") }
func isFalse(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "false") }

// jobProperty maps one job property into j.
func (p *parser) jobProperty(j *jobProps, pr property, alter bool) *Error {
	clause := "PROPERTIES " + quote(pr.rawKey)
	bad := func(format string, args ...any) *Error {
		return p.errf(pr.valTok, clause, "%s %s", quote(pr.val), fmt.Sprintf(format, args...))
	}
	if j.raw == nil {
		j.raw = make(map[string]string)
	}
	j.raw[pr.key] = pr.val
	v := strings.TrimSpace(pr.val)
	switch pr.key {
	case fieldConcurrency:
		n, ok := parseCount(v)
		if !ok || n < 1 || n > math.MaxInt32 {
			return bad("must be a positive integer")
		}
		j.concurrency = int32(n)
	case fieldInterval:
		// The job spec's spelling (config.ParseInterval): seconds, as in
		// Doris, or a Go duration; the range is config.ValidateJobSpec's.
		ms, err := config.ParseInterval(v)
		if err != nil {
			return bad("%v", err)
		}
		if ms < 1 {
			return bad("must be positive")
		}
		j.intervalMs = ms
	case fieldRows:
		n, ok := parseCount(v)
		if !ok || n < 1 {
			return bad("must be a positive integer")
		}
		j.rows = n
	case fieldSize:
		n, err := config.ParseSize(v) // bytes or "64MiB", as in the job spec
		if err != nil {
			return bad("%v", err)
		}
		if n < 1 {
			return bad("must be a positive number of bytes")
		}
		j.size = n
	case fieldErrors:
		n, ok := parseCount(v)
		if !ok {
			return bad("must be an integer >= 0")
		}
		j.errors = n
	case fieldStrict:
		switch {
		case isTrue(v):
			j.strict = true
		case isFalse(v):
			j.strict = false
		default:
			return bad("must be true or false")
		}
	case fieldRatio:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f >= 0 && f <= 1) {
			return bad("must be a number from 0 to 1")
		}
		j.ratio = f
	case fieldJSONRoot:
		if !strings.HasPrefix(v, "$") {
			return bad("must be a JSON path starting with $")
		}
		j.jsonRoot = v
	case fieldEnclose, fieldEscape:
		if len(pr.val) != 1 {
			return bad("must be one character")
		}
		if pr.key == fieldEnclose {
			j.enclose = pr.val
		} else {
			j.escape = pr.val
		}
	case fieldEmptyNull:
		switch {
		case isTrue(v):
			j.emptyNull = true
		case isFalse(v):
			j.emptyNull = false
		default:
			return bad("must be true or false")
		}
	case fieldTimezone:
		if _, err := config.LoadTimezone(v); err != nil {
			return bad("%v", err)
		}
		j.timezone = v
	case fieldTimeNames:
		if _, err := table.LCTimeNames(v); err != nil {
			return bad("%v", err)
		}
		j.timeNames = v
	case "format":
		if alter {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		f := strings.ToLower(v)
		if !config.CSVFormat(f) && f != config.FormatJSON && f != config.FormatAvro && f != config.FormatProtobuf {
			return bad("not supported by loadnode (csv, csv_with_names, csv_with_names_and_types, hive_text, json, avro or protobuf)")
		}
		j.format = f
		j.set("format")
		return nil
	case "partial_columns":
		if alter {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		switch {
		case isTrue(v):
			j.partial = true
		case isFalse(v):
			j.partial = false
		default:
			return bad("must be true or false")
		}
		j.set(pr.key)
		return nil
	case fieldStrip:
		switch {
		case isTrue(v):
			j.strip = true
		case isFalse(v):
			j.strip = false
		default:
			return bad("must be true or false")
		}
	case fieldTrimQuotes, fieldNumAsString:
		if alter && pr.key == fieldTrimQuotes {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		var b bool
		switch {
		case isTrue(v):
			b = true
		case isFalse(v):
		default:
			return bad("must be true or false")
		}
		if pr.key == fieldTrimQuotes {
			j.trimQuotes = b
		} else {
			j.numAsString = b
		}
	case fieldSkipLines:
		if alter {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		n, ok := parseCount(v)
		if !ok || n > math.MaxInt32 {
			return bad("must be an integer >= 0")
		}
		j.skipLines = int32(n)
	case "fill_missing_columns":
		if alter {
			// Not in Doris's ALTER list either ("is invalid property").
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		switch {
		case isTrue(v):
			j.fill = true
		case isFalse(v):
			j.fill = false
		default:
			return bad("must be true or false")
		}
		j.set(pr.key)
		return nil
	case fieldUpdateMode:
		// Alterable (while PAUSED), as in Doris.
		switch m := strings.ToUpper(v); m {
		case "UPSERT", "UPDATE_FIXED_COLUMNS", "UPDATE_FLEXIBLE_COLUMNS":
			j.updateMode = m
		default:
			return bad("must be UPSERT, UPDATE_FIXED_COLUMNS or UPDATE_FLEXIBLE_COLUMNS")
		}
	case "partial_update_new_key_behavior":
		if alter {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		if !strings.EqualFold(v, "APPEND") && !strings.EqualFold(v, "ERROR") {
			return bad("must be APPEND or ERROR")
		}
		j.newKey, j.newKeyTok = strings.ToUpper(v), pr.keyTok
		j.set(pr.key)
		return nil
	case fieldErrorTopic, fieldErrorBrokers:
		if alter {
			return p.errf(pr.keyTok, clause, "cannot be altered")
		}
		if v == "" {
			return bad("must not be empty")
		}
		if pr.key == fieldErrorTopic {
			j.errorTopic = v
		} else {
			j.errBrokers = nil
			for b := range strings.SplitSeq(v, ",") {
				j.errBrokers = append(j.errBrokers, strings.TrimSpace(b))
			}
		}
	case fieldJSONPaths:
		var paths []string
		if err := json.Unmarshal([]byte(pr.val), &paths); err != nil || len(paths) == 0 {
			return bad("must be a JSON array of paths, such as [\"$.a\", \"$.b\"]")
		}
		j.jsonpaths = paths
	case propSingleTablet:
		// Where a Doris load writes each batch: no difference to which rows
		// a table holds. Doris takes "true" only into a table DISTRIBUTED
		// BY RANDOM; the caller checks that against the stored table
		// (Statement.LoadToSingleTablet).
		switch {
		case isTrue(v):
			if alter {
				return p.errf(pr.keyTok, clause, "%s cannot be altered to \"true\" (it is checked against the table when the job is created)", quote(pr.val))
			}
			j.singleTablet = true
		case isFalse(v):
			j.singleTablet = false
		default:
			return bad("must be true or false")
		}
		return nil
	case propFuzzyParse:
		switch {
		case isTrue(v):
			j.fuzzyTok = pr.keyTok
		case isFalse(v):
			j.fuzzyTok = token{}
		default:
			return bad("must be true or false")
		}
		return nil
	default:
		return p.errf(pr.keyTok, clause, "not supported by loadnode (%s)", jobPropertiesHelp)
	}
	j.set(pr.key)
	return nil
}

// parseCount parses a non-negative decimal integer.
func parseCount(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// kafkaProps is the parsed FROM KAFKA list.
type kafkaProps struct {
	spec *api.KafkaSpec
	// kinesis is set instead of spec by FROM KINESIS.
	kinesis *api.KinesisSpec
	given   map[string]bool // spec field names set
	// kafka_partitions as given (for ALTER, only to pair with offsets)
	partitions []int32
	// registry holds the property.schema.registry.* settings (registry.go)
	registry *api.SchemaRegistrySpec
}

// fromSource parses FROM KAFKA (...). In ALTER, the FROM clause is optional
// and kafka_partitions only names the partitions of kafka_offsets.
// Offsets given as datetimes are read in loc (the job's timezone).
func (p *parser) fromSource(alter bool, loc *time.Location) (*kafkaProps, *Error) {
	t := p.peek()
	if !t.is("FROM") {
		return nil, p.errf(t, "FROM", "expected FROM KAFKA (...), found %s", t.describe())
	}
	p.next()
	src, err := p.ident("FROM", "KAFKA")
	if err != nil {
		return nil, err
	}
	switch {
	case src.is("KAFKA"):
	case src.is("KINESIS"):
		if alter {
			return nil, p.errf(src, "FROM KINESIS", "not supported in ALTER: a Kinesis job's shard positions are reset with `loadnode job alter NAME --position SHARD=POSITION`")
		}
		return p.fromKinesis(src)
	default:
		return nil, p.errf(src, "FROM "+strings.ToUpper(src.text), "unknown data source (KAFKA or KINESIS)")
	}
	props, err := p.properties("FROM KAFKA")
	if err != nil {
		return nil, err
	}
	k := &kafkaProps{spec: &api.KafkaSpec{}, given: make(map[string]bool)}
	var offsets *property
	var partitions *property
	for i := range props {
		pr := &props[i]
		clause := "FROM KAFKA " + quote(pr.rawKey)
		v := strings.TrimSpace(pr.val)
		bad := func(format string, args ...any) *Error {
			return p.errf(pr.valTok, clause, "%s %s", quote(pr.val), fmt.Sprintf(format, args...))
		}
		switch {
		case pr.key == "kafka_broker_list":
			var brokers []string
			for b := range strings.SplitSeq(v, ",") {
				b = strings.TrimSpace(b)
				if b == "" {
					return nil, bad("must be a comma-separated list of host:port")
				}
				brokers = append(brokers, b)
			}
			k.spec.Brokers = brokers
			k.given[fieldBrokers] = true
		case pr.key == "kafka_topic":
			if v == "" {
				return nil, bad("must not be empty")
			}
			k.spec.Topic = v
			k.given[fieldTopic] = true
		case pr.key == "kafka_partitions":
			list, msg := parsePartitions(v)
			if msg != "" {
				return nil, bad("%s", msg)
			}
			k.partitions = list
			partitions = pr
		case pr.key == "kafka_offsets":
			offsets = pr
		case pr.key == "kafka_default_offsets" || pr.key == "property.kafka_default_offsets":
			off, msg := parseOffset(v, loc)
			if msg != "" {
				return nil, bad("%s", msg)
			}
			k.spec.DefaultOffset = off
			k.given[fieldDefaultOffset] = true
		case isRegistryProperty(pr.key):
			if alter {
				return nil, p.errf(pr.keyTok, clause, "cannot be altered (the schema registry of a job stays)")
			}
			if k.registry == nil {
				k.registry = &api.SchemaRegistrySpec{}
			}
			if msg := registryProperty(k.registry, pr.key, pr.val); msg != "" {
				return nil, p.errf(pr.keyTok, clause, "%s", msg)
			}
		case pr.key == "property.group.id":
			// The consumer group Doris commits to: here the group the job
			// publishes its positions to, for lag tools (observational).
			if alter {
				return nil, p.errf(pr.keyTok, clause, "cannot be altered by loadnode (kafka.commit_group, the group the job publishes its positions to, stays; create a new job for another)")
			}
			if v == "" {
				return nil, bad("must not be empty")
			}
			k.spec.CommitGroup = v
		case strings.HasPrefix(pr.key, "property."):
			name := pr.rawKey[len("property."):]
			if name == "" {
				return nil, p.errf(pr.keyTok, clause, "names no client property")
			}
			if len(v) >= 5 && strings.EqualFold(v[:5], "FILE:") {
				return nil, bad("not supported: FILE: names a file created with Doris CREATE FILE; give the path of the file on the node")
			}
			if k.spec.Properties == nil {
				k.spec.Properties = make(map[string]string)
			}
			k.spec.Properties[name] = pr.val
			k.given[fieldKafkaProps] = true
		default:
			return nil, p.errf(pr.keyTok, clause, "not supported by loadnode (supported: kafka_broker_list, kafka_topic, kafka_partitions, kafka_offsets, property.kafka_default_offsets, property.<client setting>)")
		}
	}
	switch {
	case offsets != nil && partitions == nil:
		return nil, p.errf(offsets.keyTok, "FROM KAFKA "+quote(offsets.rawKey), "requires kafka_partitions (one offset per partition)")
	case offsets != nil:
		clause := "FROM KAFKA " + quote(offsets.rawKey)
		var list []string
		for o := range strings.SplitSeq(offsets.val, ",") {
			off, msg := parseOffset(strings.TrimSpace(o), loc)
			if msg != "" {
				return nil, p.errf(offsets.valTok, clause, "%s %s", quote(strings.TrimSpace(o)), msg)
			}
			list = append(list, off)
		}
		if len(list) != len(k.partitions) {
			return nil, p.errf(offsets.valTok, clause, "%d offsets for %d partitions; give one per partition of kafka_partitions", len(list), len(k.partitions))
		}
		k.spec.Offsets = make(map[int32]string, len(list))
		for i, part := range k.partitions {
			k.spec.Offsets[part] = list[i]
		}
		k.given[fieldOffsets] = true
	case partitions != nil && alter && !k.given[fieldTopic]:
		return nil, p.errf(partitions.keyTok, "FROM KAFKA "+quote(partitions.rawKey), "ALTER cannot change the partitions a job loads without a new kafka_topic; give kafka_offsets with it to set their start offsets")
	}
	if alter && k.given[fieldTopic] && partitions != nil {
		// A new topic: kafka_partitions are the partitions the job loads
		// from it, starting at kafka_offsets (else the default offset).
		k.spec.Partitions = k.partitions
		k.given[fieldPartitions] = true
	}
	if !alter {
		k.spec.Partitions = k.partitions
		if !k.given[fieldBrokers] {
			return nil, p.errf(src, "FROM KAFKA", "kafka_broker_list is required")
		}
		if !k.given[fieldTopic] {
			return nil, p.errf(src, "FROM KAFKA", "kafka_topic is required")
		}
	}
	return k, nil
}

// parsePartitions parses "0, 1, 2".
func parsePartitions(s string) ([]int32, string) {
	var list []int32
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, ok := parseCount(f)
		if !ok || n > math.MaxInt32 {
			return nil, "must be a comma-separated list of partition numbers >= 0"
		}
		if slices.Contains(list, int32(n)) {
			return nil, fmt.Sprintf("lists partition %d twice", n)
		}
		list = append(list, int32(n))
	}
	return list, ""
}

// parseOffset canonicalizes one start offset: a non-negative integer,
// OFFSET_BEGINNING or OFFSET_END (any case), or a date and time (Doris's
// "2021-05-22 11:00:00", read in loc), which becomes TIME:<epoch ms>.
func parseOffset(s string, loc *time.Location) (string, string) {
	switch strings.ToUpper(s) {
	case config.OffsetBeginning:
		return config.OffsetBeginning, ""
	case config.OffsetEnd:
		return config.OffsetEnd, ""
	}
	if n, ok := parseCount(s); ok {
		return strconv.FormatInt(n, 10), ""
	}
	if strings.ContainsAny(s, "-:") {
		t, err := time.ParseInLocation(time.DateTime, s, loc)
		if err != nil {
			return "", `must be a number, OFFSET_BEGINNING, OFFSET_END or a time "2006-01-02 15:04:05"`
		}
		if t.UnixMilli() < 0 {
			return "", "must not be before 1970"
		}
		return config.OffsetTimePrefix + strconv.FormatInt(t.UnixMilli(), 10), ""
	}
	return "", "must be a non-negative integer, OFFSET_BEGINNING, OFFSET_END or a time \"2006-01-02 15:04:05\""
}

// alterRoutineLoad parses the rest of ALTER ROUTINE LOAD FOR [db.]name
// [load_property [, ...]] [PROPERTIES (...)] [FROM KAFKA (...)].
func (p *parser) alterRoutineLoad() (*Statement, *Error) {
	const clause = "ALTER ROUTINE LOAD"
	if err := p.expect(clause, "FOR"); err != nil {
		return nil, err
	}
	db, name, nameTok, err := p.qualifiedName(clause, "a job name")
	if err != nil {
		return nil, err
	}
	a := &Alter{DB: db, Name: name}
	// Doris's grammar: ALTER ROUTINE LOAD FOR name (ON table)? (loadProperty
	// (, loadProperty)*)? propertyClause? (FROM type (...))?; the job must
	// be PAUSED for them (the node checks).
	var target *api.TableSpec
	if p.accept("ON") {
		tdb, tname, _, err := p.qualifiedName(clause+" ON", "a table name")
		if err != nil {
			return nil, err
		}
		if tdb == "" {
			tdb = db // FOR db.job ON t: t of database db
		}
		target = &api.TableSpec{Name: tname, Database: tdb}
	}
	load := &api.JobSpec{}
	lc, err := p.loadProperties(clause, load)
	if err != nil {
		return nil, err
	}
	if target != nil {
		// The node fills the table's columns from its catalog.
		load.Table = target
		lc.given[fieldTable] = true
	}
	if len(load.GetTargetPartitions()) > 0 {
		return nil, p.errf(lc.partTok, "PARTITION", "the partitions a job loads are set at CREATE ROUTINE LOAD and cannot be altered")
	}
	if lc.temporary != nil {
		return nil, p.errf(lc.tempTok, "TEMPORARY PARTITION", "the temporary partition a job loads is set at CREATE ROUTINE LOAD and cannot be altered")
	}
	jp := &jobProps{}
	if p.accept("PROPERTIES") {
		props, err := p.properties("PROPERTIES")
		if err != nil {
			return nil, err
		}
		for _, pr := range props {
			if err := p.jobProperty(jp, pr, true); err != nil {
				return nil, err
			}
		}
		if err := p.checkFuzzyParse(jp); err != nil {
			return nil, err
		}
		a.Properties = jp.raw
		if a.Properties == nil {
			a.Properties = map[string]string{}
		}
	}
	var k *kafkaProps
	if p.peek().is("FROM") {
		loc, _ := config.LoadTimezone(jp.timezone) // the ALTER's own timezone, else UTC
		if k, err = p.fromSource(true, loc); err != nil {
			return nil, err
		}
		a.Kafka = k.spec
	}
	if a.Properties == nil && a.Kafka == nil && len(lc.given) == 0 {
		return nil, p.errf(p.peek(), clause, "expected ON, COLUMNS, WHERE, DELETE ON, ORDER BY, PROPERTIES (...) or FROM KAFKA (...) after %s", nameTok.describe())
	}
	for _, f := range changeOrder {
		if jp.given[f] || lc.given[f] || (k != nil && k.given[f]) {
			a.Changed = append(a.Changed, f)
		}
	}
	a.Request = alterRequest(name, load, jp, k, a.Changed)
	return &Statement{Alter: a}, nil
}

// alterRequest builds Alter.Request from the load properties in load and
// the changes in jp and k (k may be nil). A statement that changes no
// spec field (only a reset of offsets, or only no-op properties) sends no
// spec: the job's stays as it is.
func alterRequest(name string, load *api.JobSpec, jp *jobProps, k *kafkaProps, changed []string) *api.AlterJobRequest {
	req := &api.AlterJobRequest{Name: name, Spec: proto.Clone(load).(*api.JobSpec)}
	req.Spec.Name = name
	jp.apply(req.Spec)
	for _, f := range changed {
		switch f {
		case fieldOffsets:
			if k.given[fieldTopic] {
				// The new topic's start offsets, in the spec.
				req.UpdateMask = append(req.UpdateMask, f)
				continue
			}
			req.ResetOffsets = maps.Clone(k.spec.GetOffsets())
		case fieldKafkaProps:
			for _, key := range slices.Sorted(maps.Keys(k.spec.GetProperties())) {
				req.UpdateMask = append(req.UpdateMask, fieldKafkaProps+"."+key)
			}
		default:
			req.UpdateMask = append(req.UpdateMask, f)
		}
	}
	if k != nil {
		ks := proto.Clone(k.spec).(*api.KafkaSpec)
		if !k.given[fieldTopic] {
			ks.Offsets = nil
		}
		req.Spec.Kafka = ks
	}
	if len(req.UpdateMask) == 0 {
		// Without a mask the spec would be the whole new spec (job alter
		// -f): a statement that only resets offsets changes none.
		req.Spec = nil
	}
	return req
}

// fromKinesis parses the property list of FROM KINESIS (...):
//
//	"kinesis_stream"                     stream name (required)
//	"kinesis_region" | "aws.region"      region (required unless an endpoint)
//	"kinesis_endpoint" | "aws.endpoint"  service URL override
//	"aws.access_key" | "aws.access_key_id", "aws.secret_key" |
//	"aws.secret_access_key", "aws.session_token", "aws.profile"
//	                                     credentials (default: the AWS chain)
//	"kinesis_shards"                     "shardId-000000000000, ..."
//	"kinesis_positions"                  one position per shard of kinesis_shards
//	"property.kinesis_default_position"  TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339>
//
// Anything else is refused by name.
func (p *parser) fromKinesis(src token) (*kafkaProps, *Error) {
	props, err := p.properties("FROM KINESIS")
	if err != nil {
		return nil, err
	}
	k := &api.KinesisSpec{}
	var shards, positions *property
	for i := range props {
		pr := &props[i]
		clause := "FROM KINESIS " + quote(pr.rawKey)
		v := strings.TrimSpace(pr.val)
		bad := func(format string, args ...any) *Error {
			return p.errf(pr.valTok, clause, "%s %s", quote(pr.val), fmt.Sprintf(format, args...))
		}
		nonEmpty := func(dst *string) *Error {
			if v == "" {
				return bad("must not be empty")
			}
			*dst = v
			return nil
		}
		var e *Error
		switch pr.key {
		case "kinesis_stream":
			e = nonEmpty(&k.Stream)
		case "kinesis_region", "aws.region":
			e = nonEmpty(&k.Region)
		case "kinesis_endpoint", "aws.endpoint":
			e = nonEmpty(&k.Endpoint)
		case "aws.access_key", "aws.access_key_id":
			e = nonEmpty(&k.AccessKeyId)
		case "aws.secret_key", "aws.secret_access_key":
			e = nonEmpty(&k.SecretAccessKey)
		case "aws.session_token":
			e = nonEmpty(&k.SessionToken)
		case "aws.profile":
			e = nonEmpty(&k.Profile)
		case "kinesis_shards":
			for s := range strings.SplitSeq(v, ",") {
				s = strings.TrimSpace(s)
				if s == "" {
					return nil, bad("must be a comma-separated list of shard ids")
				}
				k.Shards = append(k.Shards, s)
			}
			shards = pr
		case "kinesis_positions":
			positions = pr
		case "kinesis_default_position", "property.kinesis_default_position":
			pos, ok := config.CanonicalPosition(v)
			if !ok {
				return nil, bad("must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number")
			}
			k.DefaultPosition = pos
		default:
			return nil, p.errf(pr.keyTok, clause, "not supported by loadnode (supported: kinesis_stream, kinesis_region, kinesis_endpoint, aws.access_key, aws.secret_key, aws.session_token, aws.profile, kinesis_shards, kinesis_positions, property.kinesis_default_position)")
		}
		if e != nil {
			return nil, e
		}
	}
	if positions != nil {
		clause := "FROM KINESIS " + quote(positions.rawKey)
		if shards == nil {
			return nil, p.errf(positions.keyTok, clause, "requires kinesis_shards (one position per shard)")
		}
		var list []string
		for s := range strings.SplitSeq(positions.val, ",") {
			pos, ok := config.CanonicalPosition(strings.TrimSpace(s))
			if !ok {
				return nil, p.errf(positions.valTok, clause, "%s must be TRIM_HORIZON, LATEST, AT_TIMESTAMP:<RFC3339 time> or a sequence number", quote(strings.TrimSpace(s)))
			}
			list = append(list, pos)
		}
		if len(list) != len(k.Shards) {
			return nil, p.errf(positions.valTok, clause, "%d positions for %d shards; give one per shard of kinesis_shards", len(list), len(k.Shards))
		}
		k.Positions = make(map[string]string, len(list))
		for i, s := range k.Shards {
			k.Positions[s] = list[i]
		}
	}
	if k.Stream == "" {
		return nil, p.errf(src, "FROM KINESIS", "kinesis_stream is required")
	}
	return &kafkaProps{kinesis: k, given: map[string]bool{}}, nil
}
