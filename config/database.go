package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Database is a database a node loads into, named in the node config
// (`databases:`); a job spec names it in table.database. Secrets stay here,
// out of job specs.
type Database struct {
	// Type is the kind of database. Required; "postgres" is the only one.
	Type string `yaml:"type"`
	// DSN is the connection string: a URL such as
	// postgres://loader@db.internal:5432/analytics?sslmode=verify-full, or
	// key=value pairs. Required. Keep the password out of it (PasswordFile,
	// or the environment).
	DSN string `yaml:"dsn"`
	// PasswordFile is a file holding the password (trimmed of surrounding
	// white space). Default "" (the DSN's, or none).
	// $LOADNODE_DB_<NAME>_PASSWORD (Password) overrides it.
	PasswordFile string `yaml:"password_file"`
	// Password is the password itself, never read from a file or flag:
	// `loadnode serve` sets it from $LOADNODE_DB_<NAME>_PASSWORD.
	Password string `yaml:"-"`
	// Schema is the schema of the loaded tables. Default "public".
	Schema string `yaml:"schema"`
	// Owner namespaces this node's job state in the database (job ids are
	// a node's own). Default "": the node's id, made once in its data
	// directory (node-id). Nodes sharing a database need distinct owners.
	// At most 200 bytes of UTF-8, no NUL.
	Owner string `yaml:"owner"`
}

// DatabasePostgres is the Type of a PostgreSQL database.
const DatabasePostgres = "postgres"

// DefaultDatabaseSchema is Database.Schema's default.
const DefaultDatabaseSchema = "public"

var databaseKeys = []string{"type", "dsn", "password_file", "schema", "owner"}

// DatabasePasswordEnv is the environment variable holding the password of
// the named database: LOADNODE_DB_<NAME>_PASSWORD, NAME upper-cased.
func DatabasePasswordEnv(name string) string {
	return "LOADNODE_DB_" + strings.ToUpper(name) + "_PASSWORD"
}

// DatabaseNames returns the configured names, sorted.
func (n Node) DatabaseNames() []string {
	names := make([]string, 0, len(n.Databases))
	for name := range n.Databases {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ReadPassword returns the database's password: Password if set, else the
// content of PasswordFile, else "" (the DSN's, if any). field names the
// database in errors (databases.NAME).
func (d Database) ReadPassword(field string) (string, error) {
	if d.Password != "" || d.PasswordFile == "" {
		return d.Password, nil
	}
	b, err := os.ReadFile(d.PasswordFile)
	if err != nil {
		return "", fieldErr(field+".password_file", "%v", err)
	}
	p := strings.TrimSpace(string(b))
	if p == "" {
		return "", fieldErr(field+".password_file", "%s is empty", d.PasswordFile)
	}
	return p, nil
}

// PasswordSource says where the password comes from, never what it is.
func (d Database) PasswordSource(name string) string {
	switch {
	case d.Password != "":
		return "$" + DatabasePasswordEnv(name)
	case d.PasswordFile != "":
		return "password_file"
	}
	return "dsn or none"
}

func (d *decoder) databases(v *yaml.Node) (map[string]Database, error) {
	out := map[string]Database{}
	err := d.mapping(v, "databases", nil, func(name string, dv *yaml.Node) error {
		field := "databases." + name
		db := Database{Schema: DefaultDatabaseSchema}
		if isNull(dv) {
			return errAt(dv, field, "must be a mapping with type and dsn")
		}
		err := d.mapping(dv, field, databaseKeys, func(key string, kv *yaml.Node) error {
			var err error
			switch key {
			case "type":
				db.Type, err = str(kv, field+".type")
			case "dsn":
				db.DSN, err = str(kv, field+".dsn")
			case "password_file":
				db.PasswordFile, err = str(kv, field+".password_file")
			case "schema":
				db.Schema, err = str(kv, field+".schema")
			case "owner":
				db.Owner, err = str(kv, field+".owner")
			}
			return err
		})
		out[name] = db
		return err
	})
	return out, err
}

// validateDatabases checks every database; names follow the rules of
// table names (they become part of an environment variable's name).
func (n Node) validateDatabases() error {
	for _, name := range n.DatabaseNames() {
		db := n.Databases[name]
		field := "databases." + name
		if !isIdentifier(name) {
			return fieldErr(field, "invalid name %q: want letters, digits and _, not starting with a digit", name)
		}
		if db.Type != DatabasePostgres {
			if db.Type == "" {
				return fieldErr(field+".type", "required (postgres)")
			}
			return fieldErr(field+".type", "%q is not a supported type (postgres)", db.Type)
		}
		if db.DSN == "" {
			return fieldErr(field+".dsn", "required")
		}
		if db.Schema == "" {
			return fieldErr(field+".schema", "must not be empty (default %s)", DefaultDatabaseSchema)
		}
		if strings.ContainsRune(db.Schema, 0) || len(db.Schema) > 63 {
			return fieldErr(field+".schema", "%q is not a PostgreSQL identifier (at most 63 bytes, no NUL)", db.Schema)
		}
		if strings.ContainsRune(db.Owner, 0) || len(db.Owner) > 200 || !utf8.ValidString(db.Owner) {
			return fieldErr(field+".owner", "must be at most 200 bytes of UTF-8 without NUL")
		}
	}
	return nil
}

func isIdentifier(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// String describes the database without its password.
func (d Database) String() string {
	return fmt.Sprintf("%s %s schema %s", d.Type, d.RedactedDSN(), d.Schema)
}

var dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// RedactedDSN is the DSN with any password in it replaced by xxxxx, for
// printing.
func (d Database) RedactedDSN() string {
	if u, err := url.Parse(d.DSN); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	return dsnPassword.ReplaceAllString(d.DSN, "${1}xxxxx")
}
