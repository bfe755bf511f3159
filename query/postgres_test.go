package query

import (
	"errors"
	"strings"
	"testing"

	"github.com/loadnode/loadnode/api"
)

// TestPostgresTranslation: what translates becomes PostgreSQL's SQL with
// quoted names and bytewise text; what has no equivalent is ErrNoPushdown
// naming the part (the caller answers over the scan).
func TestPostgresTranslation(t *testing.T) {
	spec := &api.TableSpec{Name: "t", Database: "analytics", Columns: []*api.Column{
		{Name: "id", Type: api.ColumnType_INT64},
		{Name: `we"ird`, Type: api.ColumnType_VARCHAR},
		{Name: "f", Type: api.ColumnType_FLOAT64},
		{Name: "ok", Type: api.ColumnType_BOOL},
	}}
	for stmt, want := range map[string]string{
		"SELECT count(*) FROM t":                                                            `SELECT count(*) FROM "s"."t" LIMIT 11`,
		"SELECT id FROM t WHERE `we\"ird` > 'x''y' LIMIT 3":                                 "",
		"SELECT id FROM t WHERE `we\"ird` > 'x' LIMIT 3 OFFSET 2":                           `SELECT "id" FROM "s"."t" WHERE ("we""ird" COLLATE "C" > 'x' COLLATE "C") ORDER BY "_k" LIMIT 3 OFFSET 2`,
		"SELECT `we\"ird`, max(id) FROM t GROUP BY 1":                                       `SELECT "we""ird", max("id") FROM "s"."t" GROUP BY "we""ird" ORDER BY min(encode("_k", 'hex') COLLATE "C") LIMIT 11`,
		"SELECT count(DISTINCT `we\"ird`), count(DISTINCT id) FROM t":                       `SELECT count(DISTINCT "we""ird" COLLATE "C"), count(DISTINCT "id") FROM "s"."t" LIMIT 11`,
		"SELECT DISTINCT id FROM t":                                                         `SELECT "id" FROM "s"."t" GROUP BY "id" ORDER BY min(encode("_k", 'hex') COLLATE "C") LIMIT 11`,
		"SELECT * FROM analytics.t WHERE id IN (1, -2) AND NOT id IS NULL ORDER BY id DESC": `SELECT "id", "we""ird", "f", "ok" FROM "s"."t" WHERE (("id" IN (1, (-2))) AND (NOT ("id" IS NULL))) ORDER BY "id" DESC NULLS LAST, "_k" LIMIT 11`,
	} {
		q, err := Parse(stmt)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		p, err := Postgres(q, spec, `"s"."t"`, `"_k"`, 10)
		if want == "" {
			if !errors.Is(err, ErrNoPushdown) {
				t.Errorf("%s: %v; want ErrNoPushdown", stmt, err)
			}
			continue
		}
		if err != nil || p.SQL != want {
			t.Errorf("%s:\n got %v %v\nwant %s", stmt, p, err, want)
		}
	}
	for stmt, says := range map[string]string{
		"SELECT id FROM t WHERE f > 1":                               "column f",
		"SELECT id FROM t WHERE ok":                                  "column ok",
		"SELECT id FROM t WHERE id = 'a'":                            "different types",
		"SELECT id FROM t WHERE ! id = 1":                            "the operator !",
		"SELECT id FROM t WHERE id = 1 || id = 2":                    "||",
		"SELECT id FROM t WHERE id LIKE 'a%'":                        "LIKE",
		"SELECT id FROM t WHERE upper(id) = 1":                       "upper",
		"SELECT id * 2 FROM t":                                       "id * 2",
		"SELECT sum(f) FROM t":                                       "SUM of a FLOAT64",
		"SELECT min(ok) FROM t":                                      "MIN of a BOOL",
		"SELECT id FROM t ORDER BY f":                                "ORDER BY f",
		"SELECT f, count(*) FROM t GROUP BY f":                       "GROUP BY f",
		"SELECT id FROM t WHERE `we\"ird` = 'a\\'b'":                 "escapes",
		"SELECT id, count(*) FROM t GROUP BY id HAVING count(*) > 1": "HAVING",
		"SELECT count(*) - 1 FROM t":                                 "an expression over aggregates",
		"SELECT count(DISTINCT id, `we\"ird`) FROM t":                "COUNT(DISTINCT ...)",
		"SELECT sum(DISTINCT id) FROM t":                             "SUM(DISTINCT ...)",
		"SELECT count(DISTINCT f) FROM t":                            "COUNT of a FLOAT64",
		"SELECT count(DISTINCT 1) FROM t":                            "COUNT(1): an expression",
	} {
		q, err := Parse(stmt)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		_, err = Postgres(q, spec, `"s"."t"`, `"_k"`, 10)
		if !errors.Is(err, ErrNoPushdown) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v; want ErrNoPushdown naming %q", stmt, err, says)
		}
	}
	q, _ := Parse("SELECT id FROM other.t")
	if _, err := Postgres(q, spec, `"s"."t"`, `"_k"`, 10); err == nil || errors.Is(err, ErrNoPushdown) {
		t.Errorf("another database: %v; want the query's own error", err)
	}
}
