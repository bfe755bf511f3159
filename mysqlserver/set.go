package mysqlserver

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// SET: loadnode keeps no session state, so a SET is taken and ignored
// (what clients send on connect: SET NAMES, autocommit, sql_mode, ...),
// except where ignoring it would change an answer without saying so:
// Doris's session variables that make a SELECT show rows loadnode does
// not keep (deleted, replaced or hidden ones), and a sql_mode with
// NO_BACKSLASH_ESCAPES, which changes what the string literals of the
// statements after it say. Those are refused, naming the variable.

// rowVariables are Doris session variables that, true, make a SELECT show
// rows loadnode does not keep, and why.
var rowVariables = map[string]string{
	"skip_delete_bitmap":        "a UNIQUE table keeps each key's latest row only; the rows it replaced are gone",
	"skip_delete_sign":          "a deleted row is gone, not kept with a delete sign",
	"skip_storage_engine_merge": "a UNIQUE or AGGREGATE table keeps each key's merged row only",
	"skip_delete_predicate":     "a deleted row is gone",
	"show_hidden_columns":       "a table has no hidden columns to show",
}

// checkSet refuses a SET that loadnode cannot honor and must not ignore
// (above); nil for any other.
func checkSet(q string) error {
	body := strings.TrimSpace(q[len("SET"):])
	for _, a := range splitItems(body) {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			continue // SET NAMES utf8mb4, SET CHARACTER SET ..., SET TRANSACTION ...
		}
		name = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(name, ":")))
		for _, p := range []string{"session ", "global ", "local ", "@@session.", "@@global.", "@@local.", "@@"} {
			name = strings.TrimSpace(strings.TrimPrefix(name, p))
		}
		name = strings.Trim(name, "`")
		value = strings.ToLower(strings.Trim(strings.TrimSpace(value), `'"`))
		switch {
		case rowVariables[name] != "" && (value == "true" || value == "1" || value == "on"):
			return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf("SET %s = %s is not supported by loadnode: %s (a SELECT would not show what Doris shows with it)", name, value, rowVariables[name]))
		case name == "sql_mode" && strings.Contains(value, "no_backslash_escapes"):
			return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, "SET sql_mode with NO_BACKSLASH_ESCAPES is not supported by loadnode: its statements read backslash escapes in strings ('A\\nB' is A, a newline, B)")
		}
	}
	return nil
}
