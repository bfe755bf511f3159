package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/loadnode/loadnode/doris/exec"
	"github.com/loadnode/loadnode/internal/testnode"
)

// TestSelectSQL loads records with a routine load, then reads them back
// through `loadnode sql "SELECT ..."` as a Doris user checks a load: the
// count equals the records produced, a GROUP BY sums per key, ORDER BY and
// LIMIT page, and a query outside the subset is an error naming it.
func TestSelectSQL(t *testing.T) {
	const topic, tbl, job = "select_topic", "select_t", "select_load"
	b := testnode.StartBroker(t, 2, topic)
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const records = 60
	for i := range records {
		v := fmt.Sprintf(`{"id":%d,"city":"c%d","qty":%d}`, i, i%3, i)
		if i == 7 {
			v = fmt.Sprintf(`{"id":%d,"city":null,"qty":null}`, i)
		}
		if err := b.Client().ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := cli(t, p, "sql", "CREATE TABLE "+tbl+" (id BIGINT NOT NULL, city VARCHAR(16), qty INT)"); code != 0 {
		t.Fatalf("create table: %d %s", code, out)
	}
	create := `CREATE ROUTINE LOAD ` + job + ` ON ` + tbl + ` PROPERTIES ("format" = "json", "max_batch_interval" = "1")
		FROM KAFKA ("kafka_broker_list" = "` + b.Addrs()[0] + `", "kafka_topic" = "` + topic + `", "property.kafka_default_offsets" = "OFFSET_BEGINNING")`
	if code, out := cli(t, p, "sql", create); code != 0 {
		t.Fatalf("create routine load: %d %s", code, out)
	}
	waitDrained(t, c, b, job, topic, time.Minute)

	if got, want := sqlOut(t, p, "SELECT count(*) FROM "+tbl), tableText([]string{"count(*)"}, []string{strconv.Itoa(records)}); got != want {
		t.Errorf("SELECT count(*):\n%s\nwant\n%s", got, want)
	}
	// Per city: ids i%3 == k, without record 7 (city NULL, grouped apart).
	var want [][]string
	for k := range 3 {
		n, sum := 0, 0
		for i := k; i < records; i += 3 {
			if i != 7 {
				n, sum = n+1, sum+i
			}
		}
		want = append(want, []string{"c" + strconv.Itoa(k), strconv.Itoa(n), strconv.Itoa(sum)})
	}
	want = append([][]string{{"NULL", "1", "NULL"}}, want...)
	got := sqlOut(t, p, "SELECT city, count(*) AS n, sum(qty) FROM "+tbl+" GROUP BY city ORDER BY city")
	if w := tableText([]string{"city", "n", "sum(qty)"}, want...); got != w {
		t.Errorf("GROUP BY:\n%s\nwant\n%s", got, w)
	}
	got = sqlOut(t, p, "SELECT city, count(*) AS n, sum(qty) FROM "+tbl+" GROUP BY city HAVING n > 1 ORDER BY city")
	if w := tableText([]string{"city", "n", "sum(qty)"}, want[1:]...); got != w {
		t.Errorf("HAVING:\n%s\nwant\n%s", got, w)
	}
	// The check of exactly once a Doris user runs: every id once.
	got = sqlOut(t, p, "SELECT count(*) = count(DISTINCT id) AS once, count(DISTINCT city), max(id) - min(id) + 1 FROM "+tbl)
	if w := tableText([]string{"once", "count(DISTINCT city)", "max(id) - min(id) + 1"}, []string{"1", "3", strconv.Itoa(records)}); got != w {
		t.Errorf("DISTINCT aggregates:\n%s\nwant\n%s", got, w)
	}
	got = sqlOut(t, p, "SELECT id, upper(city) FROM "+tbl+" WHERE qty >= 10 AND city = 'c1' ORDER BY id DESC LIMIT 2 OFFSET 1")
	if w := tableText([]string{"id", "upper(city)"}, []string{"55", "C1"}, []string{"52", "C1"}); got != w {
		t.Errorf("WHERE, ORDER BY, LIMIT:\n%s\nwant\n%s", got, w)
	}
	if code, out := cli(t, p, "sql", "SELECT a.id FROM "+tbl+" a JOIN other b ON a.id = b.id"); code == 0 || !strings.Contains(out, "JOIN is not supported") {
		t.Errorf("a JOIN: exit %d\n%s", code, out)
	}
	// The same through the Go client: the result set.
	res, err := exec.Exec(ctx, c, "SELECT max(id), min(city) FROM "+tbl)
	if err != nil {
		t.Fatal(err)
	}
	if rs := res.GetResult(); len(rs.GetRows()) != 1 || strings.Join(rs.GetRows()[0].GetValues(), ",") != strconv.Itoa(records-1)+",c0" {
		t.Errorf("exec.Exec SELECT: %v", rs)
	}
}

// tableText is a result as `loadnode sql` prints a SELECT's.
func tableText(cols []string, rows ...[]string) string {
	widths := make([]int, len(cols))
	for j, c := range cols {
		widths[j] = len(c)
		for _, r := range rows {
			widths[j] = max(widths[j], len(r[j]))
		}
	}
	var b strings.Builder
	rule := func() {
		for _, n := range widths {
			b.WriteString("+" + strings.Repeat("-", n+2))
		}
		b.WriteString("+\n")
	}
	line := func(cells []string) {
		for j, n := range widths {
			fmt.Fprintf(&b, "| %-*s ", n, cells[j])
		}
		b.WriteString("|\n")
	}
	rule()
	line(cols)
	rule()
	for _, r := range rows {
		line(r)
	}
	rule()
	if len(rows) == 1 {
		b.WriteString("1 row in set\n")
	} else {
		fmt.Fprintf(&b, "%d rows in set\n", len(rows))
	}
	return b.String()
}
