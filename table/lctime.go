package table

import (
	"fmt"
	"strings"
)

// timeNames are the names of days and months under one lc_time_names
// locale (lctime_names.go).
type timeNames struct {
	name   string     // as MySQL spells it: "zh_CN"
	days   [7]string  // Monday first, as calcWeekday
	months [12]string // January first
}

// enUS is Doris's default lc_time_names, the names a load has unless its
// job sets lc_time_names.
var enUS = lcTimeNamesTable["en_us"]

// maxLCTimeNamesLen bounds a locale name looked up (the longest is 5
// bytes): a longer one is refused without folding its case.
const maxLCTimeNamesLen = 64

// LCTimeNames resolves a value of Doris's (MySQL's) lc_time_names, the
// language of DAYNAME and MONTHNAME: one of the locales MySQL lists, in
// any case ("ZH_cn" is zh_CN), or "" or "default" for en_US. It returns
// the locale's name as MySQL spells it, or an error naming the value.
func LCTimeNames(locale string) (string, error) {
	n, err := lookupTimeNames(locale)
	if err != nil {
		return "", err
	}
	return n.name, nil
}

// lookupTimeNames is LCTimeNames's table.
func lookupTimeNames(locale string) (*timeNames, error) {
	s := strings.TrimSpace(locale)
	if s == "" || strings.EqualFold(s, "default") {
		return enUS, nil
	}
	if len(s) <= maxLCTimeNamesLen {
		if n, ok := lcTimeNamesTable[strings.ToLower(s)]; ok {
			return n, nil
		}
		return nil, fmt.Errorf("lc_time_names %q: unknown locale (want one MySQL lists, such as en_US, zh_CN or fr_FR)", s)
	}
	return nil, fmt.Errorf("lc_time_names of %d bytes: unknown locale (want one MySQL lists, such as en_US, zh_CN or fr_FR)", len(s))
}

// dayName is the name of weekday wd (0 is Monday) under n (en_US when nil).
func (n *timeNames) dayName(wd int64) string {
	if n == nil {
		n = enUS
	}
	return n.days[wd]
}

// monthName is the name of month m (1 is January) under n (en_US when
// nil); month 0 (of a zero date) has none: "".
func (n *timeNames) monthName(m int64) string {
	if n == nil {
		n = enUS
	}
	if m < 1 || m > 12 {
		return ""
	}
	return n.months[m-1]
}

// EvalOption sets a session setting EvalConst evaluates in.
type EvalOption func(*evalSettings)

// evalSettings are the session settings of a SELECT that EvalConst
// evaluates in.
type evalSettings struct {
	lcTimeNames string // "" or default: en_US
}

// WithLCTimeNames sets Doris's lc_time_names, the language of DAYNAME
// and MONTHNAME (LCTimeNames): EvalConst refuses a locale that is none.
func WithLCTimeNames(locale string) EvalOption {
	return func(s *evalSettings) { s.lcTimeNames = locale }
}
