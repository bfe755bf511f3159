package doris

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestFuzzyParse: Doris's "fuzzy_parse" is a hint (every object of a JSON
// array has the keys of the first, in the same order) that its default
// JSON reader does not use: "true" and "false" load the same rows, so
// both are taken and change nothing. Doris refuses it with a flexible
// partial update, and so does loadnode; another value is refused by name.
func TestFuzzyParse(t *testing.T) {
	const create = `CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "strip_outer_array" = "true"%s) FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`
	plain, err := Parse(strings.Replace(create, "%s", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"true", "TRUE", "false"} {
		st, err := Parse(strings.Replace(create, "%s", `, "fuzzy_parse" = "`+v+`"`, 1))
		if err != nil {
			t.Fatalf("fuzzy_parse %s: %v", v, err)
		}
		if !proto.Equal(st.CreateRoutineLoad, plain.CreateRoutineLoad) {
			t.Errorf("fuzzy_parse %s changed the job:\n%v\nwant\n%v", v, st.CreateRoutineLoad, plain.CreateRoutineLoad)
		}
	}
	if _, err := Parse(`ALTER ROUTINE LOAD FOR j PROPERTIES ("fuzzy_parse" = "true")`); err != nil {
		t.Errorf("alter: %v", err)
	}
	for _, stmt := range []string{
		strings.Replace(create, "%s", `, "fuzzy_parse" = "true", "unique_key_update_mode" = "UPDATE_FLEXIBLE_COLUMNS"`, 1),
		strings.Replace(create, "%s", `, "unique_key_update_mode" = "update_flexible_columns", "fuzzy_parse" = "true"`, 1),
		`ALTER ROUTINE LOAD FOR j PROPERTIES ("fuzzy_parse" = "true", "unique_key_update_mode" = "UPDATE_FLEXIBLE_COLUMNS")`,
	} {
		if _, err := Parse(stmt); err == nil || !strings.Contains(err.Error(), "flexible partial update does not support fuzzy_parse") {
			t.Errorf("%s: err = %v, want Doris's refusal", stmt, err)
		}
	}
	if _, err := Parse(strings.Replace(create, "%s", `, "fuzzy_parse" = "sometimes"`, 1)); err == nil || !strings.Contains(err.Error(), "fuzzy_parse") {
		t.Errorf("fuzzy_parse sometimes: %v, want a refusal naming it", err)
	}
}
