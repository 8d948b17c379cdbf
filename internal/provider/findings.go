package provider

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/colonel-byte/cargoship/pkg/api/v1alpha1"
)

// hostField is the attribute a spec.hosts[i] field is set by.
var hostField = map[string]string{
	"ssh.address": "address", "ssh.port": "port", "ssh.user": "user", "ssh.keyPath": "key_path",
	"ssh.hostKey": "host_key", "ssh.bastion": "bastion", "hostname": "hostname",
	"privateAddress": "private_address", "privateInterface": "private_interface", "role": "role",
	"profile": "profile", "sudoPasswordEnv": "sudo_password_env", "labels": "labels", "taints": "taints",
	"environment": "environment",
}

// hostIndex matches a finding's path into one host: spec.hosts[3].rest.
var hostIndex = regexp.MustCompile(`^spec\.hosts\[(\d+)\]\.?(.*)$`)

// attributePath is the attribute a finding of the document is about, so a
// plan names the attribute where `cargoship validate` names file:line.
// The document path stays in the message for what lies below it.
func attributePath(inv *inventory, p string) (path.Path, bool) {
	switch {
	case p == "metadata.name":
		return path.Root("name"), true
	case p == "spec.config.loadbalancer":
		return path.Root("load_balancer"), true
	case strings.HasPrefix(p, "spec.config"):
		return path.Root("config"), true
	}
	m := hostIndex.FindStringSubmatch(p)
	if m == nil {
		return path.Empty(), false
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(inv.Keys) {
		return path.Root("hosts"), true
	}
	at := path.Root("hosts").AtMapKey(inv.Keys[i])
	for field, attr := range hostField {
		if m[2] == field || strings.HasPrefix(m[2], field+".") || strings.HasPrefix(m[2], field+"[") {
			return at.AtName(attr), true
		}
	}
	return at, true
}

// addFindings turns the loader's findings into diagnostics: errors stop
// the plan, warnings (the HA warnings among them) are shown with it.
func addFindings(diags *diag.Diagnostics, inv *inventory, fs v1alpha1.Findings) {
	for _, f := range fs {
		summary := "Invalid cluster"
		if f.Severity == v1alpha1.SeverityWarning {
			summary = "Cluster warning"
		}
		// The attribute leads (Terraform may only point at the resource
		// block); the document's field path follows, as validate names it.
		detail := f.Message
		at, ok := attributePath(inv, f.Path)
		switch {
		case ok && f.Path != "":
			detail = at.String() + ": " + f.Message + " (" + f.Path + " in the inventory)"
		case f.Path != "":
			detail = f.Path + ": " + f.Message
		}
		warning := f.Severity == v1alpha1.SeverityWarning
		switch {
		case ok:
			addAttributeDiag(diags, warning, at, summary, detail)
		case warning:
			diags.AddWarning(summary, detail)
		default:
			diags.AddError(summary, detail)
		}
	}
}

// addRunError is a run's failure as diagnostics: a document's findings by
// attribute, anything else naming the run and its failed phase (the
// error names the host).
func addRunError(diags *diag.Diagnostics, inv *inventory, what string, err error) {
	var de *v1alpha1.DocumentError
	if errors.As(err, &de) {
		addFindings(diags, inv, de.Findings)
		return
	}
	diags.AddError("cargoship "+what+" failed", err.Error())
}
