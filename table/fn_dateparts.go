package table

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// datePartFunctions returns the parts, names and conversions of dates and times: HOUR, EXTRACT, DAYNAME, WEEK, LAST_DAY, TIME values, time zones, Unix times, ISO 8601.
// buildFunctions merges it into the registry; a name may be declared only
// once in the whole registry.
//
// Day numbers, weekdays and weeks are Doris's (MySQL's) arithmetic
// (datefmt.go: calcDaynr, calcWeekday, calcWeek), so that week 0, week 53
// and the year a week belongs to fall where Doris puts them. Names of days
// and months are those of the session's lc_time_names (lctime.go; a
// load's is its job's, en_US by default); DATE_FORMAT's %W %a %M %b stay
// English under any, as Doris's. A TIME value is eTime: signed microseconds, at most
// 838:59:59 either way, as Doris's TIME.
func datePartFunctions() map[string]fnSpec {
	// onDate computes an integer from a date's year, month, day and day
	// number (calcDaynr).
	onDate := func(f func(y, m, d, dnr int64) int64) fnSpec {
		return fnSpec{min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			y, m, d, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			return evInt(f(y, m, d, calcDaynr(y, m, d)))
		}}
	}
	// clock computes a part of a time of day, or of a TIME (its absolute
	// value: HOUR of -12:30:00 is 12, of 456:26:32 is 456).
	clock := func(f func(us int64) int64) fnSpec {
		return fnSpec{min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			if a[0].k == eTime {
				return evInt(f(abs64(a[0].i)))
			}
			t, ok := a[0].asTime()
			if !ok {
				return evNull
			}
			return evInt(f(t - floorDiv(t, 86400*1e6)*86400*1e6))
		}}
	}
	week := func(withMode func(y, m, d, dnr, mode int64) int64) fnSpec {
		return fnSpec{min: 1, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			y, m, d, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			var mode int64
			if len(a) == 2 {
				n, ok := intArg(a[1], math.MinInt32, math.MaxInt32)
				if !ok {
					return evNull
				}
				mode = int64(n)
			}
			return evInt(withMode(y, m, d, calcDaynr(y, m, d), mode))
		}}
	}
	epoch := func(unit int64) fnSpec { // SECOND_TIMESTAMP and its kin
		return fnSpec{min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			us, ok := instantOf(e, a[0])
			if !ok {
				return evNull
			}
			return evInt(floorDiv(us, unit))
		}}
	}
	fromEpoch := func(unit int64) fnSpec { // FROM_SECOND and its kin
		return fnSpec{min: 1, max: 1, fn: func(e *evalEnv, a []ev) ev {
			n, ok := a[0].num()
			// Negative, or past 9999-12-31 (in UTC; wallIn checks the zone's): NULL.
			if !ok || n.k != eInt || n.i < 0 || n.i > (maxDateDays+1)*86400*(1e6/unit) {
				return evNull
			}
			return wallIn(e.loc, n.i*unit)
		}}
	}
	yearOfWeek := onDate(func(y, m, d, dnr int64) int64 { // ISO 8601's
		_, wy := calcWeek(dnr, y, m, d, weekMode(3))
		return wy
	})
	return map[string]fnSpec{
		// EXTRACT(unit FROM x) is read by the parser (exprParser.extract)
		// as the unit's function of x: this entry only names it.
		"EXTRACT":     {min: 1, max: 1, fn: func(*evalEnv, []ev) ev { return evNull }},
		"HOUR":        clock(func(us int64) int64 { return us / 3600e6 }),
		"MINUTE":      clock(func(us int64) int64 { return us / 60e6 % 60 }),
		"SECOND":      clock(func(us int64) int64 { return us / 1e6 % 60 }),
		"MICROSECOND": clock(func(us int64) int64 { return us % 1e6 }),
		"QUARTER":     onDate(func(_, m, _, _ int64) int64 { return (m-1)/3 + 1 }),
		"DAYOFWEEK":   onDate(func(_, _, _, dnr int64) int64 { return calcWeekday(dnr, true) + 1 }),
		"DAYOFYEAR":   onDate(func(y, _, _, dnr int64) int64 { return dnr - calcDaynr(y, 1, 1) + 1 }),
		"WEEKDAY":     onDate(func(_, _, _, dnr int64) int64 { return calcWeekday(dnr, false) }),
		"TO_DAYS":     onDate(func(_, _, _, dnr int64) int64 { return dnr }),
		"WEEKOFYEAR": onDate(func(y, m, d, dnr int64) int64 {
			w, _ := calcWeek(dnr, y, m, d, weekMode(3))
			return w
		}),
		"YEAR_OF_WEEK": yearOfWeek,
		"YOW":          yearOfWeek,
		"WEEK": week(func(y, m, d, dnr, mode int64) int64 {
			w, _ := calcWeek(dnr, y, m, d, weekMode(mode))
			return w
		}),
		"YEARWEEK": week(func(y, m, d, dnr, mode int64) int64 {
			w, wy := calcWeek(dnr, y, m, d, weekMode(mode)|weekYear)
			return wy*100 + w
		}),
		"DAYNAME": {min: 1, max: 1, fn: func(env *evalEnv, a []ev) ev {
			y, m, d, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			return evStr(env.names.dayName(calcWeekday(calcDaynr(y, m, d), false)))
		}},
		"MONTHNAME": {min: 1, max: 1, fn: func(env *evalEnv, a []ev) ev {
			_, m, _, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			return evStr(env.names.monthName(m))
		}},
		"LAST_DAY": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			y, m, _, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			return ev{k: eDate, i: daysFromCivil(y, m, daysIn(m, y))}
		}},
		"TO_MONDAY": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			y, m, d, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			days := daysFromCivil(y, m, d)
			if days >= 0 && days < 4 { // Doris: 1970-01-01 to 01-04 (Thursday to Sunday) are 1970-01-01
				return ev{k: eDate, i: 0}
			}
			return ev{k: eDate, i: days - calcWeekday(calcDaynr(y, m, d), false)}
		}},
		"NEXT_DAY": {min: 2, max: 2, check: checkWeekdayName, fn: func(e *evalEnv, a []ev) ev {
			y, m, d, ok := ymdOf(a[0])
			if !ok {
				return evNull
			}
			want, ok := weekdayByName(a[1].text())
			if !ok {
				e.fail("%q is no day of the week (MONDAY, MON or MO ... SUNDAY, SUN or SU)", a[1].text())
				return evNull
			}
			days := daysFromCivil(y, m, d)
			if days == maxDateDays { // Doris: 9999-12-31 is its own next day
				return ev{k: eDate, i: days}
			}
			ahead := (want - calcWeekday(calcDaynr(y, m, d), false) + 7) % 7
			if ahead == 0 {
				ahead = 7
			}
			return dateIfValid(days + ahead)
		}},
		"MAKEDATE": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			y, ok1 := intArg(a[0], -1, 10000)
			doy, ok2 := intArg(a[1], 0, 4e6)
			if !ok1 || !ok2 || y < 0 || y > 9999 || doy < 1 {
				return evNull
			}
			return fromDaynr(calcDaynr(int64(y), 1, 1) + int64(doy) - 1)
		}},
		"FROM_DAYS": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			n, ok := intArg(a[0], 0, maxDaynr+1)
			if !ok {
				return evNull
			}
			return fromDaynr(int64(n))
		}},
		"TIMESTAMP": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return castTo(a[0], "datetime") }},
		"TIME": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			switch a[0].k {
			case eTime:
				return a[0]
			case eStr:
				if us, scale, ok := parseTimeText(a[0].s); ok {
					return evTime(us, scale)
				}
			}
			t, ok := a[0].asTime()
			if !ok {
				return evNull
			}
			return evTime(t-floorDiv(t, 86400*1e6)*86400*1e6, fracScale(a[0]))
		}},
		"SEC_TO_TIME": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			n, ok := a[0].num()
			if !ok {
				return evNull
			}
			if n.k == eInt {
				return evTime(max(-maxTimeMicros/1e6, min(n.i, maxTimeMicros/1e6))*1e6, 0)
			}
			if math.IsNaN(n.f) {
				return evNull
			}
			us := math.Round(max(-float64(maxTimeMicros), min(n.f*1e6, float64(maxTimeMicros))))
			return evTime(clampTime(int64(us)), 6)
		}},
		"TIME_TO_SEC": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			var us int64
			switch a[0].k {
			case eTime:
				us = a[0].i
			case eStr:
				t, _, ok := parseTimeText(a[0].s)
				if !ok {
					return evNull // a datetime is no TIME: NULL, as Doris
				}
				us = t
			case eInt: // HHMMSS, as a number cast to TIME
				t := castTime(a[0])
				if t.k == eNull {
					return evNull
				}
				us = t.i
			default:
				t, ok := a[0].asTime()
				if !ok {
					return evNull
				}
				us = t - floorDiv(t, 86400*1e6)*86400*1e6
			}
			return evInt(us / 1e6)
		}},
		"TIMEDIFF": {min: 2, max: 2, fn: func(_ *evalEnv, a []ev) ev {
			t1, ok1 := a[0].asTime()
			t2, ok2 := a[1].asTime()
			if !ok1 || !ok2 {
				return evNull
			}
			return evTime(clampTime(t1-t2), max(fracScale(a[0]), fracScale(a[1])))
		}},
		"CONVERT_TZ": {min: 3, max: 3, check: checkZones, fn: func(e *evalEnv, a []ev) ev {
			from, err1 := LoadTimezone(a[1].text())
			to, err2 := LoadTimezone(a[2].text())
			if err := errors.Join(err1, err2); err != nil { // Doris fails the value
				e.fail("invalid time zone: %v", err)
				return evNull
			}
			t, ok := a[0].asTime()
			if !ok {
				return evNull
			}
			us, ok := instantIn(from, t)
			if !ok {
				return evNull
			}
			return wallIn(to, us)
		}},
		"FROM_ISO8601_DATE": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev { return fromISO8601Date(a[0].text()) }},
		"TO_ISO8601": {min: 1, max: 1, fn: func(_ *evalEnv, a []ev) ev {
			t, ok := a[0].asTime()
			if !ok {
				return evNull
			}
			if isDateValue(a[0]) {
				return evStr(string(appendDate(nil, floorDiv(t, 86400*1e6))))
			}
			b := appendDatetime(nil, t, 6)
			b[10] = 'T'
			return evStr(string(b))
		}},
		"SECOND_TIMESTAMP":      epoch(1e6),
		"MILLISECOND_TIMESTAMP": epoch(1e3),
		"MICROSECOND_TIMESTAMP": epoch(1),
		"FROM_SECOND":           fromEpoch(1e6),
		"FROM_MILLISECOND":      fromEpoch(1e3),
		"FROM_MICROSECOND":      fromEpoch(1),
		"UNIX_TIMESTAMP": {min: 0, max: 2, fn: func(e *evalEnv, a []ev) ev {
			if len(a) == 0 {
				return evNull // the load time is not a property of the record
			}
			v := a[0]
			if len(a) == 2 {
				v = strToDate(e, a[0].text(), a[1].text())
			}
			us, ok := instantOf(e, v)
			if !ok {
				return evNull
			}
			// Doris gives 0 outside [1970-01-01, 3001-01-19 03:14:07] UTC.
			if us < 0 || us > maxUnixSeconds*1e6+999999 {
				return evInt(0)
			}
			if us%1e6 == 0 {
				return evInt(us / 1e6)
			}
			f, _ := strconv.ParseFloat(fmt.Sprintf("%d.%06d", us/1e6, us%1e6), 64)
			return evFloat(f)
		}},
	}
}

// roundDatetime rounds a DATETIME to scale fractional digits (half up),
// as Doris casts to DATETIME(scale); NULL past 9999-12-31 23:59:59.
func roundDatetime(v ev, scale int) ev {
	if scale >= 6 {
		return v
	}
	unit := int64(1e6)
	for range scale {
		unit /= 10
	}
	r := floorDiv(v.i+unit/2, unit) * unit
	if r >= (maxDateDays+1)*86400*1e6 {
		return evNull
	}
	return ev{k: eDatetime, i: r}
}

// maxUnixSeconds is the last second UNIX_TIMESTAMP and FROM_UNIXTIME
// take: 3001-01-19 03:14:07 UTC, as Doris.
const maxUnixSeconds = 32536771199

// maxTimeMicros is Doris's largest TIME, 838:59:59, in microseconds.
const maxTimeMicros = (838*3600 + 59*60 + 59) * 1e6

func abs64(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func evTime(us int64, scale int) ev { return ev{k: eTime, i: us, scale: int8(scale)} }

// clampTime is us within Doris's TIME range, as Doris clamps a TIME
// computed out of it.
func clampTime(us int64) int64 { return max(-maxTimeMicros, min(us, maxTimeMicros)) }

// ymdOf reads v as a date.
func ymdOf(v ev) (y, m, d int64, ok bool) {
	t, ok := v.asTime()
	if !ok {
		return 0, 0, 0, false
	}
	y, m, d = civilFromDays(floorDiv(t, 86400*1e6))
	return y, m, d, true
}

// isDateValue reports whether v is a date without a time of day: a DATE,
// or text that spells one.
func isDateValue(v ev) bool {
	return v.k == eDate || v.k == eStr && !strings.Contains(strings.TrimSpace(v.s), ":") && len(strings.TrimSpace(v.s)) <= 10
}

// fracScale is the fractional digits of a time value: as many as its text
// spells (at most 6), 6 for a DATETIME with microseconds.
func fracScale(v ev) int {
	switch v.k {
	case eTime:
		return int(v.scale)
	case eDatetime:
		if v.i%1e6 != 0 {
			return 6
		}
	case eStr:
		s := strings.TrimSpace(v.s)
		if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.Contains(s[:i], ":") {
			n := 0
			for n < len(s)-i-1 && isDigit(s[i+1+n]) {
				n++
			}
			return min(n, 6)
		}
	}
	return 0
}

// fromDaynr is the date of Doris's day number n (FROM_DAYS), NULL
// outside 0000-01-01 to 9999-12-31.
func fromDaynr(n int64) ev {
	y, m, d, ok := dateFromDaynr(n)
	if !ok {
		return evNull
	}
	return ev{k: eDate, i: daysFromCivil(y, m, d)}
}

// weekdayByName reads NEXT_DAY's day: its English name, its first three
// or first two letters, in any case; 0 is Monday.
func weekdayByName(s string) (int64, bool) {
	s = strings.ToUpper(strings.TrimSpace(s))
	for i, n := range dayNames {
		n = strings.ToUpper(n)
		if s == n || s == n[:3] || s == n[:2] {
			return int64(i), true
		}
	}
	return 0, false
}

// checkWeekdayName refuses a constant NEXT_DAY day that names no day
// (Doris fails every record).
func checkWeekdayName(fn string, args []node) error {
	if l, ok := args[1].(*litNode); ok && l.v.k == eStr {
		if _, ok := weekdayByName(l.v.s); !ok {
			return &FormError{Func: fn, Msg: fmt.Sprintf("%s: %q is no day of the week (MONDAY, MON or MO ... SUNDAY, SUN or SU)", fn, l.v.s)}
		}
	}
	return nil
}

// checkZones refuses, when the job is created, a constant CONVERT_TZ
// zone that names none (Doris fails every record).
func checkZones(fn string, args []node) error {
	for _, a := range args[1:] {
		if l, ok := a.(*litNode); ok && l.v.k == eStr {
			if _, err := LoadTimezone(l.v.s); err != nil {
				return fmt.Errorf("%s: invalid time zone: %w", fn, err)
			}
		}
	}
	return nil
}

// instantIn is the Unix time in microseconds of the wall-clock time t
// (microseconds since 1970-01-01) in loc.
func instantIn(loc *time.Location, t int64) (int64, bool) {
	days := floorDiv(t, 86400*1e6)
	if days < minDateDays || days > maxDateDays {
		return 0, false
	}
	y, m, d := civilFromDays(days)
	rem := t - days*86400*1e6
	tt := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, loc).Add(time.Duration(rem) * time.Microsecond)
	return tt.Unix()*1e6 + int64(tt.Nanosecond()/1e3), true
}

// wallIn is the wall-clock DATETIME in loc of the Unix time us
// (microseconds); NULL outside Doris's range of dates.
func wallIn(loc *time.Location, us int64) ev {
	t := time.UnixMicro(us).In(loc)
	days := daysFromCivil(int64(t.Year()), int64(t.Month()), int64(t.Day()))
	if days < minDateDays || days > maxDateDays {
		return evNull
	}
	secs := int64(t.Hour()*3600 + t.Minute()*60 + t.Second())
	return ev{k: eDatetime, i: (days*86400+secs)*1e6 + int64(t.Nanosecond()/1e3)}
}

// instantOf reads v as an instant, in Unix microseconds: a DATE or
// DATETIME is a wall-clock time in the session's zone; text may name its
// own zone after the time of day (2007-11-30 10:30:19 +09:00,
// 2025-01-23 12:34:56 UTC, 2023-03-31 01:00:00+08:00), as Doris reads a
// datetime literal. A zone after a date alone is no datetime (NULL).
func instantOf(e *evalEnv, v ev) (int64, bool) {
	loc := e.loc
	if v.k == eStr {
		s, zone := splitZone(strings.TrimSpace(v.s))
		if zone != "" {
			if !strings.Contains(s, ":") {
				return 0, false
			}
			l, err := LoadTimezone(zone)
			if err != nil {
				return 0, false
			}
			loc, v = l, evStr(s)
		}
	}
	t, ok := v.asTime()
	if !ok {
		return 0, false
	}
	return instantIn(loc, t)
}

// splitZone splits a zone off the end of a datetime's text: a last word
// that is an offset or a name (UTC, Asia/Shanghai), or an offset right
// after the time of day. zone is "" when s names none.
func splitZone(s string) (rest, zone string) {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		w := s[i+1:]
		if w != "" && (w[0] == '+' || w[0] == '-' || isAlpha(w[0])) {
			return strings.TrimSpace(s[:i]), w
		}
	}
	// an offset right after the time of day: a sign after its first ':'
	if c := strings.IndexByte(s, ':'); c >= 0 {
		if i := strings.LastIndexAny(s, "+-"); i > c && i > 10 {
			return s[:i], s[i:]
		}
	}
	if strings.HasSuffix(s, "Z") && strings.Contains(s, ":") {
		return s[:len(s)-1], "UTC"
	}
	return s, ""
}

// fromISO8601Date reads an ISO 8601 date as Doris's FROM_ISO8601_DATE
// (be/src/vec/functions/function_timestamp.cpp): YYYY, YYYY-MM,
// YYYY-MM-DD or YYYYMMDD, an ordinal date YYYY-DDD or YYYYDDD, a week
// date YYYY-Www[-D] or YYYYWww[D] (Monday is day 1; week 1 holds
// January 4); NULL for anything else, as Doris's documentation says.
func fromISO8601Date(s string) ev {
	if len(s) < 4 || !isDigits([]byte(s[:4])) {
		return evNull
	}
	y, _ := digits([]byte(s[:4]))
	rest := s[4:]
	num := func(t string) (int64, bool) {
		if t == "" || !isDigits([]byte(t)) {
			return 0, false
		}
		n, _ := digits([]byte(t))
		return n, true
	}
	date := func(m, d int64) ev {
		if !validDate(y, m, d) {
			return evNull
		}
		return ev{k: eDate, i: daysFromCivil(y, m, d)}
	}
	dash := strings.HasPrefix(rest, "-")
	if dash {
		rest = rest[1:]
	}
	switch {
	case rest == "" && !dash:
		return date(1, 1)
	case rest != "" && rest[0] == 'W':
		w := rest[1:]
		day := int64(1)
		switch {
		case dash && len(w) == 4 && w[2] == '-':
			n, ok := num(w[3:])
			if !ok {
				return evNull
			}
			day, w = n, w[:2]
		case !dash && len(w) == 3:
			n, ok := num(w[2:])
			if !ok {
				return evNull
			}
			day, w = n, w[:2]
		}
		wk, ok := num(w)
		if !ok || len(w) != 2 || wk < 1 || wk > 53 || day < 1 || day > 7 {
			return evNull
		}
		// Proleptic Gregorian weekdays, as Doris (std::chrono), also in year 0.
		jan4 := daysFromCivil(y, 1, 4)
		return dateIfValid(jan4 - floorMod(jan4+3, 7) + (wk-1)*7 + day - 1)
	case len(rest) == 3:
		doy, ok := num(rest)
		if !ok || doy > daysInYear(y) { // day 0 is the day before January 1, as Doris
			return evNull
		}
		return dateIfValid(daysFromCivil(y, 1, 1) + doy - 1)
	case dash && len(rest) == 2:
		m, ok := num(rest)
		if !ok {
			return evNull
		}
		return date(m, 1)
	case dash && len(rest) == 5 && rest[2] == '-':
		m, ok1 := num(rest[:2])
		d, ok2 := num(rest[3:])
		if !ok1 || !ok2 {
			return evNull
		}
		return date(m, d)
	case !dash && len(rest) == 4:
		m, ok1 := num(rest[:2])
		d, ok2 := num(rest[2:])
		if !ok1 || !ok2 {
			return evNull
		}
		return date(m, d)
	}
	return evNull
}

// dateIfValid is the DATE days (since 1970-01-01), NULL outside
// 0000-01-01 to 9999-12-31.
func dateIfValid(days int64) ev {
	if days < minDateDays || days > maxDateDays {
		return evNull
	}
	return ev{k: eDate, i: days}
}

// parseTimeText reads a TIME as Doris: [-]H...:MM[:SS[.ffffff]], at
// most 838:59:59; it returns the microseconds (fraction digits past the
// sixth dropped) and how many fraction digits s has (at most 6).
func parseTimeText(s string) (us int64, scale int, ok bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, false
	}
	var frac string
	if last := parts[len(parts)-1]; strings.Contains(last, ".") {
		parts[len(parts)-1], frac, _ = strings.Cut(last, ".")
		if frac == "" || !isDigits([]byte(frac)) {
			return 0, 0, false
		}
	}
	var f [3]int64
	for i, p := range parts {
		if p == "" || !isDigits([]byte(p)) || len(p) > 2 && i > 0 || len(p) > 4 {
			return 0, 0, false
		}
		f[i], _ = digits([]byte(p))
	}
	h, m, sec := f[0], f[1], f[2]
	if m > 59 || sec > 59 {
		return 0, 0, false
	}
	scale = min(len(frac), 6)
	var fus int64
	if scale > 0 {
		fus, _ = digits([]byte(frac[:scale]))
		for i := scale; i < 6; i++ {
			fus *= 10
		}
	}
	us = (h*3600+m*60+sec)*1e6 + fus
	if us > maxTimeMicros {
		return 0, 0, false
	}
	if neg {
		us = -us
	}
	return us, scale, true
}

// castTime is CAST(v AS TIME): a TIME's text, or the time of day of a
// datetime; rounded to whole seconds (TIME's default scale).
func castTime(v ev) ev {
	var us int64
	switch v.k {
	case eTime:
		us = v.i
	case eInt: // HHMMSS
		if v.i < -8385959 || v.i > 8385959 {
			return evNull
		}
		n := abs64(v.i)
		h, m, s := n/10000, n/100%100, n%100
		if m > 59 || s > 59 || h > 838 {
			return evNull
		}
		us = (h*3600 + m*60 + s) * 1e6
		if v.i < 0 {
			us = -us
		}
	default:
		t, _, ok := parseTimeText(v.text())
		if !ok {
			dt, ok := v.asTime()
			if !ok {
				return evNull
			}
			t = dt - floorDiv(dt, 86400*1e6)*86400*1e6
		}
		us = t
	}
	r := (abs64(us) + 5e5) / 1e6 * 1e6 // half away from zero
	if us < 0 {
		r = -r
	}
	return evTime(clampTime(r), 0)
}

// appendTime appends a TIME as Doris prints it: [-]HH:MM:SS, the hours
// as many digits as they have (at least two), then scale digits of
// fraction.
func appendTime(dst []byte, us int64, scale int) []byte {
	if us < 0 {
		dst = append(dst, '-')
		us = -us
	}
	secs := us / 1e6
	dst = appendPad(dst, secs/3600, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, secs/60%60, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, secs%60, 2)
	if scale > 0 {
		f := appendPad(nil, us%1e6, 6)
		dst = append(append(dst, '.'), f[:scale]...)
	}
	return dst
}

// timeNum is a TIME as a number, as MySQL reads one: [-]HHMMSS.
func timeNum(v ev) ev {
	n := abs64(v.i) / 1e6
	r := n/3600*10000 + n/60%60*100 + n%60
	if v.i < 0 {
		r = -r
	}
	return evInt(r)
}

// extractUnits are the units of EXTRACT(unit FROM x), as the functions
// they are.
var extractUnits = map[string]string{
	"YEAR": "YEAR", "QUARTER": "QUARTER", "MONTH": "MONTH", "WEEK": "WEEK", "DAY": "DAY",
	"HOUR": "HOUR", "MINUTE": "MINUTE", "SECOND": "SECOND", "MICROSECOND": "MICROSECOND",
}

// extract parses the rest of EXTRACT(unit FROM x), after its "(": the
// unit's function of x (EXTRACT(week FROM x) is WEEK(x), mode 0).
func (p *exprParser) extract() (node, error) {
	u := p.next()
	name, ok := extractUnits[strings.ToUpper(u.text)]
	if u.kind != 'i' || !ok {
		return nil, &FormError{Func: "EXTRACT", Msg: fmt.Sprintf("EXTRACT: unknown unit %q (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MICROSECOND)", u.text)}
	}
	if !p.acceptKw("FROM") {
		return nil, fmt.Errorf("expected FROM in EXTRACT at %d", p.peek().pos)
	}
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	return &callNode{name: name, args: []node{x}}, p.expectOp(")")
}
