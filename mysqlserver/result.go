package mysqlserver

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/table"
)

// resultSet is a text result set of names and rows: a column is BIGINT
// when its values are int64, else VARCHAR; a nil value is NULL, "" is the
// empty string (go-mysql's BuildSimpleTextResultset would send NULL).
func resultSet(names []string, rows [][]any) (*mysql.Result, error) {
	rs := mysql.NewResultset(len(names))
	for i, n := range names {
		f := &mysql.Field{Name: []byte(n), Charset: utf8mb4GeneralCI, Type: mysql.MYSQL_TYPE_VAR_STRING}
		for _, r := range rows {
			if _, ok := r[i].(int64); ok {
				f.Type, f.Charset, f.Flag = mysql.MYSQL_TYPE_LONGLONG, binaryCharset, mysql.BINARY_FLAG|mysql.NUM_FLAG
			}
			if r[i] != nil {
				break
			}
		}
		rs.Fields[i] = f
	}
	for _, r := range rows {
		if len(r) != len(names) {
			return nil, mysql.NewError(mysql.ER_UNKNOWN_ERROR, fmt.Sprintf("mysqlserver: a row of %d values for %d columns", len(r), len(names)))
		}
		var data []byte
		for _, v := range r {
			switch v := v.(type) {
			case nil:
				data = append(data, 0xfb)
			case int64:
				data = append(data, mysql.PutLengthEncodedString(strconv.AppendInt(nil, v, 10))...)
			default:
				data = append(data, mysql.PutLengthEncodedString([]byte(fmt.Sprint(v)))...)
			}
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	return mysql.NewResult(rs), nil
}

// Collations of result set columns.
const (
	utf8mb4GeneralCI = 45
	binaryCharset    = 63
)

var insertedRe = regexp.MustCompile(`^(\d+) rows? inserted`)

// result is an ExecResponse as MySQL answers: Doris's result set where the
// statement has one (SHOW ... ROUTINE LOAD, SHOW TABLES, DESC, SELECT), an
// OK packet for the others (INSERT's with its row count).
func (s *session) result(resp *api.ExecResponse) (*mysql.Result, error) {
	switch {
	case resp.GetResult() != nil:
		rs := resp.GetResult()
		rows := make([][]any, len(rs.GetRows()))
		for i, r := range rs.GetRows() {
			row := make([]any, len(rs.GetColumns()))
			for j := range row {
				if j < len(r.GetValues()) {
					row[j] = r.GetValues()[j]
				} else {
					row[j] = ""
				}
			}
			rows[i] = row
		}
		return resultSet(rs.GetColumns(), rows)
	case len(resp.GetTables()) == 1 && resp.GetTable() != nil:
		return describe(resp.GetTables()[0].GetSpec())
	case resp.Tables != nil || resp.GetMessage() == "" && resp.GetJob() == nil && resp.Jobs == nil && resp.GetTable() == nil:
		// SHOW TABLES (an empty list comes back as no field at all):
		// the tables of the current database.
		want := s.db
		if want == DefaultDatabase {
			want = ""
		}
		var rows [][]any
		for _, t := range resp.GetTables() {
			if t.GetSpec().GetDatabase() == want {
				rows = append(rows, []any{t.GetSpec().GetName()})
			}
		}
		return resultSet([]string{"Tables_in_" + s.db}, rows)
	case resp.Jobs != nil:
		rows := make([][]any, len(resp.GetJobs()))
		for i, j := range resp.GetJobs() {
			rows[i] = []any{j.GetName(), j.GetState().String()}
		}
		return resultSet([]string{"Name", "State"}, rows)
	}
	res := mysql.NewResultReserveResultset(0)
	if m := insertedRe.FindStringSubmatch(resp.GetMessage()); m != nil {
		res.AffectedRows, _ = strconv.ParseUint(m[1], 10, 64)
	}
	return res, nil
}

// describe is DESC's result set, Doris's columns: Field, Type, Null, Key,
// Default, Extra.
func describe(spec *api.TableSpec) (*mysql.Result, error) {
	keys := map[string]bool{}
	for _, k := range spec.GetKeyColumns() {
		keys[k] = true
	}
	var rows [][]any
	for _, c := range spec.GetColumns() {
		null := "YES"
		if c.GetNotNull() {
			null = "NO"
		}
		key := "false"
		if keys[c.GetName()] {
			key = "true"
		}
		var def any
		switch {
		case c.DefaultValue != nil:
			def = c.GetDefaultValue()
		case c.GetDefaultCurrentTimestamp() && c.GetDefaultCurrentTimestampPrecision() > 0:
			def = fmt.Sprintf("CURRENT_TIMESTAMP(%d)", c.GetDefaultCurrentTimestampPrecision())
		case c.GetDefaultCurrentTimestamp():
			def = "CURRENT_TIMESTAMP"
		}
		extra := ""
		if a := c.GetAggregation(); a != api.Aggregation_AGG_NONE {
			extra = a.String()
		}
		rows = append(rows, []any{c.GetName(), table.DorisTypeName(c), null, key, def, extra})
	}
	return resultSet([]string{"Field", "Type", "Null", "Key", "Default", "Extra"}, rows)
}

// toMyError is an Exec error as a MySQL error: the client's stable code
// mapped to the code Doris's FE answers (1105, its catch-all, where it
// has no more specific one), the message as `loadnode sql` prints it.
func toMyError(err error) *mysql.MyError {
	var me *mysql.MyError
	if errors.As(err, &me) {
		return me
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return mysql.NewError(mysql.ER_UNKNOWN_ERROR, err.Error())
	}
	return mysql.NewError(errorCode(ce), ce.Error())
}

// errorCode maps a client error's code to MySQL's.
func errorCode(ce *client.Error) uint16 {
	msg := strings.ToLower(ce.Message)
	switch ce.Code {
	case api.ErrorCode_INVALID_ARGUMENT:
		if ce.Field == "statement" || strings.Contains(msg, "statement not supported") {
			// The statement does not parse, or is none loadnode takes.
			return mysql.ER_PARSE_ERROR
		}
	case api.ErrorCode_NOT_FOUND:
		switch {
		case strings.Contains(msg, "table"):
			return mysql.ER_NO_SUCH_TABLE
		case strings.Contains(msg, "database"):
			return mysql.ER_BAD_DB_ERROR
		}
	case api.ErrorCode_ALREADY_EXISTS:
		if strings.Contains(msg, "table") {
			return mysql.ER_TABLE_EXISTS_ERROR
		}
	case api.ErrorCode_UNAUTHENTICATED:
		return mysql.ER_ACCESS_DENIED_ERROR
	}
	return mysql.ER_UNKNOWN_ERROR
}
