package table

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// constText renders a constant expression's value for the string
// function tests: \N for NULL, true/false for a boolean.
func constText(t *testing.T, src string) string {
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
	case ConstBool:
		return strconv.FormatBool(c.Int != 0)
	case ConstText:
		return c.Text
	}
	t.Fatalf("%s: a value of kind %d", src, c.Kind)
	return ""
}

func checkConsts(t *testing.T, cases map[string]string) {
	t.Helper()
	for src, want := range cases {
		if got := constText(t, src); got != want {
			t.Errorf("%s = %q, want %q", src, got, want)
		}
	}
}

// LOCATE and INSTR count characters; a position outside the text finds
// nothing, and an empty needle is found where the search starts, as
// Doris (and MySQL for LOCATE(”, ”, 2)).
func TestLocateInstr(t *testing.T) {
	checkConsts(t, map[string]string{
		"LOCATE('bar', 'foobarbar')":         "4",
		"LOCATE('bar', 'foobarbar', 5)":      "7",
		"LOCATE('o', 'foobar', 4)":           "0",
		"LOCATE('foo', 'foobar', 0)":         "0",
		"LOCATE('foo', 'foobar', -1)":        "0",
		"LOCATE('foo', 'foobar', 10)":        "0",
		"LOCATE('', 'foobar', 3)":            "3",
		"LOCATE('', 'foobar', 6)":            "6",
		"LOCATE('', 'foobar', 7)":            "0",
		"LOCATE('', '', 1)":                  "1",
		"LOCATE('', '', 2)":                  "0",
		"LOCATE('foo', '')":                  "0",
		"LOCATE('ḍḍu', 'ṭṛì ḍḍumai')":        "5",
		"LOCATE('u', 'ṭṛì ḍḍumai', 6)":       "7",
		"LOCATE('a', 'abc', 1e19)":           "0",
		"LOCATE(NULL, 'a')":                  `\N`,
		"INSTR('hello world', 'world')":      "7",
		"INSTR('hello', '')":                 "1",
		"INSTR('', 'world')":                 "0",
		"INSTR('ṭṛì ḍḍumai hello', 'hello')": "12",
		"INSTR('abc', NULL)":                 `\N`,
	})
}

// REPEAT and SPACE make nothing for a count of 0 or less.
func TestRepeatSpace(t *testing.T) {
	checkConsts(t, map[string]string{
		"REPEAT('ab', 3)":            "ababab",
		"REPEAT('a', 0)":             "",
		"REPEAT('a', -1)":            "",
		"REPEAT('', 1000000000000)":  "",
		"REPEAT('ṭṛì', 2)":           "ṭṛìṭṛì",
		"REPEAT('a', 2.9)":           "aa",
		"REPEAT(NULL, 2)":            `\N`,
		"REPEAT('a', NULL)":          `\N`,
		"SPACE(3)":                   "   ",
		"SPACE(0)":                   "",
		"SPACE(-5)":                  "",
		"CONCAT('a', SPACE(2), 'b')": "a  b",
	})
	// Over the limit on a value: an error naming REPEAT and the limit,
	// nothing allocated (TestExprValueLimit measures it).
	_, err := EvalConst("REPEAT('x', 1e9)", nil)
	var le *LimitError
	if !errors.As(err, &le) || err.Error() != "REPEAT would make a value of 1000000000 bytes, over the limit of 16777216 bytes per value (max_record_size)" {
		t.Errorf("REPEAT('x', 1e9): %v", err)
	}
}

// ASCII is the first byte; STARTS_WITH and ENDS_WITH compare bytes.
func TestAsciiStartsEnds(t *testing.T) {
	checkConsts(t, map[string]string{
		"ASCII('234')":                      "50",
		"ASCII('')":                         "0",
		"ASCII('ṭṛì')":                      "225",
		"ASCII(NULL)":                       `\N`,
		"STARTS_WITH('hello', 'he')":        "true",
		"STARTS_WITH('hello', '')":          "true",
		"STARTS_WITH('', 'x')":              "false",
		"STARTS_WITH('Hello', 'hello')":     "false",
		"STARTS_WITH('a', NULL)":            `\N`,
		"ENDS_WITH('document.pdf', '.pdf')": "true",
		"ENDS_WITH('testing', 'test')":      "false",
		"ENDS_WITH('x', '')":                "true",
	})
}

// TRIM, LTRIM and RTRIM remove the text given (spaces without one) as
// many times as it is there at that end; an empty one removes nothing.
func TestTrimText(t *testing.T) {
	checkConsts(t, map[string]string{
		"TRIM('  a b  ')":             "a b",
		"TRIM('\ta ')":                "\ta",
		"TRIM('ababccaab', 'ab')":     "cca",
		"LTRIM('ababccaab', 'ab')":    "ccaab",
		"RTRIM('ababccaab', 'ab')":    "ababcca",
		"LTRIM('ḍḍuḍḍu hello', 'ḍu')": "ḍḍuḍḍu hello",
		"RTRIM('test ṭṛìṭṛì', 'ṭṛì')": "test ",
		"TRIM('xxxhelloxxx', '')":     "xxxhelloxxx",
		"RTRIM('aaaaa', 'a')":         "",
		"TRIM('test', NULL)":          `\N`,
		"LTRIM('  x  ')":              "x  ",
		"RTRIM('  x  ')":              "  x",
	})
}

// SPLIT_PART counts from the end for a negative part, finding the
// separator from the end; a text without the separator, part 0 and a
// part beyond the last are NULL; an empty separator makes empty text.
func TestSplitPartDoris(t *testing.T) {
	checkConsts(t, map[string]string{
		"SPLIT_PART('a,b,c', ',', 2)":            "b",
		"SPLIT_PART('a,b,c', ',', 3)":            "c",
		"SPLIT_PART('a,b,c', ',', 4)":            `\N`,
		"SPLIT_PART('a,b,c', ',', -1)":           "c",
		"SPLIT_PART('a,b,c', ',', -3)":           "a",
		"SPLIT_PART('a,b,c', ',', -4)":           `\N`,
		"SPLIT_PART('a,b,c', ',', 0)":            `\N`,
		"SPLIT_PART('abc##123###xyz', '##', 3)":  "#xyz",
		"SPLIT_PART('abc##123###xyz', '##', -1)": "xyz",
		"SPLIT_PART('abc##123###xyz', '##', -2)": "123#",
		"SPLIT_PART('hello world', '|', 1)":      `\N`,
		"SPLIT_PART('', ',', 1)":                 `\N`,
		"SPLIT_PART('test', '', 2)":              "",
		"SPLIT_PART(',a', ',', -2)":              "",
		"SPLIT_PART('a,,c', ',', 2)":             "",
		"SPLIT_PART('a,b', ',', -1e19)":          `\N`,
	})
}

// REPLACE of an empty text replaces nothing.
func TestReplaceEmptySearch(t *testing.T) {
	checkConsts(t, map[string]string{
		"REPLACE('test', '', 'new')": "test",
		"REPLACE('banana', 'a', '')": "bnn",
		"REPLACE('aaa', 'a', 'bb')":  "bbbbbb",
		"REPLACE('', 'old', 'new')":  "",
	})
}

// SUBSTRING (and SUBSTR) read FROM and FOR as Doris does.
func TestSubstringFromFor(t *testing.T) {
	checkConsts(t, map[string]string{
		"SUBSTRING('foobarbar' FROM 4 FOR 3)": "bar",
		"substring('foobarbar' from 4)":       "barbar",
		"SUBSTR('foobarbar' FROM -3)":         "bar",
		"SUBSTRING('foobarbar', 4, 3)":        "bar",
		"SUBSTRING('ab' FROM 1 + 1)":          "b",
	})
	for _, src := range []string{"SUBSTRING('abc' FROM)", "SUBSTRING('abc' FOR 2)", "SUBSTRING('abc' FROM 1 FOR 2 FOR 3)", "SUBSTRING('abc' FROM 1, 2)"} {
		if _, err := EvalConst(src, nil); err == nil {
			t.Errorf("%s: accepted", src)
		}
	}
}

// || is OR, as in Doris's default sql_mode (not PIPES_AS_CONCAT): the
// corpus row ifnull((3*1 > 1 || 1>0), 2) is the row with OR.
func TestPipesAreOr(t *testing.T) {
	checkConsts(t, map[string]string{
		"1 > 2 || 2 > 1":      "true",
		"0 || 0":              "false",
		"NULL || 1":           "true",
		"'a' || 'b' = 'b'":    "true",
		"1 = 2 || 2 = 3 OR 1": "true",
	})
	if _, err := EvalConst("1 | 2", nil); err == nil {
		t.Error("1 | 2 accepted")
	}
}

// Arrays: read after CONCAT_WS's separator and by REVERSE, and as the
// whole expression (their text, as Doris casts one); refused anywhere
// else, naming where they are read.
func TestStringArrays(t *testing.T) {
	checkConsts(t, map[string]string{
		"CONCAT_WS('-', ['a', 'b'], ['c', NULL], ['d'])": "a-b-c-d",
		"CONCAT_WS('or', ['d', '', 'is'])":               "dororis",
		"CONCAT_WS(',', [NULL, 'a'])":                    "a",
		"CONCAT_WS('-', ['a', 'b'], NULL, ['c'])":        "",
		"CONCAT_WS(NULL, ['a'])":                         `\N`,
		"CONCAT_WS(',', [])":                             "",
		"CONCAT_WS('-', REVERSE(['a', 'b']))":            "b-a",
		"REVERSE(['hello', 'world'])":                    `["world", "hello"]`,
		"REVERSE([1, 2, 3])":                             "[3, 2, 1]",
		"REVERSE([])":                                    "[]",
		"REVERSE(['a', NULL])":                           `[null, "a"]`,
		"REVERSE(REVERSE([1, 'x']))":                     `["1", "x"]`,
		"['a', 'b']":                                     `["a", "b"]`,
		"REVERSE('abc')":                                 "cba",
		"CONCAT_WS('|', 'a', NULL, 'b')":                 "a|b",
	})
	for src, want := range map[string]string{
		"CONCAT(['a'])":              "CONCAT takes no array (an array is read only by CONCAT_WS and REVERSE)",
		"CONCAT_WS(['a'], 'b')":      "CONCAT_WS: the separator is an array",
		"CONCAT_WS('-', ['a'], 'b')": "CONCAT_WS takes text or arrays after the separator, not both",
		"UPPER(REVERSE(['a']))":      "UPPER takes no array (an array is read only by CONCAT_WS and REVERSE)",
		"[1] = [1]":                  "an array is read only by CONCAT_WS and REVERSE",
		"REVERSE([[1]])":             "an array is read only by CONCAT_WS and REVERSE",
		"1 IN ([1])":                 "an array is read only by CONCAT_WS and REVERSE",
		"REVERSE(['a')":              `expected "]" at 12, found ")"`,
	} {
		if _, err := EvalConst(src, nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// An array of a record's values is bounded as a value is.
	if _, over := evalLimited(t, "concat_ws(',', [a, a])", 100, strings.Repeat("x", 60), ""); over == nil || over.Func != "ARRAY" {
		t.Errorf("an array of 128 bytes' text under a limit of 100: %v", over)
	}
}

// A load's mapping: REPEAT over the limit is an error row naming the
// column, REPEAT and the limit; the next record loads.
func TestRepeatInMapping(t *testing.T) {
	s := typedSchema(t, "id int", "v string")
	p, err := NewParser(s, Format{Kind: "json", NonStrict: true, Columns: []string{"id", "n", "v = repeat('ab', n)"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Parse([]byte(`{"id":1,"n":1000000000}`), nil)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Column != "v" || !strings.Contains(pe.Reason, "REPEAT would make a value of 2000000000 bytes, over the limit of 16777216 bytes per value") {
		t.Fatalf("Parse = %v, want an error row naming v, REPEAT and the limit", err)
	}
	row, err := p.Parse([]byte(`{"id":2,"n":2}`), nil)
	if err != nil || render(s, row) != "2|abab" {
		t.Fatalf("next record: %v, %v", row, err)
	}
}
