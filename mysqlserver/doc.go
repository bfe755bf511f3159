// Package mysqlserver answers the MySQL wire protocol for Doris users: the
// `mysql` client, DBeaver, JDBC, pymysql and go-sql-driver/mysql connect to
// a node as they connect to a Doris FE on port 9030 and run the statements
// `loadnode sql` takes. The protocol is github.com/go-mysql-org/go-mysql's
// server package; this package owns what is loadnode's:
//
//   - statements go to an Execer (the node wires client.Exec, the same
//     translation `loadnode sql` uses), and each answer becomes a MySQL
//     result set with Doris's column names (SHOW ROUTINE LOAD's 22 columns,
//     SHOW TABLES, DESC, ...), an OK packet or an error (errors.go maps the
//     client's stable codes to MySQL's);
//   - what clients send on connect (SET, SELECT @@var, SHOW DATABASES, USE,
//     SELECT DATABASE(), SHOW VARIABLES, transactions' BEGIN/COMMIT) is
//     answered here, without the node (session.go);
//   - auth: the password is the node's token, any user; with TLS configured
//     a plaintext connection is refused after the handshake;
//   - bounds: at most Config.MaxConns connections (more are answered error
//     1040), a command larger than Config.MaxQuery is answered error 1153
//     and the connection closed, a handshake, an idle read and each write
//     have deadlines, and a malformed packet closes its connection without
//     touching the others (conn.go).
//
// Concurrency: Serve accepts on one goroutine and runs each connection on
// its own; a connection's session state is its goroutine's. Close stops the
// listener and closes every open connection, and waits for their goroutines.
package mysqlserver
