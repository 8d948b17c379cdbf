package provider

import (
	"context"
	"errors"

	"github.com/goccy/go-yaml"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
)

// Terraform prints, with a diagnostic about an attribute, the source of
// the expression that sets it: for a sensitive attribute written inline,
// the secret itself (into a terminal, or a CI log). Diagnostics about a
// sensitive attribute therefore point at the resource and name the
// attribute in their text.

// pointable reports whether a diagnostic may point at the attribute: not
// when it, or an attribute holding it, is sensitive, nor when it holds a
// sensitive one (Terraform prints all of hosts' expression for hosts).
func pointable(p path.Path) bool {
	s := clusterSchema()
	if a, d := s.AttributeAtPath(context.Background(), p); !d.HasError() && holdsSensitive(a) {
		return false
	}
	for q := p; len(q.Steps()) > 0; q = q.ParentPath() {
		if a, d := s.AttributeAtPath(context.Background(), q); !d.HasError() && a.IsSensitive() {
			return false
		}
	}
	return true
}

// holdsSensitive reports whether an attribute is sensitive or has a
// sensitive attribute nested in it.
func holdsSensitive(a schema.Attribute) bool {
	if a.IsSensitive() {
		return true
	}
	n, ok := a.(schema.NestedAttribute)
	if !ok {
		return false
	}
	for _, c := range n.GetNestedObject().GetAttributes() {
		if c, ok := c.(schema.Attribute); ok && holdsSensitive(c) {
			return true
		}
	}
	return false
}

// addAttributeDiag adds an error (or a warning) at the attribute, or at the
// resource when the attribute is sensitive.
func addAttributeDiag(diags *diag.Diagnostics, warning bool, at path.Path, summary, detail string) {
	switch p := pointable(at); {
	case p && warning:
		diags.AddAttributeWarning(at, summary, detail)
	case p:
		diags.AddAttributeError(at, summary, detail)
	case warning:
		diags.AddWarning(summary, detail)
	default:
		diags.AddError(summary, detail)
	}
}

// yamlMessage is a YAML error with its position but without the source
// lines the parser quotes, which would show what the text holds.
func yamlMessage(err error) string {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return yaml.FormatErrorWithToken(ye.GetMessage(), ye.GetToken(), false, false)
	}
	return err.Error()
}
