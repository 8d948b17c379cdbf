package firewall

import "strings"

// zoneInfo is what cargoship reads of one firewalld zone.
type zoneInfo struct {
	sources, services, rich []string
}

// parseZoneListing reads `firewall-cmd [--permanent] --list-all-zones`:
// each zone is its name on a line of its own (with "(active)" after it at
// runtime), then two-space indented "key: values" lines; each rich rule
// and each forward port is a line of its own under its key, indented with
// a tab (docs/reference/hosts.md §5.1). One firewall-cmd, a Python program
// that takes a third of a second of CPU to start on a fast host and
// seconds on a slow one, reads every zone at once.
func parseZoneListing(out string) (names []string, zones map[string]zoneInfo) {
	zones = map[string]zoneInfo{}
	var name, key string
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			name, key = strings.Fields(line)[0], ""
			names = append(names, name)
			zones[name] = zoneInfo{}
			continue
		}
		if name == "" {
			continue
		}
		z := zones[name]
		if rest, ok := strings.CutPrefix(line, "\t"); ok {
			if rr := strings.TrimSpace(rest); key == "rich rules" && rr != "" {
				z.rich = append(z.rich, rr)
			}
			zones[name] = z
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		key = k
		switch k {
		case "sources":
			z.sources = append(z.sources, strings.Fields(v)...)
		case "services":
			z.services = append(z.services, strings.Fields(v)...)
		case "rich rules":
			if rr := strings.TrimSpace(v); rr != "" {
				z.rich = append(z.rich, rr)
			}
		}
		zones[name] = z
	}
	return names, zones
}

// parseServicePorts reads the "ports:" line of `firewall-cmd --permanent
// --info-service=NAME`.
func parseServicePorts(out string) []string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ports:"); ok {
			return strings.Fields(v)
		}
	}
	return nil
}
