package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
)

// maxRawShown is how many bytes of an error row's raw input `job show`
// prints.
const maxRawShown = 200

// timeLayout renders times in `job show`: UTC, milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// printJobList prints NAME STATE REASON HEALTH LAG ROWS TABLE SOURCE SINK,
// one job a line; a summary without a status (health) shows "-" there, an
// unknown lag or row count (-1: in cluster mode, an owner that did not
// answer) "?". In cluster mode (any job has an owner) an OWNER column
// follows.
func printJobList(w io.Writer, jobs []*api.JobSummary) error {
	tw := newTable(w)
	owners := false
	for _, j := range jobs {
		owners = owners || j.GetOwner() != ""
	}
	head := "NAME\tSTATE\tREASON\tHEALTH\tLAG\tROWS\tTABLE\tSOURCE\tSINK"
	if owners {
		head += "\tOWNER"
	}
	fmt.Fprintln(tw, head)
	for _, j := range jobs {
		health, lag, rows, sk := "-", "-", "-", "-"
		if j.GetHealth() != "" {
			health, lag, rows, sk = j.GetHealth(), watermark(j.GetTotalLag()), watermark(j.GetLoadedRows()), cell(j.GetSink())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", cell(j.GetName()), j.GetState(), reasonText(j.GetReason()),
			health, lag, rows, cell(j.GetTable()), cell(j.GetSource()), sk)
		if owners {
			o := j.GetOwner()
			if o == "" {
				o = "-"
			}
			fmt.Fprintf(tw, "\t%s", cell(o))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func reasonText(r api.Reason) string {
	if r == api.Reason_REASON_UNSPECIFIED {
		return "-"
	}
	return r.String()
}

// msTime renders a Unix time in milliseconds; 0 is "-".
func msTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(timeLayout)
}

// watermark renders an offset, a lag or a row count where -1 means
// unknown ("?").
func watermark(v int64) string {
	if v < 0 {
		return "?"
	}
	return strconv.FormatInt(v, 10)
}

// printJobText prints `job show -o text`.
func printJobText(w io.Writer, info *api.JobInfo) error {
	bw := bufio.NewWriter(w)
	s := info.GetSummary()
	tw := newTable(bw)
	fmt.Fprintf(tw, "Job:\t%s (id %d)\n", cell(s.GetName()), s.GetId())
	fmt.Fprintf(tw, "State:\t%s\n", cell(stateText(s)))
	if h := info.GetHealth(); h != "" {
		fmt.Fprintf(tw, "Health:\t%s\n", h)
	}
	if ts := info.GetSpec().GetTables(); len(ts) == 0 {
		fmt.Fprintf(tw, "Table:\t%s\n", cell(s.GetTable()))
	} else {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.GetName()
		}
		fmt.Fprintf(tw, "Tables:\t%s (multi-table: each record is table|record)\n", cell(strings.Join(names, ", ")))
	}
	if k := info.GetSink(); k != "" {
		fmt.Fprintf(tw, "Sink:\t%s%s\n", cell(k), unreachableText(info))
	}
	fmt.Fprintf(tw, "Source:\t%s\n", cell(s.GetSource()))
	if o := s.GetOwner(); o != "" {
		fmt.Fprintf(tw, "Owner:\t%s (epoch %d)\n", cell(o), s.GetEpoch())
	}
	if f := info.GetSpec().GetFormat(); f != "" {
		fmt.Fprintf(tw, "Format:\t%s\n", cell(f))
	}
	fmt.Fprintf(tw, "Created:\t%s\n", msTime(info.GetCreatedUnixMs()))
	fmt.Fprintf(tw, "Running tasks:\t%d\n", info.GetRunningTasks())
	if info.GetSpec().GetKinesis() != nil {
		behind := int64(-1)
		for _, p := range info.GetPartitions() {
			behind = max(behind, p.GetMillisBehind())
		}
		lag := "?"
		if behind >= 0 {
			lag = (time.Duration(behind) * time.Millisecond).String() + " behind (the slowest shard)"
		}
		fmt.Fprintf(tw, "Lag:\t%s\n", lag)
	} else {
		fmt.Fprintf(tw, "Total lag:\t%s\n", watermark(info.GetTotalLag()))
	}
	if info.GetHealth() != "" {
		fmt.Fprintf(tw, "Rows/s (1 min):\t%.0f\n", info.GetRowsPerSecond())
		if ms := info.GetLastProgressUnixMs(); ms > 0 {
			fmt.Fprintf(tw, "Last progress:\t%s\n", msTime(ms))
		}
	}
	tw.Flush()

	if h := info.GetHistory(); len(h) > 0 {
		fmt.Fprintln(bw, "\nHistory:")
		tw = newTable(bw)
		fmt.Fprintln(tw, "  SEQ\tTIME\tFROM\tTO\tREASON\tMESSAGE")
		for _, t := range h {
			from := "-"
			if t.GetFrom() != api.JobState_JOB_STATE_UNSPECIFIED {
				from = t.GetFrom().String()
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", t.GetSeq(), msTime(t.GetTimeUnixMs()), from, t.GetTo(), reasonText(t.GetReason()), cell(t.GetMessage()))
		}
		tw.Flush()
	}

	if ps := info.GetPartitions(); len(ps) > 0 && info.GetSpec().GetKinesis() != nil {
		fmt.Fprintln(bw, "\nShards:")
		tw = newTable(bw)
		fmt.Fprintln(tw, "  SHARD\tSTATE\tRECORDS\tPOSITION\tBEHIND\tPARENTS")
		for _, p := range ps {
			behind := "-"
			if ms := p.GetMillisBehind(); ms >= 0 {
				behind = (time.Duration(ms) * time.Millisecond).String()
			}
			parents := make([]string, 0, len(p.GetParents()))
			for _, q := range p.GetParents() {
				parents = append(parents, strconv.Itoa(int(q)))
			}
			id := p.GetShardId()
			if id == "" {
				id = strconv.Itoa(int(p.GetPartition()))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\n", id, orDash(p.GetShardState()), p.GetCommittedOffset(), orDash(p.GetSequence()), behind, orDash(strings.Join(parents, ",")))
		}
		tw.Flush()
	} else if len(ps) > 0 {
		fmt.Fprintln(bw, "\nPartitions:")
		tw = newTable(bw)
		fmt.Fprintln(tw, "  PARTITION\tCOMMITTED\tHIGH WATERMARK\tLAG")
		for _, p := range ps {
			fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\n", p.GetPartition(), p.GetCommittedOffset(), watermark(p.GetHighWatermark()), watermark(p.GetLag()))
		}
		tw.Flush()
	}

	if u := info.GetProgressUnavailable(); u != "" {
		// A stopped job's figures are its sink's, which did not answer.
		fmt.Fprintf(bw, "\nStats: unavailable: %s\n", cell(u))
	} else {
		st := info.GetStats()
		fmt.Fprintln(bw, "\nStats:")
		tw = newTable(bw)
		fmt.Fprintf(tw, "  loaded rows\t%d\n", st.GetLoadedRows())
		if n := st.GetUnselectedRows(); n > 0 {
			fmt.Fprintf(tw, "  unselected rows\t%d\n", n)
		}
		fmt.Fprintf(tw, "  error rows\t%d\n", st.GetErrorRows())
		fmt.Fprintf(tw, "  received bytes\t%d\n", st.GetReceivedBytes())
		fmt.Fprintf(tw, "  committed batches\t%d\n", st.GetCommittedBatches())
		fmt.Fprintf(tw, "  aborted batches\t%d\n", st.GetAbortedBatches())
		if n := info.GetRefusedCommits(); n > 0 {
			// Not a stored statistic: this node's actor of the job counts them.
			fmt.Fprintf(tw, "  refused commits\t%d on this node; last: %s\n", n, cell(info.GetLastRefusal()))
		}
		fmt.Fprintf(tw, "  error window\t%d error rows in %d rows%s\n", st.GetWindowErrorRows(), st.GetWindowRows(), windowText(info))
		fmt.Fprintf(tw, "  last commit\t%s\n", msTime(st.GetLastCommitUnixMs()))
		tw.Flush()
	}

	if pub := info.GetPublish(); pub != nil {
		fmt.Fprintln(bw, "\nPublishing (best effort, since the source was opened):")
		tw = newTable(bw)
		if g := pub.GetCommitGroup(); g != "" {
			fmt.Fprintf(tw, "  commit group\t%s: %d commits, %d failures", cell(g), pub.GetGroupCommits(), pub.GetGroupFailures())
			if ms := pub.GetGroupLastCommitUnixMs(); ms > 0 {
				fmt.Fprintf(tw, ", last at %s", msTime(ms))
			}
			if e := pub.GetGroupLastError(); e != "" {
				fmt.Fprintf(tw, ", last error: %s", cell(e))
			}
			fmt.Fprintln(tw)
		}
		if tp := pub.GetErrorTopic(); tp != "" {
			fmt.Fprintf(tw, "  error topic\t%s: %d produced, %d pending, %d failures", cell(tp), pub.GetDeadLettersProduced(), pub.GetDeadLettersPending(), pub.GetDeadLetterFailures())
			if e := pub.GetDeadLetterLastError(); e != "" {
				fmt.Fprintf(tw, ", last error: %s", cell(e))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}

	if u := info.GetErrorRowsUnavailable(); u != "" {
		fmt.Fprintf(bw, "\nLast error rows: unavailable: %s\n", cell(u))
	} else if rows := info.GetErrorRows(); len(rows) > 0 {
		fmt.Fprintf(bw, "\nLast error rows (%d):\n", len(rows))
		for _, r := range rows {
			fmt.Fprintf(bw, "  partition %d offset %d at %s: %s\n", r.GetPartition(), r.GetOffset(), msTime(r.GetTimeUnixMs()), cell(r.GetReason()))
			fmt.Fprintf(bw, "    raw: %s\n", quoteRaw(r.GetRaw()))
		}
	}
	return bw.Flush()
}

// unreachableText marks a sink that a show could not read (the error
// rows or, for a stopped job, the progress unavailable), whose reasons
// the sections below give.
func unreachableText(info *api.JobInfo) string {
	if info.GetErrorRowsUnavailable() != "" || info.GetProgressUnavailable() != "" {
		return " (unreachable: see below)"
	}
	return ""
}

// windowText describes the error window: its size and, after a user
// resume, where it started.
func windowText(info *api.JobInfo) string {
	var parts []string
	if n := info.GetErrorWindowSize(); n > 0 {
		parts = append(parts, fmt.Sprintf("window of %d rows", n))
	}
	if seq := info.GetStats().GetWindowStartSeq(); seq > 0 {
		parts = append(parts, fmt.Sprintf("since the resume at history seq %d", seq))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// quoteRaw quotes raw input, cut to maxRawShown bytes.
func quoteRaw(raw []byte) string {
	if len(raw) <= maxRawShown {
		return strconv.Quote(string(raw))
	}
	return fmt.Sprintf("%s... (%d bytes, first %d shown)", strconv.Quote(string(raw[:maxRawShown])), len(raw), maxRawShown)
}

// printJobJSON prints `job show -o json`: the JobInfo in protojson,
// re-indented with encoding/json because protojson's spacing is deliberately
// unstable and scripts diff this output.
func printJobJSON(w io.Writer, info *api.JobInfo) error {
	b, err := protojson.Marshal(info)
	if err != nil {
		return fmt.Errorf("job show: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return fmt.Errorf("job show: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// printJobYAML prints `job show -o yaml`: the spec as a spec file (which
// `job create -f` reads back), preceded by the job's status as comments.
func printJobYAML(w io.Writer, info *api.JobInfo) error {
	if info.GetSpec() == nil {
		return errors.New("job show: the node sent no spec")
	}
	spec, err := config.MarshalJobSpec(info.GetSpec())
	if err != nil {
		return fmt.Errorf("job show: %w", err)
	}
	s := info.GetSummary()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# job %s (id %d)\n", oneLine(s.GetName()), s.GetId())
	fmt.Fprintf(&b, "# state: %s\n", oneLine(stateText(s)))
	fmt.Fprintf(&b, "# created: %s\n", msTime(info.GetCreatedUnixMs()))
	if u := info.GetProgressUnavailable(); u != "" {
		fmt.Fprintf(&b, "# loaded rows, error rows, total lag: unavailable: %s\n", oneLine(u))
	} else {
		fmt.Fprintf(&b, "# loaded rows: %d, error rows: %d, total lag: %s\n",
			info.GetStats().GetLoadedRows(), info.GetStats().GetErrorRows(), watermark(info.GetTotalLag()))
	}
	b.Write(spec)
	_, err = w.Write(b.Bytes())
	return err
}

// oneLine keeps a comment on one line.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// cell makes s safe for one aligned cell: quoted when it is empty, has
// control characters (tabs and newlines would break the alignment) or
// leading or trailing spaces.
// orDash is cell with "-" for an empty value.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return cell(s)
}

func cell(s string) string {
	if s == "" {
		return `""`
	}
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

func needsQuote(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\uFFFD' {
			return true
		}
	}
	return false
}

// columnNames are the scan's column names; a row with more values than
// columns (which a node does not send) gets "_N" names for the extra ones.
func columnNames(schema *api.TableSpec, rows []*api.Row) []string {
	names := make([]string, 0, len(schema.GetColumns()))
	for _, c := range schema.GetColumns() {
		names = append(names, c.GetName())
	}
	for _, r := range rows {
		for i := len(names); i < len(r.GetValues()); i++ {
			names = append(names, "_"+strconv.Itoa(i))
		}
	}
	return names
}

// printRowsJSONL prints one JSON object per row, keyed by column name in
// column order: NULL is null, INT64 a JSON number, TIMESTAMP an RFC 3339
// string in UTC, a non-finite FLOAT64 null.
func printRowsJSONL(w io.Writer, schema *api.TableSpec, rows []*api.Row) error {
	names := columnNames(schema, rows)
	keys := make([][]byte, len(names))
	for i, n := range names {
		keys[i] = appendJSONString(nil, n)
	}
	bw := bufio.NewWriter(w)
	var line []byte
	for _, r := range rows {
		line = append(line[:0], '{')
		for i, k := range keys {
			if i > 0 {
				line = append(line, ',')
			}
			line = append(line, k...)
			line = append(line, ':')
			var v *api.Value
			if i < len(r.GetValues()) {
				v = r.GetValues()[i]
			}
			line = appendJSONValue(line, v)
		}
		line = append(line, '}', '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendJSONValue(dst []byte, v *api.Value) []byte {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return strconv.AppendInt(dst, k.Int64, 10)
	case *api.Value_Float64:
		if math.IsNaN(k.Float64) || math.IsInf(k.Float64, 0) {
			return append(dst, "null"...)
		}
		b, _ := json.Marshal(k.Float64) // encoding/json's float format
		return append(dst, b...)
	case *api.Value_String_:
		return appendJSONString(dst, k.String_)
	case *api.Value_Bool:
		return strconv.AppendBool(dst, k.Bool)
	case *api.Value_TimestampMicros:
		dst = append(dst, '"')
		dst = time.UnixMicro(k.TimestampMicros).UTC().AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"')
	case *api.Value_Decimal:
		return append(dst, k.Decimal...) // exact, as a JSON number
	case *api.Value_Json:
		return append(dst, k.Json...)
	case *api.Value_Date, *api.Value_DatetimeMicros:
		return appendJSONString(dst, formatValue(v))
	}
	return append(dst, "null"...) // Null, or no value
}

// appendJSONString appends s as a JSON string, without HTML escaping.
func appendJSONString(dst []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// printRowsTable prints rows as aligned columns under a header of column
// names: NULL is NULL, strings that would break the alignment are quoted.
func printRowsTable(w io.Writer, schema *api.TableSpec, rows []*api.Row) error {
	names := columnNames(schema, rows)
	tw := newTable(w)
	for i, n := range names {
		if i > 0 {
			io.WriteString(tw, "\t")
		}
		io.WriteString(tw, cell(n))
	}
	io.WriteString(tw, "\n")
	for _, r := range rows {
		for i := range names {
			if i > 0 {
				io.WriteString(tw, "\t")
			}
			var v *api.Value
			if i < len(r.GetValues()) {
				v = r.GetValues()[i]
			}
			io.WriteString(tw, formatValue(v))
		}
		io.WriteString(tw, "\n")
	}
	return tw.Flush()
}

// formatValue renders one cell of `table scan --format table`.
func formatValue(v *api.Value) string {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return strconv.FormatInt(k.Int64, 10)
	case *api.Value_Float64:
		if math.IsNaN(k.Float64) || math.IsInf(k.Float64, 0) {
			return strconv.FormatFloat(k.Float64, 'g', -1, 64)
		}
		b, _ := json.Marshal(k.Float64)
		return string(b)
	case *api.Value_String_:
		if k.String_ == "NULL" {
			return `"NULL"` // not to be read as a NULL
		}
		return cell(k.String_)
	case *api.Value_Bool:
		return strconv.FormatBool(k.Bool)
	case *api.Value_TimestampMicros:
		return time.UnixMicro(k.TimestampMicros).UTC().Format(time.RFC3339Nano)
	case *api.Value_Decimal:
		return k.Decimal
	case *api.Value_Json:
		return cell(k.Json)
	case *api.Value_Date:
		return time.Unix(int64(k.Date)*86400, 0).UTC().Format(time.DateOnly)
	case *api.Value_DatetimeMicros:
		// A wall clock: rendered as the UTC clock of the same number.
		return strings.TrimSuffix(time.UnixMicro(k.DatetimeMicros).UTC().Format("2006-01-02 15:04:05.999999"), ".")
	}
	return "NULL"
}
