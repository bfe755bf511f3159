package mysqlserver

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/client"
	"github.com/go-sql-driver/mysql"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/client"
	"github.com/loadnode/loadnode/internal/testcert"
)

// fakeExec answers statements from a table; it records what it was sent.
type fakeExec struct {
	mu   sync.Mutex
	sent []string
	// block, when not nil, holds every Exec until it is closed.
	block chan struct{}
	// started, when not nil, receives a value as each Exec begins.
	started chan struct{}
}

func (f *fakeExec) Exec(ctx context.Context, st string) (*api.ExecResponse, error) {
	f.mu.Lock()
	f.sent = append(f.sent, st)
	f.mu.Unlock()
	if f.started != nil {
		select {
		case f.started <- struct{}{}:
		default:
		}
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch {
	case strings.HasPrefix(st, "SHOW ROUTINE LOAD"):
		return &api.ExecResponse{Result: &api.ResultSet{Columns: []string{"Id", "Name", "State"},
			Rows: []*api.ResultRow{{Values: []string{"1", "orders_load", "RUNNING"}}}}}, nil
	case st == "SHOW TABLES":
		return &api.ExecResponse{Tables: []*api.TableInfo{
			{Spec: &api.TableSpec{Name: "orders"}},
			{Spec: &api.TableSpec{Name: "events", Database: "analytics"}},
		}}, nil
	case st == "DESC orders":
		spec := &api.TableSpec{Name: "orders", Columns: []*api.Column{
			{Name: "id", Type: api.ColumnType_INT64, NotNull: true},
			{Name: "note", Type: api.ColumnType_STRING},
		}}
		return &api.ExecResponse{Table: spec, Tables: []*api.TableInfo{{Spec: spec}}}, nil
	case strings.HasPrefix(st, "INSERT"):
		return &api.ExecResponse{Message: "3 rows inserted into orders"}, nil
	case st == "DESC nope":
		return nil, &client.Error{Code: api.ErrorCode_NOT_FOUND, Message: `table "nope" not found`}
	case st == "PAUSE ROUTINE LOAD FOR nope":
		return nil, &client.Error{Code: api.ErrorCode_NOT_FOUND, Message: `job "nope" not found`}
	case st == "CREATE TABLE orders (id BIGINT)":
		return nil, &client.Error{Code: api.ErrorCode_ALREADY_EXISTS, Message: `table "orders" exists`}
	case strings.HasPrefix(st, "PAUSE"):
		return &api.ExecResponse{Job: &api.JobInfo{}}, nil
	}
	return nil, &client.Error{Code: api.ErrorCode_INVALID_ARGUMENT, Field: "statement", Message: "unsupported statement"}
}

// start serves cfg on a free loopback port.
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.Exec == nil {
		cfg.Exec = &fakeExec{}
	}
	s, err := Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s
}

// open is database/sql over go-sql-driver/mysql, one connection.
func open(t *testing.T, s *Server, user, password, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/?timeout=5s&%s", user, password, s.Addr(), params)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// code is the MySQL error code of err, 0 when it is none.
func code(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestAuth(t *testing.T) {
	const token = "s3cret-token-0123456789"
	withToken := start(t, Config{Token: token})
	for _, tc := range []struct {
		user, password string
		want           uint16
	}{
		{"root", token, 0},
		{"anyone", token, 0},
		{"root", "wrong", 1045},
		{"root", "", 1045},
	} {
		err := open(t, withToken, tc.user, tc.password, "").Ping()
		if code(err) != tc.want || tc.want == 0 && err != nil {
			t.Errorf("token set, %s/%q: %v, want code %d", tc.user, tc.password, err, tc.want)
		}
	}
	noToken := start(t, Config{})
	if err := open(t, noToken, "root", "", "").Ping(); err != nil {
		t.Errorf("no token, empty password: %v", err)
	}
}

func TestTLSRequired(t *testing.T) {
	files := testcert.Write(t, t.TempDir(), "node")
	cert, err := tls.LoadX509KeyPair(files.CertFile, files.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{Token: "tok-0123456789abcdef", TLS: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err := mysql.RegisterTLSConfig("testnode", &tls.Config{RootCAs: files.Pool, ServerName: "127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := open(t, s, "root", "tok-0123456789abcdef", "tls=testnode").Ping(); err != nil {
		t.Errorf("over TLS: %v", err)
	}
	if err := open(t, s, "root", "tok-0123456789abcdef", "tls=false").Ping(); code(err) != erSecureTransportNeeded {
		t.Errorf("plaintext: %v, want error %d", err, erSecureTransportNeeded)
	}
}

// query runs q and returns its column names and rows as strings.
func query(t *testing.T, db *sql.DB, q string) ([]string, [][]string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if !v.Valid {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return cols, out
}

func TestConnectStatements(t *testing.T) {
	s := start(t, Config{Databases: []string{"analytics"}})
	db := open(t, s, "root", "", "")
	for _, st := range []string{"SET NAMES utf8mb4", "SET autocommit=1", "SET SESSION sql_mode = ''", "BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION",
		"SET sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'", "set skip_delete_bitmap=false", "SET @@session.show_hidden_columns = 0",
		"SET NAMES utf8mb4 COLLATE utf8mb4_general_ci, autocommit = 1", "SET @x = 'skip_delete_sign=true'"} {
		if _, err := db.Exec(st); err != nil {
			t.Errorf("%s: %v", st, err)
		}
	}
	// A SET that would change what a SELECT shows, or how later strings
	// read, is refused by name, never ignored.
	for st, says := range map[string]string{
		"set skip_delete_bitmap=true":                         "SET skip_delete_bitmap = true is not supported by loadnode",
		"SET SESSION skip_delete_sign = 1":                    "skip_delete_sign",
		"SET autocommit = 1, @@skip_storage_engine_merge=ON":  "skip_storage_engine_merge",
		"SET sql_mode = 'NO_BACKSLASH_ESCAPES'":               "NO_BACKSLASH_ESCAPES",
		"set global sql_mode = \"ANSI,no_backslash_escapes\"": "NO_BACKSLASH_ESCAPES",
	} {
		_, err := db.Exec(st)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1235 || !strings.Contains(me.Message, says) {
			t.Errorf("%s: %v; want error 1235 naming %q", st, err, says)
		}
	}
	for _, tc := range []struct {
		q    string
		cols []string
		rows [][]string
	}{
		{"select @@version_comment limit 1", []string{"@@version_comment"}, [][]string{{VersionComment}}},
		{"/* mysql-connector-j-8.4.0 */SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client, @@max_allowed_packet",
			[]string{"auto_increment_increment", "character_set_client", "@@max_allowed_packet"}, [][]string{{"1", "utf8mb4", "1048576"}}},
		{"SELECT DATABASE()", []string{"DATABASE()"}, [][]string{{DefaultDatabase}}},
		{"SELECT 1", []string{"1"}, [][]string{{"1"}}},
		{"SELECT VERSION(), USER()", []string{"VERSION()", "USER()"}, [][]string{{ServerVersion, "root@%"}}},
		{"SHOW DATABASES", []string{"Database"}, [][]string{{"analytics"}, {DefaultDatabase}}},
		{"SHOW VARIABLES LIKE 'max\\_allowed%'", []string{"Variable_name", "Value"}, [][]string{{"max_allowed_packet", "1048576"}}},
		{"SHOW SESSION VARIABLES WHERE Variable_name = 'autocommit'", []string{"Variable_name", "Value"}, [][]string{{"autocommit", "1"}}},
		{"SHOW VARIABLES WHERE Variable_name = 'language' OR Variable_name = 'net_write_timeout' OR variable_name LIKE 'tx\\_iso%'", []string{"Variable_name", "Value"},
			[][]string{{"language", "/usr/share/mysql/english/"}, {"net_write_timeout", "30"}, {"tx_isolation", "REPEATABLE-READ"}}},
		{"SHOW WARNINGS", []string{"Level", "Code", "Message"}, nil},
		{"SHOW TABLES", []string{"Tables_in_" + DefaultDatabase}, [][]string{{"orders"}}},
		{"SHOW ROUTINE LOAD", []string{"Id", "Name", "State"}, [][]string{{"1", "orders_load", "RUNNING"}}},
		{"DESC orders", []string{"Field", "Type", "Null", "Key", "Default", "Extra"}, [][]string{
			{"id", "BIGINT", "NO", "false", "NULL", ""}, {"note", "STRING", "YES", "false", "NULL", ""}}},
	} {
		cols, rows := query(t, db, tc.q)
		if fmt.Sprint(cols) != fmt.Sprint(tc.cols) || fmt.Sprint(rows) != fmt.Sprint(tc.rows) {
			t.Errorf("%s:\n got %q %q\nwant %q %q", tc.q, cols, rows, tc.cols, tc.rows)
		}
	}
	if _, err := db.Exec("USE analytics"); err != nil {
		t.Fatal(err)
	}
	if _, rows := query(t, db, "SELECT DATABASE()"); rows[0][0] != "analytics" {
		t.Errorf("after USE analytics, DATABASE() = %q", rows[0][0])
	}
	if cols, rows := query(t, db, "SHOW TABLES"); cols[0] != "Tables_in_analytics" || fmt.Sprint(rows) != "[[events]]" {
		t.Errorf("SHOW TABLES in analytics: %q %q", cols, rows)
	}
	if _, err := db.Exec("USE nowhere"); code(err) != 1049 {
		t.Errorf("USE nowhere: %v, want 1049", err)
	}
	res, err := db.Exec("INSERT INTO orders VALUES (1), (2), (3)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("INSERT: %d rows affected, want 3", n)
	}
	if _, err := db.Exec("PAUSE ROUTINE LOAD FOR orders_load"); err != nil {
		t.Errorf("PAUSE: %v", err)
	}
	if _, err := db.Query("SELECT @@nope"); code(err) != 1193 {
		t.Errorf("SELECT @@nope: %v, want 1193", err)
	}
	// The database of the DSN is USEd in the handshake.
	db2, err := sql.Open("mysql", "root:@tcp("+s.Addr()+")/analytics")
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, rows := query(t, db2, "SELECT DATABASE()"); rows[0][0] != "analytics" {
		t.Errorf("DSN database: DATABASE() = %q", rows[0][0])
	}
}

func TestErrorCodes(t *testing.T) {
	s := start(t, Config{})
	db := open(t, s, "root", "", "")
	for _, tc := range []struct {
		st   string
		want uint16
		msg  string
	}{
		{"FROBNICATE everything", 1064, "unsupported statement"},
		{"DESC nope", 1146, `table "nope" not found`},
		{"PAUSE ROUTINE LOAD FOR nope", 1105, `job "nope" not found`},
		{"CREATE TABLE orders (id BIGINT)", 1050, "exists"},
		{"   ;  ", 1065, "Query was empty"},
	} {
		_, err := db.Exec(tc.st)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != tc.want || !strings.Contains(me.Message, tc.msg) {
			t.Errorf("%q: %v, want error %d with %q", tc.st, err, tc.want, tc.msg)
		}
	}
	if _, err := db.Query("SELECT ?", 1); code(err) != 1295 {
		t.Errorf("a prepared statement: %v, want 1295", err)
	}
}

func TestTooManyConnections(t *testing.T) {
	s := start(t, Config{MaxConns: 2})
	var held []*sql.DB
	for i := 0; i < 2; i++ {
		db := open(t, s, "root", "", "")
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		held = append(held, db)
	}
	err := open(t, s, "root", "", "").Ping()
	if code(err) != 1040 || !strings.Contains(err.Error(), "Too many connections") {
		t.Fatalf("third connection: %v, want error 1040", err)
	}
	held[0].Close()
	// The slot frees once the server has seen the close.
	deadline := time.After(5 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := open(t, s, "root", "", "").Ping()
		if err == nil {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("after a close, a connection is still refused: %v", err)
		case <-tick.C:
		}
	}
}

func TestHugeQuery(t *testing.T) {
	fe := &fakeExec{}
	s := start(t, Config{Exec: fe})
	db := open(t, s, "root", "", "maxAllowedPacket=67108864")
	// Just over the limit: refused, the connection kept.
	_, err := db.Exec("INSERT INTO orders VALUES ('" + strings.Repeat("x", 1<<20) + "')")
	if code(err) != 1153 {
		t.Fatalf("a 1 MiB query: %v, want 1153", err)
	}
	// Far over: refused, the connection closed.
	_, err = db.Exec("INSERT INTO orders VALUES ('" + strings.Repeat("x", 8<<20) + "')")
	if code(err) != 1153 {
		t.Errorf("an 8 MiB query: %v, want 1153", err)
	}
	// The server closed that connection; the pool may hand it out once
	// more (the driver's "invalid connection") before it dials anew.
	deadline := time.Now().Add(5 * time.Second)
	for err := db.Ping(); err != nil; err = db.Ping() {
		if time.Now().After(deadline) {
			t.Fatalf("a new connection after: %v", err)
		}
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.sent) != 0 {
		t.Errorf("a huge query reached Exec")
	}
}

func TestMalformedPackets(t *testing.T) {
	s := start(t, Config{})
	// A handshake answer of garbage: the connection closes, nothing else.
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1024)
	if _, err := nc.Read(buf); err != nil { // the server's handshake
		t.Fatal(err)
	}
	nc.Write([]byte{2, 0, 0, 1, 0xff, 0xff})
	for err == nil {
		_, err = nc.Read(buf)
	}
	nc.Close()

	// After the handshake: an empty packet and a COM_FIELD_LIST without its
	// NUL (go-mysql indexes both without checking) are error 1835.
	for _, payload := range [][]byte{{}, {0x04, 'x'}} {
		c, err := gomysql.Connect(s.Addr(), "root", "", "")
		if err != nil {
			t.Fatal(err)
		}
		c.ResetSequence()
		if err := c.WritePacket(append([]byte{0, 0, 0, 0}, payload...)); err != nil {
			t.Fatal(err)
		}
		data, err := c.ReadPacket()
		if err != nil || len(data) < 3 || data[0] != 0xff || uint16(data[1])|uint16(data[2])<<8 != erMalformedPacket {
			t.Errorf("payload %x: answer %x %v, want error %d", payload, data, err, erMalformedPacket)
		}
		c.Close()
	}
	// The server still answers.
	if err := open(t, s, "root", "", "").Ping(); err != nil {
		t.Fatal(err)
	}
}

func TestSlowClient(t *testing.T) {
	s := start(t, Config{HandshakeTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	// A client that never answers the handshake is cut.
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for err == nil {
		_, err = nc.Read(buf)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept a silent client past its handshake timeout")
	}
	// A client that sends half a command is cut too.
	c, err := gomysql.Connect(s.Addr(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Conn.Conn.Write([]byte{100, 0, 0, 0, 3, 'S'}) // 100 bytes announced, 2 sent
	c.Conn.Conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Conn.Conn.Read(buf)
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("half a command: read %v, want the connection closed", err)
	}
}

func TestCloseCancelsStatements(t *testing.T) {
	fe := &fakeExec{block: make(chan struct{}), started: make(chan struct{}, 1)}
	s, err := Listen("127.0.0.1:0", Config{Exec: fe})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	db := open(t, s, "root", "", "")
	done := make(chan error, 1)
	go func() { _, err := db.Exec("PAUSE ROUTINE LOAD FOR x"); done <- err }()
	select { // the statement reached Exec, which holds it
	case <-fe.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the statement never reached Exec")
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a running statement")
	}
	if err := <-done; err == nil {
		t.Error("the statement cut by Close succeeded")
	}
}

// TestCommands: COM_FIELD_LIST (the mysql client's completion), COM_PING,
// COM_INIT_DB and COM_QUIT, from go-mysql's client.
func TestCommands(t *testing.T) {
	s := start(t, Config{Databases: []string{"analytics"}})
	c, err := gomysql.Connect(s.Addr(), "root", "", "analytics")
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := c.FieldList("orders", ""); err != nil || len(fs) != 0 {
		t.Errorf("COM_FIELD_LIST: %v, %v", fs, err)
	}
	if err := c.Ping(); err != nil {
		t.Errorf("COM_PING: %v", err)
	}
	if err := c.UseDB("loadnode"); err != nil {
		t.Errorf("COM_INIT_DB loadnode: %v", err)
	}
	if err := c.UseDB("nowhere"); code(err) != 0 && !strings.Contains(err.Error(), "1049") {
		t.Errorf("COM_INIT_DB nowhere: %v, want 1049", err)
	} else if err == nil {
		t.Error("COM_INIT_DB nowhere: taken")
	}
	r, err := c.Execute("SELECT DATABASE()")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.GetString(0, 0); v != "loadnode" {
		t.Errorf("DATABASE() = %q after COM_INIT_DB loadnode", v)
	}
	if err := c.Quit(); err != nil {
		t.Errorf("COM_QUIT: %v", err)
	}
	if _, err := gomysql.Connect(s.Addr(), "root", "", "nowhere"); err == nil {
		t.Error("a handshake naming an unknown database: taken")
	}
}
