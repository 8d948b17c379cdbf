package cluster

import "github.com/colonel-byte/cargoship/pkg/phase"

// reportView is a run's report as assertions read it.
type reportView struct{ r *phase.Report }

// Changes lists what the run changed (or would change).
func (v *reportView) Changes() []phase.Change { return v.r.Changes() }

// Ordered lists the changes in the order they were made.
func (v *reportView) Ordered() []phase.Change { return v.r.Ordered() }

// BytesUploaded is what crossed the wire.
func (v *reportView) BytesUploaded() int64 { return v.r.BytesUploaded() }
