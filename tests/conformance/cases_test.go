package conformance

import (
	"fmt"
	"strings"

	"github.com/loadnode/loadnode/api"
)

// Each case follows its steps.md. `sync` (a Doris metadata barrier) has no
// meaning here and is left out, and so is the DROP TABLE IF EXISTS that
// opens most cases: each case runs on a fresh node, where it would drop
// nothing (loadnode has no DROP TABLE yet).

// case01: ALTER ... FROM KAFKA moves the job to another topic.
func case01(t *caseT) {
	e := newEnv(t, "01_topic_change", 1, map[string]string{"TOPIC_BEFORE": "test_topic_before", "TOPIC_AFTER": "test_topic_after"})
	e.produce("test_topic_before", 0, e.lines("data/test_topic_before.csv"))
	e.produce("test_topic_after", 0, e.lines("data/test_topic_after.csv"))
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitCount("test_routine_load_topic_change", "test_topic_change", 5)
	e.check("sql_topic_change", e.query("test_routine_load_topic_change", []int{0}, false))
	e.mustExec("pause routine load for test_topic_change")
	e.mustExec(`ALTER ROUTINE LOAD FOR test_topic_change FROM KAFKA("kafka_topic" = "test_topic_after", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`)
	e.mustExec("resume routine load for test_topic_change")
	e.waitCount("test_routine_load_topic_change", "test_topic_change", 6)
	e.check("sql_topic_change1", e.query("test_routine_load_topic_change", []int{0}, false))
	e.mustExec("stop routine load for test_topic_change")
}

// case02: kafka_offsets given as a datetime (offsets for times).
func case02(t *caseT) {
	e := newEnv(t, "02_offset_by_timestamp", 1, map[string]string{"TOPIC": "test_offset_time"})
	e.produce("test_offset_time", 0, e.lines("data/test_offset_time.csv"))
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitCount("test_routine_load_offset", "test_offset", 1)
	e.check("sql_offset", e.query("test_routine_load_offset", []int{0}, false))
	e.mustExec("stop routine load for test_offset")
}

// case03: empty_field_as_null, altered while paused; TRUNCATE between.
func case03(t *caseT) {
	const table, job = "test_routine_load_empty_field_as_null", "test_follower_routine_load"
	e := newEnv(t, "03_empty_field_as_null", 1, map[string]string{"TOPIC": "test_routine_load_empty_field_as_null"})
	records := e.lines("data/records.txt")
	e.produce(e.vars["TOPIC"], 0, records)
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitCount(table, job, 2)
	e.check("select_1", e.query(table, []int{0}, false))
	e.mustExec("pause routine load for " + job)
	e.mustExec(`ALTER ROUTINE LOAD FOR ` + job + ` PROPERTIES("empty_field_as_null" = "true")`)
	e.mustExec("truncate table " + table)
	e.mustExec("resume routine load for " + job)
	e.produce(e.vars["TOPIC"], 0, records)
	e.waitCount(table, job, 2)
	e.check("select_2", e.query(table, []int{0}, false))
	e.mustExec("stop routine load for " + job)
}

// case04: every basic type, a COLUMNS subset (the rest from DEFAULTs),
// OFFSET_END.
func case04(t *caseT) {
	const table, job = "test_routine_load_schedule", "testScheduleJob"
	e := newEnv(t, "04_basic_types_csv", 1, map[string]string{"TOPIC": "test_schedule"})
	records := e.lines("data/test_schedule.csv")
	e.produce("test_schedule", 0, records) // skipped: the job starts at OFFSET_END
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitStarted(job, 1)
	e.produce("test_schedule", 0, records)
	e.waitCount(table, job, int64(len(records)))
	e.check("sql", e.query(table, []int{0, 1}, false))
	e.mustExec("stop routine load for " + job)
}

// case05: Doris's enclose and escape.
func case05(t *caseT) {
	e := newEnv(t, "05_enclose_escape", 1, map[string]string{"TOPIC": "test_enclose_and_escape0"})
	e.produce(e.vars["TOPIC"], 0, e.lines("data/test_enclose_and_escape0.csv"))
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	const table, job = "test_routine_load_with_enclose_and_escape", "test_enclose_and_escape"
	e.waitCount(table, job, 1)
	e.check("sql_enclose_and_escape", e.query(table, []int{0}, false))
	e.mustExec("pause routine load for " + job)
	e.mustExec(`ALTER ROUTINE LOAD FOR ` + job + ` PROPERTIES("enclose" = "g")`)
	e.mustExec("resume routine load for " + job)
	e.waitCount(table, job, 1)
	e.check("sql_enclose_and_escape_resume", e.query(table, []int{0}, false))
	e.mustExec("stop routine load for " + job)
	// The third section only needs the multi-table statement (no ON) to be
	// accepted; the rows are the same.
	e.mustExec(e.statements("routine_load_multi_table.sql")[0])
	e.check("sql_enclose_and_escape_multi_table", e.query(table, []int{0}, false))
}

// case06: a UNIQUE merge-on-write table with partial updates.
func case06(t *caseT) {
	const table, job, topic = "test_routine_load_partial_update", "test_partial_update_job", "test_routine_load_partial_update"
	e := newEnv(t, "06_partial_update_mow", 1, map[string]string{"TOPIC": topic})
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.check("select_initial", e.query(table, []int{0}, false))
	e.mustExec(e.statements("routine_load.sql")[0])
	records := e.lines("data/records.txt")
	e.produce(topic, 0, records)
	// RoutineLoadTestUtils.waitForTaskFinish: the job has loaded the 3 records.
	e.poll(func() (bool, func() string) {
		n, err := e.loadedRows(job) // Statistic ([14]) loadedRows
		return err == nil && n >= int64(len(records)), func() string {
			return fmt.Sprintf("job %s: loadedRows %d, %v", job, n, err)
		}
	})
	e.check("select_after_partial_update", e.query(table, []int{0}, false))
	e.mustExec("STOP ROUTINE LOAD FOR " + job)
}

// case07: jsonpaths with "$." into a UNIQUE table.
func case07(t *caseT) {
	const table, job, topic = "test_routine_load_jsonpath_dollar", "test_routine_load_jsonpath_dollar_job", "test_routine_load_jsonpath_dollar_job"
	e := newEnv(t, "07_json_jsonpath_dollar", 1, map[string]string{"TOPIC": topic})
	records := e.lines("data/test_routine_load_jsonpath_dollar_job.json")
	e.produce(topic, 0, records)
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitStarted(job, 1)
	e.waitCount(table, job, int64(len(records)))
	// expected_assertions.txt: content (where id = 1) holds the whole
	// document; time, id, name (where id = 1) are 1752600673, 1, test1.
	var row []string
	for _, l := range e.query(table, []int{0, 1}, false) {
		if f := strings.Split(l, "\t"); f[1] == "1" {
			row = f
		}
	}
	if row == nil {
		t.Fatalf("no row with id = 1 in %v", e.query(table, []int{0, 1}, false))
	}
	if row[0] != "1752600673" || row[2] != "test1" {
		t.Errorf("time, id, name where id = 1 = %q, want 1752600673, 1, test1", row[:3])
	}
	for _, w := range []string{"test1", "field1", "time"} {
		if !strings.Contains(row[3], w) {
			t.Errorf("content where id = 1 = %q, want it to contain %q", row[3], w)
		}
	}
	e.mustExec("stop routine load for " + job)
}

// case08: JSON by field name with COLUMNS expressions: "pos" (a UNIQUE
// table with a sequence column, fill_missing_columns) and "same" (a
// DUPLICATE table) run; "neg" needs the job to pause with Doris's "need
// to specify the sequence column" when fill_missing_columns is false.
func case08(t *caseT) {
	const topic = "test_routine_load_fill_missing_columns"
	e := newEnv(t, "08_json_fill_missing_columns", 1, map[string]string{"TOPIC": topic})
	e.produce(topic, 0, e.lines("data/test_routine_load_fill_missing_columns.json"))
	var posDDL, sameDDL, posJob, sameJob string
	for _, s := range e.statements("ddl.sql") {
		switch {
		case strings.Contains(s, "_same"):
			sameDDL = s
		case strings.Contains(s, "_pos"):
			posDDL = s
		}
	}
	for _, s := range e.statements("routine_load.sql") {
		switch {
		case strings.Contains(s, "_same_job"):
			sameJob = s
		case strings.Contains(s, "_pos_job"):
			posJob = s
		}
	}
	// neg is pos with _neg names and "fill_missing_columns" = "false".
	negDDL := strings.ReplaceAll(posDDL, "_pos", "_neg")
	negJob := strings.Replace(strings.ReplaceAll(posJob, "_pos", "_neg"), `"fill_missing_columns" = "true"`, `"fill_missing_columns" = "false"`, 1)
	sub := func(name, ddl, job, table, jobName string, want []string) {
		t.Run(name, func(t *caseT) {
			e := *e
			e.t = t
			e.mustExec(ddl)
			e.mustExec(job)
			e.waitCount(table, jobName, int64(len(want)))
			info, err := e.c.ShowJob(e.ctx, jobName)
			if err != nil || info.GetSummary().GetState() != api.JobState_RUNNING {
				t.Errorf("job %s: %v %v, want RUNNING", jobName, info.GetSummary(), err)
			}
			got := e.query(table, []int{0}, false)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
	// expected_assertions.txt: select id, name, score, score_x2, update_time ... order by id
	sub("pos", posDDL, posJob, "test_routine_load_fill_missing_columns_pos", "test_routine_load_fill_missing_columns_pos_job",
		[]string{"1\talice\t10\t20\t100", "2\tbob\t20\t40\t200", "3\tcarol\t30\t60\t300"})
	// select id, name, score, update_time ... order by id
	sub("same", sameDDL, sameJob, "test_routine_load_fill_missing_columns_same", "test_routine_load_fill_missing_columns_same_job",
		[]string{"1\talice\t11\t100", "2\tbob\t21\t200", "3\tcarol\t31\t300"})
	// neg: state [8] == PAUSED and [17] contains "need to specify the
	// sequence column" (within 60 s); count(*) == 0.
	t.Run("neg", func(t *caseT) {
		e := *e
		e.t = t
		const table, job = "test_routine_load_fill_missing_columns_neg", "test_routine_load_fill_missing_columns_neg_job"
		e.mustExec(negDDL)
		e.mustExec(negJob)
		e.poll(func() (bool, func() string) {
			row, err := e.showRow(job) // by position, as the Doris suite reads it
			return err == nil && row[colState] == "PAUSED" && strings.Contains(row[colReason], "need to specify the sequence column"),
				func() string { return fmt.Sprintf("job %s: SHOW ROUTINE LOAD %q %v", job, row, err) }
		})
		if n, err := e.c.Count(e.ctx, table); err != nil || n != 0 {
			t.Errorf("count(*) = %d, %v; want 0", n, err)
		}
	})
}

// case09: two partitions, per-partition OFFSET_BEGINNING, harness-sorted
// output.
func case09(t *caseT) {
	const table, job, topic = "test_adaptive_random_bucket_routine_load", "test_adaptive_random_bucket_routine_load_job", "test_adaptive_random_bucket_routine_load_topic"
	e := newEnv(t, "09_two_partitions_order_qt", 2, map[string]string{"TOPIC": topic})
	batch := func(first string) {
		for _, l := range e.lines("data/records_by_partition.tsv") {
			f := strings.Split(l, "\t")
			if f[0] != "batch_first_id="+first {
				continue
			}
			part := int32(0)
			if f[1] == "partition=1" {
				part = 1
			}
			e.produce(topic, part, []string{f[2]})
		}
	}
	batch("1")
	for _, s := range e.statements("ddl.sql") {
		e.mustExec(s)
	}
	e.mustExec(e.statements("routine_load.sql")[0])
	e.waitCount(table, job, 6)
	e.check("first_batch", e.query(table, nil, true))
	batch("7")
	e.waitCount(table, job, 12)
	e.check("second_batch", e.query(table, nil, true))
	e.mustExec("STOP ROUTINE LOAD FOR " + job)
}
