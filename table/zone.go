package table

import (
	"bytes"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Datetimes with a zone. Doris reads a DATETIME text that ends in a time
// zone as that zone's wall clock and stores it as the wall clock of the
// load's zone (a job's timezone property; UTC without a job, loadnode's
// session zone): with timezone "+02:00", "2022-02-01 01:02:55Z" loads as
// 2022-02-01 03:02:55 (Doris's regression suite
// datatype_p0/datetimev2/test_tz_streamload). A DATE takes the date as
// written, its zone checked but not applied: with timezone UTC,
// "2024-04-11T06:00:13+08:00" is the DATETIME 2024-04-10 22:00:13 and the
// DATE 2024-04-11 (test_tz_streamload2; Doris 2.0 moved the date too). The
// zone follows the time (or the date) without a space:
//
//	Z, UTC, Etc/UTC, Zulu, GMT          UTC (any case)
//	+08:00, -5:30                       an offset, + at most 14 hours, - at most 12
//	UTC+8, GMT-05:00                    an offset after UTC or GMT (hours alone too)
//	CST                                 Asia/Shanghai, as Doris reads it
//	Asia/Shanghai, America/New_York     an IANA zone name (any case: asia/shanghai)
//
// Anything else after the time is not a datetime, as before.

// zonedDatetime reads b, which parseDatetime did not read, as a datetime
// followed by a zone, and returns it as a wall clock of loc (microseconds
// since 1970-01-01 00:00:00 of that clock), the fraction rounded to prec
// digits.
func zonedDatetime(b []byte, prec int, loc *time.Location) (int64, numError) {
	b = bytes.TrimSpace(b)
	body, zone := cutZone(b)
	if len(zone) == 0 {
		return 0, numSyntax
	}
	z, ok := lookupZone(string(zone))
	if !ok {
		return 0, numSyntax
	}
	w, e := parseDatetime(body, prec)
	if e != numOK {
		return 0, e
	}
	t, ok := inZone(instant(w, z), loc)
	if !ok {
		return 0, numRange
	}
	return t, numOK
}

// zonedDate reads b, which parseDate did not read, as a date (or a
// datetime, its time dropped) followed by a zone, and returns the date as
// written in days since 1970-01-01.
func zonedDate(b []byte) (int64, numError) {
	body, zone := cutZone(bytes.TrimSpace(b))
	if len(zone) == 0 {
		return 0, numSyntax
	}
	if _, ok := lookupZone(string(zone)); !ok {
		return 0, numSyntax
	}
	return parseDate(body)
}

// instant is wall clock w of zone loc as microseconds since the epoch
// (inZone is the way back).
func instant(w int64, loc *time.Location) int64 {
	c := time.UnixMicro(w).UTC()
	return time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), loc).UnixMicro()
}

// cutZone splits b into a datetime's text and what follows it, the zone
// if b has one: the rest after the date's digits (8 or 14 of them in the
// digits-only form) or after its time of day. A zone starts with a sign or
// a letter; a T between date and time is the time's.
func cutZone(b []byte) (body, zone []byte) {
	i := 0
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i == 8 || i == 14 { // 20060102[150405]
		return b[:i], b[i:]
	}
	if i != 4 || i == len(b) || b[i] != '-' && b[i] != '/' {
		return b, nil
	}
	sep := b[i]
	for part := 0; part < 2; part++ { // month, day
		if i >= len(b) || b[i] != sep {
			return b, nil
		}
		i++
		n := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		if i == n {
			return b, nil
		}
	}
	if i+1 < len(b) && (b[i] == ' ' || b[i] == 'T' || b[i] == 't' || b[i] == ':') {
		j := i + 1
		for j < len(b) && b[j] == ' ' {
			j++
		}
		if j < len(b) && isDigit(b[j]) {
			i = j
			for i < len(b) && (isDigit(b[i]) || b[i] == ':' || b[i] == '.') {
				i++
			}
		}
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-' || isAlpha(b[i])) {
		return b[:i], b[i:]
	}
	return b, nil
}

// maxZoneName bounds a zone name read from a value (the longest IANA name
// is 32 bytes).
const maxZoneName = 64

// lookupZone resolves a zone suffix (the forms in the package comment).
func lookupZone(name string) (*time.Location, bool) {
	if name == "" || len(name) > maxZoneName {
		return nil, false
	}
	switch strings.ToLower(name) {
	case "z", "utc", "etc/utc", "zulu", "gmt", "uct", "universal", "greenwich":
		return time.UTC, true
	case "cst":
		return cachedZone("Asia/Shanghai")
	}
	if name[0] == '+' || name[0] == '-' {
		return offsetZone(name, false)
	}
	if p := strings.ToLower(name[:min(3, len(name))]); (p == "utc" || p == "gmt") && len(name) > 3 {
		return offsetZone(name[3:], true)
	}
	if !zoneNameOK(name) {
		return nil, false
	}
	return cachedZone(name)
}

// zoneNameOK reports whether name may name an IANA zone: at most
// maxZoneName bytes of [A-Za-z0-9/_+-], a letter first, no "..".
func zoneNameOK(name string) bool {
	if name == "" || len(name) > maxZoneName || !isAlpha(name[0]) || strings.Contains(name, "..") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlpha(c) && !isDigit(c) && c != '/' && c != '_' && c != '-' && c != '+' {
			return false
		}
	}
	return true
}

// offsetZone reads ±h:mm or ±hh:mm (and ±h or ±hh when hourOnly) with at
// most +14 and -12 hours, as Doris does.
func offsetZone(s string, hourOnly bool) (*time.Location, bool) {
	off, ok := offsetSeconds(s, hourOnly)
	switch {
	case !ok:
		return nil, false
	case off == 0:
		return time.UTC, true
	}
	return time.FixedZone(s, off), true
}

// offsetSeconds is offsetZone's offset, east of UTC in seconds.
func offsetSeconds(s string, hourOnly bool) (int, bool) {
	if len(s) < 2 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	h, m, rest := s[1:], "00", ""
	if k := strings.IndexByte(h, ':'); k >= 0 {
		h, rest = h[:k], h[k+1:]
		if len(rest) != 2 || !isDigit(rest[0]) || !isDigit(rest[1]) {
			return 0, false
		}
		m = rest
	} else if !hourOnly {
		return 0, false
	}
	if len(h) < 1 || len(h) > 2 || !isDigit(h[0]) || len(h) == 2 && !isDigit(h[1]) {
		return 0, false
	}
	hours := int(h[0] - '0')
	if len(h) == 2 {
		hours = hours*10 + int(h[1]-'0')
	}
	mins := int(m[0]-'0')*10 + int(m[1]-'0')
	if s[0] == '+' && hours > 14 || s[0] == '-' && hours > 12 || mins >= 60 {
		return 0, false
	}
	off := hours*3600 + mins*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// zoneCache holds the IANA zones values named: every zone found (there
// are some 600 names) and at most maxUnknownZones names that are none, so
// that junk in a stream can neither grow it without bound nor push out
// the real zones; a name past that bound is looked up each time.
var (
	zoneCache    sync.Map // string -> *time.Location (nil: no such zone)
	zonesKnown   atomic.Int32
	zonesUnknown atomic.Int32
)

const (
	maxKnownZones   = 2048
	maxUnknownZones = 256
)

// zoneNames maps the lower-case spelling of each zone in the system's tz
// database to the database's own, as Doris finds a zone name in any case
// (it lower-cases the names it preloads from the same directory). It is
// read once, when a name is first not found as spelled, and holds at most
// maxKnownZones names (the database has some 600).
var zoneNames struct {
	once sync.Once
	m    map[string]string
}

// foldedZone returns the tz database's spelling of name, compared without
// case.
func foldedZone(name string) (string, bool) {
	zoneNames.once.Do(func() { zoneNames.m = readZoneNames(zoneRoot(), maxKnownZones) })
	c, ok := zoneNames.m[strings.ToLower(name)]
	return c, ok
}

// zoneRoot is the directory Go's time package reads zones from: $ZONEINFO
// when it is a directory, else the first of the system's usual places.
func zoneRoot() string {
	dirs := []string{"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/", "/etc/zoneinfo/"}
	if d := os.Getenv("ZONEINFO"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// readZoneNames lists the zone files under root (names as zoneNameOK
// takes them, at most three levels deep, without Doris's duplicate trees
// posix/ and right/), at most limit of them, by their lower-case names.
func readZoneNames(root string, limit int) map[string]string {
	m := map[string]string{}
	if root == "" {
		return m
	}
	_ = fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // an unreadable entry: skipped
		case len(m) >= limit:
			return fs.SkipAll
		case d.IsDir():
			if p != "." && (d.Name() == "posix" || d.Name() == "right" || strings.Count(p, "/") >= 2) {
				return fs.SkipDir
			}
		case zoneNameOK(p):
			m[strings.ToLower(p)] = p
		}
		return nil
	})
	return m
}

func cachedZone(name string) (*time.Location, bool) {
	if v, ok := zoneCache.Load(name); ok {
		loc := v.(*time.Location)
		return loc, loc != nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		// Doris finds a zone name in any case ("asia/shanghai").
		if c, ok := foldedZone(name); ok && c != name {
			loc, err = time.LoadLocation(c)
		}
	}
	if err != nil {
		if zonesUnknown.Add(1) <= maxUnknownZones {
			zoneCache.Store(name, (*time.Location)(nil))
		}
		return nil, false
	}
	if zonesKnown.Add(1) <= maxKnownZones {
		zoneCache.Store(name, loc)
	}
	return loc, true
}
