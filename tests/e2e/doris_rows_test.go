package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestDorisPartitionsAndStrip runs Doris statements through the binary
// (`loadnode sql`) and a kfake broker, on the embedded store and on
// PostgreSQL:
//
//   - a table PARTITION BY RANGE(id) (p0 < 60, p1 < 80), loaded with the
//     records of the corpus cases
//     load/test_stream_load_strict_mode_and_filter_ratio__sql_no_partition_*:
//     as Doris's expected.out, ids 1..79 load and 81, 91, 100 are error
//     rows "no partition for this tuple";
//   - a second job with PARTITION(p1) loads only p1's rows (60, 70, 79);
//     the others are error rows;
//   - a job with "strip_outer_array" = "true" loads each element of a JSON
//     array record as a row of a DUPLICATE table, each under its own key
//     (none overwrites another), and an element that does not convert is
//     its own error row.
func TestDorisPartitionsAndStrip(t *testing.T) {
	t.Run("embedded", func(t *testing.T) { testDorisPartitionsAndStrip(t, "") })
	t.Run("postgres", func(t *testing.T) {
		pg := pgtest.Start(t)
		testDorisPartitionsAndStrip(t, pg.CreateDatabase(t))
	})
}

func testDorisPartitionsAndStrip(t *testing.T, dsn string) {
	b := testnode.StartBroker(t, 1, "parted", "arrays")
	var args []string
	db := ""
	if dsn != "" {
		args, db = pgNode(t, dsn), "analytics."
	}
	p := startNodeArgs(t, t.TempDir(), args)
	c := p.Client(t)
	sql := func(stmt string) {
		t.Helper()
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Fatalf("%s: %s", stmt, out)
		}
	}
	for _, tb := range []string{"parted_all", "parted_p1"} {
		sql(fmt.Sprintf("CREATE TABLE %s%s (id INT, name STRING) PARTITION BY RANGE(`id`) (PARTITION `p0` VALUES LESS THAN (\"60\"), PARTITION `p1` VALUES LESS THAN (\"80\")) PROPERTIES ('replication_num' = '1')", db, tb))
	}
	sql(fmt.Sprintf("CREATE TABLE %sarrays_t (id INT, city VARCHAR(32), code BIGINT) DUPLICATE KEY(id)", db))

	// The corpus cases' data file, one record per line.
	produceValues(t, b, "parted", "1|a1", "20|a20", "30|a30", "59|a59", "60|a60", "70|a70", "79|a79", "81|a1234567890", "91|a9234567890", "100|a10234567890")
	produceValues(t, b, "arrays",
		`[{"id": 1, "city": "a", "code": 10}, {"id": 2, "city": "b", "code": 20}, {"id": 3, "city": "c", "code": 30}]`,
		`[{"id": 4, "city": "d"}, {"id": "x", "city": "bad"}, {"id": 5, "city": "e", "code": 50}]`,
		`{"id": 6}`)

	from := func(topic string) string {
		return fmt.Sprintf(`FROM KAFKA ("kafka_broker_list" = "%s", "kafka_topic" = "%s", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`, b.Addrs()[0], topic)
	}
	props := `PROPERTIES ("max_batch_interval" = "1", "max_error_number" = "100", "strict_mode" = "true"`
	// job creates a job; a refusal fails the test and skips the job's checks.
	job := func(stmt string) bool {
		t.Helper()
		if code, out := cli(t, p, "sql", stmt); code != 0 {
			t.Errorf("%s: %s", stmt, out)
			return false
		}
		return true
	}
	// check waits until the job has read its records (rows + error rows),
	// then compares the table and the error rows' reasons.
	check := func(name, tb string, records int, wantRows []string, wantErrors int, reasons ...string) {
		t.Helper()
		waitFor(t, 60*time.Second, name+" to read its topic", func() (bool, string) {
			info := showJob(t, c, name)
			s := info.GetStats()
			read := s.GetLoadedRows() + s.GetErrorRows()
			for _, p := range info.GetPartitions() {
				if p.GetCommittedOffset() < int64(records) {
					return false, fmt.Sprintf("loaded %d, error rows %d, partition %d at %d", s.GetLoadedRows(), s.GetErrorRows(), p.GetPartition(), p.GetCommittedOffset())
				}
			}
			return read > 0, fmt.Sprintf("loaded %d, error rows %d", s.GetLoadedRows(), s.GetErrorRows())
		})
		got := rowTexts(scanAll(t, c, tb))
		if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
			t.Errorf("%s holds:\n%s\nwant:\n%s", tb, strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
		}
		info := showJob(t, c, name)
		if s := info.GetStats(); s.GetLoadedRows() != int64(len(wantRows)) || s.GetErrorRows() != int64(wantErrors) {
			t.Errorf("%s: loaded %d rows, %d error rows; want %d, %d", name, s.GetLoadedRows(), s.GetErrorRows(), len(wantRows), wantErrors)
		}
		all := ""
		for _, er := range info.GetErrorRows() {
			all += er.GetReason() + "\n"
		}
		for _, r := range reasons {
			if !strings.Contains(all, r) {
				t.Errorf("%s: no error row says %q; error rows:\n%s", name, r, all)
			}
		}
	}
	if job(fmt.Sprintf("CREATE ROUTINE LOAD %sparted_all_job ON parted_all COLUMNS TERMINATED BY \"|\" %s) %s", db, props, from("parted"))) {
		check("parted_all_job", "parted_all", 10, []string{"1|a1", "20|a20", "30|a30", "59|a59", "60|a60", "70|a70", "79|a79"}, 3,
			"no partition for this tuple. tuple=(id=81)", "no partition for this tuple. tuple=(id=91)", "no partition for this tuple. tuple=(id=100)")
	}
	if job(fmt.Sprintf("CREATE ROUTINE LOAD %sparted_p1_job ON parted_p1 COLUMNS TERMINATED BY \"|\", PARTITION(p1) %s) %s", db, props, from("parted"))) {
		check("parted_p1_job", "parted_p1", 10, []string{"60|a60", "70|a70", "79|a79"}, 7,
			"no partition for this tuple. tuple=(id=1) (partition p0 is not among the partitions the load names)", "no partition for this tuple. tuple=(id=100)")
	}
	if job(fmt.Sprintf(`CREATE ROUTINE LOAD %sarrays_job ON arrays_t %s, "format" = "json", "strip_outer_array" = "true") %s`, db, props, from("arrays"))) {
		check("arrays_job", "arrays_t", 3, []string{"1|a|10", "2|b|20", "3|c|30", "4|d|NULL", "5|e|50"}, 2,
			`element 1: column id: "x" is not an INT`, "`strip_outer_array` must be FALSE")
	}
}

// rowTexts renders rows as "v1|v2|...", sorted (NULL as NULL).
func rowTexts(rows []*api.Row) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		cells := make([]string, len(r.GetValues()))
		for i, v := range r.GetValues() {
			switch x := v.GetKind().(type) {
			case *api.Value_Int64:
				cells[i] = strconv.FormatInt(x.Int64, 10)
			case *api.Value_String_:
				cells[i] = x.String_
			case *api.Value_Null:
				cells[i] = "NULL"
			default:
				cells[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(cells, "|"))
	}
	// By the first cell as a number.
	slices.SortFunc(out, func(a, b string) int {
		return strings.Compare(fmt.Sprintf("%20s", strings.SplitN(a, "|", 2)[0]), fmt.Sprintf("%20s", strings.SplitN(b, "|", 2)[0]))
	})
	return out
}
