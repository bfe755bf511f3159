package table

import (
	"fmt"
	"strings"
)

// DATE_FORMAT, FROM_UNIXTIME's format and STR_TO_DATE, as Doris computes
// them in a load (its backend: be/src/vec/runtime/vdatetime_value.cpp,
// to_format_string_conservative and from_date_format_str; the function
// wrappers in be/src/vec/functions/). Day numbers, weekdays and week
// numbers are Doris's (MySQL's) own arithmetic, ported as it is, so that
// every edge (week 0, week 53, the year a week belongs to) falls where
// Doris puts it.

// Doris's limits on a format (be/src/vec/functions/
// function_datetime_string_to_string.h, date_time_transforms.h).
const (
	// maxFormatLen is the longest format (spaces around it trimmed)
	// DATE_FORMAT and FROM_UNIXTIME take; Doris fails a longer one.
	maxFormatLen = 128
	// maxFormatText is how long the text may be before the format's next
	// part: Doris fails the value once the text it made is longer and the
	// format goes on (so a value is at most maxFormatText plus the longest
	// part, %r's 11 bytes).
	maxFormatText = 100
)

// FuncError says a function failed on a record's value as Doris fails
// it: the record is an error row, and the message names the function.
type FuncError struct {
	Func   string // the function, in upper case
	Reason string
}

func (e *FuncError) Error() string { return e.Func + ": " + e.Reason }

// fail makes the record an error row naming the function being called
// (unless it is one already).
func (e *evalEnv) fail(format string, args ...any) {
	if e.over == nil {
		e.over = &FuncError{Func: e.fn, Reason: fmt.Sprintf(format, args...)}
	}
}

// javaFormats are the Java-style patterns Doris takes for DATE_FORMAT and
// FROM_UNIXTIME (its backend's fixed formats, time_format_type::
// string_to_impl), as the MySQL formats they mean. Doris's planner, when
// it folds a call on constants, knows only the first three: there
// date_format(x, 'yyyy-MM') prints yyyy-MM. A load computes on its
// backend, as here.
var javaFormats = map[string]string{
	"yyyyMMdd":            "%Y%m%d",
	"yyyy-MM-dd":          "%Y-%m-%d",
	"yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%i:%s",
	"yyyy-MM":             "%Y-%m",
	"yyyyMM":              "%Y%m",
	"yyyy":                "%Y",
}

// strToDateJavaFormats are the Java-style patterns STR_TO_DATE takes
// (StrToDate::rewrite_specific_format); any other is a MySQL format.
var strToDateJavaFormats = map[string]string{
	"yyyyMMdd":            "%Y%m%d",
	"yyyy-MM-dd":          "%Y-%m-%d",
	"yyyy-MM-dd HH:mm:ss": "%Y-%m-%d %H:%i:%s",
}

// checkFormat refuses, when the job is created, a constant format Doris
// would fail on every record.
func checkFormat(fn string, args []node) error {
	if len(args) < 2 {
		return nil
	}
	if l, ok := args[1].(*litNode); ok && l.v.k == eStr {
		if n := len(strings.Trim(l.v.s, " ")); n > maxFormatLen {
			return fmt.Errorf("%s: the format is %d characters long, over Doris's limit of %d", fn, n, maxFormatLen)
		}
	}
	return nil
}

var (
	monthNames   = [...]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	monthAbbrevs = [...]string{"", "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	// dayNames and dayAbbrevs start on Monday, as Doris's weekday().
	dayNames   = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	dayAbbrevs = [...]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
)

// formatDatetime renders a wall-clock time (microseconds since
// 1970-01-01) by a DATE_FORMAT format, as Doris: every specifier Doris
// documents (%a %b %c %D %d %e %f %H %h %I %i %j %k %l %M %m %p %r %S %s
// %T %U %u %V %v %W %w %X %x %Y %y %%), any other %x as x, and the
// Java-style patterns of javaFormats. The format is trimmed of spaces; one
// longer than maxFormatLen, or a value passing maxFormatText before the
// format's end, makes the record an error row (Doris fails it).
func formatDatetime(e *evalEnv, t int64, f string) ev {
	f = strings.Trim(f, " ")
	if len(f) > maxFormatLen {
		e.fail("the format is %d characters long, over Doris's limit of %d", len(f), maxFormatLen)
		return evNull
	}
	if m, ok := javaFormats[f]; ok {
		f = m
	}
	days := floorDiv(t, 86400*1e6)
	rem := t - days*86400*1e6
	y, m, d := civilFromDays(days)
	secs := rem / 1e6
	h, mi, s, us := secs/3600, secs/60%60, secs%60, rem%1e6
	dnr := calcDaynr(y, m, d)
	h12 := (h+11)%12 + 1
	b := make([]byte, 0, 2*len(f))
	for i := 0; i < len(f); i++ {
		if len(b) > maxFormatText {
			e.fail("format %q makes more than %d characters of %s, which Doris refuses", f, maxFormatText, appendDatetime(nil, t, 0))
			return evNull
		}
		if f[i] != '%' || i+1 == len(f) {
			b = append(b, f[i])
			continue
		}
		i++
		switch c := f[i]; c {
		case 'y':
			b = appendPad(b, y%100, 2)
		case 'Y':
			b = appendPad(b, y, 4)
		case 'd':
			b = appendPad(b, d, 2)
		case 'H':
			b = appendPad(b, h, 2)
		case 'i':
			b = appendPad(b, mi, 2)
		case 'm':
			b = appendPad(b, m, 2)
		case 'h', 'I':
			b = appendPad(b, h12, 2)
		case 's', 'S':
			b = appendPad(b, s, 2)
		case 'a':
			b = append(b, dayAbbrevs[calcWeekday(dnr, false)]...)
		case 'b':
			b = append(b, monthAbbrevs[m]...)
		case 'c':
			b = appendPad(b, m, 1)
		case 'D':
			b = appendPad(b, d, 1)
			switch {
			case d >= 10 && d <= 19:
				b = append(b, "th"...)
			case d%10 == 1:
				b = append(b, "st"...)
			case d%10 == 2:
				b = append(b, "nd"...)
			case d%10 == 3:
				b = append(b, "rd"...)
			default:
				b = append(b, "th"...)
			}
		case 'e':
			b = appendPad(b, d, 1)
		case 'f':
			b = appendPad(b, us, 6)
		case 'j':
			b = appendPad(b, dnr-calcDaynr(y, 1, 1)+1, 3)
		case 'k':
			b = appendPad(b, h, 1)
		case 'l':
			b = appendPad(b, h12, 1)
		case 'M':
			b = append(b, monthNames[m]...)
		case 'p':
			b = append(b, ampm(h)...)
		case 'r':
			b = appendPad(b, h12, 2)
			b = append(b, ':')
			b = appendPad(b, mi, 2)
			b = append(b, ':')
			b = appendPad(b, s, 2)
			b = append(b, ' ')
			b = append(b, ampm(h)...)
		case 'T':
			b = appendPad(b, h, 2)
			b = append(b, ':')
			b = appendPad(b, mi, 2)
			b = append(b, ':')
			b = appendPad(b, s, 2)
		case 'u':
			w, _ := calcWeek(dnr, y, m, d, weekMode(1))
			b = appendPad(b, w, 2)
		case 'U':
			w, _ := calcWeek(dnr, y, m, d, weekMode(0))
			b = appendPad(b, w, 2)
		case 'v':
			w, _ := calcWeek(dnr, y, m, d, weekMode(3))
			b = appendPad(b, w, 2)
		case 'V':
			w, _ := calcWeek(dnr, y, m, d, weekMode(2))
			b = appendPad(b, w, 2)
		case 'w':
			b = appendPad(b, calcWeekday(dnr, true), 1)
		case 'W':
			b = append(b, dayNames[calcWeekday(dnr, false)]...)
		case 'x':
			_, wy := calcWeek(dnr, y, m, d, weekMode(3))
			b = appendPad(b, wy, 4)
		case 'X':
			_, wy := calcWeek(dnr, y, m, d, weekMode(2))
			b = appendPad(b, wy, 4)
		default:
			b = append(b, c) // %% is %, and %x any other x
		}
	}
	return evStr(string(b))
}

func ampm(h int64) string {
	if h >= 12 {
		return "PM"
	}
	return "AM"
}

// Doris's (MySQL's) week mode bits.
const (
	weekMondayFirst  = 1
	weekYear         = 2
	weekFirstWeekday = 4
)

// weekMode is mysql_week_mode: WEEK()'s mode as calcWeek takes it.
func weekMode(mode int64) int64 {
	mode &= 7
	if mode&weekMondayFirst == 0 {
		mode ^= weekFirstWeekday
	}
	return mode
}

// calcDaynr is Doris's calc_daynr: the day number of y-m-d (0000-01-01
// is 1), in C's truncating arithmetic.
func calcDaynr(y, m, d int64) int64 {
	if y == 0 && m == 0 {
		return 0
	}
	delsum := 365*y + 31*(m-1) + d
	if m <= 2 {
		y--
	} else {
		delsum -= (m*4 + 23) / 10
	}
	return delsum + y/4 - y/100 + y/400
}

// calcWeekday is Doris's calc_weekday: 0 is Monday, or Sunday when
// sundayFirst.
func calcWeekday(daynr int64, sundayFirst bool) int64 {
	if sundayFirst {
		return (daynr + 6) % 7
	}
	return (daynr + 5) % 7
}

// isLeap is Doris's is_leap: year 0 is no leap year in its day numbers
// (FROM_DAYS(60) is 0000-03-01).
func isLeap(y int64) bool { return y%4 == 0 && y%100 != 0 || y%400 == 0 && y != 0 }

func daysInYear(y int64) int64 {
	if isLeap(y) {
		return 366
	}
	return 365
}

// calcWeek is Doris's calc_week: the week of y-m-d (day number daynr) in
// a week mode, and the year the week belongs to.
func calcWeek(daynr, y, m, d, mode int64) (week, year int64) {
	mondayFirst := mode&weekMondayFirst != 0
	wYear := mode&weekYear != 0
	firstWeekday := mode&weekFirstWeekday != 0
	first := calcDaynr(y, 1, 1)
	wdFirst := calcWeekday(first, !mondayFirst)
	year = y
	if m == 1 && d <= 7-wdFirst {
		if !wYear && (firstWeekday && wdFirst != 0 || !firstWeekday && wdFirst > 3) {
			return 0, year
		}
		year--
		wYear = true
		n := daysInYear(year)
		first -= n
		wdFirst = (wdFirst + 53*7 - n) % 7
	}
	var days int64
	if firstWeekday && wdFirst != 0 || !firstWeekday && wdFirst > 3 {
		days = daynr - (first + 7 - wdFirst)
	} else {
		days = daynr - (first - wdFirst)
	}
	if wYear && days >= 52*7 {
		wdFirst = (wdFirst + daysInYear(year)) % 7
		if firstWeekday && wdFirst == 0 || !firstWeekday && wdFirst <= 3 {
			return 1, year + 1
		}
	}
	return days/7 + 1, year
}

// maxDaynr is calcDaynr(9999, 12, 31).
const maxDaynr = 3652424

var daysInMonth = [...]int64{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// dateFromDaynr is Doris's get_date_from_daynr.
func dateFromDaynr(daynr int64) (y, m, d int64, ok bool) {
	if daynr <= 0 || daynr > maxDaynr {
		return 0, 0, 0, false
	}
	y = daynr / 365
	before := calcDaynr(y, 1, 1)
	for daynr < before {
		y--
		before = calcDaynr(y, 1, 1)
	}
	doy := daynr - before + 1
	var leapDay int64
	if isLeap(y) && doy > 31+28 {
		doy--
		if doy == 31+28 {
			leapDay = 1
		}
	}
	m = 1
	for doy > daysInMonth[m] {
		doy -= daysInMonth[m]
		m++
	}
	return y, m, doy + leapDay, validDate(y, m, doy+leapDay)
}

func validDate(y, m, d int64) bool {
	return y >= 0 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(m, y)
}

// strToDate parses s by a STR_TO_DATE format, as Doris: a DATETIME when
// the format has a letter of a time of day (HhIiklrSsTp, as Doris's
// planner decides the type), else a DATE; NULL when s does not match.
// The Java-style patterns of strToDateJavaFormats are their MySQL
// formats. Doris keeps an hour of 24 as it is (24:00:00, not the next
// day); loadnode cannot, and makes such a record an error row.
func strToDate(e *evalEnv, s, f string) ev {
	if m, ok := strToDateJavaFormats[f]; ok {
		f = m
	}
	datetime := strings.ContainsAny(f, "HhIiklrSsTp")
	p, _, ok := parseDateFormat(f, s, datetime, false)
	if !ok {
		return evNull
	}
	if p.h == 24 {
		e.fail("%q read by format %q has the hour 24, which Doris keeps as it is and loadnode cannot represent", s, f)
		return evNull
	}
	days := daysFromCivil(p.y, p.m, p.d)
	if !datetime {
		return ev{k: eDate, i: days}
	}
	return ev{k: eDatetime, i: (days*86400+p.h*3600+p.mi*60+p.s)*1e6 + p.us}
}

// dateParts is a date and time STR_TO_DATE read.
type dateParts struct{ y, m, d, h, mi, s, us int64 }

func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isPunct(c byte) bool { return c > ' ' && c < 0x7f && !isDigit(c) && !isAlpha(c) }

// strToInt reads a number from s[i:end] as Doris's str_to_int64: spaces
// and tabs, a sign, then at least one digit. It returns the number and
// where its digits end.
func strToInt(s string, i, end int) (int64, int, bool) {
	for i < end && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i >= end {
		return 0, i, false
	}
	neg := false
	switch s[i] {
	case '-':
		neg = true
		i++
	case '+':
		i++
	}
	if i >= end || !isDigit(s[i]) {
		return 0, i, false
	}
	var v int64
	for ; i < end && isDigit(s[i]); i++ {
		v = v*10 + int64(s[i]-'0') // at most 6 digits: end is at most 6 bytes on
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// checkWord reads the letters at s[i:] as one of names (case-insensitive;
// a prefix of exactly one name will do), as Doris's check_word: the
// name's index and where the letters end.
func checkWord(names []string, s string, i int) (int, int, bool) {
	j := i
	for j < len(s) && isAlpha(s[j]) {
		j++
	}
	word := s[i:j]
	found, count := -1, 0
	for k, n := range names {
		if len(word) > len(n) || !strings.EqualFold(word, n[:len(word)]) {
			continue
		}
		if len(word) == len(n) {
			return k, j, true
		}
		found, count = k, count+1
	}
	return found, j, count == 1
}

// parseDateFormat is Doris's from_date_format_str: it reads s by format
// f (a DATETIME when datetime, else a DATE) and returns what it read and
// where it stopped. Spaces in s are skipped before each part of f, and
// reading stops when either ends: text after the format's end is ignored.
// With timeOnly (%r and %T read their time this way) no date is needed.
func parseDateFormat(f, s string, datetime, timeOnly bool) (dateParts, int, bool) {
	var p dateParts
	timePart, timeSet, usaTime := false, false, false
	var subH, subMi, subS int64 // the time %r or %T read
	var dayPart int64
	weekday, yearday, weekNum := int64(-1), int64(-1), int64(-1)
	strictWeek, sundayFirst, strictYearSunday := false, false, false
	strictYear := int64(-1)
	i, k := 0, 0
	num := func(width int) (int64, bool) {
		v, j, ok := strToInt(s, i, min(i+width, len(s)))
		if ok {
			i = j
		}
		return v, ok
	}
	for k < len(f) && i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		if f[k] != '%' || k+1 == len(f) {
			if !isSpace(f[k]) {
				if f[k] != s[i] {
					return p, i, false
				}
				i++
			}
			k++
			continue
		}
		c := f[k+1]
		k += 2
		var ok bool
		var v int64
		switch c {
		case 'y':
			if v, ok = num(2); ok {
				p.y = v + 2000
				if v >= 70 {
					p.y = v + 1900
				}
			}
		case 'Y':
			start := i
			if v, ok = num(4); ok {
				if i-start <= 2 {
					if v >= 70 {
						v += 1900
					} else {
						v += 2000
					}
				}
				p.y = v
			}
		case 'm', 'c':
			p.m, ok = num(2)
		case 'M', 'b':
			names := monthNames[:]
			if c == 'b' {
				names = monthAbbrevs[:]
			}
			var idx int
			idx, i, ok = checkWord(names, s, i)
			p.m = int64(idx)
		case 'd', 'e':
			p.d, ok = num(2)
		case 'D':
			if p.d, ok = num(2); ok {
				i = min(i+2, len(s)) // the suffix: st, nd, rd, th
			}
		case 'h', 'I', 'l', 'k', 'H':
			usaTime = usaTime || c == 'h' || c == 'I' || c == 'l'
			p.h, ok = num(2)
			timePart = timePart || ok
		case 'i':
			p.mi, ok = num(2)
			timePart = timePart || ok
		case 's', 'S':
			p.s, ok = num(2)
			timePart = timePart || ok
		case 'f':
			j := i
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if v, _, ok = strToInt(s, i, min(j, i+6)); ok {
				if datetime {
					p.us = v
					for n := min(6, j-i); n < 6; n++ {
						p.us *= 10
					}
				}
				i, timePart = j, true
			}
		case 'p':
			if len(s)-i >= 2 && s[i+1]|0x20 == 'm' && usaTime {
				if s[i]|0x20 == 'p' {
					dayPart = 12
				}
				i += 2
				ok, timePart = true, true
			}
		case 'W', 'a':
			names := dayNames[:]
			if c == 'a' {
				names = dayAbbrevs[:]
			}
			var idx int
			if idx, i, ok = checkWord(names, s, i); ok {
				weekday = int64(idx) + 1
			}
		case 'w':
			if v, ok = num(1); ok {
				if v >= 7 {
					return p, i, false
				}
				if v == 0 {
					v = 7
				}
				weekday = v
			}
		case 'j':
			yearday, ok = num(3)
		case 'u', 'v', 'U', 'V':
			sundayFirst = c == 'U' || c == 'V'
			strictWeek = c == 'V' || c == 'v'
			if weekNum, ok = num(2); ok {
				if weekNum > 53 || strictWeek && weekNum == 0 {
					return p, i, false
				}
			}
		case 'x', 'X':
			strictYearSunday = c == 'X'
			strictYear, ok = num(4)
		case 'r', 'T':
			if !datetime {
				return p, i, false
			}
			sub := "%H:%i:%S"
			if c == 'r' {
				sub = "%I:%i:%S %p"
			}
			var t dateParts
			var j int
			if t, j, ok = parseDateFormat(sub, s[i:], true, true); ok {
				subH, subMi, subS = t.h, t.mi, t.s
				i += j
				timePart, timeSet = true, true
			}
		case '.':
			for i < len(s) && isPunct(s[i]) {
				i++
			}
			ok = true
		case '@':
			for i < len(s) && isAlpha(s[i]) {
				i++
			}
			ok = true
		case '#':
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			ok = true
		case '%':
			ok = s[i] == '%'
			i++
		}
		if !ok {
			return p, i, false
		}
	}
	// The rest of the format still says whether there is a time of day.
	for ; k < len(f); k++ {
		if f[k] == '%' && k+1 < len(f) {
			k++
			if strings.IndexByte("HhIiklrsfSpT", f[k]) >= 0 {
				timePart = true
			}
		}
	}
	if usaTime {
		if p.h > 12 || p.h < 1 {
			return p, i, false
		}
		p.h = p.h%12 + dayPart
	}
	if timePart && !datetime {
		return p, i, false // a DATE has no time of day
	}
	dateSet := false
	if yearday > 0 {
		var ok bool
		if p.y, p.m, p.d, ok = dateFromDaynr(calcDaynr(p.y, 1, 1) + yearday - 1); !ok {
			return p, i, false
		}
		dateSet = true
	}
	if weekNum >= 0 && weekday > 0 {
		if strictWeek && (strictYear < 0 || strictYearSunday != sundayFirst) || !strictWeek && strictYear >= 0 {
			return p, i, false
		}
		y := p.y
		if strictWeek {
			y = strictYear
		}
		days := calcDaynr(y, 1, 1)
		wd := calcWeekday(days, sundayFirst)
		if sundayFirst {
			if wd != 0 {
				days += 7
			}
			days += -wd + (weekNum-1)*7 + weekday%7
		} else {
			if wd > 3 {
				days += 7
			}
			days += -wd + (weekNum-1)*7 + weekday - 1
		}
		var ok bool
		if p.y, p.m, p.d, ok = dateFromDaynr(days); !ok {
			return p, i, false
		}
		dateSet = true
	}
	if timeSet {
		p.h, p.mi, p.s = subH, subMi, subS
		if dateSet {
			p.us = 0
		}
	}
	// Doris's is_invalid: an hour up to 24 (sic), minutes and seconds to
	// 59, and a date unless only a time is read (a time of day alone is
	// no date: NULL, as the corpus has it).
	if p.h < 0 || p.h > 24 || p.mi < 0 || p.mi > 59 || p.s < 0 || p.s > 59 {
		return p, i, false
	}
	if !timeOnly && !validDate(p.y, p.m, p.d) {
		return p, i, false
	}
	return p, i, true
}
