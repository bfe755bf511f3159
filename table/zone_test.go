package table

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
)

// TestZonedDatetimeLoad: a DATETIME text ending in a zone loads as the job
// zone's wall clock of that instant, and a DATE text ending in one as the
// date written, as Doris loads them. The rows are those of Doris's
// regression suite datatype_p0/datetimev2/test_tz_streamload (a CSV stream
// load with time_zone +02:00 into k1 DATETIMEV2(3), k2 DATEV2), with
// Doris's answers for k1; k2 as the newer test_tz_streamload2 answers (the
// older suite's Doris moved the date too: 2022-03-31 in the fourth row).
// Before zones were read, every row but the first loaded NULL.
func TestZonedDatetimeLoad(t *testing.T) {
	s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "k1", Type: api.ColumnType_DATETIME, Precision: 3},
		{Name: "k2", Type: api.ColumnType_DATE},
	}})
	if err != nil {
		t.Fatal(err)
	}
	plus2, err := LoadTimezone("+02:00")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(s, Format{Kind: "csv", ColumnSeparator: ",", Location: plus2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"2022-01-01 01:02:55,2022-01-01 01:02:55.123", "2022-01-01 01:02:55.000|2022-01-01"},
		{"2022-02-01 01:02:55Z,2022-02-01 01:02:55.123Z", "2022-02-01 03:02:55.000|2022-02-01"},
		{"2022-03-01 01:02:55Asia/Shanghai,2022-03-01 01:02:55.123UTC", "2022-02-28 19:02:55.000|2022-03-01"},
		{"2022-04-01T01:02:55-06:00,2022-04-01T01:02:55.123+06:00", "2022-04-01 09:02:55.000|2022-04-01"},
		{"2022-05-01 01:02:55+02:30,2022-05-01 01:02:55.123-02:30", "2022-05-01 00:32:55.000|2022-05-01"},
		{"2022-06-01T01:02:55+04:30,2022-06-01 01:02:55.123-07:30", "2022-05-31 22:32:55.000|2022-06-01"},
		{"20220701010255+07:00,20220701010255-05:00", "2022-06-30 20:02:55.000|2022-07-01"},
		{"20220801+05:00,20220801America/Argentina/Buenos_Aires", "2022-07-31 21:00:00.000|2022-08-01"},
		// Beyond the suite: a fraction kept across the move, a named zone's
		// summer time, hours after UTC, lower case, CST (Doris: Shanghai);
		// the DATE as written (23:30 at -1:30 is the next day in +02:00).
		{"2022-02-01 01:02:55.456z,2022-02-01", "2022-02-01 03:02:55.456|2022-02-01"},
		{"2022-07-01 12:00:00America/New_York,2022-07-01", "2022-07-01 18:00:00.000|2022-07-01"},
		{"2022-01-01 12:00:00UTC+8,2022-01-01 12:00:00GMT-05:00", "2022-01-01 06:00:00.000|2022-01-01"},
		{"2022-01-01 12:00:00cst,2022-01-01 23:30:00-1:30", "2022-01-01 06:00:00.000|2022-01-01"},
	} {
		row, err := p.Parse([]byte(tt.in), nil)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		got := formatValue(s.Columns()[0], row[0]) + "|" + formatValue(s.Columns()[1], row[1])
		if got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, got, tt.want)
		}
	}
	// Text after a datetime that is no zone is not a datetime, as before:
	// an error row in strict mode.
	for _, in := range []string{
		"2022-01-01 01:02:55 +08:00", // a space before the zone
		"2022-01-01 01:02:55+15:00",  // past +14 hours
		"2022-01-01 01:02:55-13:00",  // past -12 hours
		"2022-01-01 01:02:55+0800",   // Doris wants the colon
		"2022-01-01 01:02:55+08",     // and minutes after a bare sign
		"2022-01-01 01:02:55Mars/Olympus_Mons",
		"2022-01-01 01:02:55Asia/../Shanghai",
		"2022-01-01 01:02:55UTC+8:0",
		"2022-01-01 01:02:55" + strings.Repeat("A", maxZoneName+1),
		"2022-13-01 01:02:55Z", // the datetime itself is checked as before
		"9999-12-31 23:00:00-05:00",
	} {
		if row, err := p.Parse([]byte(in+",2022-01-01"), nil); err == nil {
			t.Errorf("%q loaded %s, want an error", in, formatValue(s.Columns()[0], row[0]))
		}
	}
}

// TestZonedDatetimeWithoutJob: without a job (an INSERT, a default) the
// zone is moved to UTC, loadnode's session zone.
func TestZonedDatetimeWithoutJob(t *testing.T) {
	col := &api.Column{Name: "d", Type: api.ColumnType_DATETIME}
	v, reason := convertText(api.ColumnType_DATETIME, colMeta{}, []byte("2022-02-01 01:02:55+08:00"))
	if reason != "" {
		t.Fatal(reason)
	}
	if got := formatValue(col, v); got != "2022-01-31 17:02:55" {
		t.Errorf("got %s, want 2022-01-31 17:02:55", got)
	}
	if _, reason := convertText(api.ColumnType_DATE, colMeta{}, []byte("2022-02-01 01:02:55Nowhere")); reason == "" {
		t.Error("an unknown zone converted")
	}
	// test_tz_streamload2 (timezone UTC): the DATETIME moves, the DATE not.
	for _, tt := range []struct {
		typ  api.ColumnType
		want string
	}{{api.ColumnType_DATETIME, "2024-04-10 22:00:13"}, {api.ColumnType_DATE, "2024-04-11"}} {
		v, reason := convertText(tt.typ, colMeta{}, []byte("2024-04-11T06:00:13+08:00"))
		if got := formatValue(&api.Column{Type: tt.typ}, v); reason != "" || got != tt.want {
			t.Errorf("%s: got %s (%s), want %s", tt.typ, got, reason, tt.want)
		}
	}
}

// TestLookupZoneCache: a zone name is looked up once; junk names past the
// cache's bound are still answered and do not keep real zones out.
func TestLookupZoneCache(t *testing.T) {
	a, ok := lookupZone("Europe/Paris")
	b, ok2 := lookupZone("Europe/Paris")
	if !ok || !ok2 || a != b {
		t.Fatalf("Europe/Paris: %v %v, same location %v", ok, ok2, a == b)
	}
	if _, ok := lookupZone("Europe/Nowhere"); ok {
		t.Fatal("Europe/Nowhere resolved")
	}
	if _, ok := lookupZone("Europe/Nowhere"); ok {
		t.Fatal("Europe/Nowhere resolved from the cache")
	}
	for i := range maxUnknownZones + 10 {
		if _, ok := lookupZone(fmt.Sprintf("Nowhere/Z%d", i)); ok {
			t.Fatal("a junk zone resolved")
		}
	}
	unknown := 0
	zoneCache.Range(func(_, v any) bool {
		if v.(*time.Location) == nil {
			unknown++
		}
		return true
	})
	if unknown > maxUnknownZones {
		t.Errorf("%d unknown zone names cached, want at most %d", unknown, maxUnknownZones)
	}
	c, ok := lookupZone("Europe/Berlin")
	d, ok2 := lookupZone("Europe/Berlin")
	if !ok || !ok2 || c != d {
		t.Fatalf("Europe/Berlin after junk: %v %v, same location %v", ok, ok2, c == d)
	}
	if loc, ok := offsetZone("-00:00", false); !ok || loc != time.UTC {
		t.Fatalf("-00:00: %v %v", loc, ok)
	}
}

// TestZonedTimestampNamedZone: a TIMESTAMP read in the job's zone takes
// the other zones a DATETIME does as the instant they name.
func TestZonedTimestampNamedZone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{"2022-07-01 12:00:00.25Asia/Shanghai", "2022-07-01T04:00:00.25Z"},
		{"2022-07-01 12:00:00UTC+8", "2022-07-01T04:00:00Z"},
		{"2022-07-01 12:00:00+08:00", "2022-07-01T04:00:00Z"},
		{"2022-07-01 12:00:00", "2022-07-01T16:00:00Z"}, // no zone: New York's wall clock
	} {
		n, e := zonedTimestamp([]byte(tt.in), ny)
		if got := time.UnixMicro(n).UTC().Format(time.RFC3339Nano); e != numOK || got != tt.want {
			t.Errorf("%q: got %s (%d), want %s", tt.in, got, e, tt.want)
		}
	}
	if _, e := zonedTimestamp([]byte("2022-07-01 12:00:00Nowhere"), ny); e == numOK {
		t.Error("an unknown zone read")
	}
}

// TestCastZoned: CAST of text with a zone to DATETIME is the job zone's
// wall clock of that instant, to DATE the date written, as Doris's
// test_tz_load casts it (UTC, then Asia/Shanghai); an unknown zone is NULL.
func TestCastZoned(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		loc        *time.Location
		expr, want string
	}{
		{time.UTC, "CAST('2024-04-11T06:00:13+08:00' AS DATETIME)", "2024-04-10 22:00:13"},
		{time.UTC, "CAST('2024-04-11T06:00:13+08:00' AS DATE)", "date 2024-04-11"},
		{time.UTC, "CAST('2024-04-11T16:00:13+08:00' AS DATETIME)", "2024-04-11 08:00:13"},
		{shanghai, "CAST('2024-04-11T06:00:13+08:00' AS DATETIME)", "2024-04-11 06:00:13"},
		{shanghai, "CAST('2024-04-11T06:00:13.5Z' AS DATETIME(3))", "2024-04-11 14:00:13.500000"},
		{shanghai, "CAST('2024-04-11T06:00:13Nowhere' AS DATETIME)", `\N`},
	} {
		c, err := EvalConst(tt.expr, tt.loc)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := constString(c); got != tt.want {
			t.Errorf("%s in %s: %s, want %s", tt.expr, tt.loc, got, tt.want)
		}
	}
}

// TestZoneNamesAnyCase: a zone name is found in any case, as Doris finds
// it (it lower-cases the names it preloads from the tz database), in a
// value, a job's timezone and CONVERT_TZ; a name that is none stays none.
func TestZoneNamesAnyCase(t *testing.T) {
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"asia/shanghai", "ASIA/SHANGHAI", "Asia/shanghai", "america/argentina/buenos_aires"} {
		loc, ok := lookupZone(name)
		if !ok {
			t.Errorf("%s: not found", name)
			continue
		}
		if !strings.EqualFold(loc.String(), name) {
			t.Errorf("%s: found %s", name, loc)
		}
		if _, err := LoadTimezone(name); err != nil {
			t.Errorf("timezone %s: %v", name, err)
		}
	}
	if loc, err := LoadTimezone("asia/shanghai"); err != nil || loc.String() != sh.String() {
		t.Errorf("timezone asia/shanghai: %v %v", loc, err)
	}
	for _, name := range []string{"asia/shangai", "posix/asia/shanghai", "zone.tab", "asia/../asia/shanghai", strings.Repeat("a", maxZoneName+1)} {
		if _, ok := lookupZone(name); ok {
			t.Errorf("%s: found", name)
		}
		if _, err := LoadTimezone(name); err == nil {
			t.Errorf("timezone %s: accepted", name)
		} else if len(err.Error()) > 2*maxZoneName+100 {
			t.Errorf("timezone %s: error of %d bytes", name[:8], len(err.Error()))
		}
	}
	v, reason := convertText(api.ColumnType_DATETIME, colMeta{}, []byte("2022-02-01 08:02:55asia/shanghai"))
	if got := formatValue(&api.Column{Type: api.ColumnType_DATETIME}, v); reason != "" || got != "2022-02-01 00:02:55" {
		t.Errorf("a value in asia/shanghai: %s (%s)", got, reason)
	}
	cv, rowErr, err := evalConst(`CONVERT_TZ('2019-08-01 13:21:03', 'asia/shanghai', 'AMERICA/LOS_ANGELES')`)
	if got := dorisRender(cv); err != nil || rowErr != nil || got != "2019-07-31T22:21:03" {
		t.Errorf("CONVERT_TZ in lower and upper case: %s %v %v", got, err, rowErr)
	}
}

// TestLoadTimezoneCached: a named zone is read from the tz database once,
// not at each call (CONVERT_TZ resolves its zones for every row).
func TestLoadTimezoneCached(t *testing.T) {
	a, err := LoadTimezone("Pacific/Auckland")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadTimezone("Pacific/Auckland")
	if err != nil || a != b {
		t.Fatalf("the second load: %v, the same location %v", err, a == b)
	}
}

// TestReadZoneNamesBound: the case-folded index holds at most its limit.
func TestReadZoneNamesBound(t *testing.T) {
	all := readZoneNames(zoneRoot(), maxKnownZones)
	if len(all) < 300 {
		t.Fatalf("%d zone names under %q, want the tz database's (some 600)", len(all), zoneRoot())
	}
	if n := len(readZoneNames(zoneRoot(), 10)); n != 10 {
		t.Errorf("%d names read with a limit of 10", n)
	}
	for lower, name := range all {
		if strings.HasPrefix(lower, "posix/") || strings.HasPrefix(lower, "right/") || !zoneNameOK(name) {
			t.Errorf("%s listed", name)
		}
	}
}
