package table

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dorisRender renders a value as Doris's regression framework prints it
// in a .out file (tests/conformance/render_test.go): NULL as \N, DATE as
// 2006-01-02, DATETIME as Java's LocalDateTime.toString (seconds only when
// not zero, the fraction in groups of three digits).
func dorisRender(v ev) string {
	switch v.k {
	case eNull:
		return `\N`
	case eDate:
		return string(appendDate(nil, v.i))
	case eDatetime:
		t := time.UnixMicro(v.i).UTC()
		s := t.Format("2006-01-02T15:04")
		if ns := t.Nanosecond(); t.Second() != 0 || ns != 0 {
			s += t.Format(":05")
			switch {
			case ns == 0:
			case ns%1e6 == 0:
				s += "." + strconv.Itoa(ns/1e6 + 1000)[1:]
			default:
				s += "." + strconv.Itoa(ns/1e3 + 1e6)[1:]
			}
		}
		return s
	}
	return v.text()
}

// evalConst evaluates an expression over constants as loadnode's
// mappings do: the value, the error that makes the record an error row,
// or the error that refuses the expression when a job is created.
func evalConst(src string) (ev, error, error) {
	return evalOver(src, "")
}

// evalOver is evalConst with a field a whose text is a.
func evalOver(src, a string) (ev, error, error) {
	n, err := parseExpr(src, func(name string) (int, error) {
		if strings.EqualFold(name, "a") {
			return 0, nil
		}
		return 0, fmt.Errorf("unknown field %q", name)
	})
	if err != nil {
		return evNull, nil, err
	}
	env := &evalEnv{vals: []ev{evStr(a)}, loc: time.UTC}
	v := n.eval(env)
	if env.over != nil {
		return v, env.over, nil
	}
	return v, nil, nil
}

// dorisDateRow is a constant expression with the value Doris gives it.
type dorisDateRow struct {
	row  string // where the row is from: a corpus row (file:line, tag) or a Doris doc or suite
	expr string
	want string // as a .out file renders it
	// refusedBy, when set, is the function loadnode refuses by name
	// (its rows count as unsupported, not wrong).
	refusedBy string
}

// dorisDateCorpus are the rows of the Doris corpus
// (../shared/conformance/doris-corpus/functions) that call DATE_FORMAT,
// STR_TO_DATE and FROM_UNIXTIME with a format: every one, with Doris's
// expected value. TestDorisDateCorpusCovered checks that none is missing.
var dorisDateCorpus = []dorisDateRow{
	{"date_format.tsv:1 sql;n=127", `date_format('2022-08-04', '%X %V %w')`, "2022 31 4", ""},
	{"date_format.tsv:2 date_format_1", `DATE_FORMAT('2009-10-04 22:23:00', '%W %M %Y')`, "Sunday October 2009", ""},
	{"date_format.tsv:3 date_format_2", `DATE_FORMAT('2007-10-04 22:23:00', '%H:%i:%s')`, "22:23:00", ""},
	{"date_format.tsv:4 date_format_3", `DATE_FORMAT('1999-01-01', '%Y-%m-%d')`, "1999-01-01", ""},
	{"date_format.tsv:5 date_format_4", `DATE_FORMAT('1999-01-01 00:00:00', '%d/%m/%Y %H:%i:%s')`, "01/01/1999 00:00:00", ""},
	// REPEAT is not one of loadnode's functions (yet): refused by name.
	// TestDorisDateFormatLimits checks the same format written out.
	{"date_format.tsv:6 date_format_5;n=1", `date_format('2022-11-13 11:12:12',repeat('%l',51))`, strings.Repeat("1", 102), ""},
	{"date_format.tsv:7 date_format_5;n=2", `DATE_FORMAT('2009-10-04', '%a %b %c')`, "Sun Oct 10", ""},
	{"date_format.tsv:8 date_format_6", `DATE_FORMAT('2009-10-04', '%D %e %f')`, "4th 4 000000", ""},
	{"date_format.tsv:9 date_format_7", `DATE_FORMAT(NULL, '%Y-%m-%d')`, `\N`, ""},
	{"date_format.tsv:10 date_format_8", `DATE_FORMAT('2009-10-04', NULL)`, `\N`, ""},

	{"ifnull.tsv sql;n=22", `ifnull(date_format(CONCAT_WS('', '9999-07', '-00'), '%Y-%m'),3)`, "3", ""},
	{"ifnull.tsv sql;n=23", `ifnull(date_format(CONCAT_WS('', '9999-07', '-01'), '%Y-%m'),3)`, "9999-07", ""},
	{"ifnull.tsv sql;n=24", `ifnull(date_format(CONCAT_WS('', '9999-07', '-00'), '%Y-%m'),date_format(CONCAT_WS('', '9999-07', '-00'), '%Y-%m'))`, `\N`, ""},
	{"ifnull.tsv sql;n=25", `ifnull(date_format(CONCAT_WS('', '9999-07', '-00'), '%Y-%m'),date_format(CONCAT_WS('', '9999-07', '-26'), '%Y-%m'))`, "9999-07", ""},

	{"str_to_date.tsv:1 sql;n=59", `str_to_date("2014-12-21 12:34%3A56", '%Y-%m-%d %H:%i%%3A%s')`, "2014-12-21T12:34:56", ""},
	// Doris's nereids suite (an older Doris) drops the fraction here;
	// its documentation suite (str_to_date_9 below, newer) keeps the
	// fraction %f reads: loadnode keeps it, as Doris does now (see
	// dorisVersionDiffers).
	{"str_to_date.tsv:2 sql;n=60", `str_to_date("2014-12-21 12:34:56.789 PM", '%Y-%m-%d %h:%i:%s.%f %p')`, "2014-12-21T12:34:56", ""},
	{"str_to_date.tsv:3 sql;n=61", `str_to_date('200442 Monday', '%X%V %W')`, "2004-10-18", ""},
	{"str_to_date.tsv:4 sql;n=128", `STR_TO_DATE('Tue Jul 12 20:00:45 CST 2022', '%a %b %e %H:%i:%s %Y')`, `\N`, ""},
	{"str_to_date.tsv:5 sql;n=129", `STR_TO_DATE('Tue Jul 12 20:00:45 CST 2022', '%a %b %e %T CST %Y')`, "2022-07-12T20:00:45", ""},
	{"str_to_date.tsv:6 sql;n=130", `STR_TO_DATE('2018-4-2 15:3:28','%Y-%m-%d %H:%i:%s')`, "2018-04-02T15:03:28", ""},
	{"str_to_date.tsv:7 str_to_date_1", `STR_TO_DATE('2025-01-23 12:34:56', '%Y-%m-%d %H:%i:%s')`, "2025-01-23T12:34:56", ""},
	{"str_to_date.tsv:8 str_to_date_2", `STR_TO_DATE('2025-01-23 12:34:56', 'yyyy-MM-dd HH:mm:ss')`, "2025-01-23T12:34:56", ""},
	{"str_to_date.tsv:9 str_to_date_3", `STR_TO_DATE('20230713', 'yyyyMMdd')`, "2023-07-13", ""},
	{"str_to_date.tsv:10 str_to_date_6", `STR_TO_DATE('Oct 5 2023 3:45:00 PM', '%b %d %Y %h:%i:%s %p')`, "2023-10-05T15:45", ""},
	{"str_to_date.tsv:11 str_to_date_9", `STR_TO_DATE('2023-07-13 12:34:56.789', '%Y-%m-%d %H:%i:%s.%f')`, "2023-07-13T12:34:56.789", ""},
	{"str_to_date.tsv:12 str_to_date_10;col=1", `STR_TO_DATE(NULL, '%Y-%m-%d')`, `\N`, ""},
	{"str_to_date.tsv:13 str_to_date_10;col=2", `STR_TO_DATE('2023-01-01', NULL)`, `\N`, ""},
	{"str_to_date.tsv:14 str_to_date_4", `STR_TO_DATE('15:30:45', '%H:%i:%s')`, `\N`, ""},
	{"str_to_date.tsv:15 str_to_date_7", `STR_TO_DATE('2023/01/01', '%Y-%m-%d')`, `\N`, ""},
	{"str_to_date.tsv:16 str_to_date_8", `STR_TO_DATE('2023-01-01 10:00:00 (GMT)', '%Y-%m-%d %H:%i:%s')`, "2023-01-01T10:00", ""},
	{"str_to_date.tsv:17 str_to_date_11", `STR_TO_DATE('2023-01-01', '')`, `\N`, ""},

	{"from_unixtime.tsv:1 from_unixtime_6", `from_unixtime(32536799,'gdaskpdp')`, "gdaskpdp", ""},
	{"from_unixtime.tsv:2 from_unixtime_7", `from_unixtime(NULL)`, `\N`, ""},
	{"unix_timestamp.tsv:6 unix_timestamp_11", `unix_timestamp('2038-01-19 11:14:08',null)`, `\N`, ""},
}

// dorisVersionDiffers are corpus rows on which two Doris versions in the
// corpus disagree, with the row loadnode follows instead.
var dorisVersionDiffers = map[string]string{
	"str_to_date.tsv:2 sql;n=60": "str_to_date.tsv:11 str_to_date_9 (Doris's documentation suite: the fraction %f reads is kept)",
}

// TestDorisDateCorpus: every corpus row of DATE_FORMAT, STR_TO_DATE and
// FROM_UNIXTIME with a format gives Doris's value, or is refused naming
// the function loadnode lacks.
func TestDorisDateCorpus(t *testing.T) {
	matched, refused, differs := 0, 0, 0
	for _, r := range dorisDateCorpus {
		v, rowErr, err := evalConst(r.expr)
		switch {
		case r.refusedBy != "":
			if err == nil || !strings.Contains(err.Error(), r.refusedBy) {
				t.Errorf("%s: %s: %v; want it refused naming %s", r.row, r.expr, err, r.refusedBy)
			}
			refused++
		case err != nil:
			t.Errorf("%s: %s: refused: %v", r.row, r.expr, err)
		case rowErr != nil:
			t.Errorf("%s: %s: error row: %v; Doris gives %s", r.row, r.expr, rowErr, r.want)
		case dorisVersionDiffers[r.row] != "":
			differs++
			if got := dorisRender(v); got == r.want {
				t.Errorf("%s: %s = %s: now matches this row, no longer %s", r.row, r.expr, got, dorisVersionDiffers[r.row])
			}
		default:
			if got := dorisRender(v); got != r.want {
				t.Errorf("%s: %s = %s; Doris gives %s", r.row, r.expr, got, r.want)
			} else {
				matched++
			}
		}
	}
	t.Logf("Doris date rows: %d of %d match, %d refused by name, %d where Doris versions differ", matched, len(dorisDateCorpus), refused, differs)
}

// dorisCorpusDir finds the Doris corpus: $LOADNODE_DORIS_CORPUS, or a
// shared/conformance/doris-corpus beside the checkout (or any folder
// above it).
func dorisCorpusDir(t *testing.T) string {
	if d := os.Getenv("LOADNODE_DORIS_CORPUS"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		c := filepath.Join(d, "shared", "conformance", "doris-corpus")
		if _, err := os.Stat(c); err == nil {
			return c
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if os.Getenv("LOADNODE_SKIP_DORIS_CORPUS") == "1" {
		t.Skip("LOADNODE_SKIP_DORIS_CORPUS=1: the Doris corpus is not checked")
	}
	t.Fatalf("no Doris corpus: set LOADNODE_DORIS_CORPUS, or put it at ../shared/conformance/doris-corpus (LOADNODE_SKIP_DORIS_CORPUS=1 skips this)")
	return ""
}

// TestDorisDateCorpusCovered: dorisDateCorpus holds every corpus row that
// calls DATE_FORMAT, STR_TO_DATE, FROM_UNIXTIME or UNIX_TIMESTAMP with a
// format, with the value the corpus gives.
func TestDorisDateCorpusCovered(t *testing.T) {
	dir := dorisCorpusDir(t)
	have := map[string]string{}
	for _, r := range dorisDateCorpus {
		have[r.expr] = r.want
	}
	files, err := filepath.Glob(filepath.Join(dir, "functions", "*.tsv"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no functions/*.tsv in %s: %v", dir, err)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for line := 1; sc.Scan(); line++ {
			cols := strings.Split(sc.Text(), "\t")
			if len(cols) < 2 {
				continue
			}
			low := strings.ToLower(cols[0])
			uses := strings.Contains(low, "date_format(") || strings.Contains(low, "str_to_date(") ||
				strings.Contains(low, "time_format(") ||
				(strings.Contains(low, "from_unixtime(") || strings.Contains(low, "unix_timestamp(")) && strings.Contains(low, ",")
			if !uses {
				continue
			}
			want, ok := have[cols[0]]
			switch {
			case !ok:
				t.Errorf("%s:%d: %s (Doris: %s) is not in dorisDateCorpus", filepath.Base(name), line, cols[0], cols[1])
			case want != cols[1]:
				t.Errorf("%s:%d: %s: dorisDateCorpus says %s, the corpus %s", filepath.Base(name), line, cols[0], want, cols[1])
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDorisDateFormat: every specifier Doris documents for DATE_FORMAT
// (docs: sql-functions/scalar-functions/date-time-functions/date-format),
// with the examples of Doris's and MySQL's documentation.
func TestDorisDateFormat(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		// Doris's documentation examples.
		{`date_format('1900-10-04 22:23:00', 'Day: %D, Year: %y, Month: %b, DayOfYear: %j')`, "Day: 4th, Year: 00, Month: Oct, DayOfYear: 277"},
		{`date_format('1999-01-01 00:00:00', '%X-%V')`, "1998-52"},
		{`date_format(cast('2006-06-01' as date), '%%%d/%m')`, "%01/06"},
		{`date_format('2023-12-31 23:59:59', 'yyyy-MM-dd HH:mm:ss')`, "2023-12-31 23:59:59"},
		{`date_format('2023-12-31 23:59:59', 'ghg')`, "ghg"},
		{`date_format('2023-12-31 23:59:59', 'yyyyMMdd')`, "20231231"},
		{`date_format('2023-12-31 23:59:59', 'yyyy-MM-dd')`, "2023-12-31"},
		// The other Java-style formats Doris's BE takes as they are.
		{`date_format('2023-12-31 23:59:59', 'yyyy-MM')`, "2023-12"},
		{`date_format('2023-12-31 23:59:59', 'yyyyMM')`, "202312"},
		{`date_format('2023-12-31 23:59:59', 'yyyy')`, "2023"},
		// MySQL's documentation examples (Doris's DATE_FORMAT is MySQL's).
		{`date_format('1997-10-04 22:23:00', '%D %y %a %d %m %b %j')`, "4th 97 Sat 04 10 Oct 277"},
		{`date_format('1997-10-04 22:23:00', '%H %k %I %r %T %S %w')`, "22 22 10 10:23:00 PM 22:23:00 00 6"},
		{`date_format('1999-01-01', '%X %V')`, "1998 52"},
		// Each specifier once.
		{`date_format('2024-03-01 07:05:09.012345', '%a|%b|%c|%D|%d|%e|%f|%H|%h|%I|%i|%j|%k|%l|%M|%m|%p|%r|%S|%s|%T')`,
			"Fri|Mar|3|1st|01|1|012345|07|07|07|05|061|7|7|March|03|AM|07:05:09 AM|09|09|07:05:09"},
		{`date_format('2024-03-01 07:05:09', '%U|%u|%V|%v|%W|%w|%X|%x|%Y|%y|%%|%q|%')`, "08|09|08|09|Friday|5|2024|2024|2024|24|%|q|%"},
		{`date_format('2024-12-22', '%D %D')`, "22nd 22nd"},
		{`date_format('2024-12-23', '%D')`, "23rd"},
		{`date_format('2024-12-11', '%D')`, "11th"},
		{`date_format('2024-12-12 12:00:00', '%h %l %p %r')`, "12 12 PM 12:00:00 PM"},
		{`date_format('2024-12-12 00:30:00', '%h %l %p %r')`, "12 12 AM 12:30:00 AM"},
		{`date_format('2021-01-01', '%U %u %V %v %X %x')`, "00 00 52 53 2020 2020"},
		// Spaces around the format are trimmed, as Doris does.
		{`date_format('2021-01-01', '  %Y  ')`, "2021"},
		{`from_unixtime(0, '%Y-%m-%d %H:%i:%s %W')`, "1970-01-01 00:00:00 Thursday"},
		{`from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')`, "1970-01-01 00:00:00"},
	} {
		v, rowErr, err := evalConst(tt.expr)
		if err != nil || rowErr != nil || dorisRender(v) != tt.want {
			t.Errorf("%s = %s (%v, %v); want %s", tt.expr, dorisRender(v), err, rowErr, tt.want)
		}
	}
}

// TestDorisDateFormatLimits: Doris refuses a format longer than 128
// characters, and a value that passes 100 characters before the format
// ends (its date_format suite: repeat('%l', 52) fails, 51 does not).
func TestDorisDateFormatLimits(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want string // the value, or "error"
	}{
		{`date_format('2022-11-13 11:12:12', '` + strings.Repeat("%l", 51) + `')`, strings.Repeat("1", 102)},
		{`date_format('2022-11-13 11:12:12', '` + strings.Repeat("%l", 52) + `')`, "error"},
		{`date_format('2023-11-13 23:00:00', '` + strings.Repeat("%l", 53) + `')`, "error"},
		{`date_format('2022-11-13', '` + strings.Repeat("%I", 52) + `')`, "error"},
		{`date_format('2022-11-13', '` + strings.Repeat("%M", 15) + `')`, "error"},
		{`date_format('2022-11-13', '` + strings.Repeat("%p", 52) + `')`, "error"},
		{`date_format('2022-11-13', '` + strings.Repeat("a", 102) + `')`, "error"},
		{`date_format('2022-11-13', '` + strings.Repeat("a", 101) + `')`, strings.Repeat("a", 101)},
	} {
		v, rowErr, err := evalConst(tt.expr)
		if err != nil {
			t.Errorf("%.60s...: refused: %v", tt.expr, err)
			continue
		}
		if tt.want == "error" {
			var fe *FuncError
			if !errors.As(rowErr, &fe) || fe.Func != "DATE_FORMAT" || !strings.Contains(fe.Error(), "100 characters") {
				t.Errorf("%.60s... = %s, %v; want an error row naming DATE_FORMAT and the 100 characters", tt.expr, dorisRender(v), rowErr)
			}
			continue
		}
		if rowErr != nil || dorisRender(v) != tt.want {
			t.Errorf("%.60s... = %s, %v; want %s", tt.expr, dorisRender(v), rowErr, tt.want)
		}
	}
	// A format longer than 128 characters: a constant one is refused when
	// the job is created, one read from the record makes an error row.
	long := "'" + strings.Repeat("s", 129) + "'"
	for _, fn := range []string{"date_format('1222-12-12', %s)", "from_unixtime(0, %s)"} {
		_, _, err := evalConst(fmt.Sprintf(fn, long))
		if err == nil || !strings.Contains(err.Error(), "128") || !strings.Contains(err.Error(), strings.ToUpper(fn[:strings.Index(fn, "(")])) {
			t.Errorf("%s: %v; want it refused naming the function and the limit of 128", fn, err)
		}
	}
	if _, _, err := evalConst("date_format('1222-12-12', '" + strings.Repeat("s", 128) + "')"); err != nil {
		t.Errorf("a format of 128 characters: %v", err)
	}
	for _, fn := range []string{"DATE_FORMAT('2024-01-01', a)", "FROM_UNIXTIME(0, a)"} {
		v, over, _ := evalOver(fn, strings.Repeat("%W", 500))
		var fe *FuncError
		if v.k != eNull || !errors.As(over, &fe) || fe.Func != fn[:strings.Index(fn, "(")] || !strings.Contains(fe.Error(), "128") {
			t.Errorf("%s with a format of 1000 characters from the record: %v; want an error row naming the function and the limit of 128", fn, over)
		}
	}
}

// TestDorisWeekSpecifiers checks %U %u %V %v %X %x against the week
// modes MySQL documents (WEEK() modes 0 to 3), computed independently:
// mode 0 (%U) counts weeks from the year's first Sunday (0 before it);
// mode 1 (%u) from the Monday of ISO week 1 (0 before it); mode 2 (%V,
// %X) is mode 0 with week 0 as the last week of the year before; mode 3
// (%v, %x) is the ISO 8601 week.
func TestDorisWeekSpecifiers(t *testing.T) {
	sundayWeek := func(d time.Time) int { return (d.YearDay() - 1 + 7 - int(d.Weekday())) / 7 }
	isoWeek1Monday := func(y int) time.Time {
		jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC)
		return jan4.AddDate(0, 0, -((int(jan4.Weekday()) + 6) % 7))
	}
	for d := time.Date(1901, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2101; d = d.AddDate(0, 0, 1) {
		u := sundayWeek(d)
		mondayU := 0
		if m1 := isoWeek1Monday(d.Year()); !d.Before(m1) {
			mondayU = int(d.Sub(m1).Hours()/24)/7 + 1
		}
		vYear, v := d.Year(), u
		if u == 0 {
			dec31 := time.Date(d.Year()-1, 12, 31, 0, 0, 0, 0, time.UTC)
			vYear, v = d.Year()-1, sundayWeek(dec31)
		}
		isoYear, isoWeek := d.ISOWeek()
		want := fmt.Sprintf("%02d %02d %02d %02d %04d %04d", u, mondayU, v, isoWeek, vYear, isoYear)
		got := formatDatetime(&evalEnv{}, daysFromCivil(int64(d.Year()), int64(d.Month()), int64(d.Day()))*86400e6, "%U %u %V %v %X %x")
		if got.s != want {
			t.Fatalf("%s: %%U %%u %%V %%v %%X %%x = %s, want %s", d.Format(time.DateOnly), got.s, want)
		}
		if w := formatDatetime(&evalEnv{}, daysFromCivil(int64(d.Year()), int64(d.Month()), int64(d.Day()))*86400e6, "%w %W %a"); w.s != fmt.Sprintf("%d %s %s", d.Weekday(), d.Weekday(), d.Weekday().String()[:3]) {
			t.Fatalf("%s: %%w %%W %%a = %s", d.Format(time.DateOnly), w.s)
		}
	}
}

// TestDorisStrToDate: STR_TO_DATE as Doris's parser reads (be/src/vec/
// runtime/vdatetime_value.cpp, from_date_format_str), with the
// Java-style patterns Doris documents.
func TestDorisStrToDate(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`str_to_date('2014-12-21 12:34:56', '%Y-%m-%d %H:%i:%s')`, "2014-12-21T12:34:56"},
		{`str_to_date('2014-12-21', 'yyyy-MM-dd')`, "2014-12-21"},
		{`str_to_date('2014-12-21 12:34:56', 'yyyy-MM-dd HH:mm:ss')`, "2014-12-21T12:34:56"},
		// Only those three Java-style patterns are Doris's; any other is
		// read as a MySQL format, whose letters must match the text.
		{`str_to_date('2014-12', 'yyyy-MM')`, `\N`},
		// A format without a time of day makes a DATE, with one a DATETIME.
		{`str_to_date('2014-12-21', '%Y-%m-%d %H')`, "2014-12-21T00:00"},
		{`str_to_date('14-12-21', '%y-%m-%d')`, "2014-12-21"},
		{`str_to_date('70-12-21', '%y-%m-%d')`, "1970-12-21"},
		{`str_to_date('69-12-21', '%Y-%m-%d')`, "2069-12-21"},
		// Spaces in the text are skipped before each part; text after the
		// format's end is ignored.
		{`str_to_date(' 2014 - 12 - 21 xyz', '%Y-%m-%d')`, "2014-12-21"},
		{`str_to_date('21st December 2014', '%D %M %Y')`, "2014-12-21"},
		{`str_to_date('Sept 3, 2014', '%M %e, %Y')`, "2014-09-03"},
		{`str_to_date('Ma 3, 2014', '%M %e, %Y')`, `\N`},
		{`str_to_date('2014 061', '%Y %j')`, "2014-03-02"},
		{`str_to_date('2024 061', '%Y %j')`, "2024-03-01"},
		{`str_to_date('2004 42 1', '%x %v %w')`, "2004-10-11"},
		{`str_to_date('2004 42 Mon', '%x %v %a')`, "2004-10-11"},
		{`str_to_date('2004 42 Mon', '%X %v %a')`, `\N`},
		{`str_to_date('2004 42 Mon', '%Y %u %a')`, "2004-10-11"},
		{`str_to_date('2004 42 0', '%Y %U %w')`, "2004-10-17"},
		{`str_to_date('10:23:00 PM 2014-12-21', '%r %Y-%m-%d')`, "2014-12-21T22:23"},
		{`str_to_date('2014-12-21 13:00:00 PM', '%Y-%m-%d %h:%i:%s %p')`, `\N`},
		{`str_to_date('2014-12-21 12:00:00 AM', '%Y-%m-%d %h:%i:%s %p')`, "2014-12-21T00:00"},
		{`str_to_date('2014-12-21 12:00:00 AM', '%Y-%m-%d %H:%i:%s %p')`, `\N`},
		{`str_to_date('2014-12-21 10:00:00.5', '%Y-%m-%d %H:%i:%s.%f')`, "2014-12-21T10:00:00.500"},
		{`str_to_date('2014-12-21 10:00:00.0123456789', '%Y-%m-%d %H:%i:%s.%f')`, "2014-12-21T10:00:00.012345"},
		{`str_to_date('2014-12-21 10:00', '%Y-%m-%d %H:%i:%s')`, "2014-12-21T10:00"},
		{`str_to_date('2014/12/21', '%Y%.%m%.%d')`, "2014-12-21"},
		{`str_to_date('2014abc12x21', '%Y%@%m%@%d')`, "2014-12-21"},
		{`str_to_date('2014-02-30', '%Y-%m-%d')`, `\N`},
		{`str_to_date('2014-12-21', '%Y-%m-%d %q')`, "2014-12-21"},
		{`str_to_date('2014-12-21 q', '%Y-%m-%d %q')`, `\N`},
		{`unix_timestamp('2014-12-21 12:34:56', 'yyyy-MM-dd HH:mm:ss')`, "1419165296"},
	} {
		v, rowErr, err := evalConst(tt.expr)
		if err != nil || rowErr != nil || dorisRender(v) != tt.want {
			t.Errorf("%s = %s (%v, %v); want %s", tt.expr, dorisRender(v), err, rowErr, tt.want)
		}
	}
}

// TestDorisDateFormatErrorRow: through a mapping, a value DATE_FORMAT
// fails as Doris fails it is an error row naming the column and the
// function, and the parser goes on with the next record; a constant
// format over Doris's limit is refused when the parser is made.
func TestDorisDateFormatErrorRow(t *testing.T) {
	s := typedSchema(t, "id int", "v string", "d datetime")
	p, err := NewParser(s, Format{Kind: "json", Columns: []string{"id", "f", "t", "v = date_format('2022-11-13 11:12:12', f)", "d = str_to_date(t, '%Y-%m-%d %H:%i:%s')"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse([]byte(`{"id":1,"f":"`+strings.Repeat("%l", 52)+`","t":"2024-01-01 10:00:00"}`), nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Column != "v" || !strings.HasPrefix(pe.Reason, "column v: v = ...: DATE_FORMAT: format ") || !strings.Contains(pe.Reason, "more than 100 characters") {
		t.Fatalf("Parse = %v, want an error row naming v, DATE_FORMAT and the 100 characters", err)
	}
	row, err := p.Parse([]byte(`{"id":2,"f":"%D %X-%V","t":"2024-01-01 10:00:00"}`), nil)
	if err != nil || render(s, row) != "2|13th 2022-46|2024-01-01 10:00:00" {
		t.Fatalf("next record: %v, %v", render(s, row), err)
	}
	// Doris keeps an hour of 24 as it is, which loadnode cannot: an error
	// row, not another value.
	_, err = p.Parse([]byte(`{"id":3,"f":"%Y","t":"2024-01-01 24:00:00"}`), nil)
	if !errors.As(err, &pe) || pe.Column != "d" || !strings.Contains(pe.Reason, "STR_TO_DATE") || !strings.Contains(pe.Reason, "hour 24") {
		t.Fatalf("Parse = %v, want an error row naming d, STR_TO_DATE and the hour 24", err)
	}
	row, err = p.Parse([]byte(`{"id":4,"f":"%Y","t":"2024-01-01 25:00:00"}`), nil)
	if err != nil || render(s, row) != "4|2022|NULL" {
		t.Fatalf("an hour of 25: %v, %v; want NULL, as Doris", render(s, row), err)
	}
	_, err = NewParser(s, Format{Kind: "json", Columns: []string{"id", "v = date_format('2022-11-13', '" + strings.Repeat("%Y", 65) + "')"}})
	if err == nil || !strings.Contains(err.Error(), "DATE_FORMAT: the format is 130 characters long, over Doris's limit of 128") {
		t.Fatalf("NewParser with a format of 130 characters: %v", err)
	}
}
