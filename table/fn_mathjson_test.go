package table

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

// evalText evaluates a constant expression and renders it: NULL as \N,
// a boolean as true/false, a float with strconv's shortest 'g' form.
func evalText(t *testing.T, src string) string {
	t.Helper()
	c, err := EvalConst(src, nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	switch c.Kind {
	case ConstNull:
		return `\N`
	case ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case ConstFloat:
		return "f:" + strconv.FormatFloat(c.Float, 'g', -1, 64)
	case ConstBool:
		return strconv.FormatBool(c.Int != 0)
	}
	return c.Text
}

func checkExprs(t *testing.T, cases [][2]string) {
	t.Helper()
	for _, tc := range cases {
		if got := evalText(t, tc[0]); got != tc[1] {
			t.Errorf("%s = %q, want %q", tc[0], got, tc[1])
		}
	}
}

func TestGreatestLeast(t *testing.T) {
	checkExprs(t, [][2]string{
		{"GREATEST(1)", "1"},
		{"GREATEST(1, 3, 2)", "3"},
		{"LEAST(1, 3, 2)", "1"},
		{"GREATEST(1.1, 10, 2)", "f:10"}, // a float among them: a float
		{"LEAST(1.1, 10, 2)", "f:1.1"},
		{"GREATEST('aaa', 'ccc', 'bbb')", "ccc"},
		{"LEAST('2020-01-03', '2020-01-01', '2020-01-02')", "2020-01-01"},
		{"GREATEST('9', '10')", "9"}, // text compares as text
		{"GREATEST(1, NULL, 3)", `\N`},
		{"LEAST(TRUE, 5)", "1"},
	})
}

func TestRoundTruncateCeilFloor(t *testing.T) {
	checkExprs(t, [][2]string{
		{"round(10.12345)", "f:10"},
		{"round(10.12345, 2)", "f:10.12"},
		{"round(2.675, 2)", "f:2.68"}, // on the decimal digits, not 267.49999
		{"round(-2.5)", "f:-3"},       // half away from zero
		{"round(23900/293, 2)", "f:81.57"},
		{"ceil(23900/293, 2)", "f:81.57"},
		{"floor(23900/293, 2)", "f:81.56"},
		{"truncate(23900/293, 2)", "f:81.56"},
		{"floor(-1.5)", "f:-2"},
		{"ceil(-1.5)", "f:-1"},
		{"truncate(-1.59, 1)", "f:-1.5"},
		{"truncate(123.123, -1)", "f:120"},
		{"round(1250, -2)", "1300"},
		{"round(-1250, -2)", "-1300"},
		{"truncate(1299, -2)", "1200"},
		{"floor(-1201, -2)", "-1300"},
		{"round(1234, 2)", "1234"},
		{"round(9223372036854775807, -1)", "f:9.223372036854776e+18"}, // out of BIGINT: a float
		{"round(coalesce(18618500001234567890123.0, -33280029.8473323), -22)", "f:2e+22"},
		{"round(1.5, -400)", "f:0"},
		{"round(1.5, 1e9)", "f:1.5"}, // the scale is clamped
		{"round(cast(123456789012.125 as double), 6)", "f:1.23456789012125e+11"},
		{"round(cast(1234567890123.125 as double), 6)", `\N`}, // 19 digits
		// A float rounded to a positive scale is a DECIMAL of 18 digits:
		// more is NULL, as Doris's overflow.
		{"round(cast(1e16 as double), 2)", `\N`},
		{"round(cast(1e300 as double), 2)", `\N`},
		{"round(cast(1e15 as double), 2)", "f:1e+15"},
		{"round(cast(1e300 as double))", "f:1e+300"},
		{"round('x', 2)", `\N`},
		{"round(1.5, NULL)", `\N`},
	})
}

func TestMathFunctions(t *testing.T) {
	checkExprs(t, [][2]string{
		{"sqrt(4)", "f:2"},
		{"sqrt(-1)", `\N`},
		{"sqrt(-1.1)", `\N`},
		{"pow(2, 10)", "f:1024"},
		{"power(2, -1)", "f:0.5"},
		{"pow(0, -1)", `\N`}, // infinite
		{"ln(0)", `\N`},
		{"log10(1000)", "f:3"},
		{"log2(8)", "f:3"},
		{"exp(0)", "f:1"},
		{"sign(-3.5)", "-1"},
		{"sign(0)", "0"},
		{"abs(-7)", "7"},
		{"abs(-9223372036854775807 - 1)", "f:9.223372036854776e+18"},
		{"mod(7, 3)", "1"},
		{"mod(7, 0)", `\N`},
	})
}

func TestConditionalKinds(t *testing.T) {
	checkExprs(t, [][2]string{
		{"ifnull((3*1 > 1 or 1>0), 2)", "1"}, // a boolean among numbers: 1
		{"ifnull((3*1 > 1 || 1>0), 2)", "1"}, // || is OR, as Doris reads it
		{"1 > 0 && 2 > 3", "false"},
		{"if('x', 'EXISTS', 1 = 0)", "0"}, // a boolean among text: "0"
		{"if(1 = 1, 'a', 'b')", "a"},
		{"if(NULL, -1, 10)", "10"},
		{"coalesce(NULL, 1 = 1, 2)", "1"},
		{"ifnull(1 = 1, NULL)", "true"},
		{"nvl(NULL, 'x')", "x"},
		{"nullif(1, 1)", `\N`},
	})
}

func TestJSONPathDoris(t *testing.T) {
	checkExprs(t, [][2]string{
		{`json_extract('{"k": [1,2,3,4,5]}', '$.k[*]')`, "[1,2,3,4,5]"},
		{`json_extract('{"k": [1, 2], "k2": "abc", "k3": {"k4": "v4"}}', '$.*', '$.k3.k4')`, `[[1,2],"abc",{"k4":"v4"},"v4"]`},
		{`json_extract('{"id": 123, "name": "doris"}', '$.name', '$.id2', '$.x')`, `["doris"]`},
		{`json_extract('{"id": 123}', '$.a', '$.b')`, `\N`},
		{`json_extract('{"id": 123}', NULL, '$.id')`, `\N`},
		{`json_extract('{"id": 123, "name": null}', '$.name')`, "null"}, // JSON null is text
		{`json_extract('{"id": 123, "name": null}', '$.name') is null`, "false"},
		{`json_extract('[1, 2, 3]', '$.[1]')`, "2"},
		{`json_extract('[1, 2, 3, 4, 5]', '$[-1]')`, "5"},
		{`json_extract('[1, 2, 3, 4, 5]', '$[-5]')`, "1"},
		{`json_extract('[1, 2, 3, 4, 5]', '$[-6]')`, `\N`},
		{`json_extract('[1, 2, 3, 4, 5]', '$[last]')`, "5"},
		{`json_extract('[1, 2, 3, 4, 5]', '$[last -   1]')`, "4"},
		{`json_extract('[1, 2]', '$[last+1]')`, `\N`},
		{`json_extract('[[1, 2], [], {"k": "v"}, {}]', '$[*][*]')`, "[1,2]"},
		{`json_extract('[[1, 2], [3]]', '$[*].*')`, `\N`},
		{`json_extract('{"b": 1, "a": {"y": 2, "x": 3}}', '$')`, `{"b":1,"a":{"y":2,"x":3}}`}, // keys as written
		{`json_extract('{"a": 1} x', '$')`, `\N`},                                             // data after the document: no JSON
		{`get_json_string('{"my.key": ["e1", "e2"]}', '$."my.key"[1]')`, "e2"},
		{`get_json_int('{"k1.key": {"k2": [1, 2]}}', '$."k1.key".k2[0]')`, "1"},
		{`get_json_double('{"k": [1.1, 2.2]}', '$.k[last]')`, "f:2.2"},
		{`json_extract_int('100', '$')`, "100"},
		{`json_extract_string('{"k": null}', '$.k')`, `\N`},
		{`json_extract_string('{"k": {"a": 1}}', '$.k')`, `{"a":1}`},
		{`jsonb_extract_bool('{"k": true}', '$.k')`, "true"},
		{`json_extract_bool('{"k": 1}', '$.k')`, `\N`},
		{`json_extract_isnull('{"k": null}', '$.k')`, "true"},
		{`json_extract_isnull('{"k": 1}', '$.k')`, "false"},
		{`json_extract_isnull('{"k": 1}', '$.j')`, `\N`},
		{`jsonb_exists_path('{"a": 1}', '$.b')`, "false"},
		{`json_exists_path('{"a": [1]}', '$.a[0]')`, "true"},
		{`if(jsonb_exists_path(CAST(' {"a":1}' AS json), '$.b'), 'EXISTS', 'NOT_EXISTS')`, "NOT_EXISTS"},
		{`json_array("abc", 123, NULL, 1 = 1, 'q"\\')`, `["abc",123,null,true,"q\"\\"]`},
		{`json_extract(json_array("abc", 123, '2025-06-05 14:47:01'), '$[2]')`, `"2025-06-05 14:47:01"`},
		{`json_extract('{"a": 1}', 'a')`, `\N`}, // no path
	})
}

func TestBase64AES(t *testing.T) {
	checkExprs(t, [][2]string{
		{"to_base64('hello world')", "aGVsbG8gd29ybGQ="},
		{"from_base64('aGVsbG8gd29ybGQ=')", "hello world"},
		{"from_base64('not base64!')", `\N`},
		{"aes_decrypt(from_base64(to_base64(aes_encrypt('doris is great', 'F3229A0B371ED2D9441B830D21A390C3'))), 'F3229A0B371ED2D9441B830D21A390C3')", "doris is great"},
		{"aes_decrypt(aes_encrypt('', 'k'), 'k')", ""},
		{"aes_decrypt(aes_encrypt('abc', 'k'), 'other key')", `\N`}, // the padding does not check
		{"aes_decrypt('short', 'k')", `\N`},
		{"length(aes_encrypt('0123456789abcdef', 'k'))", "32"}, // a whole block of padding
	})
	// A key longer than 16 bytes is folded by XOR into 16, as MySQL.
	long := "F3229A0B371ED2D9441B830D21A390C3"
	var folded [16]byte
	for i := range long {
		folded[i%16] ^= long[i]
	}
	if a, b := aesECB("hello world", long, true), aesECB("hello world", string(folded[:]), true); a != b || len(a.s) != 16 {
		t.Errorf("AES_ENCRYPT with a 32-byte key %q, with its fold %q", a.s, b.s)
	}
}

func TestEncryptKeyRefusedByName(t *testing.T) {
	for _, src := range []string{
		"to_base64(aes_encrypt('x', KEY db1.my_key))",
		"aes_encrypt('x', KEY `my_key`)",
	} {
		_, err := EvalConst(src, nil)
		var f *FormError
		if !errors.As(err, &f) || f.Func != "KEY" || !strings.Contains(err.Error(), "encryption keys") || !strings.Contains(err.Error(), "my_key") {
			t.Errorf("%s: %v, want a refusal naming the encryption key", src, err)
		}
	}
	if _, err := EvalConst("1 . 2", nil); err == nil {
		t.Errorf("a stray . parses")
	}
}

// TestRoundAtBounds: rounding works on at most a float's digits whatever
// the scale, and every float comes back finite or NULL.
func TestRoundAtBounds(t *testing.T) {
	for _, x := range []float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0, math.Copysign(0, -1), 1e-300} {
		for _, d := range []int{-maxScale, -309, -1, 0, 1, 17, 324, maxScale} {
			for _, m := range []roundMode{roundHalfUp, roundDown, roundCeil, roundFloor} {
				v := roundAt(evFloat(x), d, m, false)
				if v.k == eFloat && (math.IsInf(v.f, 0) || math.IsNaN(v.f)) {
					t.Errorf("roundAt(%g, %d, %d) = %v", x, d, m, v.f)
				}
			}
		}
	}
}
