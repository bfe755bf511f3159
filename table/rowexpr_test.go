package table

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

func TestRowExpr(t *testing.T) {
	cols := []string{"id", "name", "amount", "at"}
	resolve := func(name string) (int, error) {
		for i, c := range cols {
			if strings.EqualFold(c, strings.Trim(name, "`")) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("no column %s", name)
	}
	row := []*api.Value{
		{Kind: &api.Value_Int64{Int64: 7}},
		{Kind: &api.Value_String_{String_: "Paris"}},
		{Kind: &api.Value_Decimal{Decimal: "10.50"}},
		{Kind: &api.Value_DatetimeMicros{DatetimeMicros: 86_400_000_000}},
	}
	for _, tc := range []struct {
		src   string
		want  Const
		reads []int
	}{
		{"id * 2 + 1", Const{Kind: ConstInt, Int: 15}, []int{0}},
		{"upper(`name`)", Const{Kind: ConstText, Text: "PARIS"}, []int{1}},
		{"amount > 10 AND id < 8", Const{Kind: ConstBool, Int: 1}, []int{2, 0}},
		{"date(at)", Const{Kind: ConstDate, Int: 1}, []int{3}},
		{"1 + 1", Const{Kind: ConstInt, Int: 2}, nil},
		{"ifnull(NULL, name)", Const{Kind: ConstText, Text: "Paris"}, []int{1}},
	} {
		e, err := CompileRowExpr(tc.src, resolve, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		for range 2 { // the scratch is reused
			got, err := e.Eval(row)
			if err != nil || got != tc.want {
				t.Errorf("%s = %+v, %v, want %+v", tc.src, got, err, tc.want)
			}
		}
		if fmt.Sprint(e.Reads()) != fmt.Sprint(tc.reads) {
			t.Errorf("%s reads %v, want %v", tc.src, e.Reads(), tc.reads)
		}
	}
	if _, err := CompileRowExpr("nosuch + 1", resolve, nil); err == nil || !strings.Contains(err.Error(), "no column nosuch") {
		t.Errorf("an unknown column: %v", err)
	}
	if _, err := CompileRowExpr("nosuchfn(id)", resolve, nil); err == nil {
		t.Errorf("an unknown function compiles")
	} else if name, ok := IsUnknownFunction(err); !ok || name != "NOSUCHFN" {
		t.Errorf("an unknown function: %v", err)
	}
	if !(Const{Kind: ConstText, Text: "1"}).Truth() || (Const{}).Truth() || (Const{Kind: ConstText, Text: "x"}).Truth() {
		t.Errorf("Truth")
	}
}
