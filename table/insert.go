package table

import (
	"fmt"
	"strings"
	"time"

	"github.com/loadnode/loadnode/api"
)

// RowOf builds a table row from an INSERT's cells: names are the columns
// the cells fill, in order (nil: every column in table order); a cell is
// NULL or text parsed as its column's type (as strict mode parses a CSV
// field); a column not named takes its default, NULL without one. Errors
// name the column; a row in none of a partitioned table's partitions is
// refused ("no partition for this tuple"). A column whose default is the
// load time (DEFAULT CURRENT_TIMESTAMP) takes now's wall clock in now's
// location.
func (s *Schema) RowOf(names []string, cells []*api.InsertCell, now time.Time) ([]Value, error) {
	cols := make([]int, 0, len(s.cols))
	if names == nil {
		for i := range s.cols {
			cols = append(cols, i)
		}
	} else {
		seen := map[int]bool{}
		for _, n := range names {
			i, ok := s.columnFold(strings.Trim(n, "`"))
			if !ok {
				return nil, fmt.Errorf("table %s has no column %q", s.Name(), n)
			}
			if seen[i] {
				return nil, fmt.Errorf("column %q is named twice", n)
			}
			seen[i] = true
			cols = append(cols, i)
		}
	}
	if len(cells) != len(cols) {
		return nil, fmt.Errorf("%d values for %d columns", len(cells), len(cols))
	}
	vals := make([]Value, len(s.cols))
	given := make([]bool, len(s.cols))
	for j, i := range cols {
		given[i] = true
		if cells[j].GetNull() {
			vals[i] = Value{Null: true}
			continue
		}
		v, reason := convertText(s.types[i], s.meta[i], []byte(cells[j].GetText()))
		if reason != "" {
			return nil, fmt.Errorf("column %s: %s", s.cols[i].GetName(), reason)
		}
		v.Str = strings.Clone(v.Str)
		vals[i] = v
	}
	for i := range vals {
		if !given[i] {
			switch m := s.meta[i]; {
			case m.defNow:
				vals[i] = loadTimeValue(now, m.nowPrec)
			case m.hasDef:
				vals[i] = m.def
			default:
				vals[i] = Value{Null: true}
			}
		}
		if vals[i].Null && s.meta[i].notNull {
			return nil, fmt.Errorf("column %s is NOT NULL", s.cols[i].GetName())
		}
	}
	if s.parts != nil {
		// As Doris's INSERT (enable_insert_strict): a row outside every
		// partition fails the statement.
		if err := (&partitionFilter{ps: s.parts}).check(vals); err != nil {
			return nil, err
		}
	}
	return vals, nil
}
