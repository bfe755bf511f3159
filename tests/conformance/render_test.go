package conformance

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

// renderValue renders a cell as Doris's regression framework prints the
// JDBC value: NULL as \N, DATETIME as Java's LocalDateTime.toString
// (2023-08-24T12:00), Doris's TIMESTAMP (text_in_job_zone) as its text in
// the suites' session zone (2020-01-01 08:00:00), text with csvEscape, FLOAT and DOUBLE as Java's Float/Double.toString
// (-25698.553, 1.312831962567818E9), DECIMAL with its scale, BOOLEAN as
// true/false, JSON compact.
func renderValue(col *api.Column, v *api.Value) string {
	switch k := v.GetKind().(type) {
	case *api.Value_Int64:
		return strconv.FormatInt(k.Int64, 10)
	case *api.Value_Float64:
		bits := 64
		if col.GetType() == api.ColumnType_FLOAT32 {
			bits = 32
		}
		return javaFloat(k.Float64, bits)
	case *api.Value_String_:
		return csvEscape(k.String_)
	case *api.Value_Bool:
		return strconv.FormatBool(k.Bool)
	case *api.Value_Decimal:
		return k.Decimal
	case *api.Value_Json:
		return csvEscape(k.Json)
	case *api.Value_Date:
		return time.Unix(int64(k.Date)*86400, 0).UTC().Format(time.DateOnly)
	case *api.Value_DatetimeMicros:
		return javaLocalDateTime(time.UnixMicro(k.DatetimeMicros).UTC())
	case *api.Value_TimestampMicros:
		if col.GetTextInJobZone() {
			// Doris's TIMESTAMP: the instant in the session's zone (the
			// suites'), as text to whole seconds.
			return time.UnixMicro(k.TimestampMicros).In(sessionZone).Format(time.DateTime)
		}
		return javaLocalDateTime(time.UnixMicro(k.TimestampMicros).UTC())
	}
	return `\N`
}

// csvEscape is a text value as the framework writes it (commons-csv's
// MySQL format): a backslash before a backslash or a tab, a line break as
// \n, a carriage return as \r.
func csvEscape(s string) string {
	if !strings.ContainsAny(s, "\\\n\r\t") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", "\\\t").Replace(s)
}

// javaFloat is Java's Float.toString (bits 32) or Double.toString: plain
// notation with at least one fraction digit for 1e-3 <= |f| < 1e7, else
// d.dddE±n, with the shortest digits that read back.
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// javaLocalDateTime is LocalDateTime.toString: seconds only when not zero
// (or a fraction is), the fraction in groups of three digits.
func javaLocalDateTime(t time.Time) string {
	s := t.Format("2006-01-02T15:04")
	ns := t.Nanosecond()
	if t.Second() == 0 && ns == 0 {
		return s
	}
	s += t.Format(":05")
	switch {
	case ns == 0:
	case ns%1e6 == 0:
		s += "." + strconv.Itoa(ns/1e6 + 1000)[1:]
	case ns%1e3 == 0:
		s += "." + strconv.Itoa(ns/1e3 + 1e6)[1:]
	default:
		s += "." + strconv.Itoa(ns + 1e9)[1:]
	}
	return s
}

func TestRender(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{javaFloat(float64(float32(-15205.859375)), 32), "-15205.859"},
		{javaFloat(6.0, 32), "6.0"},
		{javaFloat(-306870797.484914, 64), "-3.06870797484914E8"},
		{javaFloat(1312831962.567818, 64), "1.312831962567818E9"},
		{javaFloat(7, 64), "7.0"},
		{javaFloat(6.2750847041706e7, 64), "6.2750847041706E7"},
		{javaFloat(0.0001, 64), "1.0E-4"},
		{javaLocalDateTime(time.Date(2023, 8, 24, 12, 0, 0, 0, time.UTC)), "2023-08-24T12:00"},
		{csvEscape(`c:\windows`), `c:\\windows`}, // corpus test_csv_split_line__sql
		{csvEscape("a\nb"), `a\nb`},
		{csvEscape("plain"), "plain"},
		{javaLocalDateTime(time.Date(2023, 7, 20, 5, 48, 31, 0, time.UTC)), "2023-07-20T05:48:31"},
		{javaLocalDateTime(time.Date(2023, 7, 20, 5, 48, 0, 5e6, time.UTC)), "2023-07-20T05:48:00.005"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}
