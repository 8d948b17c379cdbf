package cluster

import "github.com/colonel-byte/cargoship/pkg/node"

// reportView is a run's report as assertions read it.
type reportView struct{ r *node.Report }

// Changes lists what the run changed (or would change).
func (v *reportView) Changes() []node.Change { return v.r.Changes() }

// Ordered lists the changes in the order they were made.
func (v *reportView) Ordered() []node.Change { return v.r.Ordered() }

// BytesUploaded is what crossed the wire.
func (v *reportView) BytesUploaded() int64 { return v.r.BytesUploaded() }
