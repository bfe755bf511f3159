package mysqlserver

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// MySQL error codes of session statements.
const (
	erUnknownSystemVariable = 1193
	erEmptyQuery            = 1065
)

// session is one connection's server.Handler: its current database, and
// the answers to what clients send on connect. Every other statement goes
// to the Execer.
//
// Concurrency: called on its connection's goroutine only.
type session struct {
	srv  *Server
	conn *server.Conn // nil during the handshake
	db   string
}

var _ server.Handler = (*session)(nil)

// databases are the names SHOW DATABASES lists and USE takes.
func (s *session) databases() []string {
	dbs := append([]string{DefaultDatabase}, s.srv.cfg.Databases...)
	slices.Sort(dbs)
	return slices.Compact(dbs)
}

// UseDB is COM_INIT_DB, USE db and the database of the handshake.
func (s *session) UseDB(name string) error {
	name = unquoteIdent(name)
	if !slices.Contains(s.databases(), name) {
		return mysql.NewError(mysql.ER_BAD_DB_ERROR, fmt.Sprintf("Unknown database '%s'", name))
	}
	s.db = name
	return nil
}

// HandleQuery is COM_QUERY: a session statement answered here, or a
// statement of `loadnode sql` run by the Execer.
func (s *session) HandleQuery(query string) (*mysql.Result, error) {
	if len(query) > s.srv.cfg.MaxQuery {
		return nil, mysql.NewError(mysql.ER_NET_PACKET_TOO_LARGE, fmt.Sprintf("Got a packet bigger than 'max_allowed_packet' bytes (%d)", s.srv.cfg.MaxQuery))
	}
	q := trimStatement(query)
	if q == "" {
		return nil, mysql.NewError(erEmptyQuery, "Query was empty")
	}
	if res, ok, err := s.local(q); ok {
		return res, err
	}
	ctx, cancel := context.WithTimeout(s.srv.ctx, s.srv.cfg.ExecTimeout)
	defer cancel()
	resp, err := s.srv.cfg.Exec.Exec(ctx, q)
	if err != nil {
		return nil, toMyError(err)
	}
	return s.result(resp)
}

// HandleFieldList is COM_FIELD_LIST (the mysql client's completion): no
// fields; DESC answers a table's columns.
func (s *session) HandleFieldList(string, string) ([]*mysql.Field, error) { return nil, nil }

// errNoPrepare refuses the binary protocol's prepared statements.
var errNoPrepare = mysql.NewError(mysql.ER_UNSUPPORTED_PS, "loadnode does not take prepared statements; send the statement as text (go-sql-driver/mysql: interpolateParams=true; JDBC: useServerPrepStmts=false, the default)")

func (s *session) HandleStmtPrepare(string) (int, int, any, error) { return 0, 0, nil, errNoPrepare }
func (s *session) HandleStmtExecute(any, string, []any) (*mysql.Result, error) {
	return nil, errNoPrepare
}
func (s *session) HandleStmtClose(any) error { return nil }

// comResetConnection is COM_RESET_CONNECTION.
const comResetConnection = 0x1f

// HandleOtherCommand answers COM_SET_OPTION (multi-statements on or off:
// taken) and COM_RESET_CONNECTION; any other command is error 1047.
func (s *session) HandleOtherCommand(cmd byte, _ []byte) error {
	switch cmd {
	case mysql.COM_SET_OPTION:
		return nil
	case comResetConnection:
		s.db = DefaultDatabase
		return nil
	}
	return mysql.NewError(mysql.ER_UNKNOWN_COM_ERROR, fmt.Sprintf("Unknown command %#x", cmd))
}

// trimStatement drops the comments and blanks before a statement (JDBC
// prefixes /* mysql-connector-j ... */) and the blanks and semicolons after.
func trimStatement(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "/*"):
			end := strings.Index(q[2:], "*/")
			if end < 0 {
				return ""
			}
			q = q[2+end+2:]
		case strings.HasPrefix(q, "-- "), strings.HasPrefix(q, "#"):
			end := strings.IndexByte(q, '\n')
			if end < 0 {
				return ""
			}
			q = q[end+1:]
		default:
			return strings.TrimRight(q, "; \t\r\n")
		}
	}
}

// local answers the statements clients send on connect and between
// statements; ok is false for a statement that is not one of them.
func (s *session) local(q string) (res *mysql.Result, ok bool, err error) {
	words := strings.Fields(strings.ToUpper(q))
	first := words[0]
	second := ""
	if len(words) > 1 {
		second = words[1]
	}
	switch {
	case first == "SET":
		// Session settings: taken and ignored (loadnode has no session
		// state), unless ignoring one would change an answer (set.go).
		return nil, true, checkSet(q)
	case first == "BEGIN", first == "COMMIT", first == "ROLLBACK",
		first == "START" && second == "TRANSACTION":
		// Transactions: taken and ignored (loadnode has none; Doris
		// ignores most too).
		return nil, true, nil
	case first == "USE" && len(words) == 2:
		return nil, true, s.UseDB(strings.Fields(q)[1])
	case first == "SHOW":
		return s.show(q, words)
	case first == "SELECT":
		return s.selectConst(q)
	}
	return nil, false, nil
}

// condPat is `Variable_name = 'name'` or `Variable_name LIKE 'pattern'`.
const condPat = "`?variable_name`?" + `\s*(=|LIKE)\s*'((?:[^'\\]|\\.|'')*)'`

var (
	likeRe = regexp.MustCompile(`(?is)^\s+LIKE\s+'((?:[^'\\]|\\.|'')*)'\s*$`)
	// condRe is one condition of SHOW VARIABLES WHERE; condsRe the whole
	// clause: conditions joined by OR (what JDBC sends).
	condRe  = regexp.MustCompile(`(?is)` + condPat)
	condsRe = regexp.MustCompile(`(?is)^\s+WHERE\s+\(?\s*` + condPat + `\s*\)?(?:\s+OR\s+\(?\s*` + condPat + `\s*\)?)*\s*$`)
)

// show answers SHOW DATABASES, SHOW [GLOBAL|SESSION] VARIABLES [LIKE ...]
// and SHOW WARNINGS / ERRORS.
func (s *session) show(q string, words []string) (*mysql.Result, bool, error) {
	i := 1
	if i < len(words) && (words[i] == "GLOBAL" || words[i] == "SESSION" || words[i] == "LOCAL") {
		i++
	}
	if i >= len(words) {
		return nil, false, nil
	}
	// rest is what follows the keyword, as written.
	rest := func() string {
		loc := regexp.MustCompile(`(?i)\b` + words[i] + `\b`).FindStringIndex(q)
		return q[loc[1]:]
	}
	filter := func(names []string) ([]string, error) {
		r := rest()
		if strings.TrimSpace(r) == "" {
			return names, nil
		}
		var pats []*regexp.Regexp
		if m := likeRe.FindStringSubmatch(r); m != nil {
			pats = append(pats, likePattern(unescapeString(m[1])))
		} else if condsRe.MatchString(r) {
			for _, m := range condRe.FindAllStringSubmatch(r, -1) {
				pat := unescapeString(m[2])
				if m[1] == "=" {
					pat = escapeLike(pat)
				}
				pats = append(pats, likePattern(pat))
			}
		} else {
			return nil, mysql.NewError(mysql.ER_PARSE_ERROR, fmt.Sprintf("unsupported clause after SHOW %s: %s (LIKE 'pattern' and WHERE Variable_name = 'name' [OR ...] are)", words[i], strings.TrimSpace(r)))
		}
		var out []string
		for _, n := range names {
			if slices.ContainsFunc(pats, func(re *regexp.Regexp) bool { return re.MatchString(n) }) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	switch words[i] {
	case "DATABASES", "SCHEMAS":
		if i != 1 {
			return nil, false, nil
		}
		dbs, err := filter(s.databases())
		if err != nil {
			return nil, true, err
		}
		rows := make([][]any, len(dbs))
		for j, d := range dbs {
			rows[j] = []any{d}
		}
		res, err := resultSet([]string{"Database"}, rows)
		return res, true, err
	case "VARIABLES":
		vars := s.variables()
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		slices.Sort(names)
		names, err := filter(names)
		if err != nil {
			return nil, true, err
		}
		rows := make([][]any, len(names))
		for j, n := range names {
			rows[j] = []any{n, fmt.Sprint(vars[n])}
		}
		res, err := resultSet([]string{"Variable_name", "Value"}, rows)
		return res, true, err
	case "WARNINGS", "ERRORS":
		res, err := resultSet([]string{"Level", "Code", "Message"}, nil)
		return res, true, err
	}
	return nil, false, nil
}

// variables are the system variables SELECT @@name and SHOW VARIABLES
// answer: what the mysql client, go-sql-driver/mysql, JDBC and pymysql
// ask for.
func (s *session) variables() map[string]any {
	ssl := "DISABLED"
	if s.srv.cfg.TLS != nil {
		ssl = "YES"
	}
	return map[string]any{
		"version_comment":          VersionComment,
		"version":                  ServerVersion,
		"version_compile_os":       "Linux",
		"auto_increment_increment": int64(1),
		"autocommit":               int64(1),
		"character_set_client":     "utf8mb4",
		"character_set_connection": "utf8mb4",
		"character_set_results":    "utf8mb4",
		"character_set_server":     "utf8mb4",
		"character_set_database":   "utf8mb4",
		"collation_server":         "utf8mb4_general_ci",
		"collation_connection":     "utf8mb4_general_ci",
		"collation_database":       "utf8mb4_general_ci",
		"init_connect":             "",
		"interactive_timeout":      int64(28800),
		"wait_timeout":             int64(s.srv.cfg.IdleTimeout.Seconds()),
		"net_write_timeout":        int64(s.srv.cfg.WriteTimeout.Seconds()),
		"net_read_timeout":         int64(s.srv.cfg.ReadTimeout.Seconds()),
		"net_buffer_length":        int64(16384),
		"max_allowed_packet":       int64(s.srv.cfg.MaxQuery),
		"max_connections":          int64(s.srv.cfg.MaxConns),
		"license":                  "Apache License 2.0",
		"lower_case_table_names":   int64(0),
		"performance_schema":       int64(0),
		"query_cache_size":         int64(0),
		"query_cache_type":         "OFF",
		"sql_mode":                 "",
		"sql_auto_is_null":         int64(0),
		"sql_select_limit":         "18446744073709551615",
		"system_time_zone":         "UTC",
		"time_zone":                "UTC",
		"transaction_isolation":    "REPEATABLE-READ",
		"tx_isolation":             "REPEATABLE-READ",
		"transaction_read_only":    int64(0),
		"tx_read_only":             int64(0),
		"have_ssl":                 ssl,
		"have_openssl":             ssl,
		"language":                 "/usr/share/mysql/english/",
		"event_scheduler":          "OFF",
		"max_execution_time":       int64(s.srv.cfg.ExecTimeout.Milliseconds()),
		"default_storage_engine":   "olap",
		"storage_engine":           "olap",
	}
}

const identPat = "(?:[A-Za-z_][A-Za-z0-9_$]*|`(?:[^`]|``)+`|'(?:[^'\\\\]|\\\\.|'')*'|\"(?:[^\"\\\\]|\\\\.)*\")"

var (
	limitRe    = regexp.MustCompile(`(?is)\s+LIMIT\s+\d+(?:\s*,\s*\d+)?$`)
	varRe      = regexp.MustCompile(`(?i)^@@(?:(?:global|session|local)\.)?([A-Za-z_][A-Za-z0-9_]*)`)
	funcRe     = regexp.MustCompile(`(?i)^(DATABASE|SCHEMA|USER|CURRENT_USER|SESSION_USER|SYSTEM_USER|VERSION|CONNECTION_ID)\s*\(\s*\)|^(?i:CURRENT_USER)\b`)
	intRe      = regexp.MustCompile(`^-?\d+\b`)
	strRe      = regexp.MustCompile(`^'((?:[^'\\]|\\.|'')*)'`)
	aliasRe    = regexp.MustCompile(`(?is)^\s*(?:AS\s+)?(` + identPat + `)\s*$`)
	fromWordRe = regexp.MustCompile(`(?i)\bFROM\b`)
)

// selectConst answers a SELECT without FROM whose items are all system
// variables (@@version_comment), session functions (DATABASE(), USER(),
// VERSION(), CONNECTION_ID()) or literals (SELECT 1, a pool's ping). Any
// other SELECT is the Execer's (ok false).
func (s *session) selectConst(q string) (*mysql.Result, bool, error) {
	body := strings.TrimSpace(q[len("SELECT"):])
	body = limitRe.ReplaceAllString(body, "")
	if fromWordRe.MatchString(stripQuoted(body)) {
		return nil, false, nil
	}
	items := splitItems(body)
	if len(items) == 0 {
		return nil, false, nil
	}
	vars := s.variables()
	var names []string
	var row []any
	for _, it := range items {
		it = strings.TrimSpace(it)
		var v any
		var n int
		switch {
		case varRe.MatchString(it):
			m := varRe.FindStringSubmatchIndex(it)
			name := strings.ToLower(it[m[2]:m[3]])
			val, found := vars[name]
			if !found {
				return nil, true, mysql.NewError(erUnknownSystemVariable, fmt.Sprintf("Unknown system variable '%s'", name))
			}
			v, n = val, m[1]
		case funcRe.MatchString(it):
			m := funcRe.FindStringSubmatchIndex(it)
			fn := strings.ToUpper(strings.TrimSpace(it[:m[1]]))
			fn = strings.TrimSpace(strings.SplitN(fn, "(", 2)[0])
			switch fn {
			case "DATABASE", "SCHEMA":
				v = s.db
			case "VERSION":
				v = ServerVersion
			case "CONNECTION_ID":
				v = int64(0)
				if s.conn != nil {
					v = int64(s.conn.ConnectionID())
				}
			default: // the users
				user := "root"
				if s.conn != nil {
					user = s.conn.GetUser()
				}
				v = user + "@%"
			}
			n = m[1]
		case intRe.MatchString(it):
			m := intRe.FindStringIndex(it)
			i, err := strconv.ParseInt(it[:m[1]], 10, 64)
			if err != nil {
				return nil, false, nil
			}
			v, n = i, m[1]
		case strRe.MatchString(it):
			m := strRe.FindStringSubmatchIndex(it)
			v, n = unescapeString(it[m[2]:m[3]]), m[1]
		default:
			return nil, false, nil
		}
		name := it[:n]
		if rest := it[n:]; strings.TrimSpace(rest) != "" {
			m := aliasRe.FindStringSubmatch(rest)
			if m == nil {
				return nil, false, nil
			}
			name = unquoteIdent(m[1])
		}
		names = append(names, name)
		row = append(row, v)
	}
	res, err := resultSet(names, [][]any{row})
	return res, true, err
}

// splitItems splits a select list at its top-level commas.
func splitItems(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}

// stripQuoted blanks what is quoted in s (so that FROM inside a string is
// not a FROM clause).
func stripQuoted(s string) string {
	b := []byte(s)
	var quote byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
				continue
			}
			if c == quote {
				quote = 0
			}
			b[i] = ' '
		case c == '\'' || c == '"' || c == '`':
			quote = c
		}
	}
	return string(b)
}

// unquoteIdent drops an identifier's or a string's quotes.
func unquoteIdent(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 {
		switch q := s[0]; q {
		case '`':
			if s[len(s)-1] == q {
				return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
			}
		case '\'', '"':
			if s[len(s)-1] == q {
				return unescapeString(s[1 : len(s)-1])
			}
		}
	}
	return s
}

// unescapeString reads a MySQL string literal's body: \x escapes and ”.
func unescapeString(s string) string {
	if !strings.ContainsAny(s, `\'`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '0':
				b.WriteByte(0)
			case '%', '_':
				// Kept escaped: they mean themselves in a LIKE pattern.
				b.WriteByte('\\')
				b.WriteByte(s[i])
			default:
				b.WriteByte(s[i])
			}
		case c == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeLike makes s a LIKE pattern that matches s only.
func escapeLike(s string) string {
	return strings.NewReplacer(`%`, `\%`, `_`, `\_`).Replace(s)
}

// likePattern compiles a LIKE pattern (%, _, \ escapes), case-insensitive
// as MySQL's variable names are.
func likePattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?is)^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case c == '%':
			b.WriteString(".*")
		case c == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
