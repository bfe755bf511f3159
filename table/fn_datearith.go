package table

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Date and time arithmetic, as Doris computes it:
//
//	DATE_ADD/ADDDATE/DAYS_ADD, DATE_SUB/SUBDATE/DAYS_SUB (x, n | INTERVAL n unit)
//	YEARS_/QUARTERS_/MONTHS_/WEEKS_/DAYS_/HOURS_/MINUTES_/SECONDS_/
//	MILLISECONDS_/MICROSECONDS_ ADD, SUB (x, n) and DIFF (a, b)
//	TIMESTAMPADD(unit, n, x), TIMESTAMPDIFF(unit, a, b), DATEDIFF(a, b),
//	MONTHS_BETWEEN(a, b[, round]), DATE_TRUNC(x, unit) or (unit, x),
//	DATE_FLOOR/DATE_CEIL(x, INTERVAL n unit), and YEAR_/MONTH_/WEEK_/DAY_/
//	HOUR_/MINUTE_/SECOND_ FLOOR and CEIL (x[, period][, origin]).
//
// The parser (expr.go) gives the INTERVAL forms their unit as a last
// argument, TIMESTAMPADD and TIMESTAMPDIFF as a first one, in upper case
// (intervalUnit).
//
// Values are wall-clock microseconds in the job's time zone. A text
// argument with a UTC offset ('2023-10-31 01:00:00+08:00') is that instant
// in the job's zone. DATE_ADD and DATE_SUB (and their other names) add
// months to its own wall clock, and give what Doris gives, a TIMESTAMPTZ:
// the text of the result in the job's zone with its offset
// ('2023-10-31 11:00:00+08:00'), except for the units DAY_MICROSECOND,
// HOUR_MICROSECOND and MINUTE_MICROSECOND, where Doris gives a DATETIME.
// (The corpus shows these for the compound units; that the simple units
// of DATE_ADD make a TIMESTAMPTZ too, and the other functions a DATETIME,
// is inferred.)
//
// A date argument (DATE, or text that spells only a date) stays a date
// when whole years, quarters, months, weeks or days are added; anything
// else makes a datetime. A result outside 0000-01-01 .. 9999-12-31 is NULL,
// and so is an amount or a period that cannot bring one inside it.

// simpleUnits are the INTERVAL units of one number.
var simpleUnits = map[string]bool{
	"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "HOUR": true,
	"MINUTE": true, "SECOND": true, "MILLISECOND": true, "MICROSECOND": true,
}

// compoundUnits are the INTERVAL units written as text of several numbers
// ('1 02:03:04.5' DAY_MICROSECOND): the simple units of each number, the
// largest first.
var compoundUnits = map[string][]string{
	"YEAR_MONTH":         {"YEAR", "MONTH"},
	"DAY_HOUR":           {"DAY", "HOUR"},
	"DAY_MINUTE":         {"DAY", "HOUR", "MINUTE"},
	"DAY_SECOND":         {"DAY", "HOUR", "MINUTE", "SECOND"},
	"DAY_MICROSECOND":    {"DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"HOUR_MINUTE":        {"HOUR", "MINUTE"},
	"HOUR_SECOND":        {"HOUR", "MINUTE", "SECOND"},
	"HOUR_MICROSECOND":   {"HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"MINUTE_SECOND":      {"MINUTE", "SECOND"},
	"MINUTE_MICROSECOND": {"MINUTE", "SECOND", "MICROSECOND"},
	"SECOND_MICROSECOND": {"SECOND", "MICROSECOND"},
}

// datetimeUnits are the units whose DATE_ADD of an offset text is a
// DATETIME in Doris, not a TIMESTAMPTZ.
var datetimeUnits = map[string]bool{"DAY_MICROSECOND": true, "HOUR_MICROSECOND": true, "MINUTE_MICROSECOND": true}

// intervalUnit reads an INTERVAL unit (any case, a plural s allowed for a
// simple unit): "" when it is none.
func intervalUnit(s string) string {
	u := strings.ToUpper(s)
	if _, ok := compoundUnits[u]; ok {
		return u
	}
	if u = strings.TrimSuffix(u, "S"); simpleUnits[u] {
		return u
	}
	return ""
}

// unitMicros is the length of a unit of fixed length.
var unitMicros = map[string]int64{
	"WEEK": 7 * 86400e6, "DAY": 86400e6, "HOUR": 3600e6, "MINUTE": 60e6, "SECOND": 1e6,
	"MILLISECOND": 1e3, "MICROSECOND": 1,
}

const (
	dayMicros = 86400e6
	// spanMicros bounds the distance between two valid datetimes (10000
	// years and a day): an amount of more is out of range whatever it is
	// added to, and every amount of less can be added without overflow.
	spanMicros = (maxDateDays - minDateDays + 1) * dayMicros
	// spanMonths is spanMicros in months.
	spanMonths = 10000*12 + 1
)

func dateArithFunctions() map[string]fnSpec {
	fns := map[string]fnSpec{}
	for _, name := range []string{"DATE_ADD", "ADDDATE", "DAYS_ADD", "DATE_SUB", "SUBDATE", "DAYS_SUB"} {
		sub := strings.HasSuffix(name, "SUB")
		fns[name] = fnSpec{min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return dateAddInterval(e, a[0], a[1], a[2].s, sub, true) }}
	}
	for _, unit := range []string{"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"} {
		if unit != "DAY" { // DAYS_ADD and DAYS_SUB take an INTERVAL too: above
			fns[unit+"S_ADD"] = fnSpec{min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return dateAddInterval(e, a[0], a[1], unit, false, false) }}
			fns[unit+"S_SUB"] = fnSpec{min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return dateAddInterval(e, a[0], a[1], unit, true, false) }}
		}
		fns[unit+"S_DIFF"] = fnSpec{min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev { return dateDiff(e, unit, a[1], a[0]) }}
	}
	fns["TIMESTAMPADD"] = fnSpec{min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return dateAddInterval(e, a[2], a[1], a[0].s, false, false) }}
	fns["TIMESTAMPDIFF"] = fnSpec{min: 3, max: 3, fn: func(e *evalEnv, a []ev) ev { return dateDiff(e, a[0].s, a[1], a[2]) }}
	fns["DATEDIFF"] = fnSpec{min: 2, max: 2, fn: func(e *evalEnv, a []ev) ev {
		x, _, ok1 := timeArg(e, a[0])
		y, _, ok2 := timeArg(e, a[1])
		if !ok1 || !ok2 {
			return evNull
		}
		return evInt(floorDiv(x.t, dayMicros) - floorDiv(y.t, dayMicros))
	}}
	fns["MONTHS_BETWEEN"] = fnSpec{min: 2, max: 3, fn: monthsBetween}
	fns["DATE_TRUNC"] = fnSpec{min: 2, max: 2, check: checkTruncUnit, fn: dateTrunc}
	for _, ceil := range []bool{false, true} {
		suffix := "_FLOOR"
		if ceil {
			suffix = "_CEIL"
		}
		fns["DATE"+suffix] = fnSpec{min: 3, max: 3, check: checkRoundUnit, fn: func(e *evalEnv, a []ev) ev {
			return timeRoundFn(e, a[2].s, ceil, a[:2])
		}}
		for unit := range roundUnits {
			fns[unit+suffix] = fnSpec{min: 1, max: 3, fn: func(e *evalEnv, a []ev) ev { return timeRoundFn(e, unit, ceil, a) }}
		}
	}
	return fns
}

// dtArg is a date or datetime argument.
type dtArg struct {
	t      int64 // wall-clock microseconds in the job's zone
	isDate bool  // a DATE, or text that spells only a date
	// own and off are the wall clock and the UTC offset (seconds) of text
	// with an offset; Doris adds months to its own wall clock.
	own, off int64
}

// timeArg reads v as a date or datetime in the job's zone; tz reports that
// it was text with a UTC offset.
func timeArg(e *evalEnv, v ev) (a dtArg, tz bool, ok bool) {
	if v.k == eStr {
		s := strings.TrimSpace(v.s)
		if body, off, ok := cutOffset(s); ok {
			own, err := parseDatetime([]byte(body), 6)
			if err != numOK {
				return dtArg{}, false, false
			}
			t, ok := inZone(own-off*1e6, e.loc)
			return dtArg{t: t, own: own, off: off}, true, ok
		}
		t, err := parseDatetime([]byte(s), 6)
		return dtArg{t: t, isDate: len(s) <= 10}, false, err == numOK
	}
	t, ok := v.asTime()
	return dtArg{t: t, isDate: v.k == eDate}, false, ok
}

// cutOffset splits a datetime text ending in a UTC offset (+08:00, -5:30,
// Z) into the wall clock and the offset in seconds. The offset is read as
// a value's zone suffix is on load (offsetSeconds): a colon is required, as
// Doris requires it ("+0800" is no offset, and the text no datetime).
func cutOffset(s string) (string, int64, bool) {
	if len(s) <= 10 || !strings.ContainsAny(s[10:], " Tt:") { // a date has no zone
		return "", 0, false
	}
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		return s[:len(s)-1], 0, true
	}
	i := strings.LastIndexAny(s[10:], "+-")
	if i < 0 {
		return "", 0, false
	}
	i += 10
	off, ok := offsetSeconds(s[i:], false)
	if !ok {
		return "", 0, false
	}
	return s[:i], int64(off), true
}

// inZone is the wall clock in loc of utc (microseconds since the epoch).
func inZone(utc int64, loc *time.Location) (int64, bool) {
	_, off := time.UnixMicro(utc).In(loc).Zone()
	t := utc + int64(off)*1e6
	return t, inRange(t)
}

// zoneText renders a wall clock of loc as Doris renders a TIMESTAMPTZ:
// 2023-10-31 11:00:00[.ffffff]+08:00.
func zoneText(t int64, loc *time.Location) string {
	days := floorDiv(t, dayMicros)
	y, m, d := civilFromDays(days)
	rem := t - days*dayMicros
	wall := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, loc).Add(time.Duration(rem) * time.Microsecond)
	prec := 0
	if t%1e6 != 0 {
		prec = 6
	}
	return string(appendDatetime(nil, t, prec)) + wall.Format("-07:00")
}

func inRange(t int64) bool {
	return t >= minDateDays*dayMicros && t < (maxDateDays+1)*dayMicros
}

// amountArg reads an amount of units, its fraction truncated.
func amountArg(v ev) (int64, bool) {
	n, ok := v.num()
	if !ok {
		return 0, false
	}
	if n.k == eInt {
		return n.i, true
	}
	if math.IsNaN(n.f) || math.Abs(n.f) > 1<<62 {
		return 0, false
	}
	return int64(n.f), true
}

// addUnits adds n units to t; false when the result is out of range.
func addUnits(t int64, unit string, n int64) (int64, bool) {
	switch unit {
	case "YEAR", "QUARTER", "MONTH":
		per := map[string]int64{"YEAR": 12, "QUARTER": 3, "MONTH": 1}[unit]
		if n > spanMonths/per || n < -spanMonths/per {
			return 0, false
		}
		return addMonths(t, n*per)
	}
	per := unitMicros[unit]
	if n > spanMicros/per || n < -spanMicros/per {
		return 0, false
	}
	t += n * per
	return t, inRange(t)
}

// addMonths adds n months to t, the day made the last of the month when
// the month is shorter (2020-01-31 + 1 month = 2020-02-29).
// REQUIRES: |n| <= spanMonths.
func addMonths(t, n int64) (int64, bool) {
	days := floorDiv(t, dayMicros)
	rem := t - days*dayMicros
	y, m, d := civilFromDays(days)
	total := y*12 + (m - 1) + n
	y, m = floorDiv(total, 12), total-floorDiv(total, 12)*12+1
	days = daysFromCivil(y, m, min(d, daysIn(m, y)))
	t = days*dayMicros + rem
	return t, inRange(t)
}

// dateAddInterval adds (sub: subtracts) n units to x: unit a simple or a
// compound INTERVAL unit. When zoned (the DATE_ADD family), text with a
// UTC offset makes a TIMESTAMPTZ (zoneText), else a datetime of the job's
// zone.
func dateAddInterval(e *evalEnv, x, n ev, unit string, sub, zoned bool) ev {
	a, tz, ok := timeArg(e, x)
	if !ok {
		return evNull
	}
	t := a.t
	if tz {
		t = a.own // converted to the job's zone below
	}
	if parts, compound := compoundUnits[unit]; compound {
		if n.k != eStr {
			n = evStr(n.text())
		}
		var months, micros int64
		if months, micros, ok = parseCompound(n.s, parts); !ok {
			return evNull
		}
		if sub {
			months, micros = -months, -micros
		}
		if months != 0 {
			t, ok = addUnits(t, "MONTH", months)
		}
		if ok {
			t, ok = addUnits(t, "MICROSECOND", micros)
		}
		a.isDate = false
	} else {
		k, ok2 := amountArg(n)
		if !ok2 {
			return evNull
		}
		if sub {
			k = -k
		}
		t, ok = addUnits(t, unit, k)
		if unitMicros[unit] != 0 && unitMicros[unit] < dayMicros {
			a.isDate = false
		}
	}
	if ok && tz {
		t, ok = inZone(t-a.off*1e6, e.loc)
	}
	switch {
	case !ok:
		return evNull
	case tz && zoned && !datetimeUnits[unit]:
		return evStr(zoneText(t, e.loc))
	case a.isDate:
		return ev{k: eDate, i: floorDiv(t, dayMicros)}
	}
	return ev{k: eDatetime, i: t}
}

// parseCompound reads the text of a compound INTERVAL as Doris does: an
// optional leading minus for the whole, then numbers separated by any run
// of characters that are neither digits nor letters ('1 02:03:04.5',
// '7&8:9'). Fewer numbers than parts are the smallest parts ('2:3:4' DAY_SECOND
// is 2 hours 3 minutes 4 seconds); more numbers, a letter or no number
// make it invalid. A MICROSECOND part is a fraction of a second ('.5' is
// 500000 microseconds). It returns the months (YEAR_MONTH) or the
// microseconds.
func parseCompound(s string, parts []string) (months, micros int64, ok bool) {
	s = strings.TrimSpace(s)
	neg := strings.HasPrefix(s, "-")
	var nums []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if len(nums) == len(parts) {
				return 0, 0, false
			}
			nums = append(nums, s[i:j])
			i = j
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			return 0, 0, false
		default:
			i++
		}
	}
	if len(nums) == 0 {
		return 0, 0, false
	}
	parts = parts[len(parts)-len(nums):]
	for i, digits := range nums {
		var v int64
		if parts[i] == "MICROSECOND" { // a fraction of a second
			digits = (digits + "000000")[:6]
		}
		digits = strings.TrimLeft(digits, "0")
		if len(digits) > 12 { // more than 10000 years of any unit
			return 0, 0, false
		}
		for _, c := range digits {
			v = v*10 + int64(c-'0')
		}
		switch parts[i] {
		case "YEAR":
			months += v * 12
		case "MONTH":
			months += v
		default:
			if v > spanMicros/unitMicros[parts[i]] {
				return 0, 0, false
			}
			micros += v * unitMicros[parts[i]]
		}
	}
	// Each part is at most spanMicros, and there are at most five.
	if neg {
		months, micros = -months, -micros
	}
	return months, micros, true
}

// dateDiff is b - a in whole units, as Doris counts them (TIMESTAMPDIFF):
// a month or a year is whole when the later date's day and time of day
// reach the earlier one's (2023-01-31 to 2023-02-28 is 0 months), a day
// or a week when the time of day does; smaller units are the difference
// truncated.
func dateDiff(e *evalEnv, unit string, av, bv ev) ev {
	a, _, ok1 := timeArg(e, av)
	b, _, ok2 := timeArg(e, bv)
	if !ok1 || !ok2 {
		return evNull
	}
	switch unit {
	case "YEAR", "QUARTER", "MONTH":
		ay, am, ad, atod := civilTime(a.t)
		by, bm, bd, btod := civilTime(b.t)
		var n int64
		var rest int // how b's part below the unit compares with a's
		if unit == "YEAR" {
			n, rest = by-ay, cmpParts(bm, bd, btod, am, ad, atod)
		} else {
			n, rest = (by-ay)*12+(bm-am), cmpParts(0, bd, btod, 0, ad, atod)
		}
		if n > 0 && rest < 0 {
			n--
		} else if n < 0 && rest > 0 {
			n++
		}
		if unit == "QUARTER" {
			n /= 3
		}
		return evInt(n)
	case "WEEK", "DAY":
		ad, bd := floorDiv(a.t, dayMicros), floorDiv(b.t, dayMicros)
		n := bd - ad
		rest := cmp3(b.t-bd*dayMicros, a.t-ad*dayMicros)
		if n > 0 && rest < 0 {
			n--
		} else if n < 0 && rest > 0 {
			n++
		}
		if unit == "WEEK" {
			n /= 7
		}
		return evInt(n)
	}
	return evInt((b.t - a.t) / unitMicros[unit])
}

// civilTime splits t into its date and its time of day in microseconds.
func civilTime(t int64) (y, m, d, tod int64) {
	days := floorDiv(t, dayMicros)
	y, m, d = civilFromDays(days)
	return y, m, d, t - days*dayMicros
}

func cmpParts(m1, d1, t1, m2, d2, t2 int64) int {
	if c := cmp3(m1, m2); c != 0 {
		return c
	}
	if c := cmp3(d1, d2); c != 0 {
		return c
	}
	return cmp3(t1, t2)
}

// monthsBetween is MONTHS_BETWEEN(a, b[, round]): the months from b to a,
// whole when both are the same day of the month or both a month's last
// day, else with the days' difference in 31sts of a month; the time of
// day does not count. Rounded to 8 decimals unless round is false.
func monthsBetween(e *evalEnv, args []ev) ev {
	a, _, ok1 := timeArg(e, args[0])
	b, _, ok2 := timeArg(e, args[1])
	if !ok1 || !ok2 {
		return evNull
	}
	ay, am, ad, _ := civilTime(a.t)
	by, bm, bd, _ := civilTime(b.t)
	months := float64((ay-by)*12 + am - bm)
	if ad != bd && !(ad == daysIn(am, ay) && bd == daysIn(bm, by)) {
		months += float64(ad-bd) / 31
	}
	if len(args) == 3 && !args[2].truth() {
		return evFloat(months)
	}
	return evFloat(math.Round(months*1e8) / 1e8)
}

// truncUnits are DATE_TRUNC's units.
var truncUnits = map[string]bool{"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "HOUR": true, "MINUTE": true, "SECOND": true}

// checkTruncUnit refuses DATE_TRUNC with a constant unit Doris refuses.
func checkTruncUnit(fn string, args []node) error {
	for _, a := range args {
		if l, ok := a.(*litNode); ok && l.v.k == eStr {
			if _, err := parseDatetime([]byte(l.v.s), 6); err == numOK {
				continue
			}
			if !truncUnits[strings.ToUpper(strings.TrimSpace(l.v.s))] {
				return &FormError{Func: fn, Msg: fmt.Sprintf("%s: unit %q is not one of year, quarter, month, week, day, hour, minute, second", fn, l.v.s)}
			}
		}
	}
	return nil
}

// dateTrunc is DATE_TRUNC(x, unit), or (unit, x) as Doris also takes it:
// x with every part below unit zero (WEEK: the Monday).
func dateTrunc(e *evalEnv, args []ev) ev {
	x, u := args[0], args[1]
	if truncUnits[strings.ToUpper(strings.TrimSpace(x.text()))] {
		x, u = u, x
	}
	unit := strings.ToUpper(strings.TrimSpace(u.text()))
	if !truncUnits[unit] {
		e.fail("unit %q is not one of year, quarter, month, week, day, hour, minute, second", u.text())
		return evNull
	}
	a, _, ok := timeArg(e, x)
	if !ok {
		return evNull
	}
	days := floorDiv(a.t, dayMicros)
	y, m, _, tod := civilTime(a.t)
	switch unit {
	case "YEAR":
		days = daysFromCivil(y, 1, 1)
	case "QUARTER":
		days = daysFromCivil(y, (m-1)/3*3+1, 1)
	case "MONTH":
		days = daysFromCivil(y, m, 1)
	case "WEEK":
		days -= floorMod(days+3, 7) // 1970-01-01 is a Thursday
	}
	if unit == "HOUR" || unit == "MINUTE" || unit == "SECOND" {
		tod -= tod % unitMicros[unit]
	} else {
		tod = 0
	}
	t := days*dayMicros + tod
	if !inRange(t) { // the Monday before 0000-01-03
		return evNull
	}
	if a.isDate && x.k == eDate {
		return ev{k: eDate, i: days}
	}
	return ev{k: eDatetime, i: t}
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// roundUnits are the units of the *_FLOOR and *_CEIL functions.
var roundUnits = map[string]bool{"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "HOUR": true, "MINUTE": true, "SECOND": true}

// checkRoundUnit refuses DATE_FLOOR and DATE_CEIL with an INTERVAL unit
// they do not take (the parser gives the unit as the last argument).
func checkRoundUnit(fn string, args []node) error {
	if l, ok := args[len(args)-1].(*litNode); ok && !roundUnits[l.v.s] {
		return &FormError{Func: fn, Msg: fmt.Sprintf("%s: unit %s is not one of YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND", fn, l.v.s)}
	}
	return nil
}

// firstDay is Doris's default origin of the *_FLOOR and *_CEIL periods,
// 0001-01-01 00:00:00.
const firstDay = -719162 * dayMicros

// timeRoundFn is unit_FLOOR / unit_CEIL (x[, period][, origin]): x
// rounded down (up) to the start of a period of period units counted from
// origin (default 0001-01-01 00:00:00). A second argument that is a date or
// datetime rather than a number is the origin. A date x makes a date.
func timeRoundFn(e *evalEnv, unit string, ceil bool, args []ev) ev {
	x, _, ok := timeArg(e, args[0])
	if !ok {
		return evNull
	}
	period, origin := int64(1), int64(firstDay)
	rest := args[1:]
	if len(rest) == 2 || len(rest) == 1 && rest[0].k != eDate && rest[0].k != eDatetime && !isDatetimeText(rest[0]) {
		if period, ok = amountArg(rest[0]); !ok || period < 1 || period > math.MaxInt32 {
			return evNull
		}
		rest = rest[1:]
	}
	// A DATE rounded to days or more is a date, its origin too.
	isDate := args[0].k == eDate && unitMicros[unit] >= dayMicros || args[0].k == eDate && unit == "YEAR" || args[0].k == eDate && unit == "MONTH"
	if len(rest) == 1 {
		o, _, ok := timeArg(e, rest[0])
		if !ok {
			return evNull
		}
		origin = o.t
		if isDate {
			origin = floorDiv(origin, dayMicros) * dayMicros
		}
	}
	t, ok := timeRound(unit, ceil, x.t, period, origin)
	switch {
	case !ok:
		return evNull
	case isDate:
		return ev{k: eDate, i: floorDiv(t, dayMicros)}
	}
	return ev{k: eDatetime, i: t}
}

// isDatetimeText reports whether v is text that spells a date or datetime
// and no number.
func isDatetimeText(v ev) bool {
	if v.k != eStr {
		return false
	}
	if _, ok := v.num(); ok {
		return false
	}
	_, err := parseDatetime([]byte(v.s), 6)
	return err == numOK
}

// timeRound rounds t down (ceil: up) to origin plus a multiple of period
// units, as Doris's time_round: the units between origin and t are
// counted whole (a year when t's month, day and time reach origin's), then
// made a multiple of period.
func timeRound(unit string, ceil bool, t, period, origin int64) (int64, bool) {
	if unit == "QUARTER" { // periods of 3 months
		unit, period = "MONTH", 3*period
	}
	var diff int64
	var rest int // how t's part below the unit compares with origin's
	ty, tm, td, ttod := civilTime(t)
	oy, om, od, otod := civilTime(origin)
	switch unit {
	case "YEAR":
		diff, rest = ty-oy, cmpParts(tm, td, ttod, om, od, otod)
	case "MONTH":
		diff, rest = (ty-oy)*12+tm-om, cmpParts(0, td, ttod, 0, od, otod)
	case "WEEK":
		// Doris counts weeks of its day numbers (0000-01-01 is day 1), and
		// compares the rest to the second.
		tn, on := floorDiv(t, dayMicros)+719528, floorDiv(origin, dayMicros)+719528
		diff = floorDiv(tn, 7) - floorDiv(on, 7)
		rest = cmp3(floorMod(tn, 7)*86400+ttod/1e6, floorMod(on, 7)*86400+otod/1e6)
	default:
		per := unitMicros[unit]
		diff = floorDiv(t, per) - floorDiv(origin, per)
		rest = cmp3(floorMod(t, per), floorMod(origin, per))
	}
	if ceil && rest > 0 {
		diff++
	}
	if !ceil && rest < 0 {
		diff--
	}
	delta := floorMod(diff, period)
	step := diff - delta
	if ceil && delta != 0 {
		step += period
	}
	return addUnits(origin, unit, step)
}
