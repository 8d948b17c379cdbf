package daemon

import "path"

// dataDir names the files under <data-dir> the engine writes
// (docs/reference/engines.md 4 and 5).
type dataDir string

func (d dataDir) join(p ...string) string { return path.Join(append([]string{string(d)}, p...)...) }

func (d dataDir) tls(name string) string   { return d.join("server", "tls", name) }
func (d dataDir) token() string            { return d.join("server", "token") }
func (d dataDir) nodeToken() string        { return d.join("server", "node-token") }
func (d dataDir) agentToken() string       { return d.join("server", "agent-token") }
func (d dataDir) passwd() string           { return d.join("server", "cred", "passwd") }
func (d dataDir) state() string            { return d.join("server", "db", "state.json") }
func (d dataDir) manifests() string        { return d.join("server", "manifests") }
func (d dataDir) agent(name string) string { return d.join("agent", name) }
