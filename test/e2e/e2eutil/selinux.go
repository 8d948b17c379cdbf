package e2eutil

// What the test package gives hosts with SELinux enabled (phase 11) and
// hosts running fapolicyd (phase 10), so those phases do real work on the
// VM fleet's guests (docs/e2e.md, "The test package"). Each loads on
// Debian 12's reference policy and on Enterprise Linux's targeted policy.
const (
	// SELinuxModule is the package's policy module, as semodule -l lists
	// it: one file type, for the package's own files.
	SELinuxModule = "cargoship-e2e"
	// MOTDType labels the common file's directory (MOTDContext).
	MOTDType    = "cargoship_e2e_conf_t"
	MOTDContext = "/etc/cargoship-e2e(/.*)?"
	// SELinuxBoolean is set on by the package: present in both policies
	// (the virt module), off by default.
	SELinuxBoolean = "virt_use_nfs"
	// EngineExecType labels the engine binary, as k3s-selinux does on
	// Enterprise Linux (the type comes from container-selinux; the VM
	// fleet's Debian guests carry a double of it). Phase 25's restorecon
	// after the install is what puts it on the file.
	EngineExecType = "container_runtime_exec_t"
	// FapolicydRule is the package's 80-cargoship.rules, as rke2's allows
	// its data directory.
	FapolicydRule = "allow perm=any all : dir=/var/lib/rancher/"
)

// selinuxModuleCIL declares MOTDType as a file type: the attribute gives it
// what every file type may do (be created on a filesystem, be relabelled
// by an unconfined root).
const selinuxModuleCIL = `(type cargoship_e2e_conf_t)
(roletype object_r cargoship_e2e_conf_t)
(typeattributeset file_type (cargoship_e2e_conf_t))
`
