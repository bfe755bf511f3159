package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/loadnode/loadnode/api"
)

// Table models (Doris): how rows with one key meet.
//
//	DUPLICATE  every row is kept, keyed by where it came from (AppendKey)
//	UNIQUE     keyed by the key columns; a later row replaces the stored
//	           one (merge-on-write). With a sequence column it replaces
//	           only when its sequence is >= the stored one (NULL is the
//	           smallest), and a delete leaves a tombstone holding its
//	           sequence, so a late row older than the delete stays deleted.
//	           A hidden sequence (Doris function_column.sequence_type) is
//	           such a sequence that is no column: each row carries its
//	           value beside its columns, last (Schema.Width), set by the
//	           load's sequence column (Doris ORDER BY or
//	           function_column.sequence_col), a field of the record or a
//	           table column.
//	AGGREGATE  keyed by the key columns; each value column merges by its
//	           aggregation: SUM, MIN, MAX (NULL is ignored), REPLACE (the
//	           newer value, NULL too), REPLACE_IF_NOT_NULL.
//
// Merge is the one implementation of these rules; every sink calls it in
// source order within a partition, inside the commit that moves the
// partitions' progress, so a replayed batch is refused by the progress
// check before it could merge twice.

// compileModel validates the table model's key, sequence and
// aggregations against the columns.
func (s *Schema) compileModel() error {
	s.seq = -1
	spec := s.spec
	model := spec.GetModel()
	keyed := model == api.TableModel_UNIQUE || model == api.TableModel_AGGREGATE
	if !keyed {
		if len(spec.GetKeyColumns()) > 0 {
			return fieldErr("table.keys", "only UNIQUE and AGGREGATE tables have key columns (this one is %s)", model)
		}
	} else if len(spec.GetKeyColumns()) == 0 {
		return fieldErr("table.keys", "a %s table needs key columns", model)
	}
	isKey := make([]bool, len(s.cols))
	for i, name := range spec.GetKeyColumns() {
		col, ok := s.index[name]
		if !ok {
			return fieldErr(fmt.Sprintf("table.keys[%d]", i), "unknown column %q", name)
		}
		if isKey[col] {
			return fieldErr(fmt.Sprintf("table.keys[%d]", i), "column %q is named twice", name)
		}
		switch s.types[col] {
		case api.ColumnType_FLOAT32, api.ColumnType_FLOAT64, api.ColumnType_JSON:
			return fieldErr(fmt.Sprintf("table.keys[%d]", i), "a %s column (%s) cannot be a key column", typeName(s.types[col]), name)
		}
		isKey[col] = true
		s.keys = append(s.keys, col)
	}
	for i, c := range s.cols {
		agg := c.GetAggregation()
		path := fmt.Sprintf("table.columns[%d].aggregation", i)
		if _, known := api.Aggregation_name[int32(agg)]; !known {
			return fieldErr(path, "unknown aggregation %v", agg)
		}
		switch {
		case model != api.TableModel_AGGREGATE && agg != api.Aggregation_AGG_NONE:
			return fieldErr(path, "%s: only value columns of an AGGREGATE table have an aggregation", agg)
		case model == api.TableModel_AGGREGATE && isKey[i] && agg != api.Aggregation_AGG_NONE:
			return fieldErr(path, "key column %q has an aggregation", c.GetName())
		case model == api.TableModel_AGGREGATE && !isKey[i] && agg == api.Aggregation_AGG_NONE:
			return fieldErr(path, "value column %q of an AGGREGATE table needs an aggregation (SUM, MIN, MAX, REPLACE, REPLACE_IF_NOT_NULL)", c.GetName())
		case agg == api.Aggregation_SUM && !summable(s.types[i]):
			return fieldErr(path, "SUM of a %s column (%s)", typeName(s.types[i]), c.GetName())
		case (agg == api.Aggregation_MIN || agg == api.Aggregation_MAX) && s.types[i] == api.ColumnType_JSON:
			return fieldErr(path, "%s of a JSON column (%s)", agg, c.GetName())
		}
	}
	if name := spec.GetSequenceColumn(); name != "" {
		if model != api.TableModel_UNIQUE {
			return fieldErr("table.sequence_column", "only a UNIQUE table has a sequence column (this one is %s)", model)
		}
		col, ok := s.index[name]
		if !ok {
			return fieldErr("table.sequence_column", "unknown column %q", name)
		}
		if isKey[col] {
			return fieldErr("table.sequence_column", "%q is a key column", name)
		}
		if !sequenceType(s.types[col]) {
			return fieldErr("table.sequence_column", "a %s column (%s) cannot be the sequence column (want an integer, DECIMAL, DATE, DATETIME or TIMESTAMP)", typeName(s.types[col]), name)
		}
		s.seq = col
	}
	if s.hidden {
		s.seq = len(s.cols)
	}
	return nil
}

// HiddenSequenceColumn is Doris's name of a hidden sequence: an INSERT
// names it to give a row's value. HiddenSequenceStored is the name of the
// column a sink stores it in (StoredColumns).
const (
	HiddenSequenceColumn = "__DORIS_SEQUENCE_COL__"
	HiddenSequenceStored = "__doris_sequence_col__"
)

// compileHidden validates the table's hidden sequence, if any, and adds
// its value to the row (types, meta, stored).
func (s *Schema) compileHidden() error {
	t := s.spec.GetHiddenSequenceType()
	if t == api.ColumnType_COLUMN_TYPE_UNSPECIFIED {
		return nil
	}
	const field = "table.sequence_type"
	if _, known := api.ColumnType_name[int32(t)]; !known {
		return fieldErr(field, "unknown type %q", t.String())
	}
	if m := s.spec.GetModel(); m != api.TableModel_UNIQUE {
		return fieldErr(field, "only a UNIQUE table has a sequence (this one is %s)", m)
	}
	if s.spec.GetSequenceColumn() != "" {
		return fieldErr(field, "a table has a sequence column (sequence_column %q) or a hidden sequence of a type, not both", s.spec.GetSequenceColumn())
	}
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64, api.ColumnType_INT128,
		api.ColumnType_DATE, api.ColumnType_DATETIME:
	default:
		return fieldErr(field, "a hidden sequence of type %s: want an integer type, DATE or DATETIME", typeName(t))
	}
	if _, clash := s.columnFold(HiddenSequenceColumn); clash {
		return fieldErr(field, "a table with a hidden sequence cannot have a column named %s", HiddenSequenceColumn)
	}
	if _, clash := s.columnFold(HiddenSequenceStored); clash {
		return fieldErr(field, "a table with a hidden sequence cannot have a column named %s", HiddenSequenceStored)
	}
	s.hidden = true
	s.types = append(s.types, t)
	s.meta = append(s.meta, colMeta{})
	s.stored = append(slices.Clip(s.cols), &api.Column{Name: HiddenSequenceStored, Type: t})
	return nil
}

// hiddenTypeName is t's name, "none" when unset.
func hiddenTypeName(t api.ColumnType) string {
	if t == api.ColumnType_COLUMN_TYPE_UNSPECIFIED {
		return "none"
	}
	return typeName(t)
}

// HiddenSequence reports whether the table has a hidden sequence.
func (s *Schema) HiddenSequence() bool { return s.hidden }

func summable(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64, api.ColumnType_INT128,
		api.ColumnType_DECIMAL, api.ColumnType_FLOAT32, api.ColumnType_FLOAT64:
		return true
	}
	return false
}

func sequenceType(t api.ColumnType) bool {
	switch t {
	case api.ColumnType_INT8, api.ColumnType_INT16, api.ColumnType_INT32, api.ColumnType_INT64, api.ColumnType_INT128,
		api.ColumnType_DECIMAL, api.ColumnType_DATE, api.ColumnType_DATETIME, api.ColumnType_TIMESTAMP:
		return true
	}
	return false
}

// Keyed reports whether rows are keyed by their key columns (UNIQUE,
// AGGREGATE): the sink merges them (Merge) instead of appending.
func (s *Schema) Keyed() bool { return len(s.keys) > 0 }

// KeyColumns are the key columns' indexes, in key order (nil for
// DUPLICATE).
func (s *Schema) KeyColumns() []int { return s.keys }

// SequenceColumn is the index of the row's sequence value: a column's,
// the hidden sequence's (NumColumns()), or -1.
func (s *Schema) SequenceColumn() int { return s.seq }

// WithSequence returns a copy of s whose sequence column is name (a
// load's ORDER BY), or s when name is "" or already the table's, or the
// table has a hidden sequence (the load's name gives its value: Parser).
func (s *Schema) WithSequence(name string) (*Schema, error) {
	if name == "" || name == s.spec.GetSequenceColumn() || s.hidden {
		return s, nil
	}
	if s.spec.GetSequenceColumn() != "" {
		return nil, fieldErr("sequence_column", "table %s has the sequence column %q; the load orders by %q", s.Name(), s.spec.GetSequenceColumn(), name)
	}
	spec := proto.Clone(s.spec).(*api.TableSpec)
	spec.SequenceColumn = name
	ns, err := NewSchema(spec)
	if err != nil {
		if fe, ok := err.(*FieldError); ok && strings.HasPrefix(fe.Field, "table.sequence_column") {
			fe.Field = "sequence_column"
		}
		return nil, err
	}
	return ns, nil
}

// AppendRowKey appends the row's storage key: AppendKey's for DUPLICATE;
// for a keyed table the key columns, each as a byte string that sorts as
// the values do (NULL first): a flag byte (0 NULL, 1 a value), then
// integers, dates and times as 8 (LARGEINT and DECIMAL 16) big-endian
// bytes with the sign bit flipped, BOOL as one byte, text with 0x00
// escaped as 0x00 0xff and ended by 0x00 0x01.
func AppendRowKey(dst []byte, s *Schema, pos Pos, vals []Value) []byte {
	if len(s.keys) == 0 {
		return AppendKey(dst, s.spec.GetModel(), pos, vals)
	}
	for _, col := range s.keys {
		v := &vals[col]
		if v.Null {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch s.types[col] {
		case api.ColumnType_INT128, api.ColumnType_DECIMAL:
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.Hi)^(1<<63))
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.Int))
		case api.ColumnType_BOOL:
			if v.Bool {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR:
			for i := 0; i < len(v.Str); i++ {
				dst = append(dst, v.Str[i])
				if v.Str[i] == 0 {
					dst = append(dst, 0xff)
				}
			}
			dst = append(dst, 0, 1)
		default:
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.Int)^(1<<63))
		}
	}
	return dst
}

// Update is how a load's rows change a keyed table beyond whole rows.
type Update struct {
	// Columns, when not nil, are the columns a partial update sets
	// (UNIQUE, Doris partial_columns): a stored key keeps the others.
	Columns []bool
	// NewKeyError: a partial update of a key that is not stored is
	// refused (Doris partial_update_new_key_behavior ERROR).
	NewKeyError bool
	// Sequence is the load's sequence column (Doris ORDER BY) when the
	// table names none; "" otherwise.
	Sequence string
	// Flexible (Doris UPDATE_FLEXIBLE_COLUMNS): each row names its own
	// columns (Merge's named); a stored key keeps the others, a new key
	// takes the row's values (the parser gave the others their defaults).
	Flexible bool
}

// The values of JobSpec.unique_key_update_mode (Doris); "" is UPSERT.
const (
	UpdateUpsert   = "UPSERT"
	UpdateFixed    = "UPDATE_FIXED_COLUMNS"
	UpdateFlexible = "UPDATE_FLEXIBLE_COLUMNS"
)

// RowState is what a keyed table holds under one key: a row, or (UNIQUE
// with a sequence column) the tombstone of a delete, whose Vals hold the
// delete's sequence.
type RowState struct {
	Vals    []Value
	Pos     Pos
	Deleted bool
}

// NewKeyError is Merge's refusal of a partial update of a key that is not
// stored, when the load says ERROR.
// With Column, it is a flexible partial update's new key that names no
// value for that NOT NULL column without a default.
type NewKeyError struct{ Table, Column string }

func (e *NewKeyError) Error() string {
	if e.Column != "" {
		return "table " + e.Table + ": a flexible partial update of a new key names no value for column " + e.Column + " (NOT NULL, no DEFAULT)"
	}
	return "table " + e.Table + ": a partial update of a key that does not exist (partial_update_new_key_behavior is ERROR)"
}

// Merge applies one incoming row (vals from pos; a delete when del) to
// the key's state old (nil: nothing stored) and returns the new state:
// nil when the key holds nothing (and no tombstone is needed). old is not
// modified; the result may share vals. named, with u.Flexible, marks the
// columns the row names (Parser.Named); nil otherwise.
//
// REQUIRES: s.Keyed(); vals and old.Vals have s.NumColumns() values.
func (s *Schema) Merge(old *RowState, vals []Value, pos Pos, del bool, u *Update, named []bool) (*RowState, error) {
	if u != nil && u.Flexible && named != nil && !del {
		return s.mergeNamed(old, vals, pos, named)
	}
	if s.spec.GetModel() == api.TableModel_AGGREGATE {
		if old == nil {
			return &RowState{Vals: vals, Pos: pos}, nil
		}
		out := make([]Value, len(vals))
		for i := range vals {
			out[i] = s.aggregate(i, old.Vals[i], vals[i])
		}
		return &RowState{Vals: out, Pos: pos}, nil
	}
	if old != nil && s.seq >= 0 && compareValues(s.types[s.seq], vals[s.seq], old.Vals[s.seq]) < 0 {
		if u == nil || u.Columns == nil || u.Columns[s.seq] {
			return old, nil // older than what is stored (a row or a delete)
		}
	}
	if del {
		if s.seq < 0 {
			return nil, nil
		}
		return &RowState{Vals: vals, Pos: pos, Deleted: true}, nil
	}
	if u == nil || u.Columns == nil {
		return &RowState{Vals: vals, Pos: pos}, nil
	}
	if old == nil || old.Deleted {
		if u.NewKeyError {
			return nil, &NewKeyError{Table: s.Name()}
		}
		return &RowState{Vals: vals, Pos: pos}, nil
	}
	out := make([]Value, len(vals))
	for i := range vals {
		if u.Columns[i] {
			out[i] = vals[i]
		} else {
			out[i] = old.Vals[i]
		}
	}
	return &RowState{Vals: out, Pos: pos}, nil
}

// mergeNamed is Merge of a flexible partial update's row: a stored key
// keeps the columns the row does not name; a new key takes the row as
// parsed (defaults, NULL without one), refused when that leaves a NOT
// NULL column NULL.
func (s *Schema) mergeNamed(old *RowState, vals []Value, pos Pos, named []bool) (*RowState, error) {
	if old == nil || old.Deleted {
		for i := range vals {
			if !named[i] && vals[i].Null && s.meta[i].notNull {
				return nil, &NewKeyError{Table: s.Name(), Column: s.cols[i].GetName()}
			}
		}
		return &RowState{Vals: vals, Pos: pos}, nil
	}
	out := make([]Value, len(vals))
	for i := range vals {
		if named[i] {
			out[i] = vals[i]
		} else {
			out[i] = old.Vals[i]
		}
	}
	return &RowState{Vals: out, Pos: pos}, nil
}

// aggregate merges value column i.
func (s *Schema) aggregate(i int, old, v Value) Value {
	switch s.cols[i].GetAggregation() {
	case api.Aggregation_AGG_NONE: // a key column: equal in both
		return v
	case api.Aggregation_REPLACE:
		return v
	case api.Aggregation_REPLACE_IF_NOT_NULL:
		if v.Null {
			return old
		}
		return v
	}
	if old.Null {
		return v
	}
	if v.Null {
		return old
	}
	switch s.cols[i].GetAggregation() {
	case api.Aggregation_MIN:
		if compareValues(s.types[i], v, old) < 0 {
			return v
		}
		return old
	case api.Aggregation_MAX:
		if compareValues(s.types[i], v, old) > 0 {
			return v
		}
		return old
	}
	return s.sum(i, old, v)
}

// sum adds two non-NULL values of column i. Integers wrap at their
// type's width, as Doris's do; a DECIMAL sum beyond its precision is
// held at the largest or smallest value the column holds.
func (s *Schema) sum(i int, a, b Value) Value {
	switch t := s.types[i]; t {
	case api.ColumnType_FLOAT64:
		return Value{Float: a.Float + b.Float}
	case api.ColumnType_FLOAT32:
		return Value{Float: float64(float32(a.Float + b.Float))}
	case api.ColumnType_INT128, api.ColumnType_DECIMAL:
		n := new(big.Int).Add(Big128(a), Big128(b))
		if t == api.ColumnType_INT128 {
			return Value128(wrap128(n))
		}
		limit := new(big.Int).Sub(pow10(s.meta[i].precision), big.NewInt(1))
		if n.Cmp(limit) > 0 {
			n = limit
		} else if n.Cmp(new(big.Int).Neg(limit)) < 0 {
			n = limit.Neg(limit)
		}
		return Value128(n)
	default:
		n := a.Int + b.Int
		switch t {
		case api.ColumnType_INT8:
			n = int64(int8(n))
		case api.ColumnType_INT16:
			n = int64(int16(n))
		case api.ColumnType_INT32:
			n = int64(int32(n))
		}
		return Value{Int: n}
	}
}

func wrap128(n *big.Int) *big.Int {
	n.Mod(n, two128)
	if n.Cmp(maxInt128) > 0 {
		n.Sub(n, two128)
	}
	return n
}

// compareValues orders two values of type t; NULL is the smallest.
func compareValues(t api.ColumnType, a, b Value) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	switch t {
	case api.ColumnType_INT128, api.ColumnType_DECIMAL:
		if a.Hi != b.Hi {
			return cmp(a.Hi < b.Hi)
		}
		if a.Int != b.Int {
			return cmp(uint64(a.Int) < uint64(b.Int))
		}
		return 0
	case api.ColumnType_FLOAT32, api.ColumnType_FLOAT64:
		if a.Float == b.Float || math.IsNaN(a.Float) || math.IsNaN(b.Float) {
			return 0
		}
		return cmp(a.Float < b.Float)
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_JSON:
		return strings.Compare(a.Str, b.Str)
	case api.ColumnType_BOOL:
		if a.Bool == b.Bool {
			return 0
		}
		return cmp(!a.Bool)
	}
	if a.Int == b.Int {
		return 0
	}
	return cmp(a.Int < b.Int)
}

func cmp(less bool) int {
	if less {
		return -1
	}
	return 1
}

// UpdateOf is how a job's rows change its table: nil for whole rows (and
// for every DUPLICATE load). Errors are *FieldError naming the job spec
// field: partial_columns, partial_update_new_key_behavior,
// sequence_column, or those of NewParser.
func UpdateOf(s *Schema, spec *api.JobSpec) (*Update, error) {
	unique := s.spec.GetModel() == api.TableModel_UNIQUE
	u := &Update{Sequence: spec.GetSequenceColumn()}
	if u.Sequence != "" {
		if !unique {
			return nil, fieldErr("sequence_column", "ORDER BY (a sequence column) needs a UNIQUE table (%s is %s)", s.Name(), s.spec.GetModel())
		}
		if s.hidden {
			// The load's sequence column gives the hidden sequence its
			// value (the parser resolves the name); the table's
			// sequence stays the hidden one.
			if _, err := NewParser(s, FormatOf(spec)); err != nil {
				return nil, err
			}
			u.Sequence = ""
		} else if _, err := s.WithSequence(u.Sequence); err != nil {
			return nil, err
		}
	}
	switch b := strings.ToUpper(spec.GetPartialUpdateNewKeyBehavior()); b {
	case "", "APPEND":
	case "ERROR":
		u.NewKeyError = true
	default:
		return nil, fieldErr("partial_update_new_key_behavior", "%q: want APPEND or ERROR", spec.GetPartialUpdateNewKeyBehavior())
	}
	fixed := spec.GetPartialColumns()
	switch m := strings.ToUpper(spec.GetUniqueKeyUpdateMode()); m {
	case "", UpdateUpsert:
	case UpdateFixed:
		fixed = true
	case UpdateFlexible:
		if spec.GetPartialColumns() {
			return nil, fieldErr("unique_key_update_mode", "UPDATE_FLEXIBLE_COLUMNS and partial_columns together: give one (partial_columns is UPDATE_FIXED_COLUMNS)")
		}
		if u.NewKeyError {
			return nil, fieldErr("partial_update_new_key_behavior", "applies to UPDATE_FIXED_COLUMNS (partial_columns) only, not UPDATE_FLEXIBLE_COLUMNS")
		}
		if u.Sequence != "" {
			return nil, fieldErr("sequence_column", "UPDATE_FLEXIBLE_COLUMNS takes no sequence column of the load, as in Doris")
		}
		if _, err := NewParser(s, FormatOf(spec)); err != nil {
			return nil, err
		}
		u.Flexible = true
	default:
		return nil, fieldErr("unique_key_update_mode", "%q: want UPSERT, UPDATE_FIXED_COLUMNS or UPDATE_FLEXIBLE_COLUMNS", spec.GetUniqueKeyUpdateMode())
	}
	if u.NewKeyError && !fixed {
		return nil, fieldErr("partial_update_new_key_behavior", "applies to partial updates only (partial_columns is false)")
	}
	if fixed {
		if !unique {
			return nil, fieldErr("partial_columns", "partial updates need a UNIQUE table (%s is %s)", s.Name(), s.spec.GetModel())
		}
		p, err := NewParser(s, FormatOf(spec))
		if err != nil {
			return nil, err
		}
		u.Columns = p.Mapped()
		for _, k := range s.keys {
			if !u.Columns[k] {
				return nil, fieldErr("partial_columns", "a partial update must name every key column (%s is not in the COLUMNS list)", s.cols[k].GetName())
			}
		}
	}
	if u.Sequence == "" && u.Columns == nil && !u.NewKeyError && !u.Flexible {
		return nil, nil
	}
	return u, nil
}

// CheckSequenceNamed is Doris's check of a load with
// fill_missing_columns false into a table with a sequence column: its
// COLUMNS list must name (or compute) the sequence column. Doris accepts
// such a job and pauses it when it runs; so does a job here (its error is
// the pause reason).
//
// A table with a hidden sequence needs the load's sequence column (Doris
// ORDER BY, function_column.sequence_col) whatever fill_missing_columns
// says, but for a partial update (the stored sequence stays), as in Doris.
func CheckSequenceNamed(s *Schema, spec *api.JobSpec) error {
	if s.hidden {
		partial := spec.GetPartialColumns() || strings.EqualFold(spec.GetUniqueKeyUpdateMode(), UpdateFixed)
		if spec.GetSequenceColumn() == "" && !partial {
			return fmt.Errorf("table %s has sequence column, need to specify the sequence column (ORDER BY, or function_column.sequence_col in a stream load)", s.Name())
		}
		return nil
	}
	if spec.FillMissingColumns == nil || spec.GetFillMissingColumns() || len(spec.GetColumnsMapping()) == 0 {
		return nil
	}
	seq := s.spec.GetSequenceColumn()
	if seq == "" {
		seq = spec.GetSequenceColumn()
	}
	if seq == "" {
		return nil
	}
	for _, it := range spec.GetColumnsMapping() {
		name, _, _ := strings.Cut(it, "=")
		if strings.EqualFold(strings.Trim(strings.TrimSpace(name), "`"), seq) {
			return nil
		}
	}
	return fmt.Errorf("table %s has sequence column %s, need to specify the sequence column (in COLUMNS, or set fill_missing_columns to true)", s.Name(), seq)
}
