package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dorisexec "github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestDorisDateFunctionsLoad loads through the binary with a Doris
// routine load whose COLUMNS use STR_TO_DATE with the Java-style pattern
// Doris documents and DATE_FORMAT with %D, %W, %X, %V and %w (issue 26:
// the pattern made NULL, the specifiers printed their bare letters). A
// record whose DATE_FORMAT text passes Doris's 100 characters is an error
// row naming DATE_FORMAT (Doris fails it), and a constant format over
// Doris's 128 characters is refused at CREATE naming the function.
func TestDorisDateFunctionsLoad(t *testing.T) {
	const topic, job = "dates", "dates_load"
	b := testnode.StartBroker(t, 1, topic)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	exec := func(stmt string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := dorisexec.Exec(ctx, c, stmt)
		return err
	}
	parse := "str_to_date(t, 'yyyy-MM-dd HH:mm:ss')"
	load := func(name, format string) string {
		return `CREATE ROUTINE LOAD ` + name + ` ON dates COLUMNS TERMINATED BY ",",
			COLUMNS(id, t, d = ` + parse + `, s = date_format(` + parse + `, '%D %W %X-%V %w'), m = date_format(` + parse + `, '` + format + `'))
			PROPERTIES ("max_batch_interval" = "1", "max_error_number" = "10")
			FROM KAFKA ("kafka_broker_list" = "` + b.Addrs()[0] + `", "kafka_topic" = "` + topic + `", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	}
	if err := exec(`CREATE TABLE dates (id BIGINT, d DATETIME, s STRING, m STRING) DUPLICATE KEY(id)`); err != nil {
		t.Fatal(err)
	}
	if err := exec(load("too_long", strings.Repeat("%Y", 65))); err == nil || !strings.Contains(err.Error(), "DATE_FORMAT: the format is 130 characters long, over Doris's limit of 128") {
		t.Fatalf("CREATE with a format of 130 characters: %v; want it refused naming DATE_FORMAT and the limit", err)
	}
	if err := exec(load(job, strings.Repeat("%M", 13))); err != nil {
		t.Fatal(err)
	}
	produceValues(t, b, topic, "1,2025-01-23 12:34:56", "2,2024-09-01 00:00:00", "3,2024-05-05 10:00:00")
	waitFor(t, 60*time.Second, "two rows loaded and one error row", func() (bool, string) {
		s := showJob(t, c, job).GetStats()
		return s.GetLoadedRows() == 2 && s.GetErrorRows() == 1, fmt.Sprintf("loaded %d, error rows %d", s.GetLoadedRows(), s.GetErrorRows())
	})
	want := map[int64]string{
		1: "2025-01-23 12:34:56|23rd Thursday 2025-03 4|" + strings.Repeat("January", 13),
		3: "2024-05-05 10:00:00|5th Sunday 2024-18 0|" + strings.Repeat("May", 13),
	}
	rows := scanAll(t, c, "dates")
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for _, r := range rows {
		v := r.GetValues()
		got := time.UnixMicro(v[1].GetDatetimeMicros()).UTC().Format(time.DateTime) + "|" + v[2].GetString_() + "|" + v[3].GetString_()
		if id := v[0].GetInt64(); got != want[id] {
			t.Errorf("row %d: %s, want %s", id, got, want[id])
		}
	}
	info := showJob(t, c, job)
	if len(info.GetErrorRows()) != 1 || !strings.Contains(info.GetErrorRows()[0].GetReason(), "DATE_FORMAT: format ") ||
		!strings.Contains(info.GetErrorRows()[0].GetReason(), "more than 100 characters") {
		t.Errorf("error rows %v; want one naming DATE_FORMAT and the 100 characters", info.GetErrorRows())
	}
}
