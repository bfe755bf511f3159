package table

import (
	"strconv"
	"testing"
)

// constString renders a constant for the tests below: a datetime as
// 2006-01-02 15:04:05[.ffffff], a date as 2006-01-02, NULL as \N.
func constString(c Const) string {
	switch c.Kind {
	case ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case ConstFloat:
		return strconv.FormatFloat(c.Float, 'g', -1, 64)
	case ConstText:
		return "text " + c.Text
	case ConstDate:
		return "date " + string(appendDate(nil, c.Int))
	case ConstDatetime:
		prec := 0
		if c.Int%1e6 != 0 {
			prec = 6
		}
		return string(appendDatetime(nil, c.Int, prec))
	}
	return `\N`
}

// evalAll evaluates each expression in the zone +08:00 and compares what
// it renders (constString) with want. The expressions and their values are
// Doris's (the corpus's rows and Doris's documentation) unless marked as
// a bound of loadnode's.
func evalAll(t *testing.T, cases map[string]string) {
	t.Helper()
	loc, err := LoadTimezone("+08:00")
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range cases {
		c, err := EvalConst(src, loc)
		if err != nil {
			t.Errorf("%s: %v, want %s", src, err, want)
			continue
		}
		if got := constString(c); got != want {
			t.Errorf("%s = %s, want %s", src, got, want)
		}
	}
}

func TestDateAddSimpleUnits(t *testing.T) {
	evalAll(t, map[string]string{
		"DATE_ADD('2023-01-31', INTERVAL 1 MONTH)":                          "date 2023-02-28",
		"DATE_ADD(cast('2023-01-01' as date), INTERVAL 1 QUARTER)":          "date 2023-04-01",
		"DATE_ADD('2023-01-01', INTERVAL 1 WEEK)":                           "date 2023-01-08",
		"DATE_ADD('2023-12-31 23:00:00', INTERVAL 2 HOUR)":                  "2024-01-01 01:00:00",
		"DATE_SUB('2018-05-01', INTERVAL 1 YEAR)":                           "date 2017-05-01",
		"DAYS_SUB('2018-05-01', 1)":                                         "date 2018-04-30",
		"ADDDATE('2018-05-01', INTERVAL 3 MILLISECOND)":                     "2018-05-01 00:00:00.003000",
		"YEARS_ADD('2020-02-29', 1)":                                        "date 2021-02-28",
		"QUARTERS_SUB('2023-10-13 22:28:18.456789', 1)":                     "2023-07-13 22:28:18.456789",
		"HOURS_ADD('2020-02-02', 51)":                                       "2020-02-04 03:00:00",
		"MINUTES_ADD('2023-07-13 22:28:18', 2147483648)":                    "6106-08-06 00:36:18",
		"MILLISECONDS_SUB('2023-10-01 10:00:00', -500)":                     "2023-10-01 10:00:00.500000",
		"MICROSECONDS_ADD('2023-10-01 12:30:45.123456', 500000)":            "2023-10-01 12:30:45.623456",
		"TIMESTAMPADD(WEEK, 1, '2019-01-02')":                               "date 2019-01-09",
		"TIMESTAMPADD(MINUTE, 1, '2019-01-02')":                             "2019-01-02 00:01:00",
		"TIMESTAMPADD(YEAR, NULL, '2023-12-31 23:59:59')":                   `\N`,
		"date_add('9999-08-01 00:00:00', 1)":                                "9999-08-02 00:00:00",
		"date_add('9999-12-31', INTERVAL 1 DAY)":                            `\N`, // out of range
		"date_sub('0000-01-01 00:00:00', INTERVAL 1 MICROSECOND)":           `\N`,
		"years_add('2020-01-01', 9223372036854775807)":                      `\N`, // loadnode's bound: no overflow
		"months_sub('2020-01-01', -9223372036854775807)":                    `\N`,
		"minutes_add('2020-01-01', 1e300)":                                  `\N`,
		"weeks_add('2020-01-01', -9223372036854775807)":                     `\N`,
		"microseconds_add('2020-01-01', 9223372036854775807)":               `\N`,
		"date_add('2023-02-28 12:00:00+08:00', INTERVAL 1 DAY)":             "text 2023-03-01 12:00:00+08:00",
		"date_add('2023-02-28 12:00:00.5-05:30', INTERVAL 1 SECOND)":        "text 2023-03-01 01:30:01.500000+08:00",
		"hours_add('2023-02-28 12:00:00Z', 1)":                              "2023-02-28 21:00:00",
		"date_add('2023-02-28 12:00:00+8:00', INTERVAL 1 DAY)":              "text 2023-03-01 12:00:00+08:00", // a one-digit hour, as Doris reads it
		"date_add('2023-02-28 12:00:00+0800', INTERVAL 1 DAY)":              `\N`,                             // Doris wants the colon (as on load)
		"date_add('2023-02-28 12:00:00-12:00', INTERVAL 1 HOUR)":            "text 2023-03-01 09:00:00+08:00",
		"date_add('2023-02-28 12:00:00+15:00', INTERVAL 1 DAY)":             `\N`, // no such offset
		"date_add('2023-02-28', INTERVAL '2' DAY)":                          "date 2023-03-02",
		"date_add(cast('2010-11-30 23:59:59' as datetime), INTERVAL 2 DAY)": "2010-12-02 23:59:59",
	})
}

func TestDateAddCompoundUnits(t *testing.T) {
	evalAll(t, map[string]string{
		"date_add('2023-01-02', interval '1-2' year_month)":                                  "2024-03-02 00:00:00",
		"date_add('2023-01-02 03:04:05.123456', interval '-0-3' year_month)":                 "2022-10-02 03:04:05.123456",
		"date_add('2023-01-02', interval '3&4' year_month)":                                  "2026-05-02 00:00:00",
		"date_add('2023-01-02', interval '1--2' year_month)":                                 "2024-03-02 00:00:00",
		"date_add('2023-01-02', interval '5' year_month)":                                    "2023-06-02 00:00:00",
		"date_add('2023-01-02 03:04:05', interval '7&8' day_hour)":                           "2023-01-09 11:04:05",
		"date_add('2023-01-02 03:04:05.123456', interval '1::02**03' day_minute)":            "2023-01-03 05:07:05.123456",
		"date_add('2023-01-02 03:04:05.123456', interval '2:3:4' day_second)":                "2023-01-02 05:07:09.123456",
		"date_add('2023-01-02 03:04:05.123456', interval '1 2:3:4' day_microsecond)":         "2023-01-02 04:06:08.523456",
		"date_add('2023-01-02 03:04:05.123456', interval '1!2@3#4_5^' day_microsecond)":      "2023-01-03 05:07:09.623456",
		"date_add('2023-01-02 03:04:05.123456', interval '5.6' hour_microsecond)":            "2023-01-02 03:04:10.723456",
		"date_add('2023-01-02 03:04:05.123456', interval '3:4,56' minute_microsecond)":       "2023-01-02 03:07:09.683456",
		"date_add('2023-01-02 03:04:05.123456', interval '7' second_microsecond)":            "2023-01-02 03:04:05.823456",
		"date_add('2023-01-02 03:04:05.123456', interval '-5.000005' second_microsecond)":    "2023-01-02 03:04:00.123451",
		"date_sub('2023-01-02 03:04:05.123456', interval '2:30:40.123456' hour_microsecond)": "2023-01-02 00:33:25",
		`date_add("2025-10-29", INTERVAL "1 1:1:-1" DAY_SECOND)`:                             "2025-10-30 01:01:01",
		`date_add("2025-10-29", INTERVAL "-1 -1:-1:-1" DAY_SECOND)`:                          "2025-10-27 22:58:59",
		`date_add("2025-10-29 10:10:10", INTERVAL "-1 -1:1:1 43" DAY_SECOND)`:                `\N`, // too many numbers
		`date_add("2025-10-29 10:10:10", INTERVAL "-1 -1:1:1xxx" DAY_SECOND)`:                `\N`, // a letter
		`date_add("2025-10-29 10:10:10", INTERVAL "1 1:1:1.1234" DAY_SECOND)`:                `\N`,
		`date_add("2025-10-29", INTERVAL ":" DAY_SECOND)`:                                    `\N`, // no number
		"date_add('2023-01-02', interval '99999999999999999999 1' day_hour)":                 `\N`, // loadnode's bound
		"date_add('2023-01-02', interval '999999999999-1' year_month)":                       `\N`,
		"date_add('2023-01-02', interval '9999999999 1' day_hour)":                           `\N`,
		"date_add('2023-01-02', interval 12 minute_second)":                                  "2023-01-02 00:00:12",
		// A text with a UTC offset: months added on its own wall clock,
		// the result a TIMESTAMPTZ in the job's zone...
		"date_add('2023-04-30 12:00:00.000000-05:30', interval '1-01' year_month)":       "text 2024-05-31 01:30:00+08:00",
		"date_sub('2023-10-31 01:00:00+08:00', interval '1 10' day_hour)":                "text 2023-10-29 15:00:00+08:00",
		"date_add('2004-11-30 01:00:00+08:00', interval '10.123456' second_microsecond)": "text 2004-11-30 01:00:10.123456+08:00",
		// ... but a DATETIME for these three units.
		"date_add('2024-10-31 01:00:00-05:30', interval '0 10:20:30.123456' day_microsecond)": "2024-11-01 00:50:30.123456",
		"date_sub('2011-10-31 01:00:00+00:00', interval '10:20:30.123456' hour_microsecond)":  "2011-10-30 22:39:29.876544",
	})
}

func TestDateDiffs(t *testing.T) {
	evalAll(t, map[string]string{
		"YEARS_DIFF('2024-05-20', '2020-05-20 12:00:00')":                                   "3",
		"YEARS_DIFF('2024-02-29', '2023-02-28')":                                            "1",
		"YEARS_DIFF('2018-06-10', '2020-06-10')":                                            "-2",
		"MONTHS_DIFF('2020-03-28', '2020-02-29')":                                           "0",
		"MONTHS_DIFF('2020-02-29', '2020-03-29')":                                           "-1",
		"WEEKS_DIFF('2023-10-08 12:00:00', '2023-10-01 00:00:00')":                          "1",
		"WEEKS_DIFF('2023-10-08 00:00:00', '2023-10-01 12:00:00')":                          "0",
		"DAYS_DIFF('2023-10-08 00:00:00', '2023-10-01 12:00:00')":                           "6",
		"hours_diff('2023-06-15 10:30:00', '2023-06-15 14:45:00')":                          "-4",
		"MINUTES_DIFF('2020-12-25 21:00:00.999', '2020-12-25 22:00:00.923')":                "-59",
		"SECONDS_DIFF('2023-07-13 12:00:00.123', '2023-07-13 11:59:59')":                    "1",
		"milliseconds_diff('2020-03-01 00:00:00.500', '2020-02-29 23:59:59.000')":           "1500",
		"microseconds_diff('2020-12-25 22:00:00.123456', '2020-12-25 22:00:00')":            "123456",
		"TIMESTAMPDIFF(MONTH, '2023-01-31', '2023-02-28')":                                  "0",
		"TIMESTAMPDIFF(MINUTE, '2003-02-01', '2003-05-01 12:05:55')":                        "128885",
		"TIMESTAMPDIFF(DAY, '2023-12-31 23:59:50', '2024-01-01 00:00:05')":                  "0",
		"TIMESTAMPDIFF(QUARTER, '2023-01-01', '2023-12-31')":                                "3",
		"TIMESTAMPDIFF(DAY, NULL, '2023-01-01')":                                            `\N`,
		"datediff('2023-01-02 12:00:00', '2023-01-01 13:00:00')":                            "1",
		"datediff(CAST('2010-11-30 23:59:59' AS DATETIME), CAST('2010-12-31' AS DATETIME))": "-31",
		"hours_diff('2023-02-28 12:00:00+00:00', '2023-02-28 12:00:00')":                    "8",
		"MONTHS_BETWEEN('2020-12-26 15:30:00', '2020-10-25 08:15:00')":                      "2.03225806",
		"MONTHS_BETWEEN('2020-10-25', '2020-12-26', false)":                                 "-2.032258064516129",
		"MONTHS_BETWEEN('2024-02-29', '2024-01-30')":                                        "0.96774194",
		"MONTHS_BETWEEN('2025-05-31', '2025-02-28')":                                        "3",
		"MONTHS_BETWEEN('2025-05-28', '2025-02-28')":                                        "3",
		"MONTHS_BETWEEN(NULL, '2024-01-01')":                                                `\N`,
	})
}

func TestDateTruncFloorCeil(t *testing.T) {
	evalAll(t, map[string]string{
		"DATE_TRUNC('2019-05-09', 'year')":                                           "2019-01-01 00:00:00",
		"DATE_TRUNC('2019-05-09 12:30:45', 'hour')":                                  "2019-05-09 12:00:00",
		"DATE_TRUNC('2019-08-09 12:30:45', 'QUARTER')":                               "2019-07-01 00:00:00",
		"date_trunc('week', '2023-07-13 22:28:18')":                                  "2023-07-10 00:00:00",
		"date_trunc(cast('2023-07-13' as date), 'month')":                            "date 2023-07-01",
		"date_floor('2023-07-13', INTERVAL 5 YEAR)":                                  "2021-01-01 00:00:00",
		"date_floor(cast('0001-01-01 00:00:18.123' as datetime), INTERVAL 5 SECOND)": "0001-01-01 00:00:15",
		"date_ceil('2023-07-13 22:28:18', interval 5 WEEK)":                          "2023-08-14 00:00:00",
		"date_ceil('2023-07-13 22:28:18', interval 5 month)":                         "2023-12-01 00:00:00",
		"date_ceil('9900-07-13', interval NULL year)":                                `\N`,
		"YEAR_FLOOR('2023-07-13 22:28:18', 5)":                                       "2021-01-01 00:00:00",
		"YEAR_FLOOR('2019-07-13', 1, '2020-01-01')":                                  "2019-01-01 00:00:00",
		"YEAR_CEIL('2023-07-13', 1, '2020-01-01 08:30:00')":                          "2024-01-01 08:30:00",
		"YEAR_CEIL(cast('2023-07-13' as date))":                                      "date 2024-01-01",
		"MONTH_FLOOR('2023-06-01 00:00:00', 5)":                                      "2023-02-01 00:00:00",
		"MONTH_CEIL('2023-07-13 22:28:18', 5, '2023-01-01 00:00:00')":                "2023-11-01 00:00:00",
		"WEEK_FLOOR('2023-07-10', 1, '2023-07-10 12:00:00')":                         "2023-07-03 12:00:00",
		"WEEK_CEIL(cast('2023-07-13' as date))":                                      "date 2023-07-17",
		"day_floor(cast('2023-07-13' as date), 3)":                                   "date 2023-07-11",
		"day_ceil('2023-07-13 22:28:18', 7, '2023-01-01 00:00:00')":                  "2023-07-16 00:00:00",
		"hour_floor('2023-07-13 19:30:00', 4, '2023-07-03 08:00:00.123')":            "2023-07-13 16:00:00.123000",
		"hour_ceil('2023-07-13 19:30:00.123', 4, '2023-07-13 08:00:00')":             "2023-07-13 20:00:00",
		"hour_floor('2023-07-13 19:30:00', '2023-07-13 08:15:00')":                   "2023-07-13 19:15:00", // (x, origin)
		"MINUTE_CEIL('2023-07-13 22:28:18.123', 5)":                                  "2023-07-13 22:30:00",
		"SECOND_FLOOR('2025-01-23 12:34:56.789', 5)":                                 "2025-01-23 12:34:55",
		"SECOND_CEIL('2025-01-23', 30)":                                              "2025-01-23 00:00:00",
		"QUARTER_FLOOR('2023-08-13 22:28:18')":                                       "2023-07-01 00:00:00",
		"QUARTER_CEIL('2023-08-13 22:28:18', 2)":                                     "2024-01-01 00:00:00",
		"date_floor('2023-08-13', INTERVAL 1 QUARTER)":                               "2023-07-01 00:00:00",
		"QUARTERS_DIFF('2024-01-01', '2023-01-02')":                                  "3",
		"hour_ceil('2023-07-13 22:28:18', 5, NULL)":                                  `\N`,
		"hour_floor('2023-07-13 22:28:18', 0)":                                       `\N`, // a period must be positive
		"week_ceil('2023-07-13 22:28:18', 2147483647)":                               `\N`, // out of range
		"year_ceil('9999-07-13')":                                                    `\N`,
		"second_floor('2023-07-13 22:28:18', 2147483648)":                            `\N`, // an INT period
	})
}

// A constant unit Doris refuses is refused when the expression is read; one
// from a record makes that record an error row naming the function.
func TestDateTruncUnit(t *testing.T) {
	if _, err := EvalConst("date_trunc('2019-05-09', 'fortnight')", nil); err == nil {
		t.Error("date_trunc(..., 'fortnight'): no error")
	}
	if _, err := EvalConst("date_floor('2019-05-09', INTERVAL 1 DAY_HOUR)", nil); !isForm(err) {
		t.Errorf("date_floor(..., INTERVAL 1 DAY_HOUR): %v, want a FormError", err)
	}
	n, err := parseExpr("date_trunc('2019-05-09', a)", func(string) (int, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	env := &evalEnv{vals: []ev{evStr("fortnight")}, loc: nil}
	if v := n.eval(env); v.k != eNull || env.over == nil {
		t.Errorf("date_trunc(..., 'fortnight' from a record) = %v, %v; want NULL and an error row", v, env.over)
	}
}

func isForm(err error) bool {
	_, ok := IsRefusedForm(err)
	return ok
}
