package table

import (
	"fmt"
	"slices"
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
// location. A table with a hidden sequence takes its value from a column
// named __DORIS_SEQUENCE_COL__, which an INSERT must name, as Doris's
// (require_sequence_in_insert); the row has Width values.
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
			if !ok && s.hidden && strings.EqualFold(strings.Trim(n, "`"), HiddenSequenceColumn) {
				i, ok = len(s.cols), true
			}
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
	if s.hidden && !slices.Contains(cols, len(s.cols)) {
		return nil, fmt.Errorf("table %s has sequence column, need to specify the sequence column (name %s in the column list)", s.Name(), HiddenSequenceColumn)
	}
	vals := make([]Value, s.Width())
	given := make([]bool, s.Width())
	for j, i := range cols {
		given[i] = true
		if cells[j].GetNull() {
			vals[i] = Value{Null: true}
			continue
		}
		v, reason := convertText(s.types[i], s.meta[i], []byte(cells[j].GetText()))
		if reason != "" {
			return nil, fmt.Errorf("column %s: %s", s.colName(i), reason)
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
			return nil, fmt.Errorf("column %s is NOT NULL", s.colName(i))
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
