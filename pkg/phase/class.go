package phase

// Class is what a phase is for, as data: the phase lists of prepare and of
// the staging half, and the e2e walk's engine gating, are derived from it
// rather than from lists of titles (docs/apply.md, The phases).
type Class int

const (
	// Lifecycle phases open and close the run on every host: connections
	// and the lock. Every list has them, and a stage-only walk runs them.
	Lifecycle Class = iota
	// Preflight phases only read the hosts: OS, facts, validation.
	Preflight
	// ClusterPreflight phases only read the engine and the cluster: the
	// installed version, nodes the inventory dropped.
	ClusterPreflight
	// Prepare phases configure the hosts themselves: sysctl, SELinux,
	// fapolicyd, /etc/hosts, the firewall.
	Prepare
	// Stage phases place files and render configuration, and start
	// nothing; Configure engine is the last of them.
	Stage
	// Engine phases install, start, upgrade or query the engine.
	Engine
)

func (c Class) String() string {
	switch c {
	case Lifecycle:
		return "lifecycle"
	case Preflight:
		return "preflight"
	case ClusterPreflight:
		return "cluster preflight"
	case Prepare:
		return "prepare"
	case Stage:
		return "stage"
	case Engine:
		return "engine"
	}
	return "unclassified"
}

// Classed is a phase that declares its class; every phase of apply does.
type Classed interface {
	Class() Class
}

// ClassOf returns p's class, and false when p declares none.
func ClassOf(p Phase) (Class, bool) {
	c, ok := p.(Classed)
	if !ok {
		return 0, false
	}
	return c.Class(), true
}

// InStageHalf says p belongs to apply's staging half: it declares a class
// and that class is not Engine. It is the one declaration both
// action.StagePhases and the e2e walk's stage-only gating read, so the two
// cannot disagree on where the half ends (docs/reference/behaviour.md, "The
// staging half of apply"). An unclassified phase is left out: nothing says
// it starts no engine.
func InStageHalf(p Phase) bool {
	c, ok := ClassOf(p)
	return ok && c != Engine
}

// Apply's phases, in run order.
func (*Connect) Class() Class         { return Lifecycle }
func (*DetectOS) Class() Class        { return Preflight }
func (*GatherFacts) Class() Class     { return Preflight }
func (*ValidateHosts) Class() Class   { return Preflight }
func (*DistroFacts) Class() Class     { return ClusterPreflight }
func (*RemovedNodes) Class() Class    { return ClusterPreflight }
func (*AcquireLock) Class() Class     { return Lifecycle }
func (*PrepareHosts) Class() Class    { return Prepare }
func (*PrepareEL) Class() Class       { return Prepare }
func (*Fapolicyd) Class() Class       { return Prepare }
func (*SELinuxPolicy) Class() Class   { return Prepare }
func (*UpdateEtcHosts) Class() Class  { return Prepare }
func (*UpdateFirewall) Class() Class  { return Prepare }
func (*UploadFiles) Class() Class     { return Stage }
func (*UploadRoute) Class() Class     { return Stage }
func (*ImportImages) Class() Class    { return Engine }
func (*ConfigureEngine) Class() Class { return Stage }
func (*ConfigureVIP) Class() Class    { return Engine }
func (*Initialize) Class() Class      { return Engine }
func (*WaitVIP) Class() Class         { return Engine }
func (*ApplyManifests) Class() Class  { return Engine }
func (*Upgrade) Class() Class         { return Engine }
func (*InstallStaged) Class() Class   { return Engine }
func (*SyncConfig) Class() Class      { return Engine }
func (*Kubeconfig) Class() Class      { return Engine }
func (*LabelNodes) Class() Class      { return Engine }
func (*ReleaseLock) Class() Class     { return Lifecycle }
func (*Disconnect) Class() Class      { return Lifecycle }
