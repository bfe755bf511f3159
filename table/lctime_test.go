package table

import (
	"strings"
	"testing"
)

// TestDayNamesLocale checks DAYNAME and MONTHNAME under lc_time_names:
// a locale's names (in any case), en_US by default, DATE_FORMAT's names
// English under any locale (as Doris's), and an unknown locale refused by
// its name.
func TestDayNamesLocale(t *testing.T) {
	const src = `CONCAT(DAYNAME('2023-10-01'), ' ', MONTHNAME('2023-07-13'))` // a Sunday; July
	for _, tt := range []struct{ locale, want string }{
		{"", "Sunday July"},
		{"default", "Sunday July"},
		{"DEFAULT", "Sunday July"},
		{"en_US", "Sunday July"},
		{"En_Au", "Sunday July"},
		{"zh_CN", "星期日 七月"},
		{"ZH_cn", "星期日 七月"},
		{"zh_TW", "星期日 7月"},
		{"fr_FR", "dimanche juillet"},
		{"de_at", "Sonntag Juli"},
		{"fi_FI", "sunnuntaina heinäkuuta"},
		{"cs_CZ", "neděle července"},
		{"ca_ES", "diumenge de juliol"},
		{"no_NO", "søndag juli"},
		{"ar_JO", "الأحد تموز"},
		{" ja_JP ", "日曜日 7月"},
	} {
		got, err := EvalConst(src, nil, WithLCTimeNames(tt.locale))
		if err != nil || got.Text != tt.want {
			t.Errorf("lc_time_names %q: %q, %v; want %q", tt.locale, got.Text, err, tt.want)
		}
	}
	got, err := EvalConst(`DATE_FORMAT('2010-01-01', '%W %a %M %b')`, nil, WithLCTimeNames("es_MX"))
	if err != nil || got.Text != "Friday Fri January Jan" {
		t.Errorf("DATE_FORMAT under es_MX: %q, %v; want English names, as Doris", got.Text, err)
	}
	if got, err := EvalConst(`MONTHNAME(NULL)`, nil, WithLCTimeNames("ru_RU")); err != nil || got.Kind != ConstNull {
		t.Errorf("MONTHNAME(NULL) under ru_RU: %+v, %v; want NULL", got, err)
	}
	for _, bad := range []string{"xx_YY", "zh", "en_US.UTF-8", strings.Repeat("z", 1000)} {
		_, err := EvalConst(`DAYNAME('2023-10-01')`, nil, WithLCTimeNames(bad))
		if err == nil || !strings.Contains(err.Error(), "lc_time_names") || (len(bad) < 64 && !strings.Contains(err.Error(), bad)) {
			t.Errorf("lc_time_names %.20q: %v, want an error naming it", bad, err)
		}
		if _, err := LCTimeNames(bad); err == nil {
			t.Errorf("LCTimeNames(%.20q) accepted", bad)
		}
	}
	if n, err := LCTimeNames("pt_br"); err != nil || n != "pt_BR" {
		t.Errorf("LCTimeNames(pt_br) = %q, %v; want pt_BR", n, err)
	}
}

// TestLCTimeNamesTable checks the table's shape: every locale MySQL lists,
// keyed by its lower-case name, every name given, en_US's the English ones
// DATE_FORMAT uses.
func TestLCTimeNamesTable(t *testing.T) {
	if len(lcTimeNamesTable) != 111 {
		t.Errorf("%d locales, want MySQL's 111", len(lcTimeNamesTable))
	}
	for k, n := range lcTimeNamesTable {
		if k != strings.ToLower(n.name) {
			t.Errorf("key %q names %q", k, n.name)
		}
		for i, d := range n.days {
			if d == "" || strings.TrimSpace(d) != d {
				t.Errorf("%s: day %d is %q", n.name, i, d)
			}
		}
		for i, m := range n.months {
			if m == "" || strings.TrimSpace(m) != m {
				t.Errorf("%s: month %d is %q", n.name, i+1, m)
			}
		}
	}
	if enUS.days != dayNames || [13]string(append([]string{""}, enUS.months[:]...)) != monthNames {
		t.Errorf("en_US's names %v %v differ from DATE_FORMAT's", enUS.days, enUS.months)
	}
}

// TestParserLCTimeNames checks that a job's lc_time_names names the days
// and months of its expressions, and that an unknown one is refused.
func TestParserLCTimeNames(t *testing.T) {
	s := testSchema(t)
	f := Format{Kind: "json", Columns: []string{"id", "d", "name = concat(dayname(d), ' ', monthname(d))"}, LCTimeNames: "De_de"}
	p, err := NewParser(s, f)
	if err != nil {
		t.Fatal(err)
	}
	row, err := p.Parse([]byte(`{"id": 1, "d": "2024-02-29"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := row[2].Str; got != "Donnerstag Februar" {
		t.Errorf("name = %q, want Donnerstag Februar", got)
	}
	f.LCTimeNames = "Klingon"
	if _, err := NewParser(s, f); err == nil || !strings.Contains(err.Error(), "lc_time_names") || !strings.Contains(err.Error(), "Klingon") {
		t.Errorf("lc_time_names Klingon: %v, want an error naming the field and the value", err)
	}
}
