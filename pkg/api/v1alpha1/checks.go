package v1alpha1

import (
	"net/netip"
	"path"
	"regexp"
	"slices"
	"strings"
)

var (
	namePattern    = regexp.MustCompile(`^[a-z0-9][a-z0-9\-]*$`)
	dnsLabel       = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])?$`)
	envName        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	labelName      = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.\-]{0,61}[A-Za-z0-9])?$`)
	labelValue     = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9_.\-]{0,61}[A-Za-z0-9])?)?$`)
	sysctlKey      = regexp.MustCompile(`^[a-zA-Z0-9_]+([./][a-zA-Z0-9_\-]+)+$`)
	sha256Hex      = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)
	interfaceName  = regexp.MustCompile(`^[a-zA-Z0-9_.:@\-]{1,15}$`)
	unixUserOrGrp  = regexp.MustCompile(`^([a-z_][a-z0-9_\-]*\$?|[0-9]+)$`)
	taintEffects   = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	fwActions      = []string{"accept", "drop", "reject"}
	fwProtocols    = []string{"tcp", "udp"}
	selectorRoleOf = []string{RoleController, RoleWorker}
)

// isDNSName accepts a hostname or FQDN: labels of letters, digits and
// hyphens. Anything a shell would treat specially fails here.
func isDNSName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !dnsLabel.MatchString(l) {
			return false
		}
	}
	return true
}

func isIP(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// isHost accepts an IP address or a DNS name.
func isHost(s string) bool { return isIP(s) || isDNSName(s) }

// isSource accepts an address or a CIDR for a firewall rule.
func isSource(s string) bool {
	if isIP(s) {
		return true
	}
	_, err := netip.ParsePrefix(s)
	return err == nil
}

// isCleanAbsPath accepts an absolute path with no control characters and no
// .. segments: it will be written to as root.
//
// Characters a shell gives meaning to are refused too: every path is quoted
// on its way to a host, but a target like /etc/x;reboot is a mistake or an
// attack in a document, never a file anyone means.
func isCleanAbsPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\x00\n\r\t$`;|&<>()'\"\\*?[]{}!") {
		return false
	}
	return !slices.Contains(strings.Split(p, "/"), "..") && path.Clean(p) != "/"
}

// isLabelKey checks a Kubernetes label key: optional DNS prefix, a name.
func isLabelKey(k string) bool {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name = prefix // no "/": Cut left the whole key in prefix
	} else if !isDNSName(prefix) {
		return false
	}
	return labelName.MatchString(name)
}

// isTaint checks key[=value]:Effect.
func isTaint(t string) bool {
	kv, effect, ok := strings.Cut(t, ":")
	if !ok || !slices.Contains(taintEffects, effect) {
		return false
	}
	k, v, _ := strings.Cut(kv, "=")
	return isLabelKey(k) && labelValue.MatchString(v)
}

// checkPerm reports a file mode that does not parse or sets special bits
// (an error, from FileMode.Mode) and one any user may write (a warning).
// It returns the mode and whether it parsed.
func checkPerm(d *document, path string, m FileMode, def uint32) (uint32, bool) {
	mode, err := m.Mode(def)
	if err != nil {
		d.errorf(path, "%v", err)
		return 0, false
	}
	if mode&0o002 != 0 {
		d.warnf(path, "%04o is world-writable: any user on the host may change the file (%04o is not)", mode, mode&^0o002)
	}
	return mode, true
}

// checkSource reports a source create could not fetch; "" is left to the
// required-field checks.
func checkSource(d *document, path, src string) {
	if src == "" {
		return
	}
	if err := CheckSource(src); err != nil {
		d.errorf(path, "%v", err)
	}
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = `"` + v + `"`
	}
	return strings.Join(q, ", ")
}
