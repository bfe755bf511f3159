package conformance

import "testing"

// TestNoteSteps: the INSERT before the job and the ALTER's PROPERTIES a
// case's note names are read out of it.
func TestNoteSteps(t *testing.T) {
	note := `Before the job: INSERT INTO t VALUES (1, 'alice', 100, 20), (2, 'bob', 90, 21). The job is created without unique_key_update_mode, then: PAUSE ROUTINE LOAD; ALTER ROUTINE LOAD FOR <job> PROPERTIES ("unique_key_update_mode" = "UPDATE_FLEXIBLE_COLUMNS"); RESUME ROUTINE LOAD; then the records are produced.`
	st := noteSteps(note)
	if st.insert != `INSERT INTO t VALUES (1, 'alice', 100, 20), (2, 'bob', 90, 21)` {
		t.Errorf("insert = %q", st.insert)
	}
	if st.alter != `"unique_key_update_mode" = "UPDATE_FLEXIBLE_COLUMNS"` {
		t.Errorf("alter = %q", st.alter)
	}
	if st := noteSteps(`PAUSE; ALTER ROUTINE LOAD ... PROPERTIES ("unique_key_update_mode" = "UPSERT"); RESUME;`); st.alter != `"unique_key_update_mode" = "UPSERT"` || st.insert != "" {
		t.Errorf("steps = %+v", st)
	}
	// test_stream_load__temporary_partitions
	if st := noteSteps("needs temporary partitions. After CREATE TABLE the suite runs: ALTER TABLE test_temporary_partitions ADD TEMPORARY PARTITION test; the load writes into that temporary partition and the query reads it."); st.alterTable != "ALTER TABLE test_temporary_partitions ADD TEMPORARY PARTITION test" {
		t.Errorf("alterTable = %q", st.alterTable)
	}
	if st := noteSteps("needs ENCRYPTKEY. Before the job the suite runs: CREATE ENCRYPTKEY k AS \"x\";"); st != (caseSteps{}) {
		t.Errorf("steps of a note without them = %+v", st)
	}
}
