package node

import (
	"github.com/colonel-byte/cargoship/pkg/host"
)

// placeProbes are the commands Place first sends a host already holding
// pls, in order, for host.Prefetch: a staged executable's target hash, or
// the upload's probe of its destination (stat, hash, the partial file,
// the room there), and a non-staged file's links.
func placeProbes(pls []Placement) []string {
	var out []string
	for _, pl := range pls {
		if pl.Staged {
			// installed: the upload is never asked; staged only: it is
			out = append(out, host.FileSHA256Command(pl.Target), host.UploadProbeCommand(StagedPath(pl.Target), pl.Size))
			continue
		}
		out = append(out, host.UploadProbeCommand(pl.Target, pl.Size))
		for _, l := range pl.Symlinks {
			out = append(out, host.Script(linkCheck, pl.Target, l))
		}
	}
	return out
}

// planProbes are WouldPlace's reads of pls, for host.Prefetch.
func planProbes(pls []Placement) []string {
	var out []string
	for _, pl := range pls {
		out = append(out, host.FileSHA256Command(pl.Target))
		if pl.Staged {
			out = append(out, host.FileSHA256Command(StagedPath(pl.Target)))
		}
	}
	return out
}
