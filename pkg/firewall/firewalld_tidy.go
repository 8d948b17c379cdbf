package firewall

import (
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/host"
	hostos "github.com/colonel-byte/cargoship/pkg/host/os"
	"github.com/colonel-byte/cargoship/pkg/shell"
)

// Where firewalld keeps the admin's configuration and its built-in
// defaults (docs/reference/hosts.md §5.1).
const (
	FirewalldConfigDir   = "/etc/firewalld"
	FirewalldDefaultsDir = "/usr/lib/firewalld"
)

func (f Firewalld) configDir() string   { return cmp.Or(f.ConfigDir, FirewalldConfigDir) }
func (f Firewalld) defaultsDir() string { return cmp.Or(f.DefaultsDir, FirewalldDefaultsDir) }

// tidy undoes what firewalld's own bookkeeping left of cargoship's
// changes once they are removed: a zone whose file in the config
// directory now says exactly what its built-in default says goes back to
// the default (firewalld wrote that file only because cargoship changed
// the zone), and the .old backups firewalld keeps of the files of
// cargoship's deleted ipsets and service, and of restored zones, go.
// Zones the admin changed keep their file.
func (f Firewalld) tidy(ctx context.Context, r host.Runner, zones []string) (Plan, error) {
	var p Plan
	var olds []string
	for _, z := range zones {
		same, err := f.zoneIsDefault(ctx, r, z)
		if err != nil {
			return p, err
		}
		if !same {
			continue
		}
		if _, err := r.Sudo(ctx, shell.Join("firewall-cmd", "--permanent", "--load-zone-defaults="+z)); err != nil {
			return p, fmt.Errorf("restoring zone %s to its defaults: %w", z, err)
		}
		p.add("restore zone "+z+" to its built-in defaults (only cargoship had changed it)", "")
		olds = append(olds, path.Join(f.configDir(), "zones", z+".xml.old"))
	}
	for _, set := range ourIPSets {
		olds = append(olds, path.Join(f.configDir(), "ipsets", set+".xml.old"))
	}
	olds = append(olds, path.Join(f.configDir(), "services", FirewalldServ+".xml.old"))
	for _, o := range olds {
		removed, err := hostos.RemoveFile(ctx, r, o)
		if err != nil {
			return p, err
		}
		if removed {
			p.add("remove firewalld's backup "+o, "")
		}
	}
	return p, nil
}

// zoneIsDefault reports whether zone z has a file in the config directory
// that holds the same settings as its built-in default.
func (f Firewalld) zoneIsDefault(ctx context.Context, r host.Runner, z string) (bool, error) {
	own, ok, err := host.ReadFileIfExists(ctx, r, path.Join(f.configDir(), "zones", z+".xml"))
	if err != nil || !ok {
		return false, err
	}
	def, ok, err := host.ReadFileIfExists(ctx, r, path.Join(f.defaultsDir(), "zones", z+".xml"))
	if err != nil || !ok {
		return false, err
	}
	a, errA := canonicalXML(own)
	b, errB := canonicalXML(def)
	if errA != nil || errB != nil {
		return false, nil // not XML we can read: leave the admin's file alone
	}
	return a == b, nil
}

// canonicalXML renders an XML document so two files holding the same
// settings compare equal: comments, the declaration and whitespace between
// elements dropped, text trimmed and its spaces collapsed, attributes and
// sibling elements sorted (firewalld's settings are sets).
func canonicalXML(data []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	type node struct {
		head     string
		text     strings.Builder
		children []string
	}
	stack := []*node{{}}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			attrs := make([]string, len(t.Attr))
			for i, a := range t.Attr {
				attrs[i] = fmt.Sprintf("%s=%q", a.Name.Local, a.Value)
			}
			slices.Sort(attrs)
			stack = append(stack, &node{head: t.Name.Local + "[" + strings.Join(attrs, " ") + "]"})
		case xml.CharData:
			top.text.Write(t)
		case xml.EndElement:
			slices.Sort(top.children)
			s := top.head + "(" + strings.Join(strings.Fields(top.text.String()), " ") + "){" + strings.Join(top.children, ",") + "}"
			stack = stack[:len(stack)-1]
			stack[len(stack)-1].children = append(stack[len(stack)-1].children, s)
		}
	}
	if len(stack) != 1 || len(stack[0].children) != 1 {
		return "", errors.New("not one XML document")
	}
	return stack[0].children[0], nil
}
