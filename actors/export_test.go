package actors

import "github.com/loadnode/loadnode/api"

// JobActorID is the local process id of job id's actor on a node whose
// manager is spawned as api.ManagerName (node.Start), for the black-box tests
// that look the actor up: the name comes from the code that spawns it.
func JobActorID(id uint64) string { return api.ManagerName + "/" + jobActorName(id) }
