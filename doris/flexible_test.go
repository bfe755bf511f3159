package doris

import (
	"slices"
	"strings"
	"testing"
)

// TestFlexiblePartialUpdate: Doris's "enable_unique_key_skip_bitmap_column"
// marks a UNIQUE table (refused on another model), and
// "unique_key_update_mode" is a job property a create sets and an ALTER
// changes (Doris's three modes; another value refused by name).
func TestFlexiblePartialUpdate(t *testing.T) {
	st, err := Parse(`CREATE TABLE t (id INT NOT NULL, name VARCHAR(20)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1
		PROPERTIES ("enable_unique_key_merge_on_write" = "true", "enable_unique_key_skip_bitmap_column" = "true")`)
	if err != nil || !st.CreateTable.GetSkipBitmapColumn() {
		t.Fatalf("UNIQUE with the skip bitmap: %v, %v", st, err)
	}
	if _, err := Parse(`CREATE TABLE t (id INT, name VARCHAR(20)) DUPLICATE KEY(id) PROPERTIES ("enable_unique_key_skip_bitmap_column" = "true")`); err == nil ||
		!strings.Contains(err.Error(), "enable_unique_key_skip_bitmap_column") {
		t.Errorf("DUPLICATE with the skip bitmap: %v, want a refusal naming it", err)
	}
	st, err = Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "unique_key_update_mode" = "update_flexible_columns") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`)
	if err != nil || st.CreateRoutineLoad.GetUniqueKeyUpdateMode() != "UPDATE_FLEXIBLE_COLUMNS" {
		t.Fatalf("create: %v, %v", st, err)
	}
	st, err = Parse(`ALTER ROUTINE LOAD FOR j PROPERTIES ("unique_key_update_mode" = "UPSERT")`)
	if err != nil {
		t.Fatal(err)
	}
	req := st.Alter.Request
	if req.GetSpec().GetUniqueKeyUpdateMode() != "UPSERT" || !slices.Contains(req.GetUpdateMask(), "unique_key_update_mode") {
		t.Errorf("alter: %v", req)
	}
	if _, err := Parse(`CREATE ROUTINE LOAD j ON t PROPERTIES ("unique_key_update_mode" = "SOMETIMES") FROM KAFKA ("kafka_broker_list" = "b:1", "kafka_topic" = "x")`); err == nil ||
		!strings.Contains(err.Error(), "UPDATE_FLEXIBLE_COLUMNS") {
		t.Errorf("an unknown mode: %v", err)
	}
}
