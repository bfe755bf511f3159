package table

import (
	"strings"
	"testing"
	"time"
)

// TestDateParts checks the functions of fn_dateparts.go on the edges
// Doris's documentation and suites name: week 0 and 53, the year a week
// belongs to, TIME values past 24 hours and below zero, zones written in
// the value, year 0 of FROM_DAYS.
func TestDateParts(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`HOUR('2018-12-31 23:59:59')`, "23"},
		{`HOUR('2018-12-31')`, "0"},
		{`HOUR(CAST('456:26:32' AS TIME))`, "456"},
		{`HOUR(CAST('-838:59:59' AS TIME))`, "838"},
		{`MINUTE('2023-05-01 10:05:30.123456')`, "5"},
		{`SECOND(CAST('15:42:33' AS TIME))`, "33"},
		{`MICROSECOND('2019-01-01 00:00:00.123456')`, "123456"},
		{`MICROSECOND(CAST('14:30:25.123456' AS TIME))`, "0"}, // TIME(0)
		{`CAST('14:30:25.5' AS TIME)`, "14:30:26"},
		{`CAST(123000 AS TIME)`, "12:30:00"}, // HHMMSS
		{`CAST(-8385959 AS TIME)`, "-838:59:59"},
		{`CAST(99999999 AS TIME)`, `\N`},
		{`CAST('2023-01-01 10:20:30' AS TIME)`, "10:20:30"},
		{`EXTRACT(year FROM '2022-09-22 17:01:30')`, "2022"},
		{`extract(MINUTE from '2022-09-22 17:01:30')`, "1"},
		{`EXTRACT(week FROM '2024-01-06')`, "0"},
		{`EXTRACT(quarter FROM '2023-05-15')`, "2"},
		{`QUARTER('2024-09-30 23:59:59')`, "3"},
		{`DAYNAME('2023-10-01')`, "Sunday"},
		{`MONTHNAME('2008-02-03')`, "February"},
		{`DAYOFWEEK('2024-02-18')`, "1"},
		{`DAYOFYEAR('2024-12-31')`, "366"},
		{`WEEKDAY('2023-10-15 18:30:00')`, "6"},
		{`WEEK('2008-02-20')`, "7"},
		{`WEEK('2008-02-20', 1)`, "8"},
		{`WEEK('2008-12-31', 1)`, "53"},
		{`WEEK('2000-01-01', 0)`, "0"},
		{`WEEK('2000-01-01', 2)`, "52"},
		{`WEEK('2023-01-01', -1)`, "52"}, // mode 7
		{`WEEK('2023-01-01', NULL)`, `\N`},
		{`WEEKOFYEAR('2023-01-02')`, "1"},
		{`YEARWEEK('1987-01-01')`, "198652"},
		{`YEARWEEK('2024-12-30', 1)`, "202501"},
		{`YEAR_OF_WEEK('2005-01-01')`, "2004"},
		{`YOW('2024-12-30')`, "2025"},
		{`LAST_DAY('2000-02-03')`, "2000-02-29"},
		{`LAST_DAY('2023-04-15 12:34:56')`, "2023-04-30"},
		{`MAKEDATE(2021, 400)`, "2022-02-04"},
		{`MAKEDATE(2021, 0)`, `\N`},
		{`MAKEDATE(9999, 366)`, `\N`},
		{`NEXT_DAY('2023-07-13', 'FR')`, "2023-07-14"},
		{`NEXT_DAY('2023-07-17', 'mon')`, "2023-07-24"}, // the next one, not the day itself
		{`NEXT_DAY('9999-12-31 12:00:00', 'SUNDAY')`, "9999-12-31"},
		{`NEXT_DAY('9999-12-30', 'SUNDAY')`, `\N`}, // past the last date
		{`TO_MONDAY('2022-09-10')`, "2022-09-05"},
		{`TO_MONDAY('1970-01-04')`, "1970-01-01"},
		{`TO_MONDAY('1970-01-05')`, "1970-01-05"},
		{`TO_MONDAY('1022-09-10')`, "1022-09-09"},
		{`FROM_DAYS(730669)`, "2000-07-03"},
		{`FROM_DAYS(59)`, "0000-02-28"},
		{`FROM_DAYS(60)`, "0000-03-01"}, // year 0 is no leap year in day numbers
		{`FROM_DAYS(0)`, `\N`},
		{`TO_DAYS('2007-10-07 10:03:09')`, "733321"},
		{`TIMESTAMP('2019-01-01')`, "2019-01-01T00:00"},
		{`TIMESTAMP('2019-01-41 12:00:00')`, `\N`},
		{`TIME('2025-1-1 12:12:12')`, "12:12:12"},
		{`SEC_TO_TIME(90061)`, "25:01:01"},
		{`SEC_TO_TIME(-3600)`, "-01:00:00"},
		{`SEC_TO_TIME(3661.9)`, "01:01:01.900000"},
		{`SEC_TO_TIME(9999999)`, "838:59:59"},
		{`TIME_TO_SEC('22:23:00')`, "80580"},
		{`TIME_TO_SEC('-16:32:18.99')`, "-59538"},
		{`TIME_TO_SEC('2025-01-01 16:32:18')`, `\N`},
		{`TIME_TO_SEC('12:60:00')`, `\N`},
		{`TIME_TO_SEC('839:00:00')`, `\N`},
		{`TIME_TO_SEC(SEC_TO_TIME(-9000))`, "-9000"},
		{`TIME_TO_SEC(123000)`, "45000"},
		{`TIMEDIFF('2024-07-20 16:59:30', '2024-07-11 16:35:21')`, "216:24:09"},
		{`TIMEDIFF('2023-01-01 09:00:00', '2023-01-01 10:30:00')`, "-01:30:00"},
		{`TIMEDIFF('2023-07-13 12:34:56.789', '2023-07-13 12:34:50.123')`, "00:00:06.666"},
		{`TIMEDIFF('2024-01-01', '2000-01-01')`, "838:59:59"},
		{`CONCAT(SEC_TO_TIME(59738), '')`, "16:35:38"},
		{`CONVERT_TZ(CAST('2019-08-01 13:21:03' AS DATETIME), 'Asia/Shanghai', 'America/Los_Angeles')`, "2019-07-31T22:21:03"},
		{`CONVERT_TZ('2019-08-01 13:21:03.636', '+08:00', 'America/Los_Angeles')`, "2019-07-31T22:21:03.636"},
		{`CONVERT_TZ(CAST('2019-08-01 13:21:03' AS DATE), 'Asia/Shanghai', 'America/Los_Angeles')`, "2019-07-31T09:00"},
		{`FROM_ISO8601_DATE('2023')`, "2023-01-01"},
		{`FROM_ISO8601_DATE('2023-10')`, "2023-10-01"},
		{`FROM_ISO8601_DATE('20231005')`, "2023-10-05"},
		{`FROM_ISO8601_DATE('2024-366')`, "2024-12-31"},
		{`FROM_ISO8601_DATE('2021-366')`, `\N`},
		{`FROM_ISO8601_DATE('0522-W01-1')`, "0521-12-29"},
		{`FROM_ISO8601_DATE('0522-W01-4')`, "0522-01-01"},
		{`FROM_ISO8601_DATE('2023W011')`, "2023-01-02"},
		{`FROM_ISO8601_DATE('2023-13')`, `\N`},
		{`FROM_ISO8601_DATE('0000-W01')`, "0000-01-03"}, // proleptic weekdays in year 0
		{`FROM_ISO8601_DATE('0000-059')`, "0000-02-28"},
		{`FROM_ISO8601_DATE('2021-000')`, "2020-12-31"},
		{`FROM_ISO8601_DATE('2023-10-01T12:34:10')`, `\N`},
		{`FROM_ISO8601_DATE('2023-W01-8')`, `\N`},
		{`TO_ISO8601(CAST('2023-10-05' AS DATE))`, "2023-10-05"},
		{`TO_ISO8601(CAST('2020-01-01 12:30:45' AS DATETIME))`, "2020-01-01T12:30:45.000000"},
		{`TO_ISO8601('2023-02-30')`, `\N`},
		{`SECOND_TIMESTAMP('1970-01-01 00:00:00 UTC')`, "0"},
		{`MILLISECOND_TIMESTAMP('2025-01-23 12:34:56.123 UTC')`, "1737635696123"},
		{`MICROSECOND_TIMESTAMP('1960-01-01 00:00:00  UTC')`, "-315619200000000"},
		{`SECOND_TIMESTAMP('2023-03-31 01:00:00+08:00')`, "1680195600"},
		{`FROM_SECOND(1)`, "1970-01-01T00:00:01"},
		{`FROM_MILLISECOND(1500)`, "1970-01-01T00:00:01.500"},
		{`FROM_MICROSECOND(-1)`, `\N`},
		{`FROM_MICROSECOND(253402300799999999)`, "9999-12-31T23:59:59.999999"},
		{`FROM_MICROSECOND(253402300800000000)`, `\N`},
		{`UNIX_TIMESTAMP('2007-11-30 10:30:19 +09:00')`, "1196386219"},
		{`UNIX_TIMESTAMP('1970-01-01 +08:00')`, `\N`}, // a zone after a date alone
		{`UNIX_TIMESTAMP('1969-01-01 00:00:00')`, "0"},
		{`UNIX_TIMESTAMP('1970-01-01 00:00:01.5')`, "1.5"},
	} {
		v, rowErr, err := evalConst(tc.expr)
		if err != nil || rowErr != nil {
			t.Errorf("%s: %v %v", tc.expr, err, rowErr)
			continue
		}
		if got := dorisRender(v); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}

// TestDatePartsZone checks that the functions that read or make an
// instant use the session's zone unless the value names its own.
func TestDatePartsZone(t *testing.T) {
	shanghai, err := LoadTimezone("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		expr string
		want Const
	}{
		{`UNIX_TIMESTAMP('2007-11-30 10:30:19')`, Const{Kind: ConstInt, Int: 1196389819}},
		{`UNIX_TIMESTAMP('2007-11-30 10:30:19 +09:00')`, Const{Kind: ConstInt, Int: 1196386219}},
		{`SECOND_TIMESTAMP('1970-01-01 08:00:00')`, Const{Kind: ConstInt, Int: 0}},
		{`FROM_SECOND(0)`, Const{Kind: ConstDatetime, Int: 8 * 3600 * 1e6}},
		{`FROM_MICROSECOND(253402271999999999)`, Const{Kind: ConstDatetime, Int: (maxDateDays+1)*86400*1e6 - 1}},
		{`FROM_MICROSECOND(253402272000000000)`, Const{}},
		{`FROM_MILLISECOND(12345678)`, Const{Kind: ConstDatetime, Int: (11*3600+25*60+45)*1e6 + 678000}},
		{`SEC_TO_TIME(3661.9)`, Const{Kind: ConstTime, Int: 3661900000, Scale: 6}},
	} {
		got, err := EvalConst(tc.expr, shanghai)
		if err != nil || got != tc.want {
			t.Errorf("%s in Asia/Shanghai = %+v, %v; want %+v", tc.expr, got, err, tc.want)
		}
	}
}

// TestDatePartsRefused checks that forms Doris fails on are refused by
// name when the job is created, and a day name that comes with a record
// makes that record an error row.
func TestDatePartsRefused(t *testing.T) {
	for _, src := range []string{
		`EXTRACT(fortnight FROM '2024-01-01')`,
		`NEXT_DAY('2023-07-13', 'Friyay')`,
	} {
		_, err := EvalConst(src, nil)
		if _, ok := IsRefusedForm(err); !ok {
			t.Errorf("%s: %v, want a refusal of the form", src, err)
		}
	}
	if _, err := EvalConst(`CONVERT_TZ('2019-08-01 13:21:03', '+08:00', 'America/Los_Anges')`, nil); err == nil || !strings.Contains(err.Error(), "Los_Anges") {
		t.Errorf("CONVERT_TZ to a zone that is none: %v, want a refusal naming it", err)
	}
	if _, rowErr, err := evalOver(`CONVERT_TZ('2019-08-01 13:21:03', a, 'UTC')`, "Nowhere/City"); err != nil || rowErr == nil || !strings.Contains(rowErr.Error(), "CONVERT_TZ") {
		t.Errorf("CONVERT_TZ from a record's bad zone: %v %v, want an error row naming CONVERT_TZ", err, rowErr)
	}
	_, rowErr, err := evalOver(`NEXT_DAY('2023-07-13', a)`, "Friyay")
	if err != nil || rowErr == nil || !strings.Contains(rowErr.Error(), "NEXT_DAY") {
		t.Errorf("NEXT_DAY of a record's bad day name: %v %v, want an error row naming NEXT_DAY", err, rowErr)
	}
	if _, err := EvalConst(`EXTRACT(year '2024-01-01')`, time.UTC); err == nil {
		t.Error("EXTRACT without FROM parsed")
	}
}

// TestCastDatetimeScale checks that CAST AS DATETIME(p) rounds to p
// fractional digits, DATETIME being DATETIME(0), as Doris casts.
func TestCastDatetimeScale(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{`CAST('2020-01-01 12:30:45.956' AS DATETIME)`, "2020-01-01T12:30:46"},
		{`TO_ISO8601(CAST('2020-01-01 12:30:45.956' AS DATETIME))`, "2020-01-01T12:30:46.000000"},
		{`CAST('2020-01-01 12:30:45.956' AS DATETIME(2))`, "2020-01-01T12:30:45.960"},
		{`CAST('2020-01-01 12:30:45.956789' AS DATETIME(6))`, "2020-01-01T12:30:45.956789"},
		{`CAST('2020-01-01 12:30:45.4' AS DATETIMEV2)`, "2020-01-01T12:30:45"},
		{`CAST('9999-12-31 23:59:59.6' AS DATETIME)`, `\N`},
	} {
		v, rowErr, err := evalConst(tc.expr)
		if err != nil || rowErr != nil {
			t.Errorf("%s: %v %v", tc.expr, err, rowErr)
			continue
		}
		if got := dorisRender(v); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
}
