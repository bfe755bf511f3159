package table

import (
	"strings"
	"testing"
	"time"
)

func TestEvalConst(t *testing.T) {
	shanghai, err := LoadTimezone("+08:00")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		src  string
		loc  *time.Location
		want Const
	}{
		{"1 + 2", nil, Const{Kind: ConstInt, Int: 3}},
		{"1.5 * 2", nil, Const{Kind: ConstFloat, Float: 3}},
		{"concat('a', 'b')", nil, Const{Kind: ConstText, Text: "ab"}},
		{"concat('a', NULL)", nil, Const{}},
		{"1 < 2", nil, Const{Kind: ConstBool, Int: 1}},
		{"to_date('1970-01-02 10:00:00')", nil, Const{Kind: ConstDate, Int: 1}},
		{"cast('1970-01-01 00:00:01' as datetime)", nil, Const{Kind: ConstDatetime, Int: 1e6}},
		// The job's timezone: from_unixtime reads it.
		{"from_unixtime(0)", shanghai, Const{Kind: ConstText, Text: "1970-01-01 08:00:00"}},
		{"from_unixtime(0)", nil, Const{Kind: ConstText, Text: "1970-01-01 00:00:00"}},
	} {
		got, err := EvalConst(tc.src, tc.loc)
		if err != nil || got != tc.want {
			t.Errorf("EvalConst(%q) = %+v, %v; want %+v", tc.src, got, err, tc.want)
		}
	}
	_, err = EvalConst("frobnicate(1)", nil)
	if name, ok := IsUnknownFunction(err); !ok || name != "FROBNICATE" || !strings.Contains(err.Error(), "unknown function FROBNICATE") {
		t.Errorf("frobnicate(1): %v (%q, %v), want an UnknownFunctionError naming FROBNICATE", err, name, ok)
	}
	if _, err := EvalConst("k1 + 1", nil); err == nil || !strings.Contains(err.Error(), `"k1": a constant expression names no column`) {
		t.Errorf("k1 + 1: %v, want a refusal naming k1", err)
	}
	if _, err := EvalConst("1 +", nil); err == nil {
		t.Error("1 +: no error")
	} else if _, ok := IsUnknownFunction(err); ok {
		t.Errorf("1 +: %v is not an unknown function", err)
	}
	for _, name := range []string{"concat", "DATE_ADD", "nvl", "Date_Format"} {
		if !KnownFunction(name) {
			t.Errorf("KnownFunction(%s) = false", name)
		}
	}
	if KnownFunction("frobnicate") {
		t.Error("KnownFunction(frobnicate) = true")
	}
}

// A function the engine lacks is refused by name before its arguments are
// read: a unit keyword such as MINUTE is no column to complain about.
func TestUnknownFunctionBeforeArguments(t *testing.T) {
	_, err := EvalConst("FROBNICATE(MINUTE, 1, '2019-01-02')", nil)
	if name, ok := IsUnknownFunction(err); !ok || name != "FROBNICATE" {
		t.Errorf("FROBNICATE(MINUTE, ...): %v, want unknown function FROBNICATE", err)
	}
}

func TestRefusedForm(t *testing.T) {
	for src, want := range map[string]string{
		"TRIM('xax', 'x', 'y')":                            "TRIM takes 1 to 2 arguments, not 3",
		"date_add('2023-01-02', interval '1-2' fortnight)": `unknown INTERVAL unit "fortnight"`,
		"timestampadd(fortnight, 1, '2023-01-02')":         `TIMESTAMPADD: unknown unit "fortnight"`,
	} {
		_, err := EvalConst(src, nil)
		if _, ok := IsRefusedForm(err); !ok || err.Error() != want {
			t.Errorf("%s: %v, want a FormError %q", src, err, want)
		}
	}
}
