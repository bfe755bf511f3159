package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/loadnode/loadnode/api"
)

// Format says how source records are laid out.
type Format struct {
	// Kind is "csv", "json", "avro" or "protobuf" (case-insensitive);
	// empty means csv. Doris's csv_with_names and csv_with_names_and_types
	// are csv with 1 and 2 header lines per record (SkipLines), hive_text
	// csv with the byte 0x01 as its default separator and no enclose. avro and protobuf records are turned into JSON by
	// Decoder and then read as json records (decoder.go).
	Kind string
	// Decoder decodes avro and protobuf records; nil for csv and json. A
	// parser of a binary format without one refuses every record (a spec
	// check builds parsers without one).
	Decoder Decoder
	// ColumnSeparator separates csv fields; empty means ",". It may be
	// several bytes; "\t" (tab), the two characters `\t`, and `\xHH` escapes
	// are accepted. Ignored for json.
	ColumnSeparator string
	// JSONPaths, json only, has one path per column: "$.a.b", "$.a[0]",
	// "$['a']"; "$" is the whole record. Empty means top-level keys match the
	// column names. A single element holding a JSON array of paths (the Doris
	// spelling `["$.a","$.b"]`) is accepted too.
	JSONPaths []string
	// NonStrict is Doris's strict_mode "false": a value that does not
	// convert to its column's type loads as NULL (a DECIMAL out of range as
	// its largest or smallest value), and the row is an error row only when
	// the column is NOT NULL. When false (strict), such a row is an error
	// row. A NULL in a NOT NULL column is an error row either way.
	NonStrict bool
	// Columns is the column mapping (Doris COLUMNS (...)), one entry per
	// item as written: "k1", "tmp", "v2 = tmp * 100" (see mapping.go).
	// Empty: the record's fields are the table's columns in order.
	Columns []string
	// Where filters rows after the mapping (Doris WHERE); "" keeps all.
	Where string
	// JSONRoot, json only, is the path of the object the fields are read
	// from ("$.data"); "" is the record itself.
	JSONRoot string
	// EmptyFieldAsNull, csv only: an empty unquoted field is NULL in text
	// columns too (Doris empty_field_as_null).
	EmptyFieldAsNull bool
	// Location is the zone of conversions that need one; nil is UTC.
	Location *time.Location
	// LCTimeNames is the job's lc_time_names (LCTimeNames), the language
	// of DAYNAME and MONTHNAME in its expressions; "" is en_US.
	LCTimeNames string
	// Enclose, csv only, encloses a field holding separators; 0 means '"'
	// (RFC 4180: csv.go) unless NoEnclose, when quotes are literal (Doris's
	// default; kind hive_text's too). Given, fields split and unescape as
	// Doris's reader does (enclose.go).
	Enclose   byte
	NoEnclose bool
	// Escape, csv only, makes the next character literal; it is removed
	// from every field (a trailing one too, as Doris). 0 means none.
	Escape byte
	// MergeType (UNIQUE tables): DELETE makes every row a delete; MERGE
	// makes the rows for which DeleteOn is true deletes (Deleted).
	MergeType api.MergeType
	DeleteOn  string
	// StripOuterArray, json only (Doris strip_outer_array): a record is a
	// JSON array, each element (an object) one row; see Split. JSONRoot,
	// when the record is an object, names the array.
	StripOuterArray bool
	// TargetPartitions (Doris PARTITION (p1, p2)) are the partitions of
	// the table the load writes; a row of another partition is an error
	// row, as is a row of none. Empty: every partition.
	TargetPartitions []string
	// TrimDoubleQuotes, csv only (Doris trim_double_quotes): a field that
	// starts and ends with '"' (two bytes at least) loses both; a field
	// quoted on one side keeps its quote.
	TrimDoubleQuotes bool
	// SkipLines, csv only (Doris skip_lines): the lines skipped at the
	// start of each record. Kind csv_with_names skips 1 and
	// csv_with_names_and_types 2 instead, as Doris.
	SkipLines int
	// NumAsString, json only (Doris num_as_string): a JSON number is read
	// as a string of its text (into DATE, a date's digits).
	NumAsString bool
	// MaxValueBytes bounds what the parser makes beyond the record's own
	// bytes: every text value an expression makes on the way (columns,
	// where, delete_on), and an avro or protobuf record decoded to JSON.
	// A record that would need a larger one is an error row naming the
	// limit. 0 means DefaultMaxValueBytes; a node's tasks set its
	// max_record_size, so that no value is larger than the largest record.
	MaxValueBytes int
	// Flexible (Doris unique_key_update_mode UPDATE_FLEXIBLE_COLUMNS,
	// json only, no COLUMNS list, merge type APPEND): each row names the
	// columns its record has a value for (Named); a column it does not
	// name takes its default (NULL without one) and is not checked NOT
	// NULL here, since a stored key keeps its own value (Schema.Merge). A
	// row that does not name every key column is an error row.
	Flexible bool
	// Sequence is the load's sequence column (Doris ORDER BY,
	// function_column.sequence_col): into a table with a hidden sequence,
	// the field of the record (a name of the COLUMNS list, else a table
	// column) whose value, as the hidden sequence's type, is the row's
	// sequence. Unused for other tables (the sequence is a column there:
	// Schema.WithSequence).
	Sequence string
}

// DefaultMaxValueBytes is the limit on a value when Format.MaxValueBytes
// is 0: 16 MiB, the default max_record_size.
const DefaultMaxValueBytes = 16 << 20

// ParseError is why one record did not parse. Its message is a human reason
// for an error row, without a package prefix (it describes the data, not
// this package), e.g. `column amount: "abc" is not an INT64`.
type ParseError struct {
	Column string // the column at fault; empty when the record as a whole is bad
	Reason string
}

func (e *ParseError) Error() string { return e.Reason }

// Parser turns one source record into one row. It is not safe for concurrent
// use: it reuses buffers. Use one per task.
type Parser struct {
	s      *Schema
	json   bool
	strict bool
	// scanASCII is whether the string scanString last scanned is all
	// ASCII; textASCII, set around one setText, that its text is.
	scanASCII, textASCII bool
	// maxValue is Format.MaxValueBytes, defaulted (> 0).
	maxValue int
	// The record's fields (slots): the table's columns, or a mapping's
	// fields. dst holds their values while a record is parsed.
	types     []api.ColumnType
	meta      []colMeta
	names     []string
	m         *mapping // nil: the slots are the table's columns
	slotBuf   []Value
	out       []Value // the table row, when m != nil
	emptyNull bool

	// csv
	sep     []byte
	sepByte byte // sep[0] when len(sep) == 1
	enclose byte // 0: none
	escape  byte // 0: none
	// dorisEnclose: the enclose character was given (Format.Enclose), so
	// fields split and unescape as Doris's reader does (enclose.go);
	// otherwise a default '"' encloses as RFC 4180 does (csv.go).
	// trimEnclose: such a field enclosed at both ends loses them.
	dorisEnclose, trimEnclose bool
	// trimQuotes: trim_double_quotes; skipLines: the lines skipped at the
	// start of each record (Split).
	trimQuotes bool
	skipLines  int

	// json: numStr is num_as_string
	numStr bool

	// json
	root *jnode
	// fields: the paths name a field; found: the record being parsed
	// has a value at one of them (json.go)
	fields, found bool
	// avro, protobuf: the decoder, and the JSON it wrote for the record
	// being parsed (reused: borrowed STRING values alias it until the next
	// record)
	dec    Decoder
	binary bool
	jbuf   []byte
	// metadata the mapping reads (meta.go), set by SetMeta per record
	meta0       *RecordMeta
	keyJSONUsed bool   // the mapping reads __key_json
	keyJSON     []byte // the key decoded with dec, per record

	// per record
	raw    []byte
	rawStr string // string(raw), made on demand to slice STRING values from
	hasStr bool
	borrow bool // STRING values alias raw (ParseBorrowed)
	dst    []Value
	colErr *ParseError
	buf    []byte // unescape scratch

	deleteAll bool // merge type DELETE
	deleted   bool // the last row deletes its key (DELETE ON)

	// loc is Format.Location (UTC when nil); now is the load time
	// SetLoadTime gave (nowSet), the value of DEFAULT CURRENT_TIMESTAMP.
	loc    *time.Location
	now    time.Time
	nowSet bool

	// parts checks rows against the table's partitions; nil when the
	// table has none.
	parts *partitionFilter
	// strip: strip_outer_array (strip.go); split is json_root's path,
	// where the array is in an object record and, with jsonpaths
	// (stripPaths), each element's row; rootText is json_root as written.
	strip      bool
	stripPaths bool
	split      *jnode
	rootText   string

	// present marks, per field, that the json record being parsed has a
	// value for it (json.go); flex: Format.Flexible, named the table
	// columns the last row names (Named).
	flex    bool
	present []bool
	named   []bool
}

// SetLoadTime sets the load time of the rows parsed next: a DATETIME
// column whose default is the load time (Doris DEFAULT CURRENT_TIMESTAMP)
// and whose value the load does not name takes it, as a wall clock in
// Format.Location, at the default's precision. A task sets it once per
// batch, as Doris takes one time per load; a batch parsed again after a
// crash takes a new time, which is safe because only one parse of a batch
// is ever committed (its rows commit with its progress). Never set, a row
// takes the time it is parsed.
func (p *Parser) SetLoadTime(t time.Time) { p.now, p.nowSet = t, true }

// defaultOf is the value a row takes in a column (of meta m) its load does
// not name: the load time, the column's DEFAULT, or NULL.
func (p *Parser) defaultOf(m *colMeta) Value {
	switch {
	case m.defNow:
		t := p.now
		if !p.nowSet {
			t = time.Now()
		}
		return loadTimeValue(t.In(p.loc), m.nowPrec)
	case m.hasDef:
		return m.def
	}
	return Value{Null: true}
}

// loadTimeValue is t's wall clock as a DATETIME value with prec fraction
// digits (the rest truncated, as Doris's now(p)).
func loadTimeValue(t time.Time, prec int) Value {
	_, off := t.Zone()
	micros := (t.Unix()+int64(off))*1e6 + int64(t.Nanosecond()/1e3)
	unit := int64(1)
	for i := prec; i < MaxDatetimePrecision; i++ {
		unit *= 10
	}
	if r := micros % unit; r != 0 {
		micros -= r
		if r < 0 {
			micros -= unit
		}
	}
	return Value{Int: micros}
}

// Deleted reports whether the row the last Parse returned deletes its key
// (merge type DELETE, or MERGE and DELETE ON is true for it).
func (p *Parser) Deleted() bool { return p.deleteAll || p.deleted }

// Mapped reports, per table column, whether the load names it: the
// COLUMNS list has it as a field or computes it (a partial update sets
// only these). Without a mapping every column is named.
//
// A hidden sequence (the last of Width values) is named when the load has
// a sequence column.
func (p *Parser) Mapped() []bool {
	out := make([]bool, p.s.Width())
	for i := range out {
		out[i] = p.m == nil && i < len(p.s.cols) || p.m != nil && (p.m.out[i].slot >= 0 || p.m.out[i].expr != nil)
	}
	return out
}

// Named reports, per table column, whether the row the last Parse
// returned names it (Format.Flexible); nil otherwise. The slice is the
// parser's: copy it to keep it past the next Parse.
func (p *Parser) Named() []bool {
	if !p.flex {
		return nil
	}
	return p.named
}

// NewParser validates f against s and returns a parser. Errors are
// *FieldError naming format, column_separator or jsonpaths.
func NewParser(s *Schema, f Format) (*Parser, error) {
	p := &Parser{s: s, types: s.types[:len(s.cols)], meta: s.meta[:len(s.cols)], strict: !f.NonStrict, emptyNull: f.EmptyFieldAsNull}
	p.names = make([]string, len(s.cols))
	for i, c := range s.cols {
		p.names[i] = c.GetName()
	}
	loc := f.Location
	if loc == nil {
		loc = time.UTC
	}
	p.loc = loc
	deleteOn := ""
	switch f.MergeType {
	case api.MergeType_APPEND:
		if strings.TrimSpace(f.DeleteOn) != "" {
			return nil, fieldErr("delete_on", "DELETE ON needs merge type MERGE")
		}
	case api.MergeType_MERGE:
		if strings.TrimSpace(f.DeleteOn) == "" {
			return nil, fieldErr("delete_on", "merge type MERGE needs a DELETE ON expression")
		}
		deleteOn = f.DeleteOn
	case api.MergeType_DELETE:
		if strings.TrimSpace(f.DeleteOn) != "" {
			return nil, fieldErr("delete_on", "DELETE ON needs merge type MERGE, not DELETE")
		}
		p.deleteAll = true
	default:
		return nil, fieldErr("merge_type", "unknown merge type %v", f.MergeType)
	}
	if f.MergeType != api.MergeType_APPEND && s.spec.GetModel() != api.TableModel_UNIQUE {
		return nil, fieldErr("merge_type", "merge type %s needs a UNIQUE table (%s is %s)", f.MergeType, s.Name(), s.spec.GetModel())
	}
	if f.MaxValueBytes < 0 {
		return nil, fieldErr("max_record_size", "%d: a limit on a value may not be negative", f.MaxValueBytes)
	}
	p.maxValue = f.MaxValueBytes
	if p.maxValue == 0 {
		p.maxValue = DefaultMaxValueBytes
	}
	parts, err := newPartitionFilter(s, f.TargetPartitions)
	if err != nil {
		return nil, err
	}
	p.parts = parts
	seq := ""
	if s.hidden {
		seq = strings.Trim(strings.TrimSpace(f.Sequence), "`")
	}
	names, err := lookupTimeNames(f.LCTimeNames)
	if err != nil {
		return nil, fieldErr("lc_time_names", "%s", err)
	}
	m, err := compileMapping(s, f.Columns, f.Where, deleteOn, seq, loc)
	if err != nil {
		return nil, err
	}
	if m != nil {
		m.env.limit = p.maxValue
		m.env.names = names
		p.m = m
		p.types, p.meta, p.names = nil, nil, nil
		for _, sl := range m.slots {
			p.types = append(p.types, sl.typ)
			p.meta = append(p.meta, sl.meta)
			p.names = append(p.names, sl.name)
		}
		p.slotBuf = make([]Value, len(m.slots))
		for _, r := range m.metas {
			p.keyJSONUsed = p.keyJSONUsed || r.kind == metaKeyJSON
		}
	}
	if f.SkipLines < 0 {
		return nil, fieldErr("skip_lines", "%d: must be >= 0", f.SkipLines)
	}
	switch kind := strings.ToLower(f.Kind); kind {
	case "", "csv", "csv_with_names", "csv_with_names_and_types", "hive_text":
		if f.NumAsString {
			return nil, fieldErr("num_as_string", "num_as_string applies to the json format only")
		}
		p.trimQuotes, p.skipLines = f.TrimDoubleQuotes, f.SkipLines
		switch kind {
		case "csv_with_names":
			p.skipLines = 1
		case "csv_with_names_and_types":
			p.skipLines = 2
		case "hive_text":
			if f.ColumnSeparator == "" {
				f.ColumnSeparator = `\x01`
			}
			if f.Enclose == 0 {
				f.NoEnclose = true
			}
		}
		if len(f.JSONPaths) > 0 {
			return nil, fieldErr("jsonpaths", "jsonpaths apply to the json format only")
		}
		if f.JSONRoot != "" {
			return nil, fieldErr("json_root", "json_root applies to the json format only")
		}
		if f.StripOuterArray {
			return nil, fieldErr("strip_outer_array", "strip_outer_array applies to the json format only")
		}
		sep, err := parseSeparator(f.ColumnSeparator)
		if err != nil {
			return nil, fieldErr("column_separator", "%s", err)
		}
		p.sep = sep
		p.sepByte = sep[0]
		p.enclose, p.escape = '"', f.Escape
		switch {
		case f.NoEnclose:
			p.enclose = 0
		case f.Enclose != 0:
			p.enclose = f.Enclose
			p.dorisEnclose = true
			p.trimEnclose = f.TrimDoubleQuotes || f.Enclose != '"'
		}
		if p.enclose != 0 && bytes.IndexByte(sep, p.enclose) >= 0 || p.escape != 0 && bytes.IndexByte(sep, p.escape) >= 0 {
			return nil, fieldErr("enclose", "the enclose and escape characters may not be part of the column separator")
		}
	case "json", "avro", "protobuf":
		if f.SkipLines != 0 || f.TrimDoubleQuotes {
			return nil, fieldErr("skip_lines", "skip_lines and trim_double_quotes apply to the csv formats only")
		}
		if f.NumAsString && kind != "json" {
			return nil, fieldErr("num_as_string", "num_as_string applies to the json format only")
		}
		p.numStr = f.NumAsString
		p.json = true
		p.binary = binaryFormat(f.Kind)
		p.dec = f.Decoder
		jsonRoot := f.JSONRoot
		if f.StripOuterArray {
			if p.binary {
				return nil, fieldErr("strip_outer_array", "strip_outer_array applies to the json format only (a %s record decodes to one object)", strings.ToLower(f.Kind))
			}
			p.strip = true
			p.stripPaths = len(f.JSONPaths) > 0
			if jsonRoot != "" {
				// Doris: json_root names the array in an object record;
				// with jsonpaths it is also applied to each element (the
				// element's row is read from the object it names).
				split := &jnode{}
				if _, err := compilePath(split, jsonRoot); err != nil {
					return nil, fieldErr("json_root", "%s: %s", api.Quote(jsonRoot), err)
				}
				p.split, p.rootText = split, jsonRoot
				jsonRoot = ""
			}
		}
		root, err := p.compilePaths(f.JSONPaths, jsonRoot)
		if err != nil {
			return nil, err
		}
		p.root = root
		p.fields = len(p.names) > 0
	default:
		return nil, fieldErr("format", "unknown format %q (want csv, csv_with_names, csv_with_names_and_types, hive_text, json, avro or protobuf)", f.Kind)
	}
	if p.json {
		p.present = make([]bool, len(p.names))
	}
	if f.Flexible {
		switch {
		case s.spec.GetModel() != api.TableModel_UNIQUE || !s.spec.GetSkipBitmapColumn():
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS needs a UNIQUE table with enable_unique_key_skip_bitmap_column (%s has none), as in Doris", s.Name())
		case !p.json:
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS needs the json format (not %s), as in Doris", f.Kind)
		case len(f.Columns) > 0:
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS takes no COLUMNS list (each record names its columns), as in Doris")
		case f.MergeType != api.MergeType_APPEND:
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS takes no merge type %s, as in Doris", f.MergeType)
		case s.seq >= 0:
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS into a table with a sequence column (%s) is not supported by loadnode", s.Name())
		}
		p.flex = true
		p.named = make([]bool, len(s.cols))
	}
	return p, nil
}

// parseSeparator decodes a column separator: empty means ",", `\t` is a tab,
// `\\` a backslash and `\xHH` a byte.
func parseSeparator(s string) ([]byte, error) {
	if s == "" {
		return []byte{','}, nil
	}
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			out = append(out, c)
			continue
		}
		switch s[i+1] {
		case 't':
			out = append(out, '\t')
			i++
		case '\\':
			out = append(out, '\\')
			i++
		case 'x', 'X':
			if i+3 < len(s) {
				v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
				if err == nil {
					out = append(out, byte(v))
					i += 3
					continue
				}
			}
			return nil, fmt.Errorf("bad escape in %q: want \\xHH", s)
		default:
			out = append(out, c)
		}
	}
	for _, c := range out {
		if c == '"' || c == '\n' || c == '\r' {
			return nil, fmt.Errorf("separator %q may not contain a quote or a line break", s)
		}
	}
	return out, nil
}

// Parse parses raw into dst (resized to the number of columns) and returns
// it. Errors are *ParseError. STRING values may share one copy of raw; raw
// itself is not retained.
func (p *Parser) Parse(raw []byte, dst []Value) ([]Value, error) {
	return p.parse(raw, dst, false)
}

// ParseBorrowed is Parse without the copy of raw: STRING values that need
// no unescaping alias raw's bytes. They are valid only while raw is neither
// modified nor reused, so the caller must be done with the row (encode it)
// before that. It saves one allocation and copy of each record for callers
// that encode the row at once, as a task does.
func (p *Parser) ParseBorrowed(raw []byte, dst []Value) ([]Value, error) {
	return p.parse(raw, dst, true)
}

func (p *Parser) parse(raw []byte, dst []Value, borrow bool) ([]Value, error) {
	n := p.s.Width()
	if cap(dst) < n {
		dst = make([]Value, n)
	}
	dst = dst[:n]
	if p.m == nil && n > len(p.s.cols) {
		dst[n-1] = Value{Null: true} // a hidden sequence the load does not name
	}
	p.raw, p.rawStr, p.hasStr, p.dst, p.colErr, p.borrow, p.deleted = raw, "", false, dst, nil, borrow, false
	if p.m != nil {
		p.dst, p.out = p.slotBuf, dst
	}
	var err error
	if p.keyJSONUsed {
		if err = p.decodeKey(); err != nil {
			p.raw, p.dst, p.out = nil, nil, nil
			return dst, err
		}
	}
	if p.binary {
		if err = p.decode(raw); err != nil {
			p.raw, p.dst, p.out = nil, nil, nil
			return dst, err
		}
	}
	if p.json {
		err = p.parseJSON()
	} else {
		err = p.parseCSV()
	}
	if err == nil && p.m != nil {
		err = p.apply(p.dst, dst)
	}
	if err == nil {
		p.finish(dst)
		if p.colErr != nil {
			err = p.colErr
		}
	}
	if err == nil && p.parts != nil {
		// After the filter (WHERE) and the conversions, as Doris's sink
		// finds a row's partition after its scanner.
		if perr := p.parts.check(dst); perr != nil {
			err = perr
		}
	}
	p.raw, p.rawStr, p.dst, p.out = nil, "", nil, nil
	if err != nil {
		return dst, err
	}
	return dst, nil
}

// decode turns the binary record raw into JSON and makes it the record
// the json parser reads.
func (p *Parser) decode(raw []byte) error {
	if p.dec == nil {
		return &ParseError{Reason: "format has no decoder (no schema registry)"}
	}
	out, err := p.dec.AppendJSON(p.jbuf[:0], raw, p.maxValue)
	if err != nil {
		return err
	}
	p.jbuf = out
	p.raw = out
	return nil
}

// str returns raw[i:j] as a string, slicing one copy of the record, or
// raw itself when borrowing.
func (p *Parser) str(i, j int) string {
	if p.borrow {
		if i == j {
			return ""
		}
		// The caller of ParseBorrowed keeps raw unmodified while it uses
		// the row.
		return unsafe.String(&p.raw[i], j-i)
	}
	if !p.hasStr {
		p.rawStr, p.hasStr = string(p.raw), true
	}
	return p.rawStr[i:j]
}

// setErr records the first column error of a record; col is a field.
func (p *Parser) setErr(col int, format string, args ...any) {
	p.setErrName(p.names[col], format, args...)
}

func (p *Parser) setErrName(name, format string, args ...any) {
	if p.colErr == nil {
		p.colErr = &ParseError{Column: name, Reason: "column " + name + ": " + fmt.Sprintf(format, args...)}
	}
}

// setText parses text b into column col. When off >= 0, b is raw[off:off+len(b)]
// and a STRING value slices the record copy; otherwise b is scratch and is
// copied.
func (p *Parser) setText(col int, b []byte, off int) {
	v := &p.dst[col]
	v.reset()
	t := p.types[col]
	if t == api.ColumnType_TIMESTAMP && p.meta[col].jobZone {
		n, e := zonedTimestamp(b, p.loc)
		if e != numOK {
			p.convFail(col, convReason(t, p.meta[col], b, e))
			return
		}
		v.Int = n
		return
	}
	if p.textASCII && (t == api.ColumnType_STRING || (t == api.ColumnType_CHAR || t == api.ColumnType_VARCHAR) && len(b) <= p.meta[col].length) {
		// JSON text whose scan found only ASCII: valid UTF-8 (what
		// convertInto would check again), within the column's length.
		if off >= 0 {
			v.Str = p.str(off, off+len(b))
		} else {
			v.Str = string(b)
		}
		return
	}
	if e := convertInto(v, t, &p.meta[col], b, p.loc); e != numOK {
		if e != numLength || p.strict {
			if ip, ok := intPart(b); ok && e == numSyntax && !p.strict && (isInt(t) || t == api.ColumnType_INT128) {
				// Doris, strict_mode false: a decimal text loads its integer
				// part into an integer column ("3.12" is 3).
				if convertInto(v, t, &p.meta[col], ip, p.loc) == numOK {
					return
				}
			}
			p.convFail(col, convReason(t, p.meta[col], b, e))
			return
		}
		b = truncText(b, p.meta[col].length)
	}
	if t == api.ColumnType_STRING || t == api.ColumnType_CHAR || t == api.ColumnType_VARCHAR {
		if off >= 0 {
			v.Str = p.str(off, off+len(b))
		} else {
			v.Str = string(b)
		}
	}
}

// intPart is the integer part of a decimal text, [sign]digits.digits (the
// fraction digits may be none): "3.12" is "3". ok is false for any other
// text.
func intPart(b []byte) ([]byte, bool) {
	dot := bytes.IndexByte(b, '.')
	if dot < 0 {
		return nil, false
	}
	digits := b[:dot]
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return nil, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	for _, c := range b[dot+1:] {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	return b[:dot], true
}

// convFail handles a value of column col that did not convert: strict, the
// record is an error row; not strict, the cell is NULL (a DECIMAL out of
// range too, as Doris loads it), and the record is an error row only if
// the column is NOT NULL. A CHAR or VARCHAR text too long is no failure
// when not strict: it is cut (truncText).
func (p *Parser) convFail(col int, reason string) {
	if p.strict {
		p.setErr(col, "%s", reason)
		return
	}
	p.dst[col] = Value{Null: true}
	if p.meta[col].notNull {
		p.setErr(col, "%s (strict_mode is false, but the column is NOT NULL)", reason)
	}
}

// finish checks the NOT NULL columns of a parsed row.
func (p *Parser) finish(row []Value) {
	if p.colErr != nil {
		return
	}
	if p.flex {
		for i := range p.named {
			sl := i
			if p.m != nil {
				sl = p.m.out[i].slot
			}
			p.named[i] = sl >= 0 && p.present[sl]
			if !p.named[i] && slices.Contains(p.s.keys, i) {
				p.setErrName(p.s.cols[i].GetName(), "a flexible partial update (UPDATE_FLEXIBLE_COLUMNS) row must name every key column")
				return
			}
		}
	}
	for i := range row {
		if p.flex && !p.named[i] {
			continue // a stored key keeps its value; a new key's is checked by Schema.Merge
		}
		if row[i].Null && p.s.meta[i].notNull {
			p.setErrName(p.s.cols[i].GetName(), "NULL in a NOT NULL column")
			return
		}
	}
}

// article is "an INT64", "a FLOAT64", "a TINYINT", ...
func article(t api.ColumnType) string {
	n := typeName(t)
	if strings.IndexByte("AEIOU", n[0]) >= 0 {
		return "an " + n
	}
	return "a " + n
}

// maxQuoted bounds how much of a bad value an error message repeats.
const maxQuoted = 64

func quote(b []byte) string {
	if len(b) > maxQuoted {
		return strconv.Quote(string(b[:maxQuoted])) + "..."
	}
	return strconv.Quote(string(b))
}

// ---------------------------------------------------------------- json paths

// jnode is one step of the compiled jsonpaths: the columns that take the
// value found here, and the keys or array elements to descend into.
type jnode struct {
	cols  []int
	names []string // object keys, in first-seen order
	kids  []*jnode // kids[i] follows names[i]
	// plain[i]: names[i] has no byte a JSON string must escape (a quote,
	// a backslash, a control character), so a record spells it as is
	// (object's fast path).
	plain []bool
	index map[string]int
	elems map[int]*jnode // array elements
}

func (n *jnode) key(name string) *jnode {
	if i, ok := n.index[name]; ok {
		return n.kids[i]
	}
	if n.index == nil {
		n.index = make(map[string]int)
	}
	k := &jnode{}
	n.index[name] = len(n.names)
	n.names = append(n.names, name)
	n.kids = append(n.kids, k)
	n.plain = append(n.plain, plainKey(name))
	return k
}

// plainKey reports whether a JSON string holding name needs no escape.
func plainKey(name string) bool {
	for i := 0; i < len(name); i++ {
		if strStop[name[i]] {
			return false
		}
	}
	return true
}

func (n *jnode) elem(i int) *jnode {
	if k, ok := n.elems[i]; ok {
		return k
	}
	if n.elems == nil {
		n.elems = make(map[int]*jnode)
	}
	k := &jnode{}
	n.elems[i] = k
	return k
}

// lookup finds the child for key b, trying names[hint] first (records
// usually list keys in column order). It returns the child and its index.
func (n *jnode) lookup(b []byte, hint int) (*jnode, int) {
	if hint < len(n.names) && n.names[hint] == string(b) {
		return n.kids[hint], hint
	}
	if i, ok := n.index[string(b)]; ok {
		return n.kids[i], i
	}
	return nil, -1
}

func (n *jnode) hasChildren() bool { return len(n.names) > 0 || len(n.elems) > 0 }

// compilePaths builds the path tree: one key per field under the root
// (json_root, or the record) when paths is empty, else the i-th path for
// the i-th field.
func (p *Parser) compilePaths(paths []string, jsonRoot string) (*jnode, error) {
	root := &jnode{}
	base := root
	if jsonRoot != "" {
		n, err := compilePath(root, jsonRoot)
		if err != nil {
			return nil, fieldErr("json_root", "%s: %s", api.Quote(jsonRoot), err)
		}
		base = n
	}
	if len(paths) == 0 {
		for i, name := range p.names {
			k := base.key(name)
			k.cols = append(k.cols, i)
		}
		return root, nil
	}
	if len(paths) == 1 && strings.HasPrefix(strings.TrimSpace(paths[0]), "[") {
		var list []string
		if err := json.Unmarshal([]byte(paths[0]), &list); err != nil {
			return nil, fieldErr("jsonpaths", "not a JSON array of strings: %v", err)
		}
		paths = list
	}
	// The i-th path feeds the i-th field, as in Doris: a field past the
	// last path is missing from every record (its DEFAULT, NULL without
	// one), a path past the last field is unused.
	scratch := &jnode{}
	for i, path := range paths {
		if path == "$." { // Doris's spelling of the whole document
			path = "$"
		}
		if i >= len(p.names) {
			if _, err := compilePath(scratch, path); err != nil {
				return nil, fieldErr(fmt.Sprintf("jsonpaths[%d]", i), "%s: %s", api.Quote(path), err)
			}
			continue
		}
		n, err := compilePath(base, path)
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("jsonpaths[%d]", i), "%s: %s", api.Quote(path), err)
		}
		if n == base && !isText(p.types[i]) {
			return nil, fieldErr(fmt.Sprintf("jsonpaths[%d]", i), "%q is the whole record, which only a text column can take (column %s is %s)", path, p.names[i], p.types[i])
		}
		n.cols = append(n.cols, i)
	}
	return root, nil
}

// compilePath adds one path to the tree and returns its node. Syntax: "$"
// then any of .key, ['key'], ["key"], [n]. A path of more steps than a
// record may nest (maxJSONDepth) could never match, and is refused.
func compilePath(root *jnode, path string) (*jnode, error) {
	if !strings.HasPrefix(path, "$") {
		return nil, fmt.Errorf("must start with $")
	}
	n := root
	rest := path[1:]
	for steps := 0; len(rest) > 0; steps++ {
		if steps == maxJSONDepth {
			return nil, fmt.Errorf("nests deeper than %d levels (a record nests at most %d)", maxJSONDepth, maxJSONDepth)
		}
		switch rest[0] {
		case '.':
			rest = rest[1:]
			if len(rest) > 0 && rest[0] == '"' {
				// Doris's quoted key, which may hold a dot: $.tags."a.b"
				end := strings.IndexByte(rest[1:], '"')
				switch {
				case end < 0:
					return nil, fmt.Errorf("unclosed \"")
				case end == 0:
					return nil, fmt.Errorf("empty key")
				}
				after := rest[end+2:]
				if after != "" && after[0] != '.' && after[0] != '[' {
					return nil, fmt.Errorf("unexpected %q after a quoted key", after[0])
				}
				n = n.key(rest[1 : end+1])
				rest = after
				continue
			}
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key := rest[:end]
			if key == "" || key == "*" {
				return nil, fmt.Errorf("empty or wildcard key")
			}
			n = n.key(key)
			rest = rest[end:]
		case '[':
			if len(rest) > 1 && (rest[1] == '\'' || rest[1] == '"') {
				q := rest[1]
				end := strings.Index(rest[2:], string(q)+"]")
				if end < 0 {
					return nil, fmt.Errorf("unclosed [%c", q)
				}
				if end == 0 {
					return nil, fmt.Errorf("empty key")
				}
				n = n.key(rest[2 : 2+end])
				rest = rest[2+end+2:]
				continue
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [")
			}
			in := rest[1:end]
			if n == root {
				return nil, fmt.Errorf("a record is an object, not an array")
			}
			i, err := strconv.Atoi(in)
			if err != nil || i < 0 || in[0] == '+' {
				return nil, fmt.Errorf("bad array index %q", in)
			}
			n = n.elem(i)
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q", rest[0])
		}
	}
	return n, nil
}

// FormatOf is the Format a job spec describes: the one place that maps
// spec fields onto parsing options.
func FormatOf(spec *api.JobSpec) Format {
	loc, err := LoadTimezone(spec.GetTimezone())
	if err != nil {
		loc = time.UTC // a stored spec was validated; this is not reached
	}
	return Format{
		Kind:             spec.GetFormat(),
		ColumnSeparator:  spec.GetColumnSeparator(),
		JSONPaths:        spec.GetJsonpaths(),
		NonStrict:        spec.StrictMode != nil && !spec.GetStrictMode(),
		Columns:          spec.GetColumnsMapping(),
		Where:            spec.GetWhere(),
		JSONRoot:         spec.GetJsonRoot(),
		EmptyFieldAsNull: spec.GetEmptyFieldAsNull(),
		Location:         loc,
		LCTimeNames:      spec.GetLcTimeNames(),
		NoEnclose:        spec.Enclose != nil && spec.GetEnclose() == "",
		Enclose:          firstByte(spec.GetEnclose()),
		Escape:           firstByte(spec.GetEscape()),
		MergeType:        spec.GetMergeType(),
		DeleteOn:         spec.GetDeleteOn(),
		StripOuterArray:  spec.GetStripOuterArray(),
		TargetPartitions: spec.GetTargetPartitions(),
		TrimDoubleQuotes: spec.GetTrimDoubleQuotes(),
		SkipLines:        int(spec.GetSkipLines()),
		NumAsString:      spec.GetNumAsString(),
		Flexible:         strings.EqualFold(spec.GetUniqueKeyUpdateMode(), UpdateFlexible),
		Sequence:         spec.GetSequenceColumn(),
	}
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// LoadTimezone resolves a job's timezone: "" or UTC, an IANA name
// ("Asia/Shanghai") or a fixed offset ("+08:00", "-0530").
func LoadTimezone(tz string) (*time.Location, error) {
	tz = strings.TrimSpace(tz)
	switch strings.ToUpper(tz) {
	case "", "UTC", "Z", "GMT", "ETC/UTC":
		return time.UTC, nil
	}
	if tz[0] == '+' || tz[0] == '-' {
		if len(tz) == 5 && tz[2] == ':' && tz[1] >= '0' && tz[1] <= '9' {
			// Doris also takes one hour digit: "+8:00" is "+08:00".
			tz = tz[:1] + "0" + tz[1:]
		}
		t, err := time.Parse("-07:00", tz)
		if err != nil {
			if t, err = time.Parse("-0700", tz); err != nil {
				return nil, fmt.Errorf("%q: want an IANA zone name or an offset such as +08:00", tz)
			}
		}
		_, off := t.Zone()
		return time.FixedZone(tz, off), nil
	}
	// A name: found in any case, as Doris does, and cached (CONVERT_TZ
	// resolves its zones for every row).
	loc, ok := (*time.Location)(nil), zoneNameOK(tz)
	if ok {
		loc, ok = cachedZone(tz)
	}
	if !ok {
		return nil, fmt.Errorf("%q: unknown zone (want an IANA zone name or an offset such as +08:00)", api.Clip(tz, maxZoneName))
	}
	return loc, nil
}
