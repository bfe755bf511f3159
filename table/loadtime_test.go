package table

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// loadTimeSchema is (id INT, d DATETIME DEFAULT CURRENT_TIMESTAMP,
// d3 DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3), d6 DATETIME(6) DEFAULT
// CURRENT_TIMESTAMP).
func loadTimeSchema(t *testing.T) *Schema {
	t.Helper()
	s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT32},
		{Name: "d", Type: api.ColumnType_DATETIME, DefaultCurrentTimestamp: true},
		{Name: "d3", Type: api.ColumnType_DATETIME, Precision: 3, DefaultCurrentTimestamp: true, DefaultCurrentTimestampPrecision: 3},
		{Name: "d6", Type: api.ColumnType_DATETIME, Precision: 6, DefaultCurrentTimestamp: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDefaultLoadTime: a column whose default is the load time takes the
// time SetLoadTime gave, as a wall clock in the job's zone at the default's
// precision, when a JSON record, a COLUMNS mapping or an INSERT leaves it
// out; a value the load names wins.
func TestDefaultLoadTime(t *testing.T) {
	s := loadTimeSchema(t)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	load := time.Date(2025, 12, 1, 10, 0, 5, 123456789, time.UTC) // 18:00:05.123456 in Shanghai
	for _, tt := range []struct {
		name string
		f    Format
		in   string
		want string
	}{
		{"json, UTC", Format{Kind: "json"}, `{"id": 1}`, "1|2025-12-01 10:00:05|2025-12-01 10:00:05.123|2025-12-01 10:00:05.000000"},
		{"json, the job's zone", Format{Kind: "json", Location: shanghai}, `{"id": 1}`, "1|2025-12-01 18:00:05|2025-12-01 18:00:05.123|2025-12-01 18:00:05.000000"},
		{"json names d", Format{Kind: "json"}, `{"id": 1, "d": "2020-01-01 00:00:00"}`, "1|2020-01-01 00:00:00|2025-12-01 10:00:05.123|2025-12-01 10:00:05.000000"},
		{"json null is NULL", Format{Kind: "json"}, `{"id": 1, "d": null}`, "1|NULL|2025-12-01 10:00:05.123|2025-12-01 10:00:05.000000"},
		{"csv mapping", Format{Columns: []string{"id", "d6"}}, "2,2021-02-03 04:05:06.7", "2|2025-12-01 10:00:05|2025-12-01 10:00:05.123|2021-02-03 04:05:06.700000"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			p.SetLoadTime(load)
			row, err := p.Parse([]byte(tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(s, row); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	row, err := s.RowOf([]string{"id"}, []*api.InsertCell{{Text: "3"}}, load.In(shanghai))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(s, row), "3|2025-12-01 18:00:05|2025-12-01 18:00:05.123|2025-12-01 18:00:05.000000"; got != want {
		t.Errorf("INSERT: got %s, want %s", got, want)
	}
	// Before 1970 the fraction is truncated toward the past too.
	if v := loadTimeValue(time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC), 0); v.Int != -1e6 {
		t.Errorf("1969-12-31 23:59:59.999999 at precision 0 = %d µs, want -1000000", v.Int)
	}
}

// TestDefaultLoadTimeRefused: only a DATETIME column defaults to the load
// time, with one default and a precision within the column's.
func TestDefaultLoadTimeRefused(t *testing.T) {
	for _, tt := range []struct {
		c    *api.Column
		want string
	}{
		{&api.Column{Name: "c", Type: api.ColumnType_DATE, DefaultCurrentTimestamp: true}, "only DATETIME"},
		{&api.Column{Name: "c", Type: api.ColumnType_DATETIME, DefaultCurrentTimestamp: true, DefaultValue: proto.String("2020-01-01")}, "one default"},
		{&api.Column{Name: "c", Type: api.ColumnType_DATETIME, Precision: 3, DefaultCurrentTimestamp: true, DefaultCurrentTimestampPrecision: 6}, "want 0..3"},
		{&api.Column{Name: "c", Type: api.ColumnType_DATETIME, DefaultCurrentTimestampPrecision: 2}, "only with default_current_timestamp"},
	} {
		if _, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{tt.c}}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v; want %q", tt.c, err, tt.want)
		}
	}
}

// TestTimestampInJobZone: a TIMESTAMP with text_in_job_zone (Doris's
// TIMESTAMP) reads zone-less text as a wall clock in the job's zone, to
// whole seconds as Doris reads a DATETIME; text with an offset is that
// instant; a JSON number is not a TIMESTAMP; an expression sees the wall
// clock in the job's zone; an INSERT reads it in UTC.
func TestTimestampInJobZone(t *testing.T) {
	s, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT32},
		{Name: "t", Type: api.ColumnType_TIMESTAMP, TextInJobZone: true}}})
	if err != nil {
		t.Fatal(err)
	}
	plus10 := time.FixedZone("+10:00", 10*3600)
	instant := func(s string) string {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return formatValue(&api.Column{Type: api.ColumnType_TIMESTAMP}, Value{Int: tm.UnixMicro()})
	}
	for _, tt := range []struct {
		name string
		f    Format
		in   string
		want string
	}{
		{"csv in +10:00", Format{Location: plus10}, "1,2020-01-01 10:00:00", "1|" + instant("2020-01-01T00:00:00Z")},
		{"csv in UTC", Format{}, "1,2020-01-01 10:00:00", "1|" + instant("2020-01-01T10:00:00Z")},
		{"an offset wins", Format{Location: plus10}, "1,2020-01-01 10:00:00+08:00", "1|" + instant("2020-01-01T02:00:00Z")},
		{"whole seconds", Format{Location: plus10}, "1,2020-01-01 10:00:00.4", "1|" + instant("2020-01-01T00:00:00Z")},
		{"json text", Format{Kind: "json", Location: plus10}, `{"id": 1, "t": "2025-01-01 11:11:11"}`, "1|" + instant("2025-01-01T01:11:11Z")},
		{"a json number is not a TIMESTAMP", Format{Kind: "json", NonStrict: true}, `{"id": 1, "t": 1577872800000}`, "1|NULL"},
		{"where sees the zone's wall clock", Format{Location: plus10, Columns: []string{"id", "t"}, Where: "t = '2020-01-01 10:00:00'"}, "1,2020-01-01 10:00:00", "1|" + instant("2020-01-01T00:00:00Z")},
		{"computed", Format{Location: plus10, Columns: []string{"id", "x", "t = concat(x, ' 10:00:00')"}}, "1,2020-01-01", "1|" + instant("2020-01-01T00:00:00Z")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewParser(s, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			row, err := p.Parse([]byte(tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(s, row); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	row, err := s.RowOf(nil, []*api.InsertCell{{Text: "1"}, {Text: "2020-01-01 10:00:00"}}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(s, row), "1|"+instant("2020-01-01T10:00:00Z"); got != want {
		t.Errorf("INSERT: %s, want %s", got, want)
	}
	if _, err := NewSchema(&api.TableSpec{Name: "t", Columns: []*api.Column{{Name: "d", Type: api.ColumnType_DATETIME, TextInJobZone: true}}}); err == nil ||
		!strings.Contains(err.Error(), "only a TIMESTAMP") {
		t.Errorf("DATETIME text_in_job_zone: %v", err)
	}
}

// TestLoadTimezoneOneHourDigit: as Doris, "+8:00" is the offset +08:00.
func TestLoadTimezoneOneHourDigit(t *testing.T) {
	for tz, want := range map[string]int{"+8:00": 8 * 3600, "-3:30": -(3*3600 + 30*60), "+08:00": 8 * 3600} {
		loc, err := LoadTimezone(tz)
		if err != nil {
			t.Errorf("%s: %v", tz, err)
			continue
		}
		if _, off := time.Date(2020, 1, 1, 0, 0, 0, 0, loc).Zone(); off != want {
			t.Errorf("%s: offset %d s, want %d", tz, off, want)
		}
	}
	for _, bad := range []string{"+8:0", "+x:00", "+8"} {
		if _, err := LoadTimezone(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestJSONDuplicateKeyFirstWins: a key given twice in an object loads its
// first value, as Doris (test_json_load select29), at any depth and for any
// number of keys; the later value must still be JSON.
func TestJSONDuplicateKeyFirstWins(t *testing.T) {
	s := typedSchema(t, "k1 int", "k2 int")
	p, err := NewParser(s, Format{Kind: "json"})
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		`{"k1": 10, "k1": 100}`:              "10|NULL",
		`{"k1": 10, "k2": 2, "k1": null}`:    "10|2",
		`{"k1": null, "k1": 5}`:              "NULL|NULL",
		`{"x": {"k1": 1}, "k1": 7, "k1": 8}`: "7|NULL",
	} {
		row, err := p.Parse([]byte(in), nil)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := render(s, row); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	if _, err := p.Parse([]byte(`{"k1": 1, "k1": tru}`), nil); err == nil {
		t.Error("a later duplicate that is not JSON was accepted")
	}
	// Beyond 64 keys of one object.
	var cols []string
	var obj []string
	for i := 0; i < 70; i++ {
		cols = append(cols, fmt.Sprintf("c%d int", i))
		obj = append(obj, fmt.Sprintf(`"c%d": %d`, i, i))
	}
	wide := typedSchema(t, cols...)
	wp, err := NewParser(wide, Format{Kind: "json"})
	if err != nil {
		t.Fatal(err)
	}
	row, err := wp.Parse([]byte("{"+strings.Join(obj, ", ")+`, "c69": 1000, "c3": 1000}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if row[69].Int != 69 || row[3].Int != 3 {
		t.Errorf("c69 = %d, c3 = %d; want 69, 3", row[69].Int, row[3].Int)
	}
}
