package actors

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/persistence"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/table"
)

// TestAddTemporaryPartition: the manager adds a temporary partition (its
// catalog table) only to an existing table of the embedded store, as
// Doris checks it; a PostgreSQL table's is refused by name; a table's
// temporary partitions are hidden from the listing and go with the table.
func TestAddTemporaryPartition(t *testing.T) {
	st, err := persistence.Open(persistence.Options{Dir: "db", FS: vfs.NewMem(), OnFatal: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m := &manager{deps: &Deps{Meta: st.Meta(), Sinks: func(*api.TableSpec) (sink.Sink, error) { return st.Sink(), nil }, Logger: slog.New(slog.DiscardHandler)},
		registry: registry{byName: map[string]*entry{}, byID: map[uint64]*entry{}}, createQueue: createQueue{newTables: map[string]*api.TableSpec{}}}
	cols := []*api.Column{{Name: "k", Type: api.ColumnType_INT32}}
	plain := &api.TableSpec{Name: "t", Columns: cols}
	pg := &api.TableSpec{Name: "pg", Columns: cols, Database: "analytics"}
	for _, spec := range []*api.TableSpec{plain, pg} {
		if _, err := st.Meta().CreateTable(spec); err != nil {
			t.Fatal(err)
		}
	}
	add := func(parent *api.TableSpec, part string) *api.Error {
		spec, err := table.TemporaryPartitionSpec(parent, part, nil)
		if err != nil {
			t.Fatal(err)
		}
		return m.createTable(&api.CreateTableRequest{Spec: spec}).GetError()
	}
	if e := add(plain, "tp"); e != nil {
		t.Fatalf("add tp: %v", e)
	}
	for _, c := range []struct {
		parent *api.TableSpec
		part   string
		code   api.ErrorCode
		want   string
	}{
		{plain, "tp", api.ErrorCode_INVALID_ARGUMENT, "Duplicate partition name tp"},
		{pg, "tp", api.ErrorCode_INVALID_ARGUMENT, "temporary partitions are not supported by loadnode for a database's tables"},
		{&api.TableSpec{Name: "nosuch", Columns: cols}, "tp", api.ErrorCode_NOT_FOUND, "nosuch"},
	} {
		if e := add(c.parent, c.part); e.GetCode() != c.code || !strings.Contains(e.GetMessage(), c.want) {
			t.Errorf("add %s to %s = %v; want %s with %q", c.part, c.parent.GetName(), e, c.code, c.want)
		}
	}
	var names []string
	for _, ti := range m.listTables().GetTables() {
		names = append(names, ti.GetSpec().GetName())
	}
	if strings.Join(names, ",") != "pg,t" {
		t.Errorf("listTables = %q; want pg,t", names)
	}
	if resp := m.dropTable(&api.DropTableRequest{Table: "t"}); resp.GetError() != nil {
		t.Fatal(resp.GetError())
	}
	if _, err := st.Meta().Table("t#tp"); err == nil {
		t.Error("DROP TABLE t left its temporary partition tp")
	}
}
