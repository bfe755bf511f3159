package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/doris"
	"github.com/loadnode/loadnode/internal/testnode"
)

// sqlRows runs a SHOW statement through `loadnode sql` and reads its
// vertical (\G) answer back: one map a row, and the column names in the
// order printed. A cell that spans lines (CreateStmt) is joined with "\n".
func sqlRows(t *testing.T, p *testnode.Proc, stmt string) (rows []map[string]string, order [][]string) {
	t.Helper()
	code, out := cli(t, p, "sql", stmt)
	if code != 0 {
		t.Fatalf("sql %q: exit %d\n%s", stmt, code, out)
	}
	header := regexp.MustCompile(`^\*+ \d+\. row \*+$`)
	cellRE := regexp.MustCompile(`^\s*([A-Za-z]+): ?(.*)$`)
	last := ""
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch m := cellRE.FindStringSubmatch(line); {
		case header.MatchString(line):
			rows, order = append(rows, map[string]string{}), append(order, nil)
		case line == "Empty set" || strings.HasSuffix(line, " in set"):
		case len(rows) == 0:
			t.Fatalf("sql %q: unexpected line %q\n%s", stmt, line, out)
		case m != nil && !strings.HasPrefix(line, "    \""):
			last = m[1]
			rows[len(rows)-1][last] = m[2]
			order[len(order)-1] = append(order[len(order)-1], last)
		default:
			rows[len(rows)-1][last] += "\n" + line
		}
	}
	return rows, order
}

// TestShowRoutineLoadSQL drives SHOW [ALL] ROUTINE LOAD, SHOW ROUTINE LOAD
// TASK, SHOW CREATE ROUTINE LOAD and PAUSE / RESUME ALL through `loadnode
// sql` against a real node and a kfake broker: Doris's columns in Doris's
// order, the figures the node has (loaded rows, progress as the last
// offset consumed, lag), and a SHOW CREATE statement that creates a job
// loading the same records.
func TestShowRoutineLoadSQL(t *testing.T) {
	const topic, tbl, job, job2 = "show_topic", "show_t", "show_load", "show_load_again"
	b := testnode.StartBroker(t, 2, topic)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const records = 40
	for i := range records {
		r := &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"id":%d,"v":"r%d"}`, i, i))}
		if err := b.Client().ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := cli(t, p, "sql", "CREATE TABLE "+tbl+" (id BIGINT NOT NULL, v VARCHAR(32))"); code != 0 {
		t.Fatalf("create table: %d %s", code, out)
	}
	create := `CREATE ROUTINE LOAD ` + job + ` ON ` + tbl + ` PROPERTIES ("format" = "json", "max_batch_interval" = "1", "desired_concurrent_number" = "2")
		FROM KAFKA ("kafka_broker_list" = "` + b.Addrs()[0] + `", "kafka_topic" = "` + topic + `", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	if code, out := cli(t, p, "sql", create); code != 0 {
		t.Fatalf("create routine load: %d %s", code, out)
	}
	waitDrained(t, c, b, job, topic, time.Minute)
	ends := endOffsets(t, b, topic)

	rows, order := sqlRows(t, p, "SHOW ROUTINE LOAD FOR "+job)
	if len(rows) != 1 || !slices.Equal(order[0], doris.RoutineLoadColumns) {
		t.Fatalf("SHOW ROUTINE LOAD FOR: %d rows, columns %v, want %v", len(rows), order, doris.RoutineLoadColumns)
	}
	row := rows[0]
	if row["Name"] != job || row["TableName"] != tbl || row["DataSourceType"] != "KAFKA" || row["IsMultiTable"] != "false" ||
		(row["State"] != "RUNNING" && row["State"] != "NEED_SCHEDULE") || row["EndTime"] != "NULL" || row["PauseTime"] != "NULL" {
		t.Errorf("SHOW ROUTINE LOAD FOR: %v", row)
	}
	var stat map[string]any
	if err := json.Unmarshal([]byte(row["Statistic"]), &stat); err != nil {
		t.Fatalf("Statistic %q: %v", row["Statistic"], err)
	}
	if stat["loadedRows"] != float64(records) || stat["totalRows"] != float64(records) || stat["errorRows"] != float64(0) || stat["committedTaskNum"].(float64) < 1 {
		t.Errorf("Statistic = %s, want %d loaded rows", row["Statistic"], records)
	}
	var prog map[string]string
	if err := json.Unmarshal([]byte(row["Progress"]), &prog); err != nil {
		t.Fatalf("Progress %q: %v", row["Progress"], err)
	}
	for part, end := range ends {
		if got, want := prog[strconv.Itoa(int(part))], strconv.FormatInt(end-1, 10); got != want {
			t.Errorf("Progress[%d] = %q, want %q (the last offset consumed; %s)", part, got, want, row["Progress"])
		}
	}
	var src map[string]string
	if err := json.Unmarshal([]byte(row["DataSourceProperties"]), &src); err != nil || src["topic"] != topic || src["currentKafkaPartitions"] != "0,1" {
		t.Errorf("DataSourceProperties = %s (%v)", row["DataSourceProperties"], err)
	}
	id := row["Id"]

	// Tasks: new records wake the job; its current tasks show with the
	// partitions they read. Keep producing until a task is seen.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := records; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			_ = b.Client().ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf(`{"id":%d,"v":"r%d"}`, i, i))}).FirstErr()
		}
	}()
	var tasks []map[string]string
	waitFor(t, time.Minute, "a task in SHOW ROUTINE LOAD TASK", func() (bool, string) {
		tasks, order = sqlRows(t, p, `SHOW ROUTINE LOAD TASK WHERE JobName = "`+job+`"`)
		return len(tasks) > 0, fmt.Sprint(tasks)
	})
	close(stop)
	wg.Wait()
	if !slices.Equal(order[0], doris.RoutineLoadTaskColumns) {
		t.Errorf("task columns %v, want %v", order[0], doris.RoutineLoadTaskColumns)
	}
	seen := map[string]bool{}
	for _, tk := range tasks {
		var parts map[string]string
		if err := json.Unmarshal([]byte(tk["DataSourceProperties"]), &parts); err != nil || len(parts) == 0 {
			t.Errorf("task DataSourceProperties %q: %v", tk["DataSourceProperties"], err)
		}
		for part := range parts {
			if seen[part] {
				t.Errorf("partition %s in two tasks: %v", part, tasks)
			}
			seen[part] = true
		}
		if tk["JobId"] != id || tk["TxnStatus"] != "PREPARE" || tk["CreateTime"] == "NULL" {
			t.Errorf("task row %v (job id %s)", tk, id)
		}
	}

	// PAUSE ALL: paused with a time and a reason; no tasks.
	if code, out := cli(t, p, "sql", "PAUSE ALL ROUTINE LOAD"); code != 0 || !strings.Contains(out, "sent to 1 jobs") {
		t.Fatalf("PAUSE ALL: %d %s", code, out)
	}
	rows, _ = sqlRows(t, p, "SHOW ROUTINE LOAD FOR "+job)
	if rows[0]["State"] != "PAUSED" || rows[0]["PauseTime"] == "NULL" || rows[0]["ReasonOfStateChanged"] == "" {
		t.Errorf("after PAUSE ALL: State %q PauseTime %q Reason %q", rows[0]["State"], rows[0]["PauseTime"], rows[0]["ReasonOfStateChanged"])
	}
	if tasks, _ := sqlRows(t, p, `SHOW ROUTINE LOAD TASK WHERE JobName = "`+job+`"`); len(tasks) != 0 {
		t.Errorf("paused job has tasks: %v", tasks)
	}
	if code, out := cli(t, p, "sql", "RESUME ALL ROUTINE LOAD"); code != 0 || !strings.Contains(out, "sent to 1 jobs") {
		t.Fatalf("RESUME ALL: %d %s", code, out)
	}
	rows, _ = sqlRows(t, p, "SHOW ROUTINE LOAD")
	if len(rows) != 1 || rows[0]["State"] == "PAUSED" || rows[0]["PauseTime"] != "NULL" {
		t.Errorf("after RESUME ALL: %v", rows)
	}

	// SHOW CREATE: the statement creates a job that loads the same records.
	rows, order = sqlRows(t, p, "SHOW CREATE ROUTINE LOAD FOR "+job)
	if len(rows) != 1 || !slices.Equal(order[0], doris.CreateRoutineLoadColumns) || rows[0]["JobId"] != id {
		t.Fatalf("SHOW CREATE: %v %v", rows, order)
	}
	stmt := rows[0]["CreateStmt"]
	if !strings.HasPrefix(stmt, "CREATE ROUTINE LOAD `"+job+"` ON `"+tbl+"`") || !strings.Contains(stmt, `"desired_concurrent_number" = "2"`) {
		t.Fatalf("CreateStmt:\n%s", stmt)
	}
	if code, out := cli(t, p, "sql", "STOP ROUTINE LOAD FOR "+job); code != 0 {
		t.Fatalf("STOP: %d %s", code, out)
	}
	again := strings.Replace(stmt, "`"+job+"`", "`"+job2+"`", 1)
	if code, out := cliIn(t, p, again, "sql", "-"); code != 0 {
		t.Fatalf("the SHOW CREATE statement:\n%s\n: %d %s", again, code, out)
	}
	waitDrained(t, c, b, job2, topic, time.Minute)
	ends = endOffsets(t, b, topic)
	total := int64(0)
	for _, e := range ends {
		total += e
	}
	if got := showJob(t, c, job2).GetStats().GetLoadedRows(); got != total {
		t.Errorf("the recreated job loaded %d rows, want %d (every record from the beginning)", got, total)
	}

	// A stopped job: only SHOW ALL shows it, with its end time.
	if code, out := cli(t, p, "sql", "SHOW ROUTINE LOAD FOR "+job); code == 0 || !strings.Contains(out, "SHOW ALL ROUTINE LOAD FOR "+job) {
		t.Errorf("SHOW ROUTINE LOAD FOR a stopped job: %d %s", code, out)
	}
	rows, _ = sqlRows(t, p, "SHOW ALL ROUTINE LOAD FOR "+job)
	if len(rows) != 1 || rows[0]["State"] != "STOPPED" || rows[0]["EndTime"] == "NULL" {
		t.Errorf("SHOW ALL ROUTINE LOAD FOR: %v", rows)
	}
	names := func(rows []map[string]string) []string {
		var n []string
		for _, r := range rows {
			n = append(n, r["Name"])
		}
		return n
	}
	if rows, _ := sqlRows(t, p, "SHOW ROUTINE LOAD"); !slices.Equal(names(rows), []string{job2}) {
		t.Errorf("SHOW ROUTINE LOAD lists %v, want [%s]", names(rows), job2)
	}
	if rows, _ := sqlRows(t, p, "SHOW ALL ROUTINE LOAD"); !slices.Equal(names(rows), []string{job, job2}) {
		t.Errorf("SHOW ALL ROUTINE LOAD lists %v, want [%s %s]", names(rows), job, job2)
	}
	// LIKE, as Doris's suites use it: the names that match, case-sensitive.
	for stmt, want := range map[string][]string{
		`SHOW ALL ROUTINE LOAD LIKE "%load%"`:    {job, job2},
		`SHOW ROUTINE LOAD LIKE "%load%"`:        {job2},
		`SHOW ALL ROUTINE LOAD LIKE "show_load"`: {job},
		`SHOW ALL ROUTINE LOAD LIKE "%LOAD%"`:    nil,
		// ORDER BY and LIMIT (test_show_routine_load_expr).
		"SHOW ALL ROUTINE LOAD ORDER BY Name DESC":       {job2, job},
		"SHOW ALL ROUTINE LOAD ORDER BY State, Id":       {job2, job}, // RUNNING before STOPPED
		"SHOW ALL ROUTINE LOAD LIMIT 1, 1":               {job2},
		"SHOW ALL ROUTINE LOAD ORDER BY Id DESC LIMIT 1": {job2},
	} {
		if rows, _ := sqlRows(t, p, stmt); !slices.Equal(names(rows), want) {
			t.Errorf("%s lists %v, want %v", stmt, names(rows), want)
		}
	}
}
