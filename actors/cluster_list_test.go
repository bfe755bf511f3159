package actors

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/loadnode/loadnode/api"
)

// listMembers is the actors' view of a cluster of three members: this one
// ("m"), a member that answers listings ("talker") and one that never
// answers ("silent"). The test sets who owns which job.
type listMembers struct {
	mu     sync.Mutex
	owners map[uint64]string
}

var listAddrs = map[string]string{"talker": "talker.test:1", "silent": "silent.test:1"}

func (c *listMembers) Self() string { return "m" }
func (c *listMembers) Owner(id uint64) (string, string, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.owners[id]
	return o, listAddrs[o], 1, ok
}
func (c *listMembers) Status(context.Context) (*api.ClusterStatusResponse, error) {
	return &api.ClusterStatusResponse{}, nil
}

// peerProcess stands for another member's manager, reached through the
// actor system's address resolver as remote would be: it answers a
// request with answer(request) or, when answer is nil, never.
type peerProcess struct {
	system *actor.ActorSystem
	answer func(msg any) any
	mu     sync.Mutex
	asked  []any
}

func (p *peerProcess) SendUserMessage(_ *actor.PID, message any) {
	env, ok := message.(*actor.MessageEnvelope)
	if !ok {
		return
	}
	p.mu.Lock()
	p.asked = append(p.asked, env.Message)
	p.mu.Unlock()
	if p.answer != nil && env.Sender != nil {
		p.system.Root.Send(env.Sender, p.answer(env.Message))
	}
}
func (p *peerProcess) SendSystemMessage(*actor.PID, any) {}
func (p *peerProcess) Stop(*actor.PID)                   {}

// TestClusterListingOwnerSilent: a listing through a member shows the jobs
// other members own with their owners' figures, asked of each owner with
// owned_only; a job whose owner does not answer within the bounded wait
// is shown with its figures unknown (-1, health "unknown"), never as 0,
// and the listing is answered anyway. An owned_only listing answers only
// the member's own jobs.
func TestClusterListingOwnerSilent(t *testing.T) {
	cl := &listMembers{owners: map[uint64]string{}}
	h := newHarnessOpts(t, vfs.NewMem(), func(*api.JobSpec) (Source, error) { return adapt(&quietSource{parts: []int32{0}}), nil },
		Settings{}, harnessOpts{cluster: cl})
	ids := map[string]uint64{}
	for _, name := range []string{"mine", "theirs", "lost"} {
		spec := testSpec(name)
		spec.Table.Database = "db"
		resp := h.ask(h.mgr, &api.CreateJobRequest{Spec: spec}).(*api.JobResponse)
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		ids[name] = resp.Job.Summary.Id
	}
	cl.mu.Lock()
	cl.owners[ids["mine"]], cl.owners[ids["theirs"]], cl.owners[ids["lost"]] = "m", "talker", "silent"
	cl.mu.Unlock()
	h.system.Root.Send(h.mgr, &OwnJob{ID: ids["mine"], Epoch: 1})

	talker := &peerProcess{system: h.system, answer: func(msg any) any {
		return &api.ListJobsResponse{Jobs: []*api.JobSummary{{Id: ids["theirs"], Name: "theirs", Owner: "talker", Epoch: 1,
			State: api.JobState_RUNNING, Health: "lagging", TotalLag: 17, LoadedRows: 4242, RowsPerSecond: 3.5, Sink: "postgres db public.t_theirs"}}}
	}}
	silent := &peerProcess{system: h.system}
	h.system.ProcessRegistry.RegisterAddressResolver(func(pid *actor.PID) (actor.Process, bool) {
		switch pid.Address {
		case listAddrs["talker"]:
			return talker, true
		case listAddrs["silent"]:
			return silent, true
		}
		return nil, false
	})

	list := func(req *api.ListJobsRequest) map[string]*api.JobSummary {
		t.Helper()
		res, err := h.system.Root.RequestFuture(h.mgr, req, 30*time.Second).Result()
		if err != nil {
			t.Fatalf("list %v: no answer: %v", req, err)
		}
		resp := res.(*api.ListJobsResponse)
		if resp.Error != nil {
			t.Fatalf("list %v: %v", req, resp.Error)
		}
		out := map[string]*api.JobSummary{}
		for _, s := range resp.Jobs {
			out[s.GetName()] = s
		}
		return out
	}
	got := list(&api.ListJobsRequest{})
	if s := got["theirs"]; s.GetLoadedRows() != 4242 || s.GetTotalLag() != 17 || s.GetRowsPerSecond() != 3.5 || s.GetHealth() != "lagging" {
		t.Errorf("a job of the member that answered: rows %d lag %d rate %v health %q; want its owner's 4242, 17, 3.5, lagging",
			s.GetLoadedRows(), s.GetTotalLag(), s.GetRowsPerSecond(), s.GetHealth())
	}
	if s := got["lost"]; s.GetLoadedRows() != -1 || s.GetTotalLag() != -1 || s.GetRowsPerSecond() != -1 || s.GetHealth() != "unknown" {
		t.Errorf("a job of the silent member: rows %d lag %d rate %v health %q; want -1, -1, -1, unknown",
			s.GetLoadedRows(), s.GetTotalLag(), s.GetRowsPerSecond(), s.GetHealth())
	}
	if s := got["mine"]; s == nil || s.GetLoadedRows() < 0 {
		t.Errorf("this member's own job: %v", s)
	}
	talker.mu.Lock()
	asked := append([]any(nil), talker.asked...)
	talker.mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("the owner was not asked for its figures")
	}
	if r, ok := asked[0].(*api.ListJobsRequest); !ok || !r.GetOwnedOnly() {
		t.Errorf("the owner was asked %T %v, want a ListJobsRequest with owned_only", asked[0], asked[0])
	}

	// Sorted by rows: the owner's figure sorts; the unknown one goes last.
	res, err := h.system.Root.RequestFuture(h.mgr, &api.ListJobsRequest{Sort: "loaded_rows", Descending: true}, 30*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range res.(*api.ListJobsResponse).GetJobs() {
		order = append(order, s.GetName())
	}
	if len(order) != 3 || order[0] != "theirs" || order[2] != "lost" {
		t.Errorf("sorted by loaded_rows, descending: %v; want theirs first and the unknown lost last", order)
	}

	// Asked as an owner: only its own job.
	own := list(&api.ListJobsRequest{OwnedOnly: true})
	if len(own) != 1 || own["mine"] == nil {
		t.Errorf("owned_only answered %v, want only mine", own)
	}
}
