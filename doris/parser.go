package doris

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/table"
)

// Statement is one parsed statement. Exactly one of CreateTable,
// CreateRoutineLoad, Pause, Resume, Stop, Alter and Show is set.
type Statement struct {
	// CreateTable is CREATE TABLE: the table's name, its columns with their
	// loadnode types, and model DUPLICATE.
	CreateTable *api.TableSpec
	// IfNotExists is set by CREATE TABLE IF NOT EXISTS.
	IfNotExists bool

	// CreateRoutineLoad is CREATE ROUTINE LOAD. Its Table has only a Name
	// and, when the statement has COLUMNS (...), one column per listed name,
	// in order, with Type COLUMN_TYPE_UNSPECIFIED: the column types belong
	// to the existing table, and the caller fills them in (and checks the
	// names against the table) before config.ApplyDefaults and
	// config.ValidateJobSpec. Fields the statement does not set are zero,
	// so that ApplyDefaults gives them loadnode's defaults, except
	// ColumnSeparator, which is "\t" for csv without COLUMNS TERMINATED BY,
	// as in Doris.
	CreateRoutineLoad *api.JobSpec
	// MultiTable is set by CREATE ROUTINE LOAD without ON: a multi-table
	// load, whose records name their tables ("table|record"); the
	// caller fills CreateRoutineLoad.Tables (the tables of the statement's
	// database) and leaves Table to config.ApplyDefaults.
	MultiTable bool
	// LoadToSingleTablet is set by CREATE ROUTINE LOAD with
	// "load_to_single_tablet" = "true": Doris takes it only into a table
	// DISTRIBUTED BY RANDOM (TableSpec.random_distribution), and the
	// caller refuses the statement otherwise, as Doris does ("if
	// load_to_single_tablet set to true, the olap table must be with
	// random distribution"). It changes nothing else.
	LoadToSingleTablet bool

	// Pause, Resume and Stop name the job of PAUSE, RESUME and STOP
	// ROUTINE LOAD; JobRef.All is set by PAUSE ALL and RESUME ALL, which
	// name no job.
	Pause, Resume, Stop *JobRef
	// Alter is ALTER ROUTINE LOAD.
	Alter *Alter
	// AlterTable is ALTER TABLE ADD or DROP TEMPORARY PARTITION.
	AlterTable *AlterTable
	// Show is SHOW [ALL] ROUTINE LOAD [FOR name], SHOW ROUTINE LOAD TASK
	// and SHOW CREATE ROUTINE LOAD.
	Show *Show
	// Truncate names the table of TRUNCATE TABLE [db.]name.
	Truncate *JobRef
	// Insert is INSERT INTO [db.]table [(cols)] VALUES (...), ...
	Insert *api.TableInsertRequest
	// ShowTables is SHOW TABLES (FROM/IN db is refused: loadnode has one
	// namespace).
	ShowTables bool
	// Describe names the table of DESC / DESCRIBE [db.]name and of SHOW
	// [FULL] COLUMNS FROM [db.]name.
	Describe *JobRef
	// ShowCreateTable names the table of SHOW CREATE TABLE [db.]name.
	ShowCreateTable *JobRef
	// Sync is Doris's SYNC (its FEs' metadata made current): loadnode's
	// is current when a statement answers, so it does nothing.
	Sync bool
	// DropTable names the table of DROP TABLE [IF EXISTS] [db.]name
	// (IfExists says IF EXISTS was given).
	DropTable *JobRef

	// IfExists is DROP TABLE's IF EXISTS.
	IfExists bool

	// DB is the database qualifier of the created table or routine load
	// ("db" in CREATE TABLE db.t), or "". loadnode has one namespace per
	// node and ignores it.
	DB string

	// Ignored lists the clauses the statement gave that mean nothing to
	// loadnode (ENGINE, COMMENT, DISTRIBUTED BY, PARTITION BY, INDEX,
	// placement PROPERTIES, ...), accepted and reported so that a user
	// sees what was not applied.
	Ignored []string
}

// JobRef names the job of PAUSE, RESUME or STOP. All is set, and DB and
// Name are empty, for PAUSE ALL ROUTINE LOAD and RESUME ALL ROUTINE LOAD.
// DB is the database qualifier, if any (ignored by loadnode).
type JobRef struct {
	DB, Name string
	All      bool
}

// Show is SHOW [ALL] ROUTINE LOAD [FOR [db.]name]. Name is empty when the
// statement names no job (list every job). All asks for STOPPED and
// CANCELLED jobs too, as in Doris. Task is SHOW ROUTINE LOAD TASK WHERE
// JobName = "name" (the job's current tasks); Create is SHOW [ALL] CREATE
// ROUTINE LOAD FOR name (the statement that creates the job).
type Show struct {
	DB, Name     string
	All          bool
	Task, Create bool
	// Like is SHOW [ALL] ROUTINE LOAD LIKE "pattern" (nil without): the
	// jobs whose names match the pattern (% any run, _ one character,
	// case-sensitive, as Doris matches routine load names).
	Like *string
	// OrderBy is SHOW [ALL] ROUTINE LOAD's ORDER BY column [ASC | DESC],
	// ...; HasLimit says it had LIMIT [Offset,] Limit (or LIMIT Limit
	// OFFSET Offset). Page applies them.
	OrderBy  []ShowOrder
	HasLimit bool
	Limit    int64
	Offset   int64
}

// ShowOrder is one ORDER BY key of SHOW ROUTINE LOAD: a column of
// RoutineLoadColumns, by its index.
type ShowOrder struct {
	Column int
	Desc   bool
}

// Lists reports whether SHOW ROUTINE LOAD without FOR lists the job named
// name: every job, or with LIKE those whose names match.
func (s *Show) Lists(name string) bool {
	return s.Like == nil || table.Like(name, *s.Like)
}

// Error is a statement that does not parse or that loadnode refuses. Clause
// names the clause or property at fault (`WHERE`, `PROPERTIES "strict_mode"`,
// `column "k1"`), or is empty for a plain syntax error; Line and Col (1-based,
// columns in characters) are where it starts in the statement.
type Error struct {
	Line, Col int
	Clause    string
	Msg       string
}

// Error renders `doris: line 1 col 48: PROPERTIES "strict_mode": not
// supported by loadnode`.
func (e *Error) Error() string {
	if e.Clause == "" {
		return fmt.Sprintf("doris: line %d col %d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("doris: line %d col %d: %s: %s", e.Line, e.Col, e.Clause, e.Msg)
}

// errAt builds an *Error at byte offset pos of src.
func errAt(src string, pos int, clause, msg string) *Error {
	line, col := 1, 1
	for i := 0; i < pos && i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
		i += n
	}
	return &Error{Line: line, Col: col, Clause: clause, Msg: msg}
}

// Parse parses one statement (a trailing ";" is allowed). Keywords are
// case-insensitive; identifiers may be `backquoted`; strings are single- or
// double-quoted with MySQL escapes; `-- ...`, `# ...` and `/* ... */`
// comments are skipped. Every error is an *Error.
func Parse(sql string) (*Statement, error) {
	st, err := parse(sql)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func parse(sql string) (*Statement, *Error) {
	if len(sql) > maxStatementBytes {
		return nil, &Error{Line: 1, Col: 1, Msg: fmt.Sprintf("statement longer than %d bytes", maxStatementBytes)}
	}
	toks, err := lex(sql)
	if err != nil {
		return nil, err
	}
	p := &parser{src: sql, toks: toks}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	p.acceptSym(";")
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.errf(t, "", "unexpected %s after the statement (one statement at a time)", t.describe())
	}
	return st, nil
}

// parser walks the tokens of one statement.
type parser struct {
	src  string
	toks []token // INVARIANT: ends with tokEOF
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

// peekAt returns the token n after the next one (peekAt(0) == peek()).
func (p *parser) peekAt(n int) token {
	if p.i+n >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+n]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// accept consumes the next token if it is the keyword kw.
func (p *parser) accept(kw string) bool {
	if p.peek().is(kw) {
		p.i++
		return true
	}
	return false
}

// acceptSym consumes the next token if it is the symbol s.
func (p *parser) acceptSym(s string) bool {
	if p.peek().isSym(s) {
		p.i++
		return true
	}
	return false
}

func (p *parser) errf(t token, clause, format string, args ...any) *Error {
	return errAt(p.src, t.pos, clause, fmt.Sprintf(format, args...))
}

// expect consumes the keyword kw or fails naming clause.
func (p *parser) expect(clause, kw string) *Error {
	if t := p.peek(); !t.is(kw) {
		return p.errf(t, clause, "expected %s, found %s", kw, t.describe())
	}
	p.i++
	return nil
}

// expectSym consumes the symbol s or fails naming clause.
func (p *parser) expectSym(clause, s string) *Error {
	if t := p.peek(); !t.isSym(s) {
		return p.errf(t, clause, "expected %q, found %s", s, t.describe())
	}
	p.i++
	return nil
}

// ident reads an identifier (bare or backquoted); what says what it names.
func (p *parser) ident(clause, what string) (token, *Error) {
	t := p.peek()
	if t.kind != tokIdent && t.kind != tokQuoted {
		return t, p.errf(t, clause, "expected %s, found %s", what, t.describe())
	}
	p.i++
	return t, nil
}

// qualifiedName reads [db.]name.
func (p *parser) qualifiedName(clause, what string) (db, name string, at token, err *Error) {
	t, err := p.ident(clause, what)
	if err != nil {
		return "", "", t, err
	}
	if !p.acceptSym(".") {
		return "", t.text, t, nil
	}
	n, err := p.ident(clause, what)
	if err != nil {
		return "", "", n, err
	}
	return t.text, n.text, n, nil
}

// identList reads "(" ident {"," ident} ")".
func (p *parser) identList(clause, what string) ([]token, *Error) {
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	var list []token
	for {
		t, err := p.ident(clause, what)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		return list, nil
	}
}

// property is one "key" = "value" of a PROPERTIES or FROM KAFKA list.
type property struct {
	key, val       string // key in lower case
	rawKey         string // key as written
	keyTok, valTok token
}

// properties reads "(" ["key" = "value" {"," "key" = "value"}] ")". Keys are
// strings (or bare words); values are strings or numbers. A key given twice
// (case-insensitively) is an error.
func (p *parser) properties(clause string) ([]property, *Error) {
	if err := p.expectSym(clause, "("); err != nil {
		return nil, err
	}
	var list []property
	if p.acceptSym(")") {
		return list, nil
	}
	seen := make(map[string]bool)
	for {
		k := p.peek()
		if k.kind != tokString && k.kind != tokIdent && k.kind != tokQuoted {
			return nil, p.errf(k, clause, "expected a property name such as \"key\", found %s", k.describe())
		}
		p.i++
		if err := p.expectSym(clause+" "+quote(k.text), "="); err != nil {
			return nil, err
		}
		v := p.peek()
		if v.kind != tokString && v.kind != tokNumber {
			return nil, p.errf(v, clause+" "+quote(k.text), "expected a \"value\", found %s", v.describe())
		}
		p.i++
		key := strings.ToLower(k.text)
		if seen[key] {
			return nil, p.errf(k, clause+" "+quote(k.text), "given twice")
		}
		seen[key] = true
		list = append(list, property{key: key, val: v.text, rawKey: k.text, keyTok: k, valTok: v})
		if p.acceptSym(",") {
			continue
		}
		if err := p.expectSym(clause, ")"); err != nil {
			return nil, err
		}
		return list, nil
	}
}

// statementsHelp lists what Parse understands, for the error about any other
// statement.
const statementsHelp = "loadnode understands SYNC, CREATE TABLE, TRUNCATE TABLE, DROP TABLE, SHOW TABLES, SHOW CREATE TABLE, DESC (SHOW COLUMNS), INSERT INTO ... VALUES, ALTER TABLE ADD and DROP TEMPORARY PARTITION, CREATE ROUTINE LOAD, ALTER ROUTINE LOAD, PAUSE, RESUME and STOP ROUTINE LOAD, SHOW [ALL] ROUTINE LOAD, SHOW ROUTINE LOAD TASK and SHOW CREATE ROUTINE LOAD"

func (p *parser) statement() (*Statement, *Error) {
	t := p.next()
	switch {
	case t.kind == tokEOF:
		return nil, p.errf(t, "", "empty statement")
	case t.is("CREATE"):
		switch n := p.peek(); {
		case n.is("TABLE"):
			p.next()
			return p.createTable()
		case n.is("ROUTINE"):
			p.next()
			if err := p.expect("CREATE ROUTINE LOAD", "LOAD"); err != nil {
				return nil, err
			}
			return p.createRoutineLoad(t)
		default:
			what := "CREATE " + strings.ToUpper(n.text)
			if n.kind != tokIdent {
				what = "CREATE"
			}
			return nil, p.errf(n, what, "statement not supported; %s", statementsHelp)
		}
	case t.is("ALTER"):
		if p.peek().is("TABLE") {
			p.next()
			return p.alterTable()
		}
		if n := p.peek(); !n.is("ROUTINE") {
			return nil, p.errf(n, "ALTER "+strings.ToUpper(n.text), "statement not supported; %s", statementsHelp)
		}
		p.next()
		if err := p.expect("ALTER ROUTINE LOAD", "LOAD"); err != nil {
			return nil, err
		}
		return p.alterRoutineLoad()
	case t.is("PAUSE"), t.is("RESUME"), t.is("STOP"):
		return p.jobCommand(strings.ToUpper(t.text))
	case t.is("SHOW"):
		return p.show()
	case t.is("INSERT"):
		return p.insert()
	case t.is("DESC"), t.is("DESCRIBE"):
		db, name, _, err := p.qualifiedName("DESC", "a table name")
		if err != nil {
			return nil, err
		}
		if n := p.peek(); n.kind != tokEOF && !n.isSym(";") {
			return nil, p.errf(n, "DESC", "unexpected %s: loadnode describes whole tables (DESC name)", n.describe())
		}
		return &Statement{Describe: &JobRef{DB: db, Name: name}, DB: db}, nil
	case t.is("DROP"):
		if n := p.peek(); !n.is("TABLE") {
			return nil, p.errf(n, "DROP "+strings.ToUpper(n.text), "statement not supported; %s", statementsHelp)
		}
		p.next()
		st := &Statement{}
		if p.peek().is("IF") {
			p.next()
			if err := p.expect("DROP TABLE IF EXISTS", "EXISTS"); err != nil {
				return nil, err
			}
			st.IfExists = true
		}
		db, name, _, err := p.qualifiedName("DROP TABLE", "a table name")
		if err != nil {
			return nil, err
		}
		if n := p.peek(); n.is("FORCE") {
			return nil, p.errf(n, "DROP TABLE FORCE", "FORCE not supported: loadnode drops a table at once, and never one a job loads into")
		}
		st.DropTable, st.DB = &JobRef{DB: db, Name: name}, db
		return st, nil
	case t.is("SYNC"):
		if n := p.peek(); n.kind != tokEOF && !n.isSym(";") {
			return nil, p.errf(n, "SYNC", "unexpected %s", n.describe())
		}
		return &Statement{Sync: true}, nil
	case t.is("TRUNCATE"):
		p.accept("TABLE")
		db, name, _, err := p.qualifiedName("TRUNCATE TABLE", "a table name")
		if err != nil {
			return nil, err
		}
		if n := p.peek(); n.is("PARTITION") {
			return nil, p.errf(n, "TRUNCATE TABLE PARTITION", "partitions not supported: loadnode truncates whole tables")
		}
		return &Statement{Truncate: &JobRef{DB: db, Name: name}, DB: db}, nil
	}
	what := strings.ToUpper(t.text)
	if t.kind != tokIdent {
		return nil, p.errf(t, "", "expected a statement, found %s; %s", t.describe(), statementsHelp)
	}
	return nil, p.errf(t, what, "statement not supported; %s", statementsHelp)
}

// jobCommand parses the rest of PAUSE [ALL] ROUTINE LOAD [FOR [db.]name],
// RESUME (the same) and STOP ROUTINE LOAD FOR [db.]name.
func (p *parser) jobCommand(verb string) (*Statement, *Error) {
	clause := verb + " ROUTINE LOAD"
	ref := &JobRef{}
	if t := p.peek(); t.is("ALL") {
		if verb == "STOP" {
			return nil, p.errf(t, "STOP ALL", "not supported; stop jobs one at a time (STOP ROUTINE LOAD FOR name)")
		}
		p.next()
		ref.All = true
		clause = verb + " ALL ROUTINE LOAD"
	}
	if err := p.expect(clause, "ROUTINE"); err != nil {
		return nil, err
	}
	if err := p.expect(clause, "LOAD"); err != nil {
		return nil, err
	}
	if ref.All {
		if t := p.peek(); t.is("FOR") {
			return nil, p.errf(t, clause, "ALL names no job; use %s ROUTINE LOAD FOR name", verb)
		}
	} else {
		if err := p.expect(clause, "FOR"); err != nil {
			return nil, err
		}
		db, name, _, err := p.qualifiedName(clause, "a job name")
		if err != nil {
			return nil, err
		}
		ref.DB, ref.Name = db, name
	}
	switch verb {
	case "PAUSE":
		return &Statement{Pause: ref}, nil
	case "RESUME":
		return &Statement{Resume: ref}, nil
	}
	return &Statement{Stop: ref}, nil
}

// show parses the rest of SHOW [ALL] ROUTINE LOAD [FOR [db.]name | LIKE "pattern"],
// SHOW ROUTINE LOAD TASK [FROM db] WHERE JobName = "name" and SHOW [ALL]
// CREATE ROUTINE LOAD FOR [db.]name.
func (p *parser) show() (*Statement, *Error) {
	sh := &Show{}
	if t := p.peek(); t.is("TABLES") {
		p.next()
		if n := p.peek(); n.is("FROM") || n.is("IN") || n.is("LIKE") || n.is("WHERE") {
			return nil, p.errf(n, "SHOW TABLES "+strings.ToUpper(n.text), "not supported: SHOW TABLES lists every table of the node")
		}
		return &Statement{ShowTables: true}, nil
	}
	if t := p.peek(); t.is("CREATE") && p.peekAt(1).is("TABLE") {
		p.next()
		p.next()
		db, name, _, err := p.qualifiedName("SHOW CREATE TABLE", "a table name")
		if err != nil {
			return nil, err
		}
		if n := p.peek(); n.kind != tokEOF && !n.isSym(";") {
			return nil, p.errf(n, "SHOW CREATE TABLE", "unexpected %s", n.describe())
		}
		return &Statement{ShowCreateTable: &JobRef{DB: db, Name: name}, DB: db}, nil
	}
	if t := p.peek(); t.is("COLUMNS") || t.is("FIELDS") || t.is("FULL") && (p.peekAt(1).is("COLUMNS") || p.peekAt(1).is("FIELDS")) {
		return p.showColumns()
	}
	if t := p.peek(); !t.is("ALL") && !t.is("ROUTINE") && !t.is("CREATE") {
		what := "SHOW " + strings.ToUpper(t.text)
		if t.kind != tokIdent {
			what = "SHOW"
		}
		return nil, p.errf(t, what, "statement not supported; %s", statementsHelp)
	}
	clause := "SHOW ROUTINE LOAD"
	if p.accept("ALL") {
		sh.All = true
		clause = "SHOW ALL ROUTINE LOAD"
	}
	if p.accept("CREATE") {
		sh.Create = true
		clause = "SHOW CREATE ROUTINE LOAD"
		if sh.All {
			clause = "SHOW ALL CREATE ROUTINE LOAD"
		}
	}
	if err := p.expect(clause, "ROUTINE"); err != nil {
		return nil, err
	}
	if err := p.expect(clause, "LOAD"); err != nil {
		return nil, err
	}
	if sh.Create {
		if err := p.expect(clause, "FOR"); err != nil {
			return nil, err
		}
		db, name, _, err := p.qualifiedName(clause, "a job name")
		if err != nil {
			return nil, err
		}
		sh.DB, sh.Name = db, name
		return &Statement{Show: sh}, nil
	}
	switch t := p.peek(); {
	case t.is("TASK"):
		if sh.All {
			return nil, p.errf(t, "SHOW ALL ROUTINE LOAD TASK", "ALL not supported: SHOW ROUTINE LOAD TASK shows a job's current tasks")
		}
		p.next()
		return p.showTask(sh)
	case t.is("LIKE"):
		p.next()
		v := p.peek()
		if v.kind != tokString {
			return nil, p.errf(v, clause+" LIKE", "expected a pattern string, found %s", v.describe())
		}
		p.next()
		pattern := v.text
		sh.Like = &pattern
	case t.is("WHERE"):
		return nil, p.errf(t, "WHERE", "not supported by loadnode; use SHOW ROUTINE LOAD FOR name")
	case t.is("FOR"):
		p.next()
		db, name, _, err := p.qualifiedName(clause, "a job name")
		if err != nil {
			return nil, err
		}
		sh.DB, sh.Name = db, name
	}
	if err := p.showOrderLimit(clause, sh); err != nil {
		return nil, err
	}
	return &Statement{Show: sh}, nil
}

// showOrderLimit parses SHOW ROUTINE LOAD's [ORDER BY column [ASC |
// DESC], ...] [LIMIT [offset,] count | LIMIT count OFFSET offset].
func (p *parser) showOrderLimit(clause string, sh *Show) *Error {
	if p.peek().is("ORDER") {
		p.next()
		if err := p.expect(clause+" ORDER BY", "BY"); err != nil {
			return err
		}
		for {
			c, err := p.ident(clause+" ORDER BY", "a column of SHOW ROUTINE LOAD")
			if err != nil {
				return err
			}
			at := slices.IndexFunc(RoutineLoadColumns, func(n string) bool { return strings.EqualFold(n, c.text) })
			if at < 0 {
				return p.errf(c, clause+" ORDER BY", "no column %s (SHOW ROUTINE LOAD's columns: %s)", quote(c.text), strings.Join(RoutineLoadColumns, ", "))
			}
			o := ShowOrder{Column: at}
			if p.accept("DESC") {
				o.Desc = true
			} else {
				p.accept("ASC")
			}
			sh.OrderBy = append(sh.OrderBy, o)
			if !p.acceptSym(",") {
				break
			}
		}
	}
	if !p.peek().is("LIMIT") {
		return nil
	}
	p.next()
	count := func() (int64, *Error) {
		t := p.peek()
		n, ok := parseCount(t.text)
		if t.kind != tokNumber || !ok {
			return 0, p.errf(t, clause+" LIMIT", "expected a number of rows, found %s", t.describe())
		}
		p.next()
		return n, nil
	}
	n, err := count()
	if err != nil {
		return err
	}
	sh.HasLimit, sh.Limit = true, n
	switch {
	case p.acceptSym(","):
		if sh.Limit, err = count(); err != nil {
			return err
		}
		sh.Offset = n
	case p.accept("OFFSET"):
		if sh.Offset, err = count(); err != nil {
			return err
		}
	}
	return nil
}

// Page orders rows (SHOW ROUTINE LOAD's, RoutineLoadColumns) by OrderBy
// and cuts them by Limit: a column compares as numbers where both
// values are integers (Id), else as text; ties keep their order (job id).
// It returns the indexes of the rows kept, in order.
func (s *Show) Page(rows [][]string) []int {
	at := make([]int, len(rows))
	for i := range at {
		at[i] = i
	}
	slices.SortStableFunc(at, func(a, b int) int {
		for _, o := range s.OrderBy {
			x, y := rows[a][o.Column], rows[b][o.Column]
			c := strings.Compare(x, y)
			if xi, err := strconv.ParseInt(x, 10, 64); err == nil {
				if yi, err := strconv.ParseInt(y, 10, 64); err == nil {
					c = cmp.Compare(xi, yi)
				}
			}
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	if s.HasLimit {
		at = at[min(int64(len(at)), s.Offset):]
		at = at[:min(int64(len(at)), s.Limit)]
	}
	return at
}

// showTask parses the rest of SHOW ROUTINE LOAD TASK [FROM db] WHERE
// JobName = "name" (Doris's only condition).
func (p *parser) showTask(sh *Show) (*Statement, *Error) {
	const clause = "SHOW ROUTINE LOAD TASK"
	sh.Task = true
	if p.accept("FOR") {
		// SHOW ROUTINE LOAD TASK FOR [db.]name, as Doris takes it too.
		db, name, _, err := p.qualifiedName(clause, "a job name")
		if err != nil {
			return nil, err
		}
		sh.DB, sh.Name = db, name
		return &Statement{Show: sh}, nil
	}
	if p.accept("FROM") || p.accept("IN") {
		db, err := p.ident(clause, "a database name")
		if err != nil {
			return nil, err
		}
		sh.DB = db.text
	}
	if !p.peek().is("WHERE") {
		return nil, p.errf(p.peek(), clause, "expected WHERE JobName = \"name\" or FOR name, found %s", p.peek().describe())
	}
	p.next()
	col, err := p.ident("WHERE", "JobName")
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(col.text, "JobName") {
		return nil, p.errf(col, "WHERE", "only JobName = \"name\" is supported, as in Doris")
	}
	if err := p.expectSym("WHERE", "="); err != nil {
		return nil, err
	}
	v := p.peek()
	if v.kind != tokString {
		return nil, p.errf(v, "WHERE", "expected the job name as a \"string\", found %s", v.describe())
	}
	p.next()
	sh.Name = v.text
	return &Statement{Show: sh}, nil
}

// showColumns parses the rest of SHOW [FULL] COLUMNS|FIELDS FROM|IN
// [db.]name [FROM|IN db], MySQL's DESC: the same answer.
func (p *parser) showColumns() (*Statement, *Error) {
	clause := "SHOW COLUMNS"
	if p.accept("FULL") {
		clause = "SHOW FULL COLUMNS"
	}
	p.next() // COLUMNS or FIELDS
	if !p.accept("FROM") && !p.accept("IN") {
		return nil, p.errf(p.peek(), clause, "expected FROM or IN, found %s", p.peek().describe())
	}
	db, name, _, err := p.qualifiedName(clause, "a table name")
	if err != nil {
		return nil, err
	}
	if p.accept("FROM") || p.accept("IN") {
		d, err := p.ident(clause, "a database name")
		if err != nil {
			return nil, err
		}
		db = d.text
	}
	if n := p.peek(); n.kind != tokEOF && !n.isSym(";") {
		return nil, p.errf(n, clause, "unexpected %s: loadnode describes whole tables (LIKE and WHERE are not supported)", n.describe())
	}
	return &Statement{Describe: &JobRef{DB: db, Name: name}, DB: db}, nil
}
